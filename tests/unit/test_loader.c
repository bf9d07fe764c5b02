/* test_loader.c - plugin loader, dispatcher (fail closed) and the run pipeline, with small fake
 * plugins built only for the tests (tests/plugins/). */
#include "config.h"

#include <limits.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <pthread.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "internal.h"
#include "loader.h"
#include "probe.h"

/* An audit log and the lock file brig keeps beside it (PATH.lock). */
static void unlink_audit_log(const char *path)
{
	char lock[PATH_MAX];
	unlink(path);
	snprintf(lock, sizeof lock, "%s.lock", path);
	unlink(lock);
}

static char *plugin(const char *name)
{
	const char *dir = getenv("BRIG_TEST_PLUGIN_DIR");
	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	return xasprintf("%s/%s.so", dir, name);
}

static void expect_refused(const char *name, const char *needle)
{
	cleanup_free char *path = plugin(name);
	loaded_backend lb;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(loader_load_file(path, &lb, &err), BRIG_E_PLUGIN);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, needle));
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, path)); /* names the file */
	brig_error_free(err);
}

static void test_good_plugin(void)
{
	cleanup_free char *path = plugin("fake");
	loaded_backend lb;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(loader_load_file(path, &lb, &err), 0);
	CU_ASSERT_STRING_EQUAL(lb.be->name, "fake");
	CU_ASSERT_EQUAL(lb.be->isolation, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL(BE_HOOK(lb.be, image_id));
	CU_ASSERT_PTR_NOT_NULL(BE_HOOK(lb.be, list_labelled));
	loader_unload(&lb);
}

static void test_wrong_abi(void)
{
	expect_refused("fake-badabi", "built for backend ABI 99");
}

static void test_short_table(void)
{
	expect_refused("fake-short", "too short");
}

static void test_missing_symbol(void)
{
	expect_refused("fake-nosym", "no brig_backend_entry symbol");
}

static void test_relative_path_refused(void)
{
	loaded_backend lb;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(loader_load_file("fake.so", &lb, &err), BRIG_E_PLUGIN);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "absolute"));
	brig_error_free(err);
}

static void test_not_a_shared_object(void)
{
	char path[] = "/tmp/brig-test-XXXXXX.so";
	int fd = mkstemps(path, 3);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, "not elf", 7), 7);
	close(fd);
	loaded_backend lb;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(loader_load_file(path, &lb, &err), BRIG_E_PLUGIN);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "cannot load"));
	brig_error_free(err);
	unlink(path);
}

static void test_dir_scan(void)
{
	loaded_backend *list = NULL;
	size_t n = 0;
	char **refused = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(
		loader_load_dir(getenv("BRIG_TEST_PLUGIN_DIR"), &list, &n, &refused, &err), 0);
	CU_ASSERT_EQUAL(n, 4);                 /* fake, fake-gvisor, fake-nofeat, fake-old */
	CU_ASSERT_EQUAL(strv_len(refused), 3); /* badabi, short, nosym */
	for (size_t i = 0; i < n; i++)
		loader_unload(&list[i]);
	free(list);
	strv_free(refused);
}

/* A lib*.so beside the plugins is a library they share (libbrig-dock.so), not a plugin: not
 * loaded, not listed as refused.  (fake-nosym.so, which lacks the entry symbol, as libshared.so.)
 */
static void test_dir_scan_skips_libraries(void)
{
	char dir[] = "/tmp/brig-test-plugins-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	cleanup_free char *src = xasprintf("%s/fake-nosym.so", getenv("BRIG_TEST_PLUGIN_DIR"));
	cleanup_free char *dst = xasprintf("%s/libshared.so", dir);
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC),
	    out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CU_ASSERT_FATAL(in >= 0 && out >= 0);
	ssize_t r;
	while ((r = read(in, buf, sizeof buf)) > 0)
		CU_ASSERT_EQUAL(write_all(out, buf, (size_t)r), 0);
	close(in);
	close(out);
	loaded_backend *list = NULL;
	size_t n = 0;
	char **refused = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(loader_load_dir(dir, &list, &n, &refused, &err), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(strv_len(refused), 0);
	free(list);
	strv_free(refused);
	unlink(dst);
	rmdir(dir);
}

static brig_ctx *make_ctx(const char *policy_json)
{
	setenv("BRIG_BACKEND_DIR", getenv("BRIG_TEST_PLUGIN_DIR"), 1);
	brig_policy *p = NULL;
	brig_error *err = NULL;
	if (policy_json) {
		CU_ASSERT_EQUAL_FATAL(brig_policy_load_string(policy_json, "test", &p, &err), 0);
	} else {
		p = brig_policy_new_default();
	}
	brig_ctx *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_ctx_new(p, &ctx, &err), 0);
	return ctx;
}

static void test_auto_picks_available(void)
{
	brig_ctx *ctx = make_ctx(NULL);
	loaded_backend *lb = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(dispatch_select(ctx, &lb, NULL, &err), 0);
	CU_ASSERT_STRING_EQUAL(lb->be->name, "fake");
	brig_ctx_free(ctx);
}

static void expect_unavailable(const char *policy, const char *needle)
{
	brig_ctx *ctx = make_ctx(policy);
	brig_request req = { .language = BRIG_LANG_PYTHON, .code = "print(1)", .code_len = 8 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), BRIG_E_UNAVAILABLE);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, needle));
	CU_ASSERT_PTR_NULL(res.backend); /* nothing ran */
	brig_error_free(err);
	brig_result_clear(&res);
	brig_ctx_free(ctx);
}

static void test_gvisor_minimum_fails_closed(void)
{
	expect_unavailable("{\"isolation\": \"gvisor\"}", "runsc is not registered");
}

static void test_named_unavailable_fails_closed(void)
{
	expect_unavailable("{\"backend\": \"fake-gvisor\"}", "not available");
}

static void test_named_missing(void)
{
	expect_unavailable("{\"backend\": \"nope\"}", "not installed");
}

static void test_named_weaker_than_minimum(void)
{
	expect_unavailable("{\"backend\": \"fake\", \"isolation\": \"gvisor\"}",
			   "refusing to run with weaker isolation");
}

static void test_run_and_result(void)
{
	brig_ctx *ctx = make_ctx(NULL);
	brig_request req = { .language = BRIG_LANG_NODE, .code = "exit 3", .code_len = 6 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_run(ctx, &req, NULL, &res, &err), 0);
	CU_ASSERT_EQUAL(res.verdict, BRIG_VERDICT_ERROR);
	CU_ASSERT_EQUAL(res.exit_code, 3);
	CU_ASSERT_STRING_EQUAL(res.backend, "fake");
	CU_ASSERT_STRING_EQUAL(res.runtime, "fakerun");
	CU_ASSERT_STRING_EQUAL(res.image, "brig/node:bookworm");
	CU_ASSERT_EQUAL(strncmp(res.container, "brig-", 5), 0);
	char *js = brig_result_to_json(&res, false);
	json_object *o = json_tokener_parse(js);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	json_object *v;
	CU_ASSERT(json_object_object_get_ex(o, "verdict", &v) &&
		  strcmp(json_object_get_string(v), "error") == 0);
	CU_ASSERT(json_object_object_get_ex(o, "stdout", &v) &&
		  strcmp(json_object_get_string(v), "exit 3") == 0);
	json_object_put(o);
	free(js);
	brig_result_clear(&res);
	brig_ctx_free(ctx);
}

static void test_backend_failure_is_sandbox_error(void)
{
	brig_ctx *ctx = make_ctx(NULL);
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "fail", .code_len = 4 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_run(ctx, &req, NULL, &res, &err), 0);
	CU_ASSERT_EQUAL(res.verdict, BRIG_VERDICT_SANDBOX_ERROR);
	CU_ASSERT_PTR_NOT_NULL(res.error && strstr(res.error, "fake engine failure"));
	brig_result_clear(&res);
	brig_ctx_free(ctx);
}

static void test_invalid_utf8_output_is_valid_json(void)
{
	brig_result res = { .struct_size = sizeof res };
	res.stdout_data = xstrdup("ok \xff\xfe \xc3\xa9 \xed\xa0\x80");
	res.stdout_len = strlen(res.stdout_data);
	char *js = brig_result_to_json(&res, false);
	json_object *o = json_tokener_parse(js);
	json_object *v;
	CU_ASSERT(o && json_object_object_get_ex(o, "stdout", &v));
	CU_ASSERT_STRING_EQUAL(
		json_object_get_string(v),
		"ok \xEF\xBF\xBD\xEF\xBF\xBD \xc3\xa9 \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
	json_object_put(o);
	free(js);
	brig_result_clear(&res);
}

static int count_lines(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[4096];
	int n = 0;
	while (fgets(line, sizeof line, f))
		if (!needle || strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

static void test_audit_lines(void)
{
	char path[] = "/tmp/brig-audit-XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	brig_ctx *ctx = make_ctx("{\"max_input_bytes\": 8}");
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_ctx_set_audit_log(ctx, path, &err), 0);
	brig_request ok = { .language = BRIG_LANG_PYTHON, .code = "hello", .code_len = 5 };
	brig_request big = { .language = BRIG_LANG_PYTHON, .code = "123456789", .code_len = 9 };
	brig_result res = { .struct_size = sizeof res };
	CU_ASSERT_EQUAL(brig_run(ctx, &ok, NULL, &res, &err), 0);
	brig_result_clear(&res);
	CU_ASSERT_EQUAL(brig_run(ctx, &big, NULL, &res, &err), BRIG_E_REFUSED);
	brig_error_free(err);
	err = NULL;
	brig_result_clear(&res);
	brig_ctx_free(ctx);
	char sha[65];
	sha256_hex("hello", 5, sha);
	CU_ASSERT_STRING_EQUAL(sha,
			       "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
	CU_ASSERT_EQUAL(count_lines(path, NULL), 2);
	CU_ASSERT_EQUAL(count_lines(path, sha), 1);
	CU_ASSERT_EQUAL(count_lines(path, "\"verdict\":\"refused\""), 1);
	CU_ASSERT_EQUAL(count_lines(path, "hello"), 0); /* never the code itself */
	unlink_audit_log(path);
}

/* SHA-256 (nettle, loaded for each hash) against the FIPS 180-2 vectors, and again after the
 * library was unloaded. */
static void test_sha256_vectors(void)
{
	static const struct {
		size_t repeat;
		const char *text;
		const char *hex;
	} v[] = {
		{ 1, "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ 1, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ 1000000, "a",
		  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
		{ 1, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		size_t len = strlen(v[i].text), n = v[i].repeat * len;
		char *data = xmalloc(n + 1);
		for (size_t k = 0; k < v[i].repeat; k++)
			memcpy(data + k * len, v[i].text, len);
		char out[65];
		sha256_hex(data, n, out);
		CU_ASSERT_STRING_EQUAL(out, v[i].hex);
		free(data);
	}
}

static void test_audit_unwritable_fails_closed(void)
{
	brig_policy *p = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(
		brig_policy_load_string("{\"audit_log\": \"/nonexistent-dir/audit.log\"}", "t", &p,
					&err),
		0);
	setenv("BRIG_BACKEND_DIR", getenv("BRIG_TEST_PLUGIN_DIR"), 1);
	brig_ctx *ctx = NULL;
	CU_ASSERT_EQUAL(brig_ctx_new(p, &ctx, &err), BRIG_E_AUDIT);
	CU_ASSERT_PTR_NULL(ctx);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "/nonexistent-dir/audit.log"));
	brig_error_free(err);
}

static void test_cancel_fd(void)
{
	brig_ctx *ctx = make_ctx(NULL);
	int pfd[2];
	CU_ASSERT_FATAL(pipe(pfd) == 0);
	CU_ASSERT_EQUAL(write(pfd[1], "x", 1), 1);
	brig_run_options o = { .struct_size = sizeof o, .cancel_fd = pfd[0], .front_door = "lib" };
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "hang", .code_len = 4 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_run(ctx, &req, &o, &res, &err), 0);
	CU_ASSERT_EQUAL(res.verdict, BRIG_VERDICT_CANCELLED);
	brig_result_clear(&res);
	close(pfd[0]);
	close(pfd[1]);
	brig_ctx_free(ctx);
}

static void test_status_json(void)
{
	brig_ctx *ctx = make_ctx(NULL);
	char *js = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_status_json(ctx, &js, &err), 0);
	json_object *o = json_tokener_parse(js), *v;
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT(json_object_object_get_ex(o, "selected", &v) &&
		  strcmp(json_object_get_string(v), "fake") == 0);
	CU_ASSERT(json_object_object_get_ex(o, "backends", &v) && json_object_array_length(v) == 4);
	CU_ASSERT(json_object_object_get_ex(o, "refused_plugins", &v) &&
		  json_object_array_length(v) == 3);
	json_object_put(o);
	free(js);
	brig_ctx_free(ctx);
}

#define FAKE_ID  "sha256:0000000000000000000000000000000000000000000000000000000000000007"
#define OTHER_ID "sha256:1111111111111111111111111111111111111111111111111111111111111111"

static json_object *image_entry(json_object *report, int lang)
{
	json_object *arr = NULL;
	CU_ASSERT_FATAL(json_object_object_get_ex(report, "images", &arr));
	return json_object_array_get_idx(arr, (size_t)lang);
}

static const char *entry_str(json_object *im, const char *key)
{
	json_object *v = NULL;
	return json_object_object_get_ex(im, key, &v) && v ? json_object_get_string(v) : NULL;
}

/* `brig images`, doctor and sandbox_status: one report, from the backend's image hooks. */
static void test_images_report(void)
{
	brig_ctx *ctx = make_ctx("{\"images\": {\"python\": \"x/labelled:1\", \"node\": "
				 "\"x/missing:1\", \"shell\": \"x/pin:1@" OTHER_ID "\"}}");
	json_object *rep = brig_images_object(ctx), *v = NULL;
	CU_ASSERT_STRING_EQUAL(entry_str(rep, "backend"), "fake");
	json_object *py = image_entry(rep, BRIG_LANG_PYTHON);
	CU_ASSERT_STRING_EQUAL(entry_str(py, "id"), FAKE_ID);
	CU_ASSERT_STRING_EQUAL(entry_str(py, "runtime"), "Fake 1.0");
	CU_ASSERT_STRING_EQUAL(entry_str(py, "created"), "2026-01-02T03:04:05.123456789Z");
	CU_ASSERT_STRING_EQUAL(entry_str(py, "pin_ref"), "x/labelled:1@" FAKE_ID);
	CU_ASSERT(json_object_object_get_ex(py, "labels", &v) &&
		  json_object_object_length(v) == 1); /* brig's labels only */
	CU_ASSERT(json_object_object_get_ex(py, "labelled", &v) && json_object_get_boolean(v));
	CU_ASSERT(json_object_object_get_ex(py, "size", &v) && json_object_get_int64(v) == 1234567);
	CU_ASSERT_PTR_NULL(entry_str(py, "problem"));
	json_object *node = image_entry(rep, BRIG_LANG_NODE);
	CU_ASSERT(json_object_object_get_ex(node, "present", &v) && v &&
		  !json_object_get_boolean(v));
	CU_ASSERT_PTR_NOT_NULL(strstr(entry_str(node, "problem"), "never pulls"));
	json_object *sh = image_entry(rep, BRIG_LANG_SHELL);
	CU_ASSERT(json_object_object_get_ex(sh, "pinned", &v) && json_object_get_boolean(v));
	CU_ASSERT(json_object_object_get_ex(sh, "pin_holds", &v) && v &&
		  !json_object_get_boolean(v));
	CU_ASSERT_PTR_NULL(entry_str(sh, "pin_ref")); /* no line that would pin the other one */
	CU_ASSERT_PTR_NOT_NULL(
		strstr(entry_str(sh, "problem"), FAKE_ID " now, not the pinned " OTHER_ID));
	/* the status page's images are the same entries */
	json_object *st = brig_status_object(ctx), *imgs = NULL, *all = NULL;
	CU_ASSERT_FATAL(json_object_object_get_ex(st, "images", &imgs));
	CU_ASSERT_FATAL(json_object_object_get_ex(rep, "images", &all));
	CU_ASSERT_TRUE(json_object_equal(imgs, all));
	json_object_put(st);
	json_object_put(rep);
	/* the shell run is refused, naming both IDs, before anything starts */
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "id", .code_len = 2 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), BRIG_E_REFUSED);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, OTHER_ID) &&
			       strstr(err->message, FAKE_ID));
	CU_ASSERT_PTR_NULL(res.backend);
	brig_error_free(err);
	brig_result_clear(&res);
	brig_ctx_free(ctx);
}

/* A pinned image that is gone: rebuilding it is not enough, it needs a new pin. */
static void test_images_pinned_missing(void)
{
	brig_ctx *ctx = make_ctx("{\"images\": {\"node\": \"x/missing:1@" FAKE_ID "\"}}");
	json_object *rep = brig_images_object(ctx), *v = NULL;
	json_object *node = image_entry(rep, BRIG_LANG_NODE);
	CU_ASSERT(json_object_object_get_ex(node, "present", &v) && v &&
		  !json_object_get_boolean(v));
	CU_ASSERT(json_object_object_get_ex(node, "pinned", &v) && json_object_get_boolean(v));
	CU_ASSERT_STRING_EQUAL(entry_str(node, "pin"), FAKE_ID);
	CU_ASSERT_PTR_NULL(entry_str(node, "pin_ref"));
	CU_ASSERT_PTR_NOT_NULL(strstr(entry_str(node, "problem"), "pin the new one"));
	json_object_put(rep);
	brig_ctx_free(ctx);
}

/* A backend that cannot start a box from an ID runs tags as before, and is refused a pinned
 * image rather than run it by a name that may have moved. */
static void test_pinned_needs_image_id_feature(void)
{
	brig_ctx *ctx = make_ctx("{\"backend\": \"fake-nofeat\", \"seccomp\": \"engine\", "
				 "\"images\": {\"shell\": \"x/pin:1@" FAKE_ID "\"}}");
	brig_request req = { .language = BRIG_LANG_PYTHON, .code = "hi", .code_len = 2 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), 0);
	brig_result_clear(&res);
	req.language = BRIG_LANG_SHELL;
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), BRIG_E_UNAVAILABLE);
	CU_ASSERT_PTR_NOT_NULL(err &&
			       strstr(err->message, "starting a box from a pinned image ID"));
	brig_error_free(err);
	brig_result_clear(&res);
	brig_ctx_free(ctx);
}

/* Copy a built fake plugin into `dir` as `name` with `mode`. */
static char *copy_plugin(const char *dir, const char *from, const char *name, mode_t mode)
{
	cleanup_free char *src = plugin(from);
	char *dst = xasprintf("%s/%s", dir, name);
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC),
	    out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(in >= 0 && out >= 0);
	ssize_t r;
	while ((r = read(in, buf, sizeof buf)) > 0)
		CU_ASSERT_EQUAL(write_all(out, buf, (size_t)r), 0);
	close(in);
	close(out);
	CU_ASSERT_EQUAL(chmod(dst, mode), 0);
	return dst;
}

/* Code loaded into every brig process: a plugin file or directory others may write is refused
 * with the reason, before dlopen. */
static void test_writable_plugin_refused(void)
{
	char dir[] = "/tmp/brig-test-plugins-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL(chmod(dir, 0755), 0);
	cleanup_free char *ok = copy_plugin(dir, "fake", "fake.so", 0644);
	cleanup_free char *gw = copy_plugin(dir, "fake-gvisor", "fake-gvisor.so", 0664);
	loaded_backend *list = NULL;
	size_t n = 0;
	char **refused = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(loader_load_dir(dir, &list, &n, &refused, &err), 0);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL_FATAL(strv_len(refused), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(refused[0], "writable by its group"));
	CU_ASSERT_PTR_NOT_NULL(strstr(refused[0], gw));
	for (size_t i = 0; i < n; i++)
		loader_unload(&list[i]);
	free(list);
	strv_free(refused);
	/* a world-writable directory: nothing in it is loaded */
	CU_ASSERT_EQUAL(chmod(dir, 0777), 0);
	CU_ASSERT_EQUAL(loader_load_dir(dir, &list, &n, &refused, &err), BRIG_E_PLUGIN);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "writable by everyone"));
	brig_error_free(err);
	/* a file of another user */
	CU_ASSERT_EQUAL(chmod(dir, 0755), 0);
	if (geteuid() == 0) {
		CU_ASSERT_EQUAL(chown(ok, 4242, 4242), 0);
		loaded_backend lb;
		err = NULL;
		CU_ASSERT_EQUAL(loader_load_file(ok, &lb, &err), BRIG_E_PLUGIN);
		CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "belongs to uid 4242"));
		brig_error_free(err);
	}
	unlink(ok);
	unlink(gw);
	rmdir(dir);
}

/* A backend that lacks a feature the box needs is refused with the reason, never used: the
 * default policy's box has brig's seccomp profile, which fake-nofeat does not honour. */
static void test_missing_feature_refused(void)
{
	expect_unavailable("{\"backend\": \"fake-nofeat\"}", "lacks support for a seccomp profile");
	brig_ctx *ctx = make_ctx("{\"backend\": \"fake-nofeat\", \"seccomp\": \"engine\"}");
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "hi", .code_len = 2 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_run(ctx, &req, NULL, &res, &err), 0); /* no profile: usable */
	CU_ASSERT_STRING_EQUAL(res.backend, "fake-nofeat");
	brig_result_clear(&res);
	/* cancellation is a feature too: fake-nofeat has it, so a cancel fd is fine */
	brig_ctx_free(ctx);
}

/* An older, shorter table (only the hooks up to run): it loads, runs, and the host never reads
 * past its struct_size (the warm pool finds no prepare hook and says so). */
static void test_old_short_table(void)
{
	brig_ctx *ctx = make_ctx("{\"backend\": \"fake-old\", \"warm_pool\": 1}");
	loaded_backend *lb = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(dispatch_select(ctx, &lb, NULL, &err), 0);
	CU_ASSERT_EQUAL(lb->be->struct_size, BRIG_BACKEND_MIN_SIZE);
	CU_ASSERT_PTR_NULL(BE_HOOK(lb->be, image_id));
	CU_ASSERT_PTR_NULL(BE_HOOK(lb->be, prepare));
	CU_ASSERT_EQUAL(brig_ctx_start_warm_pool(ctx, &err), 0);
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "exit 4", .code_len = 6 };
	brig_result res = { .struct_size = sizeof res };
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), 0);
	CU_ASSERT_EQUAL(res.exit_code, 4);
	CU_ASSERT_FALSE(res.pooled);
	brig_result_clear(&res);
	bool said = false; /* the pool's worker makes its choice in the background */
	for (int i = 0; i < 200 && !said; i++) {
		json_object *st = brig_status_object(ctx), *pool, *reason;
		said = json_object_object_get_ex(st, "pool", &pool) &&
		       json_object_object_get_ex(pool, "reason", &reason) && reason &&
		       strstr(json_object_get_string(reason), "cannot prepare");
		json_object_put(st);
		if (!said)
			usleep(10000);
	}
	CU_ASSERT_TRUE(said);
	brig_ctx_free(ctx);
}

/* Once a box was attempted, a failure of the machinery keeps what the program printed: the host
 * reports sandbox_error with the backend's reason and the captured output. */
static void test_midway_failure_keeps_output(void)
{
	brig_ctx *ctx = make_ctx(NULL);
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "midfail", .code_len = 7 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_run(ctx, &req, NULL, &res, &err), 0);
	CU_ASSERT_EQUAL(res.verdict, BRIG_VERDICT_SANDBOX_ERROR);
	CU_ASSERT_EQUAL(res.exit_code, -1);
	CU_ASSERT_STRING_EQUAL(res.stdout_data, "partial");
	CU_ASSERT_PTR_NOT_NULL(res.error && strstr(res.error, "died midway"));
	brig_result_clear(&res);
	brig_ctx_free(ctx);
}

/* A negative probe is asked again after a short back-off: a process started while the engine
 * was down runs code once it is up, without a restart, and the error said retrying may help. */
static void test_probe_recovers(void)
{
	setenv("FAKE_DOWN", "1", 1);
	brig_ctx *ctx = make_ctx("{\"backend\": \"fake\"}");
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "hi", .code_len = 2 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), BRIG_E_UNAVAILABLE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_TRUE(err->transient);
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "the fake engine is down"));
	brig_error_free(err);
	err = NULL;
	unsetenv("FAKE_DOWN");
	/* still within the back-off: the cached answer */
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), BRIG_E_UNAVAILABLE);
	brig_error_free(err);
	err = NULL;
	usleep((PROBE_BACKOFF_MIN_MS + 100) * 1000);
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), 0);
	CU_ASSERT_EQUAL(res.verdict, BRIG_VERDICT_SUCCESS);
	brig_result_clear(&res);
	brig_ctx_free(ctx);
}

/* A positive answer holds until a run fails transiently; then the backend is asked again. */
static void test_probe_rechecked_after_failure(void)
{
	brig_ctx *ctx = make_ctx("{\"backend\": \"fake\"}");
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "midfail", .code_len = 7 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), 0); /* transient sandbox error */
	brig_result_clear(&res);
	setenv("FAKE_DOWN", "1", 1); /* the next selection probes, and learns it is down */
	req.code = "hi";
	req.code_len = 2;
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), BRIG_E_UNAVAILABLE);
	brig_error_free(err);
	unsetenv("FAKE_DOWN");
	brig_ctx_free(ctx);
}

typedef struct hang_arg {
	brig_ctx *ctx;
	int cancel_fd;
	int rc;
} hang_arg;

static void *hang_thread(void *p)
{
	hang_arg *a = p;
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "hang", .code_len = 4 };
	brig_run_options o = { .struct_size = sizeof o, .cancel_fd = a->cancel_fd };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	a->rc = brig_run(a->ctx, &req, &o, &res, &err);
	brig_error_free(err);
	brig_result_clear(&res);
	return NULL;
}

/* max_concurrent_runs holds in the library: a run beyond it waits (bounded) or is refused
 * with BRIG_E_BUSY, and a cancel ends the wait. */
static void test_max_concurrent_runs(void)
{
	brig_ctx *ctx = make_ctx("{\"max_concurrent_runs\": 1, \"timeout_seconds\": 10}");
	int hold[2];
	CU_ASSERT_FATAL(pipe(hold) == 0);
	hang_arg a = { .ctx = ctx, .cancel_fd = hold[0] };
	pthread_t t;
	CU_ASSERT_FATAL(pthread_create(&t, NULL, hang_thread, &a) == 0);
	usleep(200 * 1000); /* the first run holds the only slot */
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "hi", .code_len = 2 };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	brig_run_options now = { .struct_size = sizeof now, .cancel_fd = -1, .queue_wait_ms = -1 };
	CU_ASSERT_EQUAL(brig_run(ctx, &req, &now, &res, &err), BRIG_E_BUSY);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "max_concurrent_runs"));
	brig_error_free(err);
	err = NULL;
	brig_run_options wait = { .struct_size = sizeof wait,
				  .cancel_fd = -1,
				  .queue_wait_ms = 300 };
	int64_t t0 = now_ms();
	CU_ASSERT_EQUAL(brig_run(ctx, &req, &wait, &res, &err), BRIG_E_BUSY);
	CU_ASSERT(now_ms() - t0 >= 250);
	brig_error_free(err);
	err = NULL;
	int cancel[2];
	CU_ASSERT_FATAL(pipe(cancel) == 0);
	CU_ASSERT_EQUAL(write(cancel[1], "x", 1), 1);
	brig_run_options c = { .struct_size = sizeof c, .cancel_fd = cancel[0] };
	CU_ASSERT_EQUAL(brig_run(ctx, &req, &c, &res, &err), BRIG_E_CANCELLED);
	brig_error_free(err);
	err = NULL;
	CU_ASSERT_EQUAL(write(hold[1], "x", 1), 1); /* end the first run: the slot frees */
	brig_run_options w2 = { .struct_size = sizeof w2, .cancel_fd = -1, .queue_wait_ms = 5000 };
	CU_ASSERT_EQUAL(brig_run(ctx, &req, &w2, &res, &err), 0);
	CU_ASSERT_EQUAL(res.verdict, BRIG_VERDICT_SUCCESS);
	brig_result_clear(&res);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(a.rc, 0);
	for (int i = 0; i < 2; i++)
		close(hold[i]), close(cancel[i]);
	brig_ctx_free(ctx);
}

/* A caller built against an older brig.h passes a shorter brig_result: the library writes no
 * byte beyond its struct_size. */
static void test_result_struct_size(void)
{
	brig_ctx *ctx = make_ctx(NULL);
	struct {
		brig_result res;
		unsigned char guard[8];
	} box;
	memset(&box, 0xAB, sizeof box);
	box.res.struct_size = offsetof(brig_result, pooled);
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "hi", .code_len = 2 };
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &box.res, &err), 0);
	CU_ASSERT_EQUAL(box.res.struct_size, offsetof(brig_result, pooled));
	CU_ASSERT_STRING_EQUAL(box.res.stdout_data, "hi");
	const unsigned char *tail = (const unsigned char *)&box.res + offsetof(brig_result, pooled);
	CU_ASSERT_EQUAL(tail[0], 0xAB); /* `pooled` untouched */
	brig_result_clear(&box.res);
	CU_ASSERT_EQUAL(tail[0], 0xAB);
	box.res.struct_size = 0;
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &box.res, &err), BRIG_E_USAGE);
	brig_error_free(err);
	brig_ctx_free(ctx);
}

/* `brig gc` (and the reap at every start) removes only what this installation made for a brig
 * of this pid namespace that is gone; it asks the engine for this installation's boxes. */
static void test_gc_only_orphans(void)
{
	struct stat ns;
	CU_ASSERT_EQUAL_FATAL(stat("/proc/self/ns/pid", &ns), 0);
	unsigned long long self_start = 0;
	CU_ASSERT_EQUAL_FATAL(proc_starttime(0, &self_start), 0);
	unsigned long long ino = (unsigned long long)ns.st_ino;
	cleanup_free char *boxes = xasprintf(
		"brig-00112233445566aa|999999:5:%llu;" /* dead owner: removed */
		"brig-00112233445566bb|%ld:%llu:%llu;" /* this very process: alive */
		"brig-00112233445566cc|%ld:%llu:%llu;" /* another pid namespace: not ours */
		"brig-00112233445566dd|%ld:%llu:%llu;" /* our pid, reused: dead, removed */
		"brig-mine|999999:5:%llu;"             /* not a name brig makes */
		"brig-00112233445566ee|whoever;"       /* a malformed owner */
		"brig-00112233445566ff|999999:5;"      /* the old form, dead: removed */
		/* claimed spare holders (no owner): removed once their box is gone */
		"brig-00112233445566ab-net|;"   /* its box is not listed: removed */
		"brig-00112233445566bb-net|;"   /* its box bb still exists: kept */
		"brig-00112233445566aa-net|;"   /* its box aa is an orphan: removed */
		"brig-00112233445566ac-spare|;" /* an unclaimed spare: its own rules */
		"brig-0011223344556ab-net|",    /* not a name brig makes */
		ino, (long)getpid(), self_start, ino, (long)getpid(), self_start, ino + 1,
		(long)getpid(), self_start + 1, ino, ino);
	setenv("FAKE_BOXES", boxes, 1);
	brig_ctx *ctx = make_ctx("{\"backend\": \"fake\"}");
	int removed = -1;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_gc(ctx, &removed, &err), 0);
	CU_ASSERT_EQUAL(removed, 5);
	const char *got = NULL; /* the log of the plugin gc went through (each has its own) */
	for (size_t i = 0; i < ctx->n_backends; i++) {
		const char *(*log)(void) = NULL;
		*(void **)&log = dlsym(ctx->backends[i].handle, "fake_gc_log");
		if (log && log()[0])
			got = log();
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	cleanup_free char *want =
		xasprintf("list brig.install=%s;rm brig-00112233445566aa;"
			  "rm brig-00112233445566dd;rm brig-00112233445566ff;"
			  "rm brig-00112233445566ab-net;rm brig-00112233445566aa-net;",
			  ctx->install);
	CU_ASSERT_STRING_EQUAL(got, want);
	CU_ASSERT_EQUAL(strlen(ctx->install), 16);
	unsetenv("FAKE_BOXES");
	brig_ctx_free(ctx);
}

/* The audit log: a reader's lock on it does not stall auditing (the appends lock a file only
 * brig's user can open), a FIFO in its place fails at once instead of hanging, a log others may
 * write is refused, one everyone may read is a warning. */
static void test_audit_hardening(void)
{
	char dir[] = "/tmp/brig-audit-dir-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	cleanup_free char *path = xasprintf("%s/audit.log", dir);
	cleanup_free char *lock = xasprintf("%s/audit.log.lock", dir);
	brig_ctx *ctx = make_ctx(NULL);
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_ctx_set_audit_log(ctx, path, &err), 0);
	struct stat st;
	CU_ASSERT_EQUAL(stat(lock, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	CU_ASSERT_PTR_NULL(brig_ctx_warnings(ctx)[0]);
	/* a reader holds a shared lock on the log itself: runs are audited all the same */
	int reader = open(path, O_RDONLY | O_CLOEXEC);
	CU_ASSERT_FATAL(reader >= 0);
	CU_ASSERT_EQUAL(flock(reader, LOCK_SH | LOCK_NB), 0);
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "hi", .code_len = 2 };
	brig_result res = { .struct_size = sizeof res };
	int64_t t0 = now_ms();
	CU_ASSERT_EQUAL(brig_run(ctx, &req, NULL, &res, &err), 0);
	CU_ASSERT(now_ms() - t0 < 2000);
	brig_result_clear(&res);
	CU_ASSERT_EQUAL(count_lines(path, "\"verdict\":\"success\""), 1);
	close(reader);
	/* whoever holds the lock file stalls it: it is this user's, mode 0600, checked */
	CU_ASSERT_EQUAL(chmod(lock, 0644), 0);
	CU_ASSERT_EQUAL(brig_ctx_set_audit_log(ctx, path, &err), BRIG_E_AUDIT);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "mode 0600"));
	brig_error_free(err);
	err = NULL;
	CU_ASSERT_EQUAL(chmod(lock, 0600), 0);
	/* writable by the group: refused; readable by all: a warning */
	CU_ASSERT_EQUAL(chmod(path, 0620), 0);
	CU_ASSERT_EQUAL(brig_ctx_set_audit_log(ctx, path, &err), BRIG_E_AUDIT);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "writable by its group"));
	brig_error_free(err);
	err = NULL;
	CU_ASSERT_EQUAL(chmod(path, 0644), 0);
	CU_ASSERT_EQUAL(brig_ctx_set_audit_log(ctx, path, &err), 0);
	const char *const *w = brig_ctx_warnings(ctx);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w[0]);
	CU_ASSERT_PTR_NOT_NULL(strstr(w[0], "readable by every user"));
	/* a FIFO in the log's place: refused at once, nothing hangs */
	cleanup_free char *fifo = xasprintf("%s/fifo.log", dir);
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
	t0 = now_ms();
	CU_ASSERT_EQUAL(brig_ctx_set_audit_log(ctx, fifo, &err), BRIG_E_AUDIT);
	CU_ASSERT(now_ms() - t0 < 1000);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "not a regular file"));
	brig_error_free(err);
	brig_ctx_free(ctx);
	unlink(fifo);
	unlink(lock);
	unlink(path);
	rmdir(dir);
}

static CU_TestInfo tests[] = {
	{ "good plugin loads", test_good_plugin },
	{ "wrong ABI major refused", test_wrong_abi },
	{ "short table refused", test_short_table },
	{ "missing entry symbol refused", test_missing_symbol },
	{ "relative path refused", test_relative_path_refused },
	{ "non-ELF file refused", test_not_a_shared_object },
	{ "directory scan loads good, lists refused", test_dir_scan },
	{ "directory scan skips lib*.so (shared by plugins)", test_dir_scan_skips_libraries },
	{ "auto picks the available backend", test_auto_picks_available },
	{ "gvisor minimum unavailable fails closed", test_gvisor_minimum_fails_closed },
	{ "named backend unavailable fails closed", test_named_unavailable_fails_closed },
	{ "named backend not installed", test_named_missing },
	{ "named backend weaker than minimum", test_named_weaker_than_minimum },
	{ "run fills the result", test_run_and_result },
	{ "backend failure is sandbox_error", test_backend_failure_is_sandbox_error },
	{ "invalid UTF-8 output stays valid JSON", test_invalid_utf8_output_is_valid_json },
	{ "audit: one line per run, refused included, sha256, no code", test_audit_lines },
	{ "audit: unwritable log fails closed", test_audit_unwritable_fails_closed },
	{ "sha256: FIPS 180-2 vectors, nettle loaded per hash", test_sha256_vectors },
	{ "cancel fd reaches the backend", test_cancel_fd },
	{ "images report", test_images_report },
	{ "images report: a pinned image that is gone", test_images_pinned_missing },
	{ "pinned image needs BRIG_FEATURE_IMAGE_ID", test_pinned_needs_image_id_feature },
	{ "status json", test_status_json },
	{ "plugin writable by others refused", test_writable_plugin_refused },
	{ "backend lacking a needed feature refused", test_missing_feature_refused },
	{ "older, shorter table: loads, runs, nothing read past it", test_old_short_table },
	{ "a failure midway keeps the output", test_midway_failure_keeps_output },
	{ "a negative probe is retried after its back-off", test_probe_recovers },
	{ "a positive probe is re-checked after a failed run", test_probe_rechecked_after_failure },
	{ "max_concurrent_runs: busy, bounded wait, cancel", test_max_concurrent_runs },
	{ "result struct_size: nothing written past it", test_result_struct_size },
	{ "gc: only this installation's boxes of dead owners", test_gc_only_orphans },
	{ "audit: readers cannot stall it, FIFO, modes", test_audit_hardening },
	CU_TEST_INFO_NULL,
};

BRIG_CUNIT_MAIN("loader", tests)
