/* test_policy.c - the policy validator (load, override, JSON output, copy) and the container
 * spec it renders.  Every key's accepted edges and first rejected values are exercised, and every
 * error's "ORIGIN: KEY.PATH: reason" shape is checked.
 */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "egress.h"
#include "policy.h"
#include "spec.h"

#define TEST_INIT "/usr/lib/brig/brig-init" /* not run: only its path goes into the box */
#define TEST_USER "2000000007:65534"        /* as uid_lease_user would lease it */
#include "util.h"

#define ORIGIN "policy.json"
#define CLI    "command line"
#define HEX64  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define MIB    (1024 * 1024)

/* ---- helpers ----------------------------------------------------------------------------- */

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool starts_with(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static brig_policy *load_ok(const char *json)
{
	brig_policy *p = NULL;
	brig_error *err = NULL;
	int r = brig_policy_load_string(json, ORIGIN, &p, &err);
	if (r != 0)
		fprintf(stderr, "\n  unexpected error for %s: %s\n", json,
			err ? err->message : "?");
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_PTR_NULL(err);
	CU_ASSERT_PTR_NOT_NULL(p);
	brig_error_free(err);
	return p;
}

/* The load fails with BRIG_E_POLICY, a message starting with `prefix` and containing `needle`. */
static void load_fails(const char *json, const char *prefix, const char *needle)
{
	brig_policy *p = NULL;
	brig_error *err = NULL;
	int r = brig_policy_load_string(json, ORIGIN, &p, &err);
	CU_ASSERT_EQUAL(r, BRIG_E_POLICY);
	CU_ASSERT_PTR_NULL(p);
	brig_policy_free(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_EQUAL(err->status, BRIG_E_POLICY);
	bool ok = starts_with(err->message, prefix) && (!needle || strstr(err->message, needle));
	if (!ok)
		fprintf(stderr, "\n  %s\n  -> %s\n  wanted %s ... %s\n", json, err->message, prefix,
			needle ? needle : "");
	CU_ASSERT_TRUE(ok);
	brig_error_free(err);
}

/* {"key": value} */
static char *one(const char *key, const char *value)
{
	return xasprintf("{\"%s\": %s}", key, value);
}

static void key_ok(const char *key, const char *value)
{
	cleanup_free char *json = one(key, value);
	brig_policy_free(load_ok(json));
}

static void key_fails(const char *key, const char *value, const char *needle)
{
	cleanup_free char *json = one(key, value);
	cleanup_free char *prefix = xasprintf(ORIGIN ": %s: ", key);
	load_fails(json, prefix, needle);
}

/* A key of the effective policy, read back through brig_policy_to_json. */
static json_object *policy_get(const brig_policy *p, const char *key)
{
	cleanup_free char *text = brig_policy_to_json(p);
	json_object *obj = json_tokener_parse(text);
	json_object *v = NULL;
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(obj, key, &v));
	json_object_get(v);
	json_object_put(obj);
	return v;
}

static int64_t policy_int(const brig_policy *p, const char *key)
{
	json_object *v = policy_get(p, key);
	int64_t n = json_object_get_int64(v);
	json_object_put(v);
	return n;
}

/* Accepted min and max, rejected min-1 and max+1, in a file and as an override.  `extra` is put
 * before the key so that the cross-field rule on timeouts holds. */
static void int_edges(const char *key, long min, long max, const char *extra)
{
	for (int i = 0; i < 4; i++) {
		long v = i == 0 ? min : i == 1 ? max : i == 2 ? min - 1 : max + 1;
		cleanup_free char *json = xasprintf("{%s\"%s\": %ld}", extra, key, v);
		if (i < 2) {
			brig_policy *p = load_ok(json);
			CU_ASSERT_EQUAL(policy_int(p, key), v);
			brig_policy_free(p);
			continue;
		}
		cleanup_free char *prefix =
			xasprintf(ORIGIN ": %s: %ld is out of range (%ld..%ld)", key, v, min, max);
		load_fails(json, prefix, NULL);
	}
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* A fresh file under /tmp (absolute, as seccomp paths must be); caller unlinks and frees. */
static char *temp_file(const char *content)
{
	char tmpl[] = "/tmp/brig-test-policy-XXXXXX";
	int fd = mkstemp(tmpl);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	write_file(tmpl, content, strlen(content));
	return xstrdup(tmpl);
}

static bool strv_same(char **a, char **b)
{
	size_t i = 0;
	for (; a && b && a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return (!a || !a[i]) && (!b || !b[i]);
}

static bool policy_equal(const brig_policy *a, const brig_policy *b)
{
	bool eq = a->timeout_seconds == b->timeout_seconds &&
		  a->max_timeout_seconds == b->max_timeout_seconds &&
		  a->memory_mb == b->memory_mb && a->cpus == b->cpus &&
		  a->pids_limit == b->pids_limit && a->nofile == b->nofile &&
		  a->tmpfs_mb == b->tmpfs_mb && a->max_input_bytes == b->max_input_bytes &&
		  a->max_output_bytes == b->max_output_bytes && a->network == b->network &&
		  str_eq(a->user, b->user) && a->require_pinned == b->require_pinned &&
		  str_eq(a->backend, b->backend) && a->isolation == b->isolation &&
		  str_eq(a->seccomp_profile, b->seccomp_profile) &&
		  strv_same(a->seccomp_deny, b->seccomp_deny) &&
		  a->max_concurrent_runs == b->max_concurrent_runs &&
		  str_eq(a->audit_log, b->audit_log) && a->warm_pool == b->warm_pool &&
		  a->memory_budget_mb == b->memory_budget_mb;
	for (int i = 0; i < BRIG_LANG_COUNT; i++)
		eq = eq && str_eq(a->images[i], b->images[i]);
	return eq;
}

/* Override that must succeed with the given loosened flag. */
static void override_ok(brig_policy *p, const char *key, const char *value, bool loosened)
{
	brig_error *err = NULL;
	bool l = !loosened;
	int r = brig_policy_override(p, key, value, &l, &err);
	if (r != 0)
		fprintf(stderr, "\n  override %s=%s: %s\n", key, value, err ? err->message : "?");
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_PTR_NULL(err);
	if (l != loosened)
		fprintf(stderr, "\n  override %s=%s: loosened=%d\n", key, value, l);
	CU_ASSERT_EQUAL(l, loosened);
	brig_error_free(err);
}

/* Override that must fail with `status`, a message starting with `prefix`, and no change. */
static void override_fails(brig_policy *p, const char *key, const char *value, int status,
			   const char *prefix)
{
	brig_policy *before = brig_policy_copy(p);
	brig_error *err = NULL;
	bool l = true;
	int r = brig_policy_override(p, key, value, &l, &err);
	CU_ASSERT_EQUAL(r, status);
	CU_ASSERT_FALSE(l);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_EQUAL(err->status, status);
	if (!starts_with(err->message, prefix))
		fprintf(stderr, "\n  override %s=%s -> %s\n  wanted %s\n", key, value, err->message,
			prefix);
	CU_ASSERT_TRUE(starts_with(err->message, prefix));
	CU_ASSERT_TRUE(policy_equal(p, before));
	brig_error_free(err);
	brig_policy_free(before);
}

static int make(const brig_policy *p, brig_language lang, const char *code, int timeout,
		brig_timeout_mode mode, int isolation, brig_spec **spec, char **notice,
		brig_error **err)
{
	brig_request req = { .language = lang,
			     .code = code,
			     .code_len = code ? strlen(code) : 0,
			     .timeout_seconds = timeout };
	spec_target t = { .runtime = isolation == BRIG_ISOLATION_GVISOR ? "runsc" : "runc",
			  .isolation = isolation,
			  .init = TEST_INIT,
			  .user = strcmp(p->user, "auto") == 0 ? TEST_USER : NULL };
	return spec_build(p, &req, mode, &t, spec, notice, err);
}

static brig_spec *make_ok(const brig_policy *p, brig_language lang, int isolation)
{
	brig_spec *s = NULL;
	brig_error *err = NULL;
	int r = make(p, lang, "print(1)\n", 0, BRIG_TIMEOUT_REFUSE, isolation, &s, NULL, &err);
	if (r != 0)
		fprintf(stderr, "\n  make_spec: %s\n", err ? err->message : "?");
	CU_ASSERT_EQUAL(r, 0);
	brig_error_free(err);
	return s;
}

static bool strv_eq(char **v, const char *const *want)
{
	size_t i = 0;
	for (; v && v[i] && want[i]; i++)
		if (strcmp(v[i], want[i]) != 0)
			return false;
	return v && !v[i] && !want[i];
}

static unsigned long long self_starttime(void)
{
	char buf[4096] = { 0 };
	FILE *f = fopen("/proc/self/stat", "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	unsigned long long st = 0;
	CU_ASSERT_EQUAL(proc_stat_starttime(buf, &st), 0);
	return st;
}

/* ---- defaults and ranges ------------------------------------------------------------------- */

static void test_defaults(void)
{
	brig_policy *p = brig_policy_new_default();
	CU_ASSERT_EQUAL(p->timeout_seconds, 5);
	CU_ASSERT_EQUAL(p->max_timeout_seconds, 30);
	CU_ASSERT_EQUAL(p->memory_mb, 256);
	CU_ASSERT_DOUBLE_EQUAL(p->cpus, 1.0, 0);
	CU_ASSERT_EQUAL(p->pids_limit, 64);
	CU_ASSERT_EQUAL(p->nofile, 64);
	CU_ASSERT_EQUAL(p->tmpfs_mb, 64);
	CU_ASSERT_EQUAL(p->max_input_bytes, 65536);
	CU_ASSERT_EQUAL(p->max_output_bytes, 131072);
	CU_ASSERT_FALSE(p->network);
	CU_ASSERT_STRING_EQUAL(p->user, "auto");
	CU_ASSERT_STRING_EQUAL(p->images[BRIG_LANG_PYTHON], "brig/python:bookworm");
	CU_ASSERT_STRING_EQUAL(p->images[BRIG_LANG_NODE], "brig/node:bookworm");
	CU_ASSERT_STRING_EQUAL(p->images[BRIG_LANG_SHELL], "brig/shell:bookworm");
	CU_ASSERT_FALSE(p->require_pinned);
	CU_ASSERT_STRING_EQUAL(p->backend, "auto");
	CU_ASSERT_EQUAL(p->isolation, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_STRING_EQUAL(p->seccomp_profile, "brig");
	CU_ASSERT_PTR_NULL(p->seccomp_deny);
	CU_ASSERT_EQUAL(p->max_concurrent_runs, 4);
	CU_ASSERT_PTR_NULL(p->audit_log);
	CU_ASSERT_STRING_EQUAL(p->gvisor_runtime, "runsc-seccomp");
	CU_ASSERT_EQUAL(p->gvisor_pids_limit, 0);
	CU_ASSERT_EQUAL(policy_validate(p, "defaults", NULL), 0);
	brig_policy_free(p);
}

static void test_empty_object_is_defaults(void)
{
	brig_policy *d = brig_policy_new_default();
	brig_policy *p = load_ok("{}");
	CU_ASSERT_TRUE(policy_equal(p, d));
	brig_policy_free(p);
	brig_policy_free(d);
}

static void test_edges_timeout(void)
{
	int_edges("timeout_seconds", POLICY_TIMEOUT_MIN, POLICY_TIMEOUT_MAX,
		  "\"max_timeout_seconds\": 3600, ");
}

static void test_edges_max_timeout(void)
{
	int_edges("max_timeout_seconds", POLICY_TIMEOUT_MIN, POLICY_TIMEOUT_MAX,
		  "\"timeout_seconds\": 1, ");
}

static void test_edges_memory(void)
{
	int_edges("memory_mb", 16, 65536, "");
}

static void test_edges_pids(void)
{
	int_edges("pids_limit", 8, 4096, "");
}

static void test_edges_nofile(void)
{
	int_edges("nofile", 16, 65536, "");
}

static void test_edges_tmpfs(void)
{
	int_edges("tmpfs_mb", 1, 4096, "");
}

static void test_edges_input(void)
{
	int_edges("max_input_bytes", 1, 16 * MIB, "");
}

static void test_edges_output(void)
{
	int_edges("max_output_bytes", 1024, 64 * MIB, "");
}

static void test_edges_concurrency(void)
{
	int_edges("max_concurrent_runs", 1, 64, "");
}

static void test_edges_cpus(void)
{
	brig_policy *p = load_ok("{\"cpus\": 0.01}");
	CU_ASSERT_DOUBLE_EQUAL(p->cpus, 0.01, 0);
	brig_policy_free(p);
	p = load_ok("{\"cpus\": 64}");
	CU_ASSERT_DOUBLE_EQUAL(p->cpus, 64.0, 0);
	brig_policy_free(p);
	p = load_ok("{\"cpus\": 2}"); /* an integer is a number too */
	CU_ASSERT_DOUBLE_EQUAL(p->cpus, 2.0, 0);
	brig_policy_free(p);
	key_fails("cpus", "0.0099", "0.0099 is out of range (0.01..64)");
	key_fails("cpus", "64.01", "is out of range");
	key_fails("cpus", "0", "is out of range");
	key_fails("cpus", "-1", "is out of range");
	/* json-c accepts the literals; the one strict parser does not: they are not JSON */
	load_fails("{\"cpus\": NaN}", ORIGIN ":", "invalid JSON: NaN or Infinity");
	load_fails("{\"cpus\": [-Infinity]}", ORIGIN ":", "invalid JSON: NaN or Infinity");
	key_fails("cpus", "1e400", "is out of range");
}

static void test_huge_integer_refused(void)
{
	key_fails("memory_mb", "99999999999999999999", "is out of range");
	key_fails("memory_mb", "-99999999999999999999", "is out of range");
	key_fails("max_output_bytes", "4294968320", "is out of range"); /* 2^32 + 1024 */
}

/* ---- types and unknown keys ---------------------------------------------------------------- */

static void test_int_wrong_types(void)
{
	key_fails("memory_mb", "512.5", "expected an integer, got a non-integer number");
	key_fails("memory_mb", "5.0", "expected an integer, got a non-integer number");
	key_fails("timeout_seconds", "\"5\"", "expected an integer, got a string");
	key_fails("pids_limit", "true", "expected an integer, got a boolean");
	key_fails("nofile", "null", "expected an integer, got null");
	key_fails("tmpfs_mb", "[64]", "expected an integer, got an array");
	key_fails("max_concurrent_runs", "{}", "expected an integer, got an object");
}

static void test_other_wrong_types(void)
{
	key_fails("cpus", "\"1\"", "expected a number, got a string");
	key_fails("network", "\"true\"", "expected true or false, got a string");
	key_fails("network", "1", "expected true or false, got an integer");
	key_fails("require_pinned", "0", "expected true or false");
	key_fails("user", "65534", "expected a string, got an integer");
	key_fails("backend", "null", "expected a string, got null");
	key_fails("isolation", "2", "expected a string");
	key_fails("seccomp", "false", "expected a string or an object, got a boolean");
	key_fails("audit_log", "5", "expected a string, got an integer");
	key_fails("images", "\"brig/python:bookworm\"", "expected an object, got a string");
	load_fails("{\"images\": {\"python\": 3}}",
		   ORIGIN ": images.python: ", "expected a string, got an integer");
	load_fails("{\"images\": {\"node\": null}}", ORIGIN ": images.node: ", "got null");
}

static void test_nul_in_string(void)
{
	key_fails("user", "\"65534:65534\\u0000junk\"", "contains a NUL character");
	load_fails("{\"images\": {\"shell\": \"a:1\\u0000b\"}}", ORIGIN ": images.shell: ", "NUL");
}

static void test_unknown_top_level_key(void)
{
	load_fails("{\"memory\": 512}", ORIGIN ": memory: unknown key", NULL);
	load_fails("{\"memory_mb\": 512, \"Network\": true}", ORIGIN ": Network: unknown key",
		   NULL);
	/* seccomp_deny is a struct field; the key is seccomp.deny */
	load_fails("{\"seccomp_deny\": []}", ORIGIN ": seccomp_deny: unknown key", NULL);
	/* an odd key name is quoted and escaped, never printed raw */
	load_fails("{\"a b\\u001b[31m\": 1}", ORIGIN ": \"a b\\x1b[31m\": unknown key", NULL);
}

static void test_unknown_images_key(void)
{
	load_fails("{\"images\": {\"ruby\": \"ruby:3\"}}", ORIGIN ": images.ruby: unknown key",
		   NULL);
	load_fails("{\"images\": {\"py\": \"python:3\"}}", ORIGIN ": images.py: unknown key", NULL);
	load_fails("{\"images\": {\"Python\": \"python:3\"}}",
		   ORIGIN ": images.Python: unknown key", NULL);
}

/* ---- strings ------------------------------------------------------------------------------- */

static void test_user_root_refused(void)
{
	load_fails("{\"user\": \"0:0\"}",
		   ORIGIN ": user: uid 0 (root) is refused; use an unprivileged uid such as 65534",
		   NULL);
	load_fails("{\"user\": \"00:1000\"}", ORIGIN ": user: uid 0 (root) is refused", NULL);
	load_fails("{\"user\": \"1000:0\"}",
		   ORIGIN ": user: gid 0 (root) is refused; use an unprivileged gid such as 65534",
		   NULL);
}

static void test_user_not_numeric(void)
{
	const char *bad[] = { "nobody", "65534", "65534:", ":65534", "-1:5",           "+1:5",
			      "1:2:3",  " 1:2",  "1:2 ",   "0x10:5", "nobody:nogroup", "" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		cleanup_free char *v = xasprintf("\"%s\"", bad[i]);
		key_fails("user", v, "is not a numeric UID:GID");
	}
	key_fails("user", "\"4294967295:1\"", "uid is out of range (1..4294967294)");
	key_fails("user", "\"1:99999999999999999999\"", "gid is out of range");
}

static void test_user_accepted(void)
{
	brig_policy *p = load_ok("{\"user\": \"1000:1001\"}");
	CU_ASSERT_STRING_EQUAL(p->user, "1000:1001");
	brig_policy_free(p);
	key_ok("user", "\"4294967294:4294967294\"");
	key_ok("user", "\"1:1\"");
}

static void test_uid_range(void)
{
	brig_policy *p = brig_policy_new_default();
	CU_ASSERT_STRING_EQUAL(p->uid_range, POLICY_UID_RANGE_DEFAULT);
	unsigned long long first = 0, count = 0;
	CU_ASSERT_EQUAL(policy_uid_range(p->uid_range, &first, &count), 0);
	CU_ASSERT_EQUAL(first, 2000000000ULL);
	CU_ASSERT_EQUAL(count, 1024ULL);
	brig_policy_free(p);
	key_ok("uid_range", "\"100000-165535\"");
	key_ok("uid_range", "\"300000-300000\"");
	const char *bad[] = { "99999-100000", "100000-165536", "200000-100000", "100000",
			      "100000-",      "-100000",       "a-b",           "" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		cleanup_free char *v = xasprintf("\"%s\"", bad[i]);
		key_fails("uid_range", v, "is not a uid range");
	}
	/* user "auto" builds no box without a leased uid: the spec never guesses one */
	p = brig_policy_new_default();
	brig_request req = { .language = BRIG_LANG_PYTHON, .code = "1", .code_len = 1 };
	spec_target t = { .runtime = "runc",
			  .isolation = BRIG_ISOLATION_CONTAINER,
			  .init = TEST_INIT };
	brig_spec *spec = NULL;
	brig_error *err = NULL;
	CU_ASSERT_NOT_EQUAL(spec_build(p, &req, BRIG_TIMEOUT_REFUSE, &t, &spec, NULL, &err), 0);
	CU_ASSERT_PTR_NULL(spec);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "leased uid"));
	brig_error_free(err);
	brig_policy_free(p);
}

static void test_image_forms_accepted(void)
{
	const char *good[] = {
		"python:3.11",
		"reg:5000/py:3.11",
		"python@sha256:" HEX64,
		"sha256:" HEX64,
		"ghcr.io/org/team/img:v1.2_3-rc",
		"localhost/x:1",
		"localhost:5000/x@sha256:" HEX64,
		"python:3.11@sha256:" HEX64,
		"Registry.Example.COM/py:Latest",
		"brig/python:bookworm",
	};
	char why[512];
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		int r = policy_check_image(good[i], false, why, sizeof why);
		if (r != 0)
			fprintf(stderr, "\n  %s: %s\n", good[i], why);
		CU_ASSERT_EQUAL(r, 0);
	}
}

static void test_image_forms_refused(void)
{
	static const struct {
		const char *ref, *why;
	} bad[] = {
		{ "python", "\"python\" has no tag or digest (write name:tag or name@sha256:...)" },
		{ "registry:5000/python", "has no tag or digest" },
		{ "", "empty" },
		{ " python:3", "whitespace" },
		{ "python:3.11\n", "whitespace, a control character" },
		{ "py thon:3", "whitespace" },
		{ "python:3;rm", "not allowed" },
		{ "pythön:3", "non-ASCII" },
		{ "--privileged:1", "starts with '-'" },
		{ "python:", "invalid tag" },
		{ "python:.x", "invalid tag" },
		{ ":3.11", "not a valid image name" },
		{ "Python:3.11", "not a valid image name" },
		{ "a//b:1", "not a valid image name" },
		{ "/a:1", "not a valid image name" },
		{ "a:b:c", "invalid tag" },
		{ "python@sha256:abc", "invalid digest" },
		{ "python@md5:" HEX64, "invalid digest" },
		{ "python@sha256:" HEX64 "00", "invalid digest" },
		{ "@sha256:" HEX64, "not a valid image name" },
		{ "a@b@sha256:" HEX64, "more than one '@'" },
		{ "sha256:ABCDEF", "is not an image ID" },
		{ "sha256:" HEX64 "0", "is not an image ID" },
	};
	char why[512];
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int r = policy_check_image(bad[i].ref, false, why, sizeof why);
		CU_ASSERT_EQUAL(r, -1);
		if (r == 0 || !strstr(why, bad[i].why))
			fprintf(stderr, "\n  %s: %s (wanted %s)\n", bad[i].ref,
				r ? why : "accepted", bad[i].why);
		CU_ASSERT_PTR_NOT_NULL(strstr(why, bad[i].why));
	}
	char *long_ref = xmalloc(600);
	memset(long_ref, 'a', 597);
	memcpy(long_ref + 597, ":1", 3);
	CU_ASSERT_EQUAL(policy_check_image(long_ref, false, why, sizeof why), -1);
	free(long_ref);
}

static void test_image_error_message(void)
{
	brig_policy *p = NULL;
	brig_error *err = NULL;
	int r = brig_policy_load_string("{\"images\": {\"python\": \"python\"}}",
					"/etc/brig/policy.json", &p, &err);
	CU_ASSERT_EQUAL(r, BRIG_E_POLICY);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_STRING_EQUAL(err->message,
			       "/etc/brig/policy.json: images.python: \"python\" has no tag "
			       "or digest (write name:tag or name@sha256:...)");
	brig_error_free(err);
	/* a value is escaped in messages: it ends up on a terminal */
	load_fails("{\"images\": {\"node\": \"node\\u001b[2J\"}}",
		   ORIGIN ": images.node: \"node\\x1b[2J\" is not an image reference", NULL);
}

#define OTHER64 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

/* Which references pin, what the engine is asked about, and when a found image is the pinned
 * one: only NAME:TAG@sha256:... is looked up by something that can move (its tag). */
static void test_image_pins(void)
{
	static const struct {
		const char *ref, *pin, *lookup;
	} forms[] = {
		{ "brig/python:bookworm", NULL, "brig/python:bookworm" },
		{ "reg:5000/py:1", NULL, "reg:5000/py:1" },
		{ "sha256:" HEX64, "sha256:" HEX64, "sha256:" HEX64 },
		{ "py@sha256:" HEX64, "sha256:" HEX64, "py@sha256:" HEX64 },
		{ "reg:5000/py@sha256:" HEX64, "sha256:" HEX64, "reg:5000/py@sha256:" HEX64 },
		{ "brig/python:bookworm@sha256:" HEX64, "sha256:" HEX64, "brig/python:bookworm" },
		{ "reg:5000/py:1@sha256:" HEX64, "sha256:" HEX64, "reg:5000/py:1" },
	};
	for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
		const char *pin = policy_image_pin(forms[i].ref);
		CU_ASSERT_TRUE(str_eq(pin, forms[i].pin));
		cleanup_free char *lookup = policy_image_lookup_ref(forms[i].ref);
		CU_ASSERT_STRING_EQUAL(lookup, forms[i].lookup);
		/* every form but NAME:TAG@ is looked up by its content address: it holds */
		bool tag_pin = pin && strcmp(lookup, forms[i].ref) != 0;
		CU_ASSERT_EQUAL(policy_image_pin_holds(forms[i].ref, "sha256:" OTHER64, NULL),
				!tag_pin);
	}
	const char *ref = "brigtest/pin:t@sha256:" HEX64;
	CU_ASSERT_TRUE(policy_image_pin_holds(ref, "sha256:" HEX64, NULL));
	/* the tag moved to another image: refused, also with unrelated registry digests */
	char *digests[] = { "brigtest/pin@sha256:" OTHER64, "other@sha256:" OTHER64, NULL };
	CU_ASSERT_FALSE(policy_image_pin_holds(ref, "sha256:" OTHER64, NULL));
	CU_ASSERT_FALSE(policy_image_pin_holds(ref, "sha256:" OTHER64, digests));
	CU_ASSERT_FALSE(policy_image_pin_holds(ref, NULL, NULL));
	/* a registry digest of the image the tag names holds (whatever the repository) */
	char *pulled[] = { "other@sha256:" OTHER64, "reg.example/pin@sha256:" HEX64, NULL };
	CU_ASSERT_TRUE(policy_image_pin_holds(ref, "sha256:" OTHER64, pulled));
	/* a digest that merely starts like the pin is another digest */
	char *prefix[] = { "reg.example/pin@sha256:" HEX64 "00", NULL };
	CU_ASSERT_FALSE(policy_image_pin_holds(ref, "sha256:" OTHER64, prefix));

	/* the line `brig images` prints */
	cleanup_free char *a = policy_image_pinned_ref("brig/shell:bookworm", "sha256:" HEX64);
	CU_ASSERT_STRING_EQUAL(a, "brig/shell:bookworm@sha256:" HEX64);
	char why[512];
	CU_ASSERT_EQUAL(policy_check_image(a, true, why, sizeof why), 0);
	cleanup_free char *b = policy_image_pinned_ref(ref, "sha256:" OTHER64);
	CU_ASSERT_STRING_EQUAL(b, ref); /* pinned already: as written */
	cleanup_free char *c = policy_image_pinned_ref("brig/shell:bookworm", "sha256:short");
	CU_ASSERT_STRING_EQUAL(c, "brig/shell:bookworm"); /* not an ID: nothing to pin to */
}

static void test_partial_images_keep_defaults(void)
{
	brig_policy *p =
		load_ok("{\"memory_mb\": 512, \"images\": {\"node\": \"node:20-bookworm\"}}");
	brig_policy *d = brig_policy_new_default();
	CU_ASSERT_EQUAL(p->memory_mb, 512);
	CU_ASSERT_STRING_EQUAL(p->images[BRIG_LANG_NODE], "node:20-bookworm");
	CU_ASSERT_STRING_EQUAL(p->images[BRIG_LANG_PYTHON], "brig/python:bookworm");
	CU_ASSERT_STRING_EQUAL(p->images[BRIG_LANG_SHELL], "brig/shell:bookworm");
	p->memory_mb = d->memory_mb;
	free(p->images[BRIG_LANG_NODE]);
	p->images[BRIG_LANG_NODE] = xstrdup(d->images[BRIG_LANG_NODE]);
	CU_ASSERT_TRUE(policy_equal(p, d)); /* everything else untouched */
	brig_policy_free(p);
	brig_policy_free(d);
}

static void test_file_may_loosen(void)
{
	brig_policy *p =
		load_ok("{\"network\": true, \"memory_mb\": 8192, \"cpus\": 8, \"isolation\": "
			"\"gvisor\", \"max_timeout_seconds\": 600, \"timeout_seconds\": 60}");
	CU_ASSERT_TRUE(p->network);
	CU_ASSERT_EQUAL(p->memory_mb, 8192);
	CU_ASSERT_EQUAL(p->isolation, BRIG_ISOLATION_GVISOR);
	CU_ASSERT_EQUAL(p->timeout_seconds, 60);
	brig_policy_free(p);
}

static void test_require_pinned(void)
{
	load_fails("{\"require_pinned\": true}",
		   ORIGIN ": images.python: \"brig/python:bookworm\" is "
			  "not pinned (require_pinned is true): write NAME:TAG@sha256:<image ID>",
		   NULL);
	const char *pinned =
		"{\"images\": {\"python\": \"py@sha256:" HEX64 "\", \"node\": \"sha256:" HEX64
		"\", \"shell\": \"reg:5000/sh:1@sha256:" HEX64 "\"}";
	/* the order of the keys in the file does not matter */
	cleanup_free char *after = xasprintf("%s, \"require_pinned\": true}", pinned);
	cleanup_free char *before = xasprintf("{\"require_pinned\": true, %s}", pinned + 1);
	brig_policy *p = load_ok(after);
	CU_ASSERT_TRUE(p && p->require_pinned);
	brig_policy_free(p);
	p = load_ok(before);
	load_fails("{\"require_pinned\": true, \"images\": {\"python\": \"py@sha256:" HEX64
		   "\", \"shell\": \"sh@sha256:" HEX64 "\"}}",
		   ORIGIN ": images.node: ", "not pinned");
	char why[512];
	CU_ASSERT_EQUAL(policy_check_image("python:3.11", true, why, sizeof why), -1);
	CU_ASSERT_EQUAL(policy_check_image("sha256:" HEX64, true, why, sizeof why), 0);
	CU_ASSERT_EQUAL(
		policy_check_image("brig/python:bookworm@sha256:" HEX64, true, why, sizeof why), 0);
	CU_ASSERT_EQUAL(policy_check_image("reg:5000/py@sha256:" HEX64, true, why, sizeof why), 0);
	CU_ASSERT_EQUAL(policy_check_image("reg:5000/py:1", true, why, sizeof why), -1);
	brig_policy_free(p);
}

/* The old name is refused with the new one, in a file and as an override, whatever its value:
 * a policy must not silently lose the switch, nor name it twice. */
static void test_require_digest_renamed(void)
{
	static const char *const values[] = { "true", "false" };
	for (size_t i = 0; i < 2; i++) {
		cleanup_free char *json = one("require_digest", values[i]);
		load_fails(json, ORIGIN ": require_digest: renamed require_pinned",
			   "write \"require_pinned\" instead");
	}
	load_fails("{\"require_pinned\": true, \"require_digest\": true}",
		   ORIGIN ": require_digest: renamed require_pinned", NULL);
	brig_policy *p = brig_policy_new_default();
	override_fails(p, "require_digest", "true", BRIG_E_USAGE,
		       CLI ": require_digest: renamed require_pinned");
	CU_ASSERT_FALSE(p->require_pinned);
	cleanup_free char *js = brig_policy_to_json(p);
	CU_ASSERT_PTR_NULL(strstr(js, "require_digest"));
	CU_ASSERT_PTR_NOT_NULL(strstr(js, "\"require_pinned\":false"));
	brig_policy_free(p);
}

static void test_max_timeout_below_timeout(void)
{
	load_fails("{\"timeout_seconds\": 20, \"max_timeout_seconds\": 10}",
		   ORIGIN ": max_timeout_seconds: 10 is below timeout_seconds (20)", NULL);
	load_fails("{\"timeout_seconds\": 31}", ORIGIN ": max_timeout_seconds: 30 is below", NULL);
	brig_policy_free(load_ok("{\"timeout_seconds\": 30}"));
}

static void test_backend(void)
{
	key_ok("backend", "\"auto\"");
	key_ok("backend", "\"docker-cli\"");
	key_ok("backend", "\"abcdefghijklmnopqrstuvwxyz012345\""); /* 32 */
	key_fails("backend", "\"abcdefghijklmnopqrstuvwxyz0123456\"", "is not a backend name");
	key_fails("backend", "\"\"", "is not a backend name");
	key_fails("backend", "\"Docker\"", "is not a backend name");
	key_fails("backend", "\"docker_cli\"", "is not a backend name");
	key_fails("backend", "\"../evil\"", "is not a backend name");
}

static void test_isolation(void)
{
	brig_policy *p = load_ok("{\"isolation\": \"gvisor\"}");
	CU_ASSERT_EQUAL(p->isolation, BRIG_ISOLATION_GVISOR);
	brig_policy_free(p);
	key_ok("isolation", "\"container\"");
	key_fails("isolation", "\"runsc\"",
		  "\"runsc\" is not an isolation level (container or gvisor)");
	key_fails("isolation", "\"GVISOR\"", "is not an isolation level");
	key_fails("isolation", "\"\"", "is not an isolation level");
}

static void test_audit_log(void)
{
	brig_policy *p = load_ok("{\"audit_log\": \"/var/log/brig/audit.jsonl\"}");
	CU_ASSERT_STRING_EQUAL(p->audit_log, "/var/log/brig/audit.jsonl");
	brig_policy_free(p);
	p = load_ok("{\"audit_log\": null}");
	CU_ASSERT_PTR_NULL(p->audit_log);
	brig_policy_free(p);
	key_fails("audit_log", "\"audit.jsonl\"", "is not an absolute path");
	key_fails("audit_log", "\"\"", "is not an absolute path");
	key_fails("audit_log", "\"/var/log/a\\nb\"", "is not an absolute path");
}

static void test_seccomp_values(void)
{
	key_ok("seccomp", "\"brig\"");
	key_ok("seccomp", "\"engine\"");
	key_fails("seccomp", "\"default\"",
		  "\"default\" is not \"brig\", \"engine\" or an absolute path");
	key_fails("seccomp", "\"Brig\"", "is not \"brig\"");
	key_fails("seccomp", "\"profiles/seccomp.json\"", "is not \"brig\"");
	key_fails("seccomp", "\"/nonexistent/brig/seccomp.json\"",
		  "cannot read /nonexistent/brig/seccomp.json: No such file or directory");
	key_fails("seccomp", "\"/\"", "cannot read /: Is a directory");
	key_fails("seccomp", "[\"brig\"]", "expected a string or an object, got an array");
	key_fails("seccomp", "\"br\\u0000ig\"", "contains a NUL character");
}

/* {"profile": ..., "deny": [...]}: the profile defaults to brig's, names are libseccomp's. */
static void test_seccomp_object(void)
{
	brig_policy *p = load_ok("{\"seccomp\": {\"profile\": \"brig\", \"deny\": "
				 "[\"ptrace\", \"mount\", \"chown32\"]}}");
	CU_ASSERT_STRING_EQUAL(p->seccomp_profile, "brig");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p->seccomp_deny);
	CU_ASSERT_EQUAL(strv_len(p->seccomp_deny), 3);
	CU_ASSERT_STRING_EQUAL(p->seccomp_deny[2], "chown32"); /* known, if not on x86_64 */
	json_object *v = policy_get(p, "seccomp");
	CU_ASSERT_STRING_EQUAL(
		json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
		"{\"profile\":\"brig\",\"deny\":[\"ptrace\",\"mount\",\"chown32\"]}");
	json_object_put(v);
	brig_policy_free(p);

	p = load_ok("{\"seccomp\": {\"deny\": [\"keyctl\"]}}");
	CU_ASSERT_STRING_EQUAL(p->seccomp_profile, "brig");
	CU_ASSERT_STRING_EQUAL(p->seccomp_deny[0], "keyctl");
	brig_policy_free(p);

	/* empty: the same as the string form, and printed as such */
	p = load_ok("{\"seccomp\": {\"profile\": \"engine\", \"deny\": []}}");
	CU_ASSERT_STRING_EQUAL(p->seccomp_profile, "engine");
	CU_ASSERT_PTR_NULL(p->seccomp_deny);
	v = policy_get(p, "seccomp");
	CU_ASSERT_STRING_EQUAL(json_object_get_string(v), "engine");
	json_object_put(v);
	brig_policy_free(p);
	p = load_ok("{\"seccomp\": {}}");
	CU_ASSERT_STRING_EQUAL(p->seccomp_profile, "brig");
	brig_policy_free(p);

	load_fails("{\"seccomp\": {\"deny\": [\"ptrace\", \"mount\", \"ptrac\"]}}",
		   ORIGIN ": seccomp.deny[2]: \"ptrac\" is not a syscall known to libseccomp ",
		   NULL);
	load_fails("{\"seccomp\": {\"deny\": [\"PTRACE\"]}}",
		   ORIGIN ": seccomp.deny[0]: \"PTRACE\" is not a syscall name", NULL);
	load_fails("{\"seccomp\": {\"deny\": [\"a b\\u001b\"]}}",
		   ORIGIN ": seccomp.deny[0]: \"a b\\x1b\" is not a syscall name", NULL);
	load_fails("{\"seccomp\": {\"deny\": [\"\"]}}", ORIGIN ": seccomp.deny[0]: \"\" is not",
		   NULL);
	load_fails("{\"seccomp\": {\"profile\": \"engine\", \"deny\": [\"ptrace\"]}}",
		   ORIGIN ": seccomp.deny: cannot be used with the \"engine\" profile",
		   "not brig's to edit");
	load_fails("{\"seccomp\": {\"deny\": \"ptrace\"}}",
		   ORIGIN ": seccomp.deny: expected an array of syscall names, got a string", NULL);
	load_fails("{\"seccomp\": {\"deny\": [1]}}",
		   ORIGIN ": seccomp.deny[0]: expected a string, got an integer", NULL);
	load_fails("{\"seccomp\": {\"profile\": 1}}",
		   ORIGIN ": seccomp.profile: expected a string, got an integer", NULL);
	load_fails("{\"seccomp\": {\"profile\": \"default\"}}",
		   ORIGIN ": seccomp: \"default\" is not \"brig\"", NULL);
	load_fails("{\"seccomp\": {\"allow\": []}}",
		   ORIGIN ": seccomp.allow: unknown key (expected profile or deny)", NULL);
	strbuf sb;
	sb_init(&sb);
	sb_puts(&sb, "{\"seccomp\": {\"deny\": [");
	for (int i = 0; i <= POLICY_SECCOMP_DENY_MAX; i++)
		sb_printf(&sb, "%s\"ptrace\"", i ? ", " : "");
	sb_puts(&sb, "]}}");
	load_fails(sb.data, ORIGIN ": seccomp.deny: 129 names; at most 128", NULL);
	sb_free(&sb);
}

static void test_seccomp_file(void)
{
	cleanup_free char *good = temp_file("{\"defaultAction\": \"SCMP_ACT_ERRNO\"}\n");
	cleanup_free char *array = temp_file("[]");
	cleanup_free char *null = temp_file("null");
	cleanup_free char *broken = temp_file("{\n  \"defaultAction\" \"x\"\n}");
	cleanup_free char *v = xasprintf("\"%s\"", good);
	key_ok("seccomp", v);
	free(v);
	v = xasprintf("\"%s\"", array);
	key_fails("seccomp", v, "is not a JSON object");
	free(v);
	v = xasprintf("\"%s\"", null);
	key_fails("seccomp", v, "is not a JSON object");
	free(v);
	v = xasprintf("\"%s\"", broken);
	cleanup_free char *where = xasprintf("seccomp: %s:2:19: invalid JSON", broken);
	key_fails("seccomp", v, where);
	unlink(good);
	unlink(array);
	unlink(null);
	unlink(broken);
}

/* ---- syntax and files ---------------------------------------------------------------------- */

static void test_syntax_error_line_col(void)
{
	load_fails("{\n  \"memory_mb\": 512,\n  \"cpus\": ,\n}",
		   ORIGIN ":3:11: invalid JSON: ", NULL);
	load_fails("{", ORIGIN ":1:2: invalid JSON: unexpected end of data", NULL);
	load_fails("", ORIGIN ":1:1: invalid JSON: ", NULL);
	load_fails("{} x", ORIGIN ":1:4: invalid JSON: ", NULL);
	load_fails("{\"a\": 1,}", ORIGIN ":1:9: invalid JSON: ", NULL);
	load_fails("// comment\n{}", ORIGIN ":1:1: invalid JSON: ", NULL);
	load_fails("{\"user\": \"\xff\"}", ORIGIN ":1:", "invalid JSON");
	load_fails("{\"images\": [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]}",
		   ORIGIN ":1:", "invalid JSON: nesting too deep");
}

static void test_top_level_must_be_object(void)
{
	load_fails("[]", ORIGIN ": the top level must be a JSON object, not an array", NULL);
	load_fails("5", ORIGIN ": the top level must be a JSON object, not an integer", NULL);
	load_fails("null", ORIGIN ": the top level must be a JSON object, not null", NULL);
}

static void test_file_not_found(void)
{
	brig_policy *p = (brig_policy *)&p;
	brig_error *err = NULL;
	int r = brig_policy_load_file("/nonexistent/brig/policy.json", &p, &err);
	CU_ASSERT_EQUAL(r, BRIG_E_POLICY);
	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_EQUAL(err->status, BRIG_E_POLICY);
	CU_ASSERT_EQUAL(err->errno_value, ENOENT);
	CU_ASSERT_STRING_EQUAL(err->message,
			       "cannot read policy file /nonexistent/brig/policy.json: No "
			       "such file or directory");
	brig_error_free(err);
	err = NULL;
	CU_ASSERT_EQUAL(brig_policy_load_file("/", &p, &err), BRIG_E_POLICY);
	CU_ASSERT_STRING_EQUAL(err->message, "cannot read policy file /: Is a directory");
	brig_error_free(err);
}

static void test_file_load_and_origin(void)
{
	cleanup_free char *good = temp_file("{\n  \"memory_mb\": 512,\n  \"network\": true\n}\n");
	cleanup_free char *bad = temp_file("{\"memory_mb\": 15}");
	cleanup_free char *broken = temp_file("{\n\n  \"memory_mb\" 5}");
	brig_policy *p = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_policy_load_file(good, &p, &err), 0);
	CU_ASSERT_TRUE_FATAL(p != NULL);
	CU_ASSERT_EQUAL(p->memory_mb, 512);
	CU_ASSERT_TRUE(p->network);
	brig_policy_free(p);
	CU_ASSERT_EQUAL(brig_policy_load_file(bad, &p, &err), BRIG_E_POLICY);
	cleanup_free char *want = xasprintf("%s: memory_mb: 15 is out of range (16..65536)", bad);
	CU_ASSERT_STRING_EQUAL(err->message, want);
	brig_error_free(err);
	err = NULL;
	CU_ASSERT_EQUAL(brig_policy_load_file(broken, &p, &err), BRIG_E_POLICY);
	cleanup_free char *where = xasprintf("%s:3:15: invalid JSON: ", broken);
	CU_ASSERT_TRUE(starts_with(err->message, where));
	brig_error_free(err);
	unlink(good);
	unlink(bad);
	unlink(broken);
}

static void test_file_size_cap(void)
{
	cleanup_free char *path = temp_file("");
	char *data = xmalloc(MIB + 1);
	memset(data, ' ', MIB + 1);
	memcpy(data, "{}", 2);
	brig_policy *p = NULL;
	brig_error *err = NULL;
	write_file(path, data, MIB); /* exactly 1 MiB: fine */
	CU_ASSERT_EQUAL(brig_policy_load_file(path, &p, &err), 0);
	brig_policy_free(p);
	write_file(path, data, MIB + 1);
	CU_ASSERT_EQUAL(brig_policy_load_file(path, &p, &err), BRIG_E_POLICY);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "is larger than 1 MiB"));
	brig_error_free(err);
	free(data);
	unlink(path);
}

static void test_null_arguments(void)
{
	brig_policy *p = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_policy_load_string(NULL, ORIGIN, &p, &err), BRIG_E_USAGE);
	brig_error_free(err);
	err = NULL;
	CU_ASSERT_EQUAL(brig_policy_load_file(NULL, &p, NULL), BRIG_E_USAGE);
	CU_ASSERT_EQUAL(policy_validate(NULL, ORIGIN, NULL), BRIG_E_USAGE);
	CU_ASSERT_PTR_NULL(brig_policy_to_json(NULL));
	CU_ASSERT_PTR_NULL(brig_policy_copy(NULL));
	brig_policy_free(NULL);
	spec_free(NULL);
	/* an origin is optional */
	CU_ASSERT_EQUAL(brig_policy_load_string("{\"nope\": 1}", NULL, &p, &err), BRIG_E_POLICY);
	CU_ASSERT_TRUE(starts_with(err->message, "policy: nope: unknown key"));
	brig_error_free(err);
}

static void test_validate_struct(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_error *err = NULL;
	p->cpus = 100;
	CU_ASSERT_EQUAL(policy_validate(p, "test", &err), BRIG_E_POLICY);
	CU_ASSERT_STRING_EQUAL(err->message, "test: cpus: 100 is out of range (0.01..64)");
	p->cpus = 1;
	p->isolation = 7;
	CU_ASSERT_EQUAL(policy_validate(p, "test", &err), BRIG_E_POLICY);
	CU_ASSERT_STRING_EQUAL(err->message, "test: isolation: 7 is not an isolation level");
	p->isolation = BRIG_ISOLATION_GVISOR;
	free(p->user);
	p->user = NULL;
	CU_ASSERT_EQUAL(policy_validate(p, "test", &err), BRIG_E_POLICY);
	CU_ASSERT_STRING_EQUAL(err->message, "test: user: missing");
	p->user = xstrdup("1:1");
	p->max_input_bytes = POLICY_INPUT_MAX + 1L;
	CU_ASSERT_EQUAL(policy_validate(p, "test", &err), BRIG_E_POLICY);
	CU_ASSERT_TRUE(
		starts_with(err->message, "test: max_input_bytes: 16777217 is out of range"));
	p->max_input_bytes = 1;
	CU_ASSERT_EQUAL(policy_validate(p, "test", &err), 0);
	brig_error_free(err);
	brig_policy_free(p);
}

/* ---- overrides ----------------------------------------------------------------------------- */

static void test_override_ints_loosen(void)
{
	static const struct {
		const char *key, *lower, *higher;
	} k[] = {
		{ "timeout_seconds", "3", "10" },
		{ "max_timeout_seconds", "20", "60" },
		{ "memory_mb", "128", "512" },
		{ "pids_limit", "32", "128" },
		{ "nofile", "32", "128" },
		{ "tmpfs_mb", "32", "128" },
		{ "max_input_bytes", "1024", "1048576" },
		{ "max_output_bytes", "4096", "1048576" },
		{ "max_concurrent_runs", "2", "8" },
	};
	for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
		brig_policy *p = brig_policy_new_default();
		override_ok(p, k[i].key, k[i].higher, true);
		override_ok(p, k[i].key, k[i].higher, false); /* same value */
		override_ok(p, k[i].key, k[i].lower, false);
		long want;
		CU_ASSERT_TRUE(parse_long(k[i].lower, 0, LONG_MAX, &want));
		CU_ASSERT_EQUAL(policy_int(p, k[i].key), want);
		brig_policy_free(p);
	}
}

static void test_override_int_edges(void)
{
	static const struct {
		const char *key, *min, *max, *below, *above;
	} k[] = {
		{ "timeout_seconds", "1", "30", "0", "3601" }, /* 30: the max_timeout in force */
		{ "max_timeout_seconds", "5", "3600", "0", "3601" },
		{ "memory_mb", "16", "65536", "15", "65537" },
		{ "pids_limit", "8", "4096", "7", "4097" },
		{ "nofile", "16", "65536", "15", "65537" },
		{ "tmpfs_mb", "1", "4096", "0", "4097" },
		{ "max_input_bytes", "1", "16777216", "0", "16777217" },
		{ "max_output_bytes", "1024", "67108864", "1023", "67108865" },
		{ "max_concurrent_runs", "1", "64", "0", "65" },
	};
	for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
		brig_policy *p = brig_policy_new_default();
		override_ok(p, k[i].key, k[i].min, false);
		override_ok(p, k[i].key, k[i].max, true);
		cleanup_free char *below =
			xasprintf(CLI ": %s: %s is out of range", k[i].key, k[i].below);
		cleanup_free char *above =
			xasprintf(CLI ": %s: %s is out of range", k[i].key, k[i].above);
		override_fails(p, k[i].key, k[i].below, BRIG_E_POLICY, below);
		override_fails(p, k[i].key, k[i].above, BRIG_E_POLICY, above);
		brig_policy_free(p);
	}
}

static void test_override_not_integer(void)
{
	brig_policy *p = brig_policy_new_default();
	const char *bad[] = {
		"12x", "", " 5", "+5", "5.0", "0x10", "five", "9999999999999999999999"
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		override_fails(p, "pids_limit", bad[i], BRIG_E_POLICY, CLI ": pids_limit: ");
	override_fails(p, "pids_limit", "abc", BRIG_E_POLICY,
		       CLI ": pids_limit: \"abc\" is not an integer");
	brig_policy_free(p);
}

static void test_override_memory_suffixes(void)
{
	static const struct {
		const char *text;
		int mb;
	} ok[] = { { "300", 300 },   { "512m", 512 },  { "512M", 512 }, { "512MiB", 512 },
		   { "512mb", 512 }, { "1g", 1024 },   { "2G", 2048 },  { "1GiB", 1024 },
		   { "2gb", 2048 },  { "64g", 65536 }, { "16m", 16 } };
	brig_policy *p = brig_policy_new_default();
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		override_ok(p, "memory_mb", ok[i].text, ok[i].mb > p->memory_mb);
		CU_ASSERT_EQUAL(p->memory_mb, ok[i].mb);
	}
	const char *bad[] = { "1.5g", "512k", "g", "-512", "1t", "512 m", "m512", "", "0x100" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		override_fails(p, "memory_mb", bad[i], BRIG_E_POLICY, CLI ": memory_mb: ");
	override_fails(p, "memory_mb", "1.5g", BRIG_E_POLICY,
		       CLI ": memory_mb: \"1.5g\" is not a size in MiB (e.g. 512, 512m, 2g)");
	override_fails(p, "memory_mb", "8m", BRIG_E_POLICY, CLI ": memory_mb: 8 is out of range");
	override_fails(p, "memory_mb", "100g", BRIG_E_POLICY,
		       CLI ": memory_mb: 102400 is out of range");
	override_fails(p, "memory_mb", "99999999999g", BRIG_E_POLICY, CLI ": memory_mb: ");
	brig_policy_free(p);
}

static void test_override_cpus(void)
{
	brig_policy *p = brig_policy_new_default();
	override_ok(p, "cpus", "2.5", true);
	CU_ASSERT_DOUBLE_EQUAL(p->cpus, 2.5, 0);
	override_ok(p, "cpus", "0.5", false);
	override_ok(p, "cpus", "0.01", false);
	override_fails(p, "cpus", "abc", BRIG_E_POLICY, CLI ": cpus: \"abc\" is not a number");
	override_fails(p, "cpus", "0", BRIG_E_POLICY, CLI ": cpus: 0 is out of range (0.01..64)");
	override_fails(p, "cpus", "64.5", BRIG_E_POLICY, CLI ": cpus: 64.5 is out of range");
	override_fails(p, "cpus", "nan", BRIG_E_POLICY, CLI ": cpus: ");
	override_fails(p, "cpus", "inf", BRIG_E_POLICY, CLI ": cpus: ");
	CU_ASSERT_DOUBLE_EQUAL(p->cpus, 0.01, 0);
	brig_policy_free(p);
}

static void test_override_network(void)
{
	brig_policy *p = brig_policy_new_default();
	override_ok(p, "network", "false", false);
	override_ok(p, "network", "true", true);
	CU_ASSERT_TRUE(p->network);
	override_ok(p, "network", "true", false);
	override_ok(p, "network", "false", false);
	override_fails(p, "network", "yes", BRIG_E_POLICY,
		       CLI ": network: \"yes\" is not true or false");
	override_fails(p, "network", "1", BRIG_E_POLICY, CLI ": network: ");
	override_fails(p, "network", "TRUE", BRIG_E_POLICY, CLI ": network: ");
	brig_policy_free(p);
}

static void test_override_isolation(void)
{
	brig_policy *p = brig_policy_new_default();
	override_ok(p, "isolation", "gvisor", false);
	CU_ASSERT_EQUAL(p->isolation, BRIG_ISOLATION_GVISOR);
	override_ok(p, "isolation", "gvisor", false);
	override_ok(p, "isolation", "container", true);
	CU_ASSERT_EQUAL(p->isolation, BRIG_ISOLATION_CONTAINER);
	override_fails(p, "isolation", "runsc", BRIG_E_POLICY,
		       CLI ": isolation: \"runsc\" is not an isolation level");
	brig_policy_free(p);
}

static void test_override_require_pinned(void)
{
	brig_policy *p = brig_policy_new_default();
	override_fails(p, "require_pinned", "true", BRIG_E_POLICY,
		       CLI ": images.python: \"brig/python:bookworm\" is not pinned");
	CU_ASSERT_FALSE(p->require_pinned); /* a failed override leaves the policy as it was */
	override_ok(p, "images.python", "py@sha256:" HEX64, false);
	override_ok(p, "images.node", "node:20@sha256:" HEX64, false);
	override_ok(p, "images.shell", "sha256:" HEX64, false);
	override_ok(p, "require_pinned", "true", false);
	override_fails(p, "images.node", "node:20", BRIG_E_POLICY,
		       CLI ": images.node: \"node:20\" is not pinned");
	override_ok(p, "require_pinned", "false", true); /* turning it off loosens */
	override_ok(p, "images.node", "node:20", false);
	brig_policy_free(p);
}

static void test_override_seccomp(void)
{
	cleanup_free char *path = temp_file("{\"defaultAction\": \"SCMP_ACT_ERRNO\"}");
	brig_policy *p = brig_policy_new_default();
	override_ok(p, "seccomp", "brig", false);
	override_ok(p, "seccomp", "engine", true); /* the engine's allows more */
	override_ok(p, "seccomp", "brig", false);  /* brig's is the engine's minus more */
	override_ok(p, "seccomp", path, true);     /* a file may allow anything: warn */
	CU_ASSERT_STRING_EQUAL(p->seccomp_profile, path);
	override_ok(p, "seccomp", path, false);
	override_ok(p, "seccomp", "engine", true);
	override_fails(p, "seccomp", "/nonexistent.json", BRIG_E_POLICY,
		       CLI ": seccomp: cannot read /nonexistent.json");
	override_fails(p, "seccomp", "relative.json", BRIG_E_POLICY, CLI ": seccomp: ");
	/* the profile is checked only when it is the key being changed */
	override_ok(p, "seccomp", path, true);
	unlink(path);
	override_ok(p, "memory_mb", "128", false);
	brig_policy_free(p);
}

/* The object form as flag text; denying more tightens, denying less loosens. */
static void test_override_seccomp_deny(void)
{
	brig_policy *p = brig_policy_new_default();
	override_ok(p, "seccomp", "{\"deny\": [\"ptrace\"]}", false);
	CU_ASSERT_STRING_EQUAL(p->seccomp_profile, "brig");
	CU_ASSERT_STRING_EQUAL(p->seccomp_deny[0], "ptrace");
	override_ok(p, "seccomp", "{\"profile\": \"brig\", \"deny\": [\"bpf\", \"ptrace\"]}",
		    false);
	override_ok(p, "seccomp", "{\"deny\": [\"bpf\"]}", true); /* ptrace no longer denied */
	override_fails(p, "seccomp", "{\"profile\": \"engine\", \"deny\": [\"ptrace\"]}",
		       BRIG_E_POLICY, CLI ": seccomp.deny: cannot be used with the \"engine\"");
	override_fails(p, "seccomp", "{\"deny\": [\"bpf\", \"nosuchcall\"]}", BRIG_E_POLICY,
		       CLI
		       ": seccomp.deny[1]: \"nosuchcall\" is not a syscall known to libseccomp");
	override_fails(p, "seccomp", "{\"deny\": [", BRIG_E_POLICY, CLI ": seccomp: 1:");
	CU_ASSERT_STRING_EQUAL(p->seccomp_deny[0], "bpf"); /* unchanged by the failures */
	CU_ASSERT_PTR_NULL(p->seccomp_deny[1]);
	override_ok(p, "seccomp", "brig", true); /* the string form denies nothing more */
	CU_ASSERT_PTR_NULL(p->seccomp_deny);
	brig_policy_free(p);
}

static void test_override_strings(void)
{
	brig_policy *p = brig_policy_new_default();
	override_ok(p, "user", "1000:1000", false);
	CU_ASSERT_STRING_EQUAL(p->user, "1000:1000");
	override_fails(p, "user", "0:0", BRIG_E_POLICY,
		       CLI
		       ": user: uid 0 (root) is refused; use an unprivileged uid such as 65534");
	override_fails(p, "user", "root", BRIG_E_POLICY, CLI ": user: \"root\" is not a numeric");
	override_ok(p, "backend", "docker-api", false);
	CU_ASSERT_STRING_EQUAL(p->backend, "docker-api");
	override_fails(p, "backend", "Docker API", BRIG_E_POLICY, CLI ": backend: ");
	override_ok(p, "images.python", "python:3.12-slim", false);
	CU_ASSERT_STRING_EQUAL(p->images[BRIG_LANG_PYTHON], "python:3.12-slim");
	override_fails(p, "images.python", "python", BRIG_E_POLICY,
		       CLI ": images.python: \"python\" has no tag or digest");
	override_ok(p, "audit_log", "/var/log/brig.jsonl", false);
	CU_ASSERT_STRING_EQUAL(p->audit_log, "/var/log/brig.jsonl");
	override_ok(p, "audit_log", "", false);
	CU_ASSERT_PTR_NULL(p->audit_log);
	override_ok(p, "audit_log", "/a", false);
	override_ok(p, "audit_log", "null", false);
	CU_ASSERT_PTR_NULL(p->audit_log);
	override_fails(p, "audit_log", "log.jsonl", BRIG_E_POLICY, CLI ": audit_log: ");
	brig_policy_free(p);
}

static void test_override_timeouts_cross_field(void)
{
	brig_policy *p = brig_policy_new_default();
	override_fails(p, "timeout_seconds", "60", BRIG_E_POLICY,
		       CLI ": max_timeout_seconds: 30 is below timeout_seconds (60)");
	override_fails(p, "max_timeout_seconds", "4", BRIG_E_POLICY,
		       CLI ": max_timeout_seconds: 4 is below timeout_seconds (5)");
	override_ok(p, "max_timeout_seconds", "60", true);
	override_ok(p, "timeout_seconds", "60", true);
	CU_ASSERT_EQUAL(p->timeout_seconds, 60);
	brig_policy_free(p);
}

static void test_override_unknown_key(void)
{
	brig_policy *p = brig_policy_new_default();
	override_fails(p, "memory", "512", BRIG_E_USAGE, CLI ": memory: unknown policy key");
	override_fails(p, "images", "x:1", BRIG_E_USAGE, CLI ": images: unknown policy key");
	override_fails(p, "images.ruby", "ruby:3", BRIG_E_USAGE, CLI ": images.ruby: unknown");
	override_fails(p, "images.", "x:1", BRIG_E_USAGE, CLI ": images.: unknown");
	override_fails(p, "", "1", BRIG_E_USAGE, CLI ": \"\": unknown policy key");
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_policy_override(p, NULL, "1", NULL, &err), BRIG_E_USAGE);
	brig_error_free(err);
	CU_ASSERT_EQUAL(brig_policy_override(p, "memory_mb", NULL, NULL, NULL), BRIG_E_USAGE);
	CU_ASSERT_EQUAL(brig_policy_override(p, "memory_mb", "512", NULL, NULL), 0); /* no flag */
	brig_policy_free(p);
}

/* ---- JSON output and copies ---------------------------------------------------------------- */

static void test_to_json_order_and_shape(void)
{
	static const char *const order[] = { "timeout_seconds",
					     "max_timeout_seconds",
					     "memory_mb",
					     "cpus",
					     "pids_limit",
					     "nofile",
					     "tmpfs_mb",
					     "max_input_bytes",
					     "max_output_bytes",
					     "network",
					     "user",
					     "images",
					     "require_pinned",
					     "backend",
					     "isolation",
					     "seccomp",
					     "max_concurrent_runs",
					     "audit_log",
					     "warm_pool",
					     "memory_budget_mb" };
	brig_policy *p = brig_policy_new_default();
	cleanup_free char *text = brig_policy_to_json(p);
	const char *prev = text;
	for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
		cleanup_free char *quoted_key = xasprintf("\n  \"%s\":", order[i]);
		const char *at = strstr(text, quoted_key);
		CU_ASSERT_TRUE(at != NULL && at >= prev);
		prev = at ? at : prev;
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"audit_log\":null"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"cpus\":1.0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"isolation\":\"container\""));
	json_object *cpus = policy_get(p, "cpus");
	CU_ASSERT_TRUE(json_object_is_type(cpus, json_type_double));
	json_object_put(cpus);
	override_ok(p, "audit_log", "/var/log/brig/audit.jsonl", false);
	cleanup_free char *text2 = brig_policy_to_json(p);
	CU_ASSERT_PTR_NOT_NULL(strstr(text2, "\"/var/log/brig/audit.jsonl\"")); /* no \/ */
	brig_policy_free(p);
}

static void test_to_json_cpus_text(void)
{
	static const struct {
		const char *in, *out;
	} c[] = { { "0.1", "\"cpus\":0.1," },
		  { "2", "\"cpus\":2.0," },
		  { "0.333", "\"cpus\":0.333," },
		  { "1.5", "\"cpus\":1.5," },
		  { "0.01", "\"cpus\":0.01," } };
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		brig_policy *p = brig_policy_new_default();
		override_ok(p, "cpus", c[i].in,
			    strcmp(c[i].in, "1.5") == 0 || strcmp(c[i].in, "2") == 0);
		cleanup_free char *text = brig_policy_to_json(p);
		if (!strstr(text, c[i].out))
			fprintf(stderr, "\n%s\n", text);
		CU_ASSERT_PTR_NOT_NULL(strstr(text, c[i].out));
		brig_policy_free(p);
	}
}

static void round_trip(const brig_policy *p)
{
	cleanup_free char *text = brig_policy_to_json(p);
	brig_policy *q = load_ok(text);
	CU_ASSERT_TRUE_FATAL(q != NULL);
	CU_ASSERT_TRUE(policy_equal(p, q));
	cleanup_free char *again = brig_policy_to_json(q);
	CU_ASSERT_STRING_EQUAL(text, again);
	brig_policy_free(q);
}

static void test_to_json_round_trip(void)
{
	cleanup_free char *seccomp = temp_file("{\"defaultAction\": \"SCMP_ACT_ALLOW\"}");
	cleanup_free char *seccomp_deny =
		xasprintf("{\"profile\": \"%s\", \"deny\": [\"ptrace\", \"bpf\"]}", seccomp);
	brig_policy *p = brig_policy_new_default();
	round_trip(p);
	const struct {
		const char *key, *value;
		bool loosened;
	} kv[] = {
		{ "cpus", "0.1", false },
		{ "memory_mb", "1g", true },
		{ "network", "true", true },
		{ "images.python", "py@sha256:" HEX64, false },
		{ "images.node", "sha256:" HEX64, false },
		{ "images.shell", "reg:5000/sh:1@sha256:" HEX64, false },
		{ "require_pinned", "true", false },
		{ "isolation", "gvisor", false },
		{ "audit_log", "/var/log/brig.jsonl", false },
		{ "backend", "docker-api", false },
		{ "user", "1000:1000", false },
		{ "seccomp", seccomp, true },
		{ "seccomp", seccomp_deny, false },
		{ "max_output_bytes", "67108864", true },
	};
	for (size_t i = 0; i < sizeof kv / sizeof *kv; i++)
		override_ok(p, kv[i].key, kv[i].value, kv[i].loosened);
	round_trip(p);
	unlink(seccomp);
	brig_policy_free(p);
}

static void test_copy(void)
{
	brig_policy *p = load_ok("{\"audit_log\": \"/var/log/a\", \"memory_mb\": 1024}");
	char *deny[] = { "ptrace", "mount", NULL };
	p->seccomp_deny = strv_copy(deny);
	brig_policy *c = brig_policy_copy(p);
	CU_ASSERT_TRUE(policy_equal(p, c));
	CU_ASSERT_PTR_NOT_EQUAL(c->user, p->user);
	CU_ASSERT_PTR_NOT_EQUAL(c->audit_log, p->audit_log);
	CU_ASSERT_PTR_NOT_EQUAL(c->images[0], p->images[0]);
	CU_ASSERT_PTR_NOT_EQUAL(c->seccomp_deny, p->seccomp_deny);
	CU_ASSERT_STRING_EQUAL(c->seccomp_deny[1], "mount");
	override_ok(c, "user", "1:1", false);
	CU_ASSERT_STRING_EQUAL(p->user, "auto");
	brig_policy_free(p);
	CU_ASSERT_EQUAL(policy_validate(c, "copy", NULL), 0);
	brig_policy_free(c);
	brig_policy *d = brig_policy_new_default();
	brig_policy *dc = brig_policy_copy(d);
	CU_ASSERT_PTR_NULL(dc->audit_log);
	CU_ASSERT_PTR_NULL(dc->seccomp_deny);
	brig_policy_free(d);
	brig_policy_free(dc);
}

/* ---- the container spec -------------------------------------------------------------------- */

static void test_spec_python(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->struct_size, sizeof(brig_spec));
	CU_ASSERT_TRUE(starts_with(s->name, "brig-") && strlen(s->name) == 21);
	CU_ASSERT_STRING_EQUAL(s->language, "python");
	CU_ASSERT_STRING_EQUAL(s->image, "brig/python:bookworm");
	/* brig-init is PID 1 of every box, bind-mounted read-only from the host */
	static const char *const argv[] = { "/.brig-init", "--", "python3", "-", NULL };
	CU_ASSERT_TRUE(strv_eq(s->argv, argv));
	CU_ASSERT_PTR_NULL(s->exit_marker); /* runc: an exit 2 is the program's */
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->mounts);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->mounts[0]);
	CU_ASSERT_EQUAL(s->mounts[0]->type, BRIG_MOUNT_BIND);
	CU_ASSERT_STRING_EQUAL(s->mounts[0]->source, TEST_INIT);
	CU_ASSERT_STRING_EQUAL(s->mounts[0]->target, "/.brig-init");
	CU_ASSERT_TRUE(s->mounts[0]->read_only);
	CU_ASSERT_PTR_NULL(s->mounts[1]);
	static const char *const env[] = {
		"HOME=/tmp",   "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
		"TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1",         "PYTHONUNBUFFERED=1",
		NULL
	};
	CU_ASSERT_TRUE(strv_eq(s->env, env));
	CU_ASSERT_STRING_EQUAL(s->labels[0], "brig=1");
	CU_ASSERT_STRING_EQUAL(s->labels[2], "brig.language=python");
	CU_ASSERT_PTR_NULL(s->labels[3]);
	CU_ASSERT_STRING_EQUAL(s->workdir, "/tmp");
	CU_ASSERT_STRING_EQUAL(s->user, TEST_USER);
	CU_ASSERT_STRING_EQUAL(s->hostname, "sandbox");
	CU_ASSERT_STRING_EQUAL(s->network, "none");
	CU_ASSERT_STRING_EQUAL(s->runtime, "runc");
	CU_ASSERT_TRUE(s->read_only_rootfs);
	CU_ASSERT_STRING_EQUAL(s->tmpfs_path, "/tmp");
	CU_ASSERT_STRING_EQUAL(s->tmpfs_options, "rw,noexec,nosuid,nodev,size=64m");
	CU_ASSERT_EQUAL(s->shm_bytes, 16 * MIB);
	CU_ASSERT_EQUAL(s->memory_bytes, 256 * MIB);
	CU_ASSERT_EQUAL(s->memory_swap_bytes, 256 * MIB);
	CU_ASSERT_EQUAL(s->nano_cpus, 1000000000);
	CU_ASSERT_EQUAL(s->pids_limit, 65); /* the program's 64 + brig-init */
	CU_ASSERT_EQUAL(s->pids_guest, 64);
	CU_ASSERT_EQUAL(s->nofile, 64);
	CU_ASSERT_TRUE(s->cap_drop_all);
	CU_ASSERT_TRUE(s->no_new_privileges);
	CU_ASSERT_PTR_NOT_NULL(s->seccomp_profile); /* brig's own, by default */
	CU_ASSERT_TRUE(starts_with(s->seccomp_name, "brig default ("));
	CU_ASSERT_STRING_EQUAL(s->log_driver, "none");
	/* brig-init's header (the box's own deadline: 5 s + the grace), then the code */
	static const char in[] = "BRIG-DEADLINE 8000\nprint(1)\n";
	CU_ASSERT_EQUAL(s->stdin_len, sizeof in - 1);
	CU_ASSERT_NSTRING_EQUAL(s->stdin_data, in, s->stdin_len);
	CU_ASSERT_EQUAL(s->timeout_ms, 5000);
	CU_ASSERT_EQUAL(s->max_output_bytes, 131072);
	CU_ASSERT_EQUAL(s->max_input_bytes, 65536);
	spec_free(s);
	brig_policy_free(p);
}

static void test_spec_node_and_shell(void)
{
	static const char *const node_argv[] = { "/.brig-init", "--", "node", "-", NULL };
	static const char *const sh_argv[] = { "/.brig-init", "--", "sh", "-s", NULL };
	static const char *const env[] = { "HOME=/tmp", "PATH=/usr/local/bin:/usr/bin:/bin",
					   "LANG=C.UTF-8", "TMPDIR=/tmp", NULL };
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = make_ok(p, BRIG_LANG_NODE, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->language, "node");
	CU_ASSERT_STRING_EQUAL(s->image, "brig/node:bookworm");
	CU_ASSERT_TRUE(strv_eq(s->argv, node_argv));
	CU_ASSERT_TRUE(strv_eq(s->env, env));
	CU_ASSERT_STRING_EQUAL(s->labels[2], "brig.language=node");
	spec_free(s);
	s = make_ok(p, BRIG_LANG_SHELL, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->language, "shell");
	CU_ASSERT_STRING_EQUAL(s->image, "brig/shell:bookworm");
	CU_ASSERT_TRUE(strv_eq(s->argv, sh_argv));
	CU_ASSERT_TRUE(strv_eq(s->env, env));
	CU_ASSERT_STRING_EQUAL(s->labels[2], "brig.language=shell");
	spec_free(s);
	brig_policy_free(p);
}

static void test_spec_gvisor_pids(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_GVISOR);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->runtime, "runsc");
	CU_ASSERT_EQUAL(s->pids_guest, 64);
	CU_ASSERT_EQUAL(s->pids_limit, 1024 + 2 * 64 * 64);
	CU_ASSERT_EQUAL(s->nproc, 65); /* the program's budget + the wrapper, inside gVisor */
	spec_free(s);
	override_ok(p, "gvisor_pids_limit", "48", false); /* the operator's own translation */
	s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_GVISOR);
	CU_ASSERT_EQUAL(s->pids_limit, 48);
	CU_ASSERT_EQUAL(s->pids_guest, 64);
	spec_free(s);
	override_ok(p, "gvisor_pids_limit", "0", false);
	override_ok(p, "pids_limit", "8", false);
	s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_EQUAL(s->pids_limit, 9); /* + brig-init */
	CU_ASSERT_EQUAL(s->nproc, 0);      /* runc: RLIMIT_NPROC would count the host's whole uid */
	spec_free(s);
	brig_policy_free(p);
	CU_ASSERT_EQUAL(spec_engine_pids_limit(NULL, 64, BRIG_ISOLATION_CONTAINER), 64);
	CU_ASSERT_EQUAL(spec_engine_pids_limit(NULL, 64, BRIG_ISOLATION_GVISOR),
			1024 + 2 * 64 * 64);
	CU_ASSERT_EQUAL(spec_engine_pids_limit(NULL, 8, BRIG_ISOLATION_GVISOR), 1024 + 2 * 8 * 8);
	CU_ASSERT_EQUAL(spec_engine_pids_limit(NULL, 120, BRIG_ISOLATION_GVISOR), 29824);
	CU_ASSERT_EQUAL(spec_engine_pids_limit(NULL, 4096, BRIG_ISOLATION_GVISOR), 32768);
}

/* The spec is the final box: under gVisor brig-init's marker, the environment without
 * PYTHONUNBUFFERED and the output slack are in the spec itself, not added by a backend. */
static void test_spec_gvisor_final_box(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_GVISOR);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->exit_marker);
	CU_ASSERT_TRUE(starts_with(s->exit_marker, s->name));
	CU_ASSERT_STRING_EQUAL(s->argv[0], "/.brig-init");
	CU_ASSERT_STRING_EQUAL(s->argv[1], "--marker");
	CU_ASSERT_STRING_EQUAL(s->argv[2], s->exit_marker);
	CU_ASSERT_STRING_EQUAL(s->argv[3], "--");
	CU_ASSERT_STRING_EQUAL(s->argv[4], "python3");
	CU_ASSERT_STRING_EQUAL(s->argv[5], "-");
	CU_ASSERT_PTR_NULL(s->argv[6]);
	for (char **e = s->env; *e; e++)
		CU_ASSERT_FALSE(starts_with(*e, "PYTHONUNBUFFERED="));
	CU_ASSERT_EQUAL(s->output_limit, 131072);
	CU_ASSERT_EQUAL(s->max_output_bytes, 131072 + strlen(s->exit_marker) + 1);
	cleanup_free char *notes = spec_describe_traits(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(notes, "brig-init prints"));
	CU_ASSERT_PTR_NOT_NULL(strstr(notes, "RLIMIT_NPROC 65"));
	CU_ASSERT_PTR_NOT_NULL(strstr(notes, "pids limit 9216"));
	spec_free(s);
	s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER); /* runc: as the policy says */
	CU_ASSERT_PTR_NULL(s->exit_marker);
	CU_ASSERT_STRING_EQUAL(s->argv[0], "/.brig-init");
	CU_ASSERT_STRING_EQUAL(s->argv[1], "--");
	CU_ASSERT_STRING_EQUAL(s->argv[2], "python3");
	CU_ASSERT_EQUAL(s->max_output_bytes, s->output_limit);
	cleanup_free char *notes_runc = spec_describe_traits(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(notes_runc, "PID 1 is brig-init"));
	CU_ASSERT_PTR_NULL(strstr(notes_runc, "gVisor's own host threads"));
	spec_free(s);
	brig_policy_free(p);
}

static const char *finish_note; /* spec_finish_outcome's note of the last finish() */

static brig_result finish(const brig_spec *s, int exit_code, const char *out, const char *err,
			  bool truncated)
{
	brig_outcome o = { .struct_size = sizeof o,
			   .exit_code = exit_code,
			   .truncated = truncated };
	o.stdout_data = xstrdup(out);
	o.stdout_len = strlen(out);
	o.stderr_data = xstrdup(err);
	o.stderr_len = strlen(err);
	brig_result res = { .struct_size = sizeof res };
	finish_note = spec_finish_outcome(s, &o, &res);
	outcome_clear(&o);
	return res;
}

/* The host alone turns an outcome into a verdict; under gVisor it takes brig-init's line out
 * and tells the program's own exit 2 from the sentry's; another status without the line is
 * the box's, with a note. */
static void test_finish_outcome(void)
{
	brig_policy *p = load_ok("{\"max_output_bytes\": 1024}");
	brig_spec *g = make_ok(p, BRIG_LANG_SHELL, BRIG_ISOLATION_GVISOR);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	cleanup_free char *line = xasprintf("boom\n%s\n", g->exit_marker);
	brig_result r = finish(g, 2, "x", line, false);
	CU_ASSERT_EQUAL(r.verdict, BRIG_VERDICT_ERROR); /* the program's own exit 2 */
	CU_ASSERT_EQUAL(r.exit_code, 2);
	CU_ASSERT_STRING_EQUAL(r.stderr_data, "boom\n");
	brig_result_clear(&r);
	r = finish(g, 2, "x", "boom\n", false);
	CU_ASSERT_EQUAL(r.verdict, BRIG_VERDICT_SANDBOX_ERROR); /* the sentry crashed */
	CU_ASSERT_EQUAL(r.exit_code, -1);
	CU_ASSERT_PTR_NOT_NULL(r.error && strstr(r.error, "sentry"));
	brig_result_clear(&r);
	CU_ASSERT_PTR_NULL(finish_note);
	r = finish(g, 137, "x", line, false);
	CU_ASSERT_EQUAL(r.verdict, BRIG_VERDICT_ERROR); /* the program was killed, and ended */
	CU_ASSERT_EQUAL(r.exit_code, 137);
	CU_ASSERT_PTR_NULL(finish_note);
	brig_result_clear(&r);
	/* PID 1 killed (by the program, or with the sentry): the box's status, said so */
	r = finish(g, 137, "x", "", false);
	CU_ASSERT_EQUAL(r.verdict, BRIG_VERDICT_ERROR);
	CU_ASSERT_EQUAL(r.exit_code, 137);
	CU_ASSERT_PTR_NULL(r.error);
	CU_ASSERT_PTR_NOT_NULL(finish_note && strstr(finish_note, "did not see the program end"));
	brig_result_clear(&r);
	r = finish(g, 0, "x", "", false); /* a success is the program's, line or not */
	CU_ASSERT_EQUAL(r.verdict, BRIG_VERDICT_SUCCESS);
	CU_ASSERT_PTR_NULL(finish_note);
	brig_result_clear(&r);
	/* the program is held to its own cap: the backend's extra room was for the line */
	char big[1030];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	r = finish(g, 0, big, "", false);
	CU_ASSERT_EQUAL(r.stdout_len, 1024);
	CU_ASSERT_EQUAL(r.verdict, BRIG_VERDICT_OUTPUT_LIMIT);
	CU_ASSERT_TRUE(r.output_truncated);
	brig_result_clear(&r);
	spec_free(g);
	brig_spec *c = make_ok(p, BRIG_LANG_SHELL, BRIG_ISOLATION_CONTAINER);
	r = finish(c, 2, "", "", false);
	CU_ASSERT_EQUAL(r.verdict, BRIG_VERDICT_ERROR); /* runc: an exit 2 is the program's */
	brig_result_clear(&r);
	r = finish(c, 137, "", "", true);
	CU_ASSERT_EQUAL(r.verdict, BRIG_VERDICT_OUTPUT_LIMIT);
	brig_result_clear(&r);
	r = finish(c, 0, "ok", "", false);
	CU_ASSERT_EQUAL(r.verdict, BRIG_VERDICT_SUCCESS);
	CU_ASSERT_STRING_EQUAL(r.stdout_data, "ok");
	brig_result_clear(&r);
	spec_free(c);
	brig_policy_free(p);
}

static void test_spec_network_and_user(void)
{
	brig_policy *p = load_ok("{\"network\": true, \"user\": \"1000:1001\"}");
	brig_spec *s = make_ok(p, BRIG_LANG_SHELL, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->network, "bridge");
	CU_ASSERT_STRING_EQUAL(s->user, "1000:1001");
	spec_free(s);
	brig_policy_free(p);
}

static void test_spec_limits(void)
{
	brig_policy *p =
		load_ok("{\"tmpfs_mb\": 8, \"cpus\": 0.5, \"memory_mb\": 1024, \"nofile\": 256, "
			"\"max_output_bytes\": 2048, \"max_input_bytes\": 100}");
	brig_spec *s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->tmpfs_options, "rw,noexec,nosuid,nodev,size=8m");
	CU_ASSERT_EQUAL(s->shm_bytes, 8 * MIB);
	CU_ASSERT_EQUAL(s->nano_cpus, 500000000);
	CU_ASSERT_EQUAL(s->memory_bytes, 1024LL * MIB);
	CU_ASSERT_EQUAL(s->memory_swap_bytes, 1024LL * MIB);
	CU_ASSERT_EQUAL(s->nofile, 256);
	CU_ASSERT_EQUAL(s->max_output_bytes, 2048);
	CU_ASSERT_EQUAL(s->max_input_bytes, 100);
	spec_free(s);
	override_ok(p, "cpus", "0.01", false);
	override_ok(p, "memory_mb", "64g", true);
	s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_EQUAL(s->nano_cpus, 10000000);
	CU_ASSERT_EQUAL(s->memory_bytes, 65536LL * MIB);
	spec_free(s);
	brig_policy_free(p);
}

static void test_spec_owner_label(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	struct stat ns;
	CU_ASSERT_EQUAL_FATAL(stat("/proc/self/ns/pid", &ns), 0);
	cleanup_free char *want = xasprintf("brig.owner=%ld:%llu:%llu", (long)getpid(),
					    self_starttime(), (unsigned long long)ns.st_ino);
	CU_ASSERT_STRING_EQUAL(s->labels[1], want);
	const char *owner = s->labels[1] + strlen("brig.owner=");
	CU_ASSERT_EQUAL(proc_owner_state(owner), OWNER_ALIVE);
	/* the same pid with another start time: that process is gone (the pid was reused) */
	cleanup_free char *reused = xasprintf("%ld:%llu:%llu", (long)getpid(), self_starttime() + 1,
					      (unsigned long long)ns.st_ino);
	CU_ASSERT_EQUAL(proc_owner_state(reused), OWNER_DEAD);
	/* another pid namespace: not ours to judge, so alive for gc */
	cleanup_free char *other = xasprintf("%ld:%llu:%llu", (long)getpid(), self_starttime() + 1,
					     (unsigned long long)ns.st_ino + 1);
	CU_ASSERT_EQUAL(proc_owner_state(other), OWNER_ELSEWHERE);
	CU_ASSERT_TRUE(proc_owner_alive(other));
	/* the old form without the namespace still reads */
	cleanup_free char *old = xasprintf("%ld:%llu", (long)getpid(), self_starttime());
	CU_ASSERT_EQUAL(proc_owner_state(old), OWNER_ALIVE);
	static const char *const bad[] = { "",    "12",   "x:1",  "1:x",  "1:2:3:4", "-1:2",
					   "0:5", "1:2:", ":1:2", "1::2", NULL };
	for (int i = 0; bad[i]; i++)
		CU_ASSERT_EQUAL(proc_owner_state(bad[i]), OWNER_MALFORMED);
	CU_ASSERT_EQUAL(proc_owner_state(NULL), OWNER_MALFORMED);
	spec_free(s);
	brig_policy_free(p);
}

static void test_spec_input_limit(void)
{
	brig_policy *p = load_ok("{\"max_input_bytes\": 16}");
	brig_spec *s = (brig_spec *)&p;
	char *notice = (char *)&p;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_SHELL, "0123456789abcdef", 0, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, &notice, &err),
			0);
	CU_ASSERT_EQUAL(s->stdin_len, strlen("BRIG-DEADLINE 8000\n") + 16); /* 16 of code */
	spec_free(s);
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_SHELL, "0123456789abcdefX", 0, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, &notice, &err),
			BRIG_E_REFUSED);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_PTR_NULL(notice);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_EQUAL(err->status, BRIG_E_REFUSED);
	CU_ASSERT_STRING_EQUAL(err->message,
			       "the code is 17 bytes, above the policy's max_input_bytes (16)");
	brig_error_free(err);
	brig_policy_free(p);
}

static void test_spec_empty_code(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = NULL;
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "", 0, BRIG_TIMEOUT_REFUSE,
			     BRIG_ISOLATION_CONTAINER, &s, NULL, NULL),
			0);
	CU_ASSERT_EQUAL(s->stdin_len, strlen("BRIG-DEADLINE 8000\n")); /* the header alone */
	spec_free(s);
	brig_policy_free(p);
}

static void test_spec_timeout_default_and_max(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = NULL;
	char *notice = NULL;
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", 0, BRIG_TIMEOUT_REFUSE,
			     BRIG_ISOLATION_CONTAINER, &s, &notice, NULL),
			0);
	CU_ASSERT_EQUAL(s->timeout_ms, 5000);
	CU_ASSERT_PTR_NULL(notice);
	spec_free(s);
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", 30, BRIG_TIMEOUT_REFUSE,
			     BRIG_ISOLATION_CONTAINER, &s, &notice, NULL),
			0);
	CU_ASSERT_EQUAL(s->timeout_ms, 30000);
	CU_ASSERT_PTR_NULL(notice);
	spec_free(s);
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", 2, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, &notice, NULL),
			0);
	CU_ASSERT_EQUAL(s->timeout_ms, 2000);
	spec_free(s);
	brig_policy_free(p);
}

static void test_spec_timeout_refuse(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", 60, BRIG_TIMEOUT_REFUSE,
			     BRIG_ISOLATION_CONTAINER, &s, NULL, &err),
			BRIG_E_REFUSED);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_STRING_EQUAL(err->message,
			       "timeout 60 s is above the policy's max_timeout_seconds (30)");
	brig_error_free(err);
	err = NULL;
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", 31, BRIG_TIMEOUT_REFUSE,
			     BRIG_ISOLATION_CONTAINER, &s, NULL, &err),
			BRIG_E_REFUSED);
	brig_error_free(err);
	brig_policy_free(p);
}

static void test_spec_timeout_clamp(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = NULL;
	char *notice = NULL;
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", 60, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, &notice, NULL),
			0);
	CU_ASSERT_EQUAL(s->timeout_ms, 30000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(notice);
	CU_ASSERT_STRING_EQUAL(notice, "timeout clamped from 60 s to 30 s (max_timeout_seconds)");
	free(notice);
	spec_free(s);
	/* the notice is optional */
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", 60, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, NULL, NULL),
			0);
	CU_ASSERT_EQUAL(s->timeout_ms, 30000);
	spec_free(s);
	brig_policy_free(p);
}

static void test_spec_bad_requests(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", -1, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, NULL, &err),
			BRIG_E_USAGE);
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, NULL, 0, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, NULL, &err),
			BRIG_E_USAGE);
	CU_ASSERT_EQUAL(make(p, (brig_language)3, "1", 0, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, NULL, &err),
			BRIG_E_USAGE);
	CU_ASSERT_EQUAL(make(p, (brig_language)-1, "1", 0, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, NULL, &err),
			BRIG_E_USAGE);
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", 0, BRIG_TIMEOUT_CLAMP, 0, &s, NULL, &err),
			BRIG_E_USAGE);
	brig_request req = { .language = BRIG_LANG_PYTHON, .code = "1", .code_len = 1 };
	spec_target none = { .runtime = NULL,
			     .isolation = BRIG_ISOLATION_CONTAINER,
			     .init = TEST_INIT };
	CU_ASSERT_EQUAL(spec_build(p, &req, BRIG_TIMEOUT_CLAMP, &none, &s, NULL, &err),
			BRIG_E_USAGE);
	CU_ASSERT_PTR_NULL(s);
	brig_error_free(err);
	brig_policy_free(p);
}

static void test_spec_isolation_floor(void)
{
	brig_policy *p = load_ok("{\"isolation\": \"gvisor\"}");
	brig_spec *s = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", 0, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, NULL, &err),
			BRIG_E_UNAVAILABLE);
	CU_ASSERT_PTR_NULL(s);
	brig_error_free(err);
	s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_GVISOR);
	CU_ASSERT_PTR_NOT_NULL(s);
	spec_free(s);
	brig_policy_free(p);
}

static void test_spec_seccomp_file(void)
{
	const char *profile = "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": []}\n";
	cleanup_free char *path = temp_file(profile);
	brig_policy *p = brig_policy_new_default();
	override_ok(p, "seccomp", path, true);
	brig_spec *s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->seccomp_profile, profile);
	CU_ASSERT_STRING_EQUAL(s->seccomp_name, path);
	spec_free(s);
	unlink(path); /* gone since the policy was loaded: the run fails, closed */
	brig_error *err = NULL;
	s = NULL;
	CU_ASSERT_EQUAL(make(p, BRIG_LANG_PYTHON, "1", 0, BRIG_TIMEOUT_CLAMP,
			     BRIG_ISOLATION_CONTAINER, &s, NULL, &err),
			BRIG_E_POLICY);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_TRUE(starts_with(err->message, "seccomp: cannot read "));
	brig_error_free(err);
	brig_policy_free(p);
}

/* The engine's default: no profile text, the engine applies its own. */
static void test_spec_seccomp_engine(void)
{
	brig_policy *p = brig_policy_new_default();
	override_ok(p, "seccomp", "engine", true);
	brig_spec *s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NULL(s->seccomp_profile);
	CU_ASSERT_STRING_EQUAL(s->seccomp_name, "engine default");
	spec_free(s);
	brig_policy_free(p);
}

/* Names of the rules of `profile` (JSON text) whose action is `action`, one string each. */
static bool profile_has(const char *profile, const char *name, const char *action)
{
	json_object *o = json_tokener_parse(profile), *rules = NULL;
	bool found = false;
	CU_ASSERT_TRUE_FATAL(o && json_object_object_get_ex(o, "syscalls", &rules));
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i), *names, *act;
		if (!json_object_object_get_ex(r, "names", &names) ||
		    !json_object_object_get_ex(r, "action", &act) ||
		    strcmp(json_object_get_string(act), action) != 0)
			continue;
		for (size_t j = 0; j < json_object_array_length(names); j++)
			if (strcmp(json_object_get_string(json_object_array_get_idx(names, j)),
				   name) == 0)
				found = true;
	}
	json_object_put(o);
	return found;
}

/* brig's profile, rendered per isolation level, with the operator's deny list in the label. */
static void test_spec_seccomp_brig(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_spec *s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_TRUE(profile_has(s->seccomp_profile, "clone3", "SCMP_ACT_ERRNO"));
	CU_ASSERT_TRUE(profile_has(s->seccomp_profile, "ptrace", "SCMP_ACT_ERRNO"));
	CU_ASSERT_TRUE(profile_has(s->seccomp_profile, "read", "SCMP_ACT_ALLOW"));
	CU_ASSERT_PTR_NULL(strstr(s->seccomp_name, "gVisor"));
	spec_free(s);
	s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_GVISOR);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_TRUE(profile_has(s->seccomp_profile, "clone3", "SCMP_ACT_ALLOW"));
	CU_ASSERT_FALSE(profile_has(s->seccomp_profile, "clone3", "SCMP_ACT_ERRNO"));
	CU_ASSERT_TRUE(profile_has(s->seccomp_profile, "ptrace", "SCMP_ACT_ERRNO"));
	CU_ASSERT_TRUE(starts_with(s->seccomp_name, "brig default, gVisor rendering: allowed "
						    "clone3 ("));
	spec_free(s);
	override_ok(p, "seccomp", "{\"deny\": [\"ptrace\", \"getcpu\"]}", false);
	s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_TRUE(starts_with(s->seccomp_name, "brig default + deny [ptrace, getcpu] ("));
	CU_ASSERT_TRUE(profile_has(s->seccomp_profile, "getcpu", "SCMP_ACT_ERRNO"));
	CU_ASSERT_FALSE(profile_has(s->seccomp_profile, "getcpu", "SCMP_ACT_ALLOW"));
	spec_free(s);
	brig_policy_free(p);
}

/* An operator's file with a deny list: brig edits the JSON the same way. */
static void test_spec_seccomp_file_deny(void)
{
	cleanup_free char *path = temp_file(
		"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
		"[\"getcpu\", \"read\"], \"action\": \"SCMP_ACT_LOG\"}, {\"names\": [\"getcpu\"], "
		"\"action\": \"SCMP_ACT_TRACE\"}, {\"name\": \"getcpu\", \"action\": "
		"\"SCMP_ACT_LOG\"}]}");
	cleanup_free char *value = xasprintf("{\"profile\": \"%s\", \"deny\": [\"getcpu\"]}", path);
	brig_policy *p = brig_policy_new_default();
	override_ok(p, "seccomp", value, true);
	brig_spec *s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	cleanup_free char *label = xasprintf("%s + deny [getcpu]", path);
	CU_ASSERT_STRING_EQUAL(s->seccomp_name, label);
	json_object *o = json_tokener_parse(s->seccomp_profile), *rules = NULL;
	CU_ASSERT_TRUE_FATAL(o && json_object_object_get_ex(o, "syscalls", &rules));
	CU_ASSERT_EQUAL(json_object_array_length(rules), 2); /* the read rule and the deny rule */
	CU_ASSERT_STRING_EQUAL(json_object_to_json_string_ext(json_object_array_get_idx(rules, 0),
							      JSON_C_TO_STRING_PLAIN),
			       "{\"names\":[\"read\"],\"action\":\"SCMP_ACT_LOG\"}");
	CU_ASSERT_STRING_EQUAL(
		json_object_to_json_string_ext(json_object_array_get_idx(rules, 1),
					       JSON_C_TO_STRING_PLAIN),
		"{\"names\":[\"getcpu\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1,"
		"\"comment\":\"the operator's policy (seccomp.deny)\"}");
	json_object_put(o);
	spec_free(s);
	unlink(path);
	brig_policy_free(p);
}

/* ---- names and /proc parsing ------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_random_names(void)
{
	enum { N = 1000 };
	char **names = xcalloc(N, sizeof *names);
	for (int i = 0; i < N; i++) {
		char buf[22];
		CU_ASSERT_EQUAL_FATAL(spec_random_name(buf, sizeof buf), 0);
		CU_ASSERT_EQUAL(strlen(buf), 21);
		CU_ASSERT_TRUE(starts_with(buf, "brig-"));
		CU_ASSERT_EQUAL(strspn(buf + 5, "0123456789abcdef"), 16);
		names[i] = xstrdup(buf);
	}
	qsort(names, N, sizeof *names, cmp_str);
	for (int i = 1; i < N; i++)
		CU_ASSERT_NOT_EQUAL(strcmp(names[i - 1], names[i]), 0);
	for (int i = 0; i < N; i++)
		free(names[i]);
	free(names);
	char small[21];
	errno = 0;
	CU_ASSERT_EQUAL(spec_random_name(small, sizeof small), -1);
	CU_ASSERT_EQUAL(errno, ERANGE);
}

static void test_parse_starttime(void)
{
	unsigned long long st = 0;
	const char *odd =
		"1234 (we ird) (x) ) S 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 "
		"987654 12345 67 18446744073709551615\n";
	CU_ASSERT_EQUAL(proc_stat_starttime(odd, &st), 0);
	CU_ASSERT_EQUAL(st, 987654ULL);
	const char *last = "7 (sh) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42";
	CU_ASSERT_EQUAL(proc_stat_starttime(last, &st), 0);
	CU_ASSERT_EQUAL(st, 42ULL);
	CU_ASSERT_EQUAL(proc_stat_starttime("no parenthesis here", &st), -1);
	CU_ASSERT_EQUAL(proc_stat_starttime("1 (x) S 1 2 3", &st), -1);
	CU_ASSERT_EQUAL(
		proc_stat_starttime("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 abc", &st), -1);
	CU_ASSERT_EQUAL(
		proc_stat_starttime("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12x", &st), -1);
	CU_ASSERT_EQUAL(proc_stat_starttime(NULL, &st), -1);
	/* a zombie runs nothing: its brig is gone, whatever its start time; a zombie leader
	 * whose other threads run on (pthread_exit) is alive */
	CU_ASSERT_EQUAL(
		proc_stat_starttime("7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42", &st), -1);
	CU_ASSERT_EQUAL(
		proc_stat_starttime("7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 3 0 42", &st), 0);
	CU_ASSERT_EQUAL(
		proc_stat_starttime("7 (a) Z) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42", &st), 0);
	CU_ASSERT_TRUE(self_starttime() > 0);
}

/* warm_pool and memory_budget_mb (the warm pool, src/pool.c) */
static void test_warm_pool_keys(void)
{
	brig_policy *p = brig_policy_new_default();
	CU_ASSERT_EQUAL(p->warm_pool, 2);
	CU_ASSERT_EQUAL(p->memory_budget_mb, 2048);
	CU_ASSERT_EQUAL(policy_int(p, "warm_pool"), 2);
	CU_ASSERT_EQUAL(policy_int(p, "memory_budget_mb"), 2048);
	int_edges("warm_pool", 0, 16, "");
	int_edges("memory_budget_mb", 0, 1024 * 1024, "");
	key_fails("warm_pool", "true", "expected an integer, got a boolean");
	key_fails("warm_pool", "1.5", "expected an integer, got a non-integer number");
	key_fails("memory_budget_mb", "\"2g\"", "expected an integer, got a string");
	/* more containers or more memory committed is looser; 0 (what one-shot CLI commands
	 * force) is not */
	override_ok(p, "warm_pool", "0", false);
	override_ok(p, "warm_pool", "4", true);
	override_ok(p, "memory_budget_mb", "512", false);
	override_ok(p, "memory_budget_mb", "4096", true);
	brig_policy *c = brig_policy_copy(p);
	CU_ASSERT_EQUAL(c->warm_pool, 4);
	CU_ASSERT_EQUAL(c->memory_budget_mb, 4096);
	brig_policy_free(c);
	brig_policy_free(p);
}

/* the "workspaces" object: defaults, each member's range, types, unknown members, the
 * cross-field rules, the JSON form and overrides (a looser one is flagged) */
static void ws_edges(const char *member, long min, long max, const char *extra)
{
	for (int i = 0; i < 4; i++) {
		long v = i == 0 ? min : i == 1 ? max : i == 2 ? min - 1 : max + 1;
		cleanup_free char *json =
			xasprintf("{\"workspaces\": {%s\"%s\": %ld}}", extra, member, v);
		if (i < 2) {
			brig_policy *p = load_ok(json);
			json_object *w = policy_get(p, "workspaces"), *x = NULL;
			CU_ASSERT_TRUE(json_object_object_get_ex(w, member, &x));
			CU_ASSERT_EQUAL(json_object_get_int64(x), v);
			json_object_put(w);
			brig_policy_free(p);
			continue;
		}
		cleanup_free char *prefix =
			xasprintf(ORIGIN ": workspaces.%s: %ld is out of range (%ld..%ld)", member,
				  v, min, max);
		load_fails(json, prefix, NULL);
	}
}

static void test_workspace_keys(void)
{
	brig_policy *p = brig_policy_new_default();
	CU_ASSERT_FALSE(p->ws.enabled);
	CU_ASSERT_EQUAL(p->ws.max_count, 4);
	CU_ASSERT_EQUAL(p->ws.size_mb, 64);
	CU_ASSERT_EQUAL(p->ws.max_files, 4096);
	CU_ASSERT_EQUAL(p->ws.idle_ttl_seconds, 1800);
	CU_ASSERT_EQUAL(p->ws.max_lifetime_seconds, 14400);
	CU_ASSERT_EQUAL(p->ws.max_transfer_bytes, 8L * 1024 * 1024);
	json_object *w = policy_get(p, "workspaces"), *x = NULL;
	CU_ASSERT_TRUE(json_object_object_get_ex(w, "enabled", &x));
	CU_ASSERT_FALSE(json_object_get_boolean(x));
	CU_ASSERT_EQUAL(json_object_object_length(w), 7);
	json_object_put(w);
	ws_edges("max_count", 1, POLICY_WS_COUNT_MAX, "\"size_mb\": 1, ");
	ws_edges("size_mb", 1, POLICY_WS_SIZE_MB_MAX, "\"max_count\": 1, ");
	ws_edges("max_files", POLICY_WS_FILES_MIN, POLICY_WS_FILES_MAX, "");
	ws_edges("idle_ttl_seconds", POLICY_WS_TTL_MIN, POLICY_WS_LIFETIME_MAX,
		 "\"max_lifetime_seconds\": 2592000, ");
	ws_edges("max_lifetime_seconds", POLICY_WS_TTL_MIN, POLICY_WS_LIFETIME_MAX,
		 "\"idle_ttl_seconds\": 10, ");
	ws_edges("max_transfer_bytes", 1, POLICY_WS_TRANSFER_MAX, "");
	load_fails("{\"workspaces\": {\"enabled\": 1}}",
		   ORIGIN ": workspaces.enabled: expected true or false", NULL);
	load_fails("{\"workspaces\": {\"size\": 1}}", ORIGIN ": workspaces.size: unknown key",
		   NULL);
	load_fails("{\"workspaces\": true}", ORIGIN ": workspaces: expected an object", NULL);
	/* a member is not a top-level key */
	load_fails("{\"workspaces.size_mb\": 8}", ORIGIN ": workspaces.size_mb: unknown key", NULL);
	load_fails("{\"workspaces\": {\"idle_ttl_seconds\": 600, \"max_lifetime_seconds\": 300}}",
		   ORIGIN ": workspaces.idle_ttl_seconds: 600 is above", NULL);
	load_fails("{\"workspaces\": {\"size_mb\": 4096, \"max_count\": 8}}",
		   ORIGIN ": workspaces.size_mb: 4096 MiB x workspaces.max_count 8",
		   "tmpfs is RAM");
	brig_policy *q = load_ok("{\"workspaces\": {\"enabled\": true, \"size_mb\": 8}}");
	CU_ASSERT_TRUE(q->ws.enabled);
	CU_ASSERT_EQUAL(q->ws.size_mb, 8);
	CU_ASSERT_EQUAL(q->ws.max_files, 4096); /* the rest stays default */
	brig_policy_free(q);
	/* overrides: more of anything is looser; turning them on is looser */
	override_ok(p, "workspaces.enabled", "true", true);
	override_ok(p, "workspaces.size_mb", "16", false);
	override_ok(p, "workspaces.size_mb", "128", true);
	override_ok(p, "workspaces.max_transfer_bytes", "1024", false);
	override_ok(p, "workspaces.enabled", "false", false);
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(brig_policy_override(p, "workspaces.idle_ttl_seconds", "99999", NULL, &err),
			BRIG_E_POLICY);
	CU_ASSERT_PTR_NOT_NULL(err);
	brig_error_free(err);
	brig_policy *c = brig_policy_copy(p);
	CU_ASSERT_EQUAL(c->ws.size_mb, 128);
	brig_policy_free(c);
	brig_policy_free(p);
}

/* A box in a workspace: brig-init's change line (after --changes TAG, TAG made from the box's
 * name, after --marker under gVisor) becomes workspace_changes and leaves stderr; the tool's
 * box has no change line. */
static void test_workspace_changes(void)
{
	static const char id[] = "00112233445566778899aabbccddeeff";
	brig_policy *p = brig_policy_new_default();
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "", .code_len = 0 };
	for (int iso = BRIG_ISOLATION_CONTAINER; iso <= BRIG_ISOLATION_GVISOR; iso++) {
		spec_target t = { .runtime = iso == BRIG_ISOLATION_GVISOR ? "runsc" : "runc",
				  .isolation = iso,
				  .init = TEST_INIT,
				  .user = TEST_USER,
				  .workspace = id };
		brig_spec *s = NULL;
		brig_error *err = NULL;
		CU_ASSERT_EQUAL_FATAL(spec_build(p, &req, BRIG_TIMEOUT_REFUSE, &t, &s, NULL, &err),
				      0);
		size_t k = iso == BRIG_ISOLATION_GVISOR ? 3 : 1;
		CU_ASSERT_STRING_EQUAL(s->argv[k], "--changes");
		cleanup_free char *tag = xasprintf("%s:changes", s->name);
		CU_ASSERT_STRING_EQUAL(s->argv[k + 1], tag);
		CU_ASSERT_STRING_EQUAL(s->argv[k + 2], "--");
		CU_ASSERT(s->max_output_bytes >= s->output_limit + 16384);
		cleanup_free char *err_text =
			xasprintf("warn\n%s 8192 4194304 3 50 2 5:a.txt 7:d/b%%20c\n", tag);
		brig_result r = finish(s, 0, "out", err_text, false);
		CU_ASSERT_STRING_EQUAL(r.stderr_data, "warn\n");
		CU_ASSERT_PTR_NOT_NULL_FATAL(r.workspace_changes);
		json_object *o = json_tokener_parse(r.workspace_changes), *v = NULL;
		CU_ASSERT(json_object_object_get_ex(o, "count", &v) && json_object_get_int(v) == 2);
		CU_ASSERT(json_object_object_get_ex(o, "max_files", &v) &&
			  json_object_get_int(v) == 50);
		CU_ASSERT_FATAL(json_object_object_get_ex(o, "files", &v) &&
				json_object_array_length(v) == 2);
		json_object *f = json_object_array_get_idx(v, 1), *x = NULL;
		CU_ASSERT(json_object_object_get_ex(f, "path", &x) &&
			  strcmp(json_object_get_string(x), "d/b c") == 0);
		json_object_put(o);
		brig_result_clear(&r);
		/* "TAG ?": could not be told; a line the program printed that looks like one but
		 * is not last is the program's own */
		cleanup_free char *q = xasprintf("%s ?\n", tag);
		r = finish(s, 0, "", q, false);
		CU_ASSERT_PTR_NULL(r.workspace_changes);
		CU_ASSERT_EQUAL(r.stderr_len, 0);
		brig_result_clear(&r);
		spec_free(s);
		static const char *const tool[] = { "list", "10", NULL };
		CU_ASSERT_EQUAL_FATAL(spec_build_tool(p, &t, tool, "", 0, &s, &err), 0);
		for (char **a = s->argv; *a; a++)
			CU_ASSERT_STRING_NOT_EQUAL(*a, "--changes");
		spec_free(s);
	}
	brig_policy_free(p);
}

static void test_spec_same_box(void)
{
	const spec_target runc = { .runtime = "runc",
				   .isolation = BRIG_ISOLATION_CONTAINER,
				   .init = TEST_INIT,
				   .user = TEST_USER };
	/* another leased uid: the uid is the run's own, like its name, not the box's shape */
	const spec_target runc2 = { .runtime = "runc",
				    .isolation = BRIG_ISOLATION_CONTAINER,
				    .init = TEST_INIT,
				    .user = "2000000008:65534" };
	const spec_target runsc = { .runtime = "runsc",
				    .isolation = BRIG_ISOLATION_GVISOR,
				    .init = TEST_INIT,
				    .user = TEST_USER };
	brig_policy *p = brig_policy_new_default();
	brig_request r1 = { .language = BRIG_LANG_PYTHON, .code = "", .code_len = 0 };
	brig_request r2 = {
		.language = BRIG_LANG_PYTHON, .code = "x", .code_len = 1, .timeout_seconds = 9
	};
	brig_spec *a = NULL, *b = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &r1, BRIG_TIMEOUT_REFUSE, &runc, &a, NULL, &err), 0);
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &r2, BRIG_TIMEOUT_REFUSE, &runc2, &b, NULL, &err), 0);
	CU_ASSERT_STRING_NOT_EQUAL(a->user, b->user);
	CU_ASSERT_TRUE(spec_same_box(a, b)); /* name, code, timeout and uid are the run's own */
	b->memory_bytes++;
	CU_ASSERT_FALSE(spec_same_box(a, b));
	b->memory_bytes--;
	free(b->env[0]);
	b->env[0] = xstrdup("HOME=/elsewhere");
	CU_ASSERT_FALSE(spec_same_box(a, b));
	spec_free(b);
	r2.language = BRIG_LANG_NODE;
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &r2, BRIG_TIMEOUT_REFUSE, &runc, &b, NULL, &err), 0);
	CU_ASSERT_FALSE(spec_same_box(a, b));
	spec_free(b);
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &r1, BRIG_TIMEOUT_REFUSE, &runsc, &b, NULL, &err), 0);
	CU_ASSERT_FALSE(spec_same_box(a, b)); /* another runtime */
	spec_free(a);
	/* two gVisor boxes: the wrapper's marker is made from each one's name, and is not the
	 * box: the same box all the same */
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &r2, BRIG_TIMEOUT_REFUSE, &runsc, &a, NULL, &err), 0);
	r2.language = BRIG_LANG_PYTHON;
	spec_free(b);
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &r1, BRIG_TIMEOUT_REFUSE, &runsc, &b, NULL, &err), 0);
	spec_free(a);
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &r2, BRIG_TIMEOUT_REFUSE, &runsc, &a, NULL, &err), 0);
	CU_ASSERT_STRING_NOT_EQUAL(a->exit_marker, b->exit_marker);
	CU_ASSERT_TRUE(spec_same_box(a, b));
	spec_free(b);
	spec_free(a);
	/* in a workspace (the warm pool's box for it): the change tag is made from each box's
	 * name, not the box; the uid is the workspace's, and part of the box; another workspace
	 * is another box */
	static const char w1[] = "00112233445566778899aabbccddeeff",
			  w2[] = "ffeeddccbbaa99887766554433221100";
	for (int iso = BRIG_ISOLATION_CONTAINER; iso <= BRIG_ISOLATION_GVISOR; iso++) {
		spec_target t = iso == BRIG_ISOLATION_GVISOR ? runsc : runc;
		t.workspace = w1;
		CU_ASSERT_EQUAL_FATAL(spec_build(p, &r1, BRIG_TIMEOUT_REFUSE, &t, &a, NULL, &err),
				      0);
		CU_ASSERT_EQUAL_FATAL(spec_build(p, &r2, BRIG_TIMEOUT_REFUSE, &t, &b, NULL, &err),
				      0);
		CU_ASSERT_STRING_NOT_EQUAL(a->name, b->name);
		CU_ASSERT_TRUE(spec_same_box(a, b));
		spec_free(b);
		t.user = "2000000008:65534";
		CU_ASSERT_EQUAL_FATAL(spec_build(p, &r2, BRIG_TIMEOUT_REFUSE, &t, &b, NULL, &err),
				      0);
		CU_ASSERT_FALSE(spec_same_box(a, b));
		spec_free(b);
		t.user = a->user;
		t.workspace = w2;
		CU_ASSERT_EQUAL_FATAL(spec_build(p, &r2, BRIG_TIMEOUT_REFUSE, &t, &b, NULL, &err),
				      0);
		CU_ASSERT_FALSE(spec_same_box(a, b));
		spec_free(b);
		spec_free(a);
	}
	brig_policy_free(p);
}

/* The ID the engine found goes into the box when it is the image the policy pins; a tag that
 * names another image now is refused with both IDs; the pool's "same box" test keys on it. */
static void test_spec_image_id(void)
{
	brig_image_info found = { .struct_size = sizeof found, .id = "sha256:" HEX64 };
	spec_target t = { .runtime = "runc",
			  .isolation = BRIG_ISOLATION_CONTAINER,
			  .init = TEST_INIT,
			  .user = TEST_USER };
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "id", .code_len = 2 };
	brig_policy *p = brig_policy_new_default();
	brig_spec *a = NULL, *b = NULL;
	brig_error *err = NULL;
	/* not looked up: the box starts from the reference (the engine resolves it) */
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &req, BRIG_TIMEOUT_REFUSE, &t, &a, NULL, &err), 0);
	CU_ASSERT_PTR_NULL(a->image_id);
	CU_ASSERT_STRING_EQUAL(brig_spec_image(a), "brig/shell:bookworm");
	/* a tag: the ID it names now */
	t.image = &found;
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &req, BRIG_TIMEOUT_REFUSE, &t, &b, NULL, &err), 0);
	CU_ASSERT_STRING_EQUAL(b->image_id, "sha256:" HEX64);
	CU_ASSERT_STRING_EQUAL(brig_spec_image(b), "sha256:" HEX64);
	CU_ASSERT_FALSE(spec_same_box(a, b)); /* a box of another image is another box */
	json_object *js = spec_to_json(b);
	json_object *v = NULL;
	CU_ASSERT_TRUE(json_object_object_get_ex(js, "image_id", &v));
	CU_ASSERT_STRING_EQUAL(json_object_get_string(v), "sha256:" HEX64);
	json_object_put(js);
	spec_free(a);
	/* the tag rebuilt: the same reference, another ID, another box */
	brig_image_info rebuilt = { .struct_size = sizeof rebuilt, .id = "sha256:" OTHER64 };
	t.image = &rebuilt;
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &req, BRIG_TIMEOUT_REFUSE, &t, &a, NULL, &err), 0);
	CU_ASSERT_STRING_EQUAL(a->image, b->image);
	CU_ASSERT_FALSE(spec_same_box(a, b));
	spec_free(a);
	a = NULL;
	/* pinned NAME:TAG@ID: holds while the tag names that ID */
	override_ok(p, "images.shell", "brigtest/pin:t@sha256:" HEX64, false);
	t.image = &found;
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &req, BRIG_TIMEOUT_REFUSE, &t, &a, NULL, &err), 0);
	CU_ASSERT_STRING_EQUAL(a->image, "brigtest/pin:t@sha256:" HEX64);
	CU_ASSERT_STRING_EQUAL(a->image_id, "sha256:" HEX64);
	spec_free(a);
	a = NULL;
	/* ... and is refused, naming both IDs, once it names another */
	t.image = &rebuilt;
	CU_ASSERT_EQUAL(spec_build(p, &req, BRIG_TIMEOUT_REFUSE, &t, &a, NULL, &err),
			BRIG_E_REFUSED);
	CU_ASSERT_PTR_NULL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_TRUE(starts_with(err->message,
				   "images.shell: brigtest/pin:t names image sha256:" OTHER64
				   " now, not the pinned sha256:" HEX64));
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "nothing was started"));
	brig_error_free(err);
	err = NULL;
	/* a registry digest of the image the tag names holds the pin */
	char *digests[] = { "reg.example/pin@sha256:" HEX64, NULL };
	rebuilt.repo_digests = digests;
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &req, BRIG_TIMEOUT_REFUSE, &t, &a, NULL, &err), 0);
	CU_ASSERT_STRING_EQUAL(a->image_id, "sha256:" OTHER64);
	spec_free(a);
	spec_free(b);
	brig_policy_free(p);
}

/* ---- egress ---------------------------------------------------------------------------------- */

static void test_egress_entries(void)
{
	static const char *const good[] = { "pypi.org:443",      "files.pythonhosted.org:443",
					    "*.example.org:443", "a-b.c0.example:1",
					    "x.y:65535",         NULL };
	static const struct {
		const char *v, *needle;
	} bad[] = {
		{ "pypi.org", "expected host:port" },
		{ "pypi.org:0", "port must be a number" },
		{ "pypi.org:65536", "port must be a number" },
		{ "pypi.org:+443", "port must be a number" },
		{ "pypi.org:0443", "port must be a number" },
		{ "pypi.org:", "port must be a number" },
		{ "PyPI.org:443", "lowercase" },
		{ "203.0.113.10:80", "an IP address is not allowed" },
		{ "[::1]:80", "may contain only" },
		{ "localhost:80", "at least two labels" },
		{ "*.org.*:443", "wildcard is only allowed as the first label" },
		{ "a.*.org:443", "wildcard is only allowed as the first label" },
		{ "*:443", "wildcard is only allowed" },
		{ "-a.org:443", "starts or ends with '-'" },
		{ "a..org:443", "empty" },
		{ "a.org.:443", "empty" },
		{ "a_b.org:443", "may contain only" },
		{ "a.org:443\n", "port must be a number" },
	};
	char why[256];
	for (size_t i = 0; good[i]; i++) {
		int r = egress_check_entry(good[i], why, sizeof why);
		if (r != 0)
			fprintf(stderr, "\n  %s: %s\n", good[i], why);
		CU_ASSERT_EQUAL(r, 0);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		why[0] = '\0';
		int r = egress_check_entry(bad[i].v, why, sizeof why);
		bool ok = r == -1 && strstr(why, bad[i].needle);
		if (!ok)
			fprintf(stderr, "\n  %s -> %d %s (wanted %s)\n", bad[i].v, r, why,
				bad[i].needle);
		CU_ASSERT_TRUE(ok);
	}
	CU_ASSERT_EQUAL(egress_check_host("ok.test=203.0.113.10", why, sizeof why), 0);
	CU_ASSERT_EQUAL(egress_check_host("v6.test=2001:db8::1", why, sizeof why), 0);
	CU_ASSERT_EQUAL(egress_check_host("ok.test=nope", why, sizeof why), -1);
	CU_ASSERT_EQUAL(egress_check_host("*.ok.test=203.0.113.10", why, sizeof why), -1);
	CU_ASSERT_EQUAL(egress_check_host("ok.test", why, sizeof why), -1);
}

static void test_egress_policy_keys(void)
{
	brig_policy *p = brig_policy_new_default();
	CU_ASSERT_PTR_NULL(p->egress_allow); /* default: deny everything */
	brig_policy_free(p);
	p = load_ok("{\"egress\": {\"allow\": [\"pypi.org:443\", \"*.example.org:443\"], "
		    "\"hosts\": {\"ok.test\": \"203.0.113.10\"}}}");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p->egress_allow);
	CU_ASSERT_EQUAL(strv_len(p->egress_allow), 2);
	CU_ASSERT_STRING_EQUAL(p->egress_allow[1], "*.example.org:443");
	CU_ASSERT_STRING_EQUAL(p->egress_hosts[0], "ok.test=203.0.113.10");
	/* round trip through the effective policy */
	char *json = brig_policy_to_json(p);
	brig_policy *q = load_ok(json);
	CU_ASSERT_TRUE(egress_subset(q->egress_allow, p->egress_allow) &&
		       egress_subset(p->egress_allow, q->egress_allow));
	CU_ASSERT_STRING_EQUAL(q->egress_hosts[0], "ok.test=203.0.113.10");
	brig_policy *c = brig_policy_copy(q);
	CU_ASSERT_STRING_EQUAL(c->egress_allow[0], "pypi.org:443");
	brig_policy_free(c);
	brig_policy_free(q);
	free(json);
	brig_policy_free(p);
	load_fails("{\"egress\": [\"pypi.org:443\"]}", ORIGIN ": egress: expected an object", NULL);
	load_fails("{\"egress\": {\"allow\": \"pypi.org:443\"}}",
		   ORIGIN ": egress.allow: expected an array", NULL);
	load_fails("{\"egress\": {\"allow\": [443]}}",
		   ORIGIN ": egress.allow[0]: expected a string", NULL);
	load_fails("{\"egress\": {\"allow\": [\"pypi.org\"]}}",
		   ORIGIN ": egress.allow[0]: ", "expected host:port");
	load_fails("{\"egress\": {\"allow\": [\"a.org:1\", \"a.org:1\"]}}",
		   ORIGIN ": egress.allow[1]: ", "listed twice");
	load_fails("{\"egress\": {\"deny\": []}}", ORIGIN ": egress.deny: unknown key", NULL);
	/* the host's health checks use a .invalid name: never one a list can name */
	load_fails("{\"egress\": {\"allow\": [\"brig-health.invalid:1\"]}}",
		   ORIGIN ": egress.allow[0]: ", "reserved");
	load_fails("{\"egress\": {\"allow\": [\"*.invalid:1\"]}}",
		   ORIGIN ": egress.allow[0]: ", "reserved");
	load_fails("{\"egress\": {\"hosts\": {\"brig-health.invalid\": \"203.0.113.1\"}}}",
		   ORIGIN ": egress.hosts[0]: ", "reserved");
	load_fails("{\"egress\": {\"hosts\": {\"ok.test\": \"x\"}}}",
		   ORIGIN ": egress.hosts[0]: ", "IPv4 or IPv6");
	load_fails("{\"network\": true, \"egress\": {\"allow\": [\"a.org:1\"]}}",
		   ORIGIN ": egress.allow: cannot be combined with network true", NULL);
	/* at most EGRESS_ALLOW_MAX entries */
	strbuf sb;
	sb_init(&sb);
	sb_puts(&sb, "{\"egress\": {\"allow\": [");
	for (int i = 0; i <= EGRESS_ALLOW_MAX; i++)
		sb_printf(&sb, "%s\"h%d.org:1\"", i ? ", " : "", i);
	sb_puts(&sb, "]}}");
	load_fails(sb.data, ORIGIN ": egress.allow: 65 entries; at most 64", NULL);
	sb_free(&sb);
}

/* The operator widens with a warning; the same or a narrower list is no loosening.  The agent
 * has no way to name the key at all (MCP's run_code takes language, code, timeout). */
/* The proxy's log lines of one box become the decisions of the result and the audit line:
 * host and port (never a URL's path or query), status, upstream address, bytes, refused why. */
static void test_egress_decisions(void)
{
	static const char log[] =
		"1733111111.123 10.208.4.3 GET http://ok.test:8080/hello?token=s3cret 200 "
		"203.0.113.150 123 456 - - 40000 3128\n"
		/* a CONNECT handed to the TLS port: its line there, then its spliced tunnel's */
		"1733111111.200 10.208.4.3 CONNECT ok.test:8443 200 - 134 0 - ok.test 51000 3129\n"
		"1733111111.290 127.0.0.1 CONNECT ok.test:8443 500 203.0.113.150 900 3000 - "
		"ok.test "
		"51000 3129\n"
		/* a later line of that port is another connection's, never this one's again */
		"1733111111.290 127.0.0.1 CONNECT ok.test:8443 500 203.0.113.99 1 1 - ok.test "
		"51000 3129\n"
		/* the front port's line for the hand-over: not a decision */
		"1733111111.291 10.208.4.3 CONNECT ok.test:8443 200 127.0.0.1 980 3039 - - 40001 "
		"3128\n"
		"1733111111.300 10.208.4.3 GET http://other.test/ 403 - 80 300 not-in-allowlist - "
		"40002 3128\n"
		"1733111111.400 10.208.4.3 CONNECT ok.test:8443 200 - 500 0 sni-mismatch "
		"evil.test 51001 3129\n"
		/* a tunnel line without its CONNECT (another box's): nothing */
		"1733111111.500 127.0.0.1 CONNECT ok.test:8443 500 203.0.113.150 9 9 - ok.test "
		"51002 "
		"3129\n"
		"not a line of the proxy's\n";
	cleanup_free char *text = egress_decisions(log);
	CU_ASSERT_PTR_NULL(strstr(text, "s3cret"));
	CU_ASSERT_PTR_NULL(strstr(text, "hello"));
	json_object *a = json_tokener_parse(text), *d, *v;
	CU_ASSERT_FATAL(json_object_is_type(a, json_type_array));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(a), 4);
	d = json_object_array_get_idx(a, 0);
	CU_ASSERT(json_object_object_get_ex(d, "host", &v) &&
		  strcmp(json_object_get_string(v), "ok.test") == 0);
	CU_ASSERT(json_object_object_get_ex(d, "port", &v) && json_object_get_int(v) == 8080);
	CU_ASSERT(json_object_object_get_ex(d, "status", &v) && json_object_get_int(v) == 200);
	CU_ASSERT(json_object_object_get_ex(d, "address", &v) &&
		  strcmp(json_object_get_string(v), "203.0.113.150") == 0);
	CU_ASSERT(json_object_object_get_ex(d, "bytes_out", &v) && json_object_get_int(v) == 123);
	CU_ASSERT(json_object_object_get_ex(d, "bytes_in", &v) && json_object_get_int(v) == 456);
	CU_ASSERT(json_object_object_get_ex(d, "allowed", &v) && json_object_get_boolean(v));
	CU_ASSERT(json_object_object_get_ex(d, "reason", &v) && v == NULL);
	d = json_object_array_get_idx(a, 1);
	CU_ASSERT(json_object_object_get_ex(d, "method", &v) &&
		  strcmp(json_object_get_string(v), "CONNECT") == 0);
	CU_ASSERT(json_object_object_get_ex(d, "port", &v) && json_object_get_int(v) == 8443);
	CU_ASSERT(json_object_object_get_ex(d, "sni", &v) &&
		  strcmp(json_object_get_string(v), "ok.test") == 0);
	CU_ASSERT(json_object_object_get_ex(d, "status", &v) && json_object_get_int(v) == 200);
	CU_ASSERT(json_object_object_get_ex(d, "address", &v) &&
		  strcmp(json_object_get_string(v), "203.0.113.150") == 0);
	CU_ASSERT(json_object_object_get_ex(d, "bytes_out", &v) && json_object_get_int(v) == 900);
	CU_ASSERT(json_object_object_get_ex(d, "bytes_in", &v) && json_object_get_int(v) == 3000);
	d = json_object_array_get_idx(a, 2);
	CU_ASSERT(json_object_object_get_ex(d, "port", &v) && json_object_get_int(v) == 80);
	CU_ASSERT(json_object_object_get_ex(d, "address", &v) && v == NULL);
	CU_ASSERT(json_object_object_get_ex(d, "allowed", &v) && !json_object_get_boolean(v));
	CU_ASSERT(json_object_object_get_ex(d, "reason", &v) &&
		  strcmp(json_object_get_string(v), "not-in-allowlist") == 0);
	d = json_object_array_get_idx(a, 3); /* answered 200, then closed: refused all the same */
	CU_ASSERT(json_object_object_get_ex(d, "allowed", &v) && !json_object_get_boolean(v));
	CU_ASSERT(json_object_object_get_ex(d, "reason", &v) &&
		  strcmp(json_object_get_string(v), "sni-mismatch") == 0);
	json_object_put(a);
	cleanup_free char *none = egress_decisions("");
	CU_ASSERT_STRING_EQUAL(none, "[]");
}

static void test_egress_override(void)
{
	brig_policy *p = brig_policy_new_default();
	override_ok(p, "egress.allow", "pypi.org:443,*.example.org:443", true);
	CU_ASSERT_EQUAL(strv_len(p->egress_allow), 2);
	override_ok(p, "egress.allow", "pypi.org:443", false);
	override_ok(p, "egress.allow", "", false);
	CU_ASSERT_PTR_NULL(p->egress_allow);
	override_ok(p, "egress",
		    "{\"allow\": [\"a.org:80\"], \"hosts\": {\"a.org\": \"203.0.113.1\"}}", true);
	override_ok(p, "egress", "{\"allow\": [\"a.org:80\"]}", false);
	override_fails(p, "egress.allow", "a.org", BRIG_E_POLICY, CLI ": egress.allow[0]: ");
	override_fails(p, "egress.allow", "10.0.0.1:80", BRIG_E_POLICY, CLI ": egress.allow[0]: ");
	override_fails(p, "network", "true", BRIG_E_POLICY,
		       CLI ": egress.allow: cannot be combined with network true");
	brig_policy_free(p);
}

static void test_spec_egress(void)
{
	char dir[] = "/tmp/brig-test-egress.XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir)); /* mode 0700, as brig's state directory */
	setenv("BRIG_CACHE_DIR", dir, 1);
	brig_policy *p = load_ok("{\"egress\": {\"allow\": [\"ok.test:8080\", \"*.w.test:443\"], "
				 "\"hosts\": {\"ok.test\": \"203.0.113.10\"}}}");
	brig_spec *s = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->egress);
	const brig_egress *e = s->egress;
	CU_ASSERT_EQUAL(strlen(e->digest), 12);
	CU_ASSERT_TRUE(starts_with(e->network, "brig-egress-"));
	/* the box runs in its network holder's namespace; the holder is on the network, with the
	 * box's hostname and a nameserver that answers nothing */
	const brig_spec *h = s->net_holder;
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	cleanup_free char *hname = xasprintf("%s-net", s->name);
	cleanup_free char *mode = xasprintf("container:%s", hname);
	CU_ASSERT_STRING_EQUAL(h->name, hname);
	CU_ASSERT_STRING_EQUAL(s->network, mode);
	CU_ASSERT_PTR_NULL(s->dns);
	CU_ASSERT_PTR_NULL(s->hostname);
	CU_ASSERT_STRING_EQUAL(h->network, e->network);
	CU_ASSERT_STRING_EQUAL(h->dns, BRIG_NEUTRAL_DNS); /* no resolver that answers */
	CU_ASSERT_STRING_EQUAL(h->hostname, "sandbox");
	CU_ASSERT_STRING_EQUAL(h->runtime, "runc");
	CU_ASSERT_STRING_EQUAL(h->argv[0], "sleep");
	CU_ASSERT_PTR_NULL(h->net_holder);
	CU_ASSERT_PTR_NULL(h->egress);
	CU_ASSERT_TRUE(h->cap_drop_all && h->no_new_privileges && h->read_only_rootfs);
	CU_ASSERT_EQUAL(h->memory_bytes, 16 * 1024 * 1024);
	bool role = false, box = false;
	for (char **l = h->labels; *l; l++) {
		role = role || strcmp(*l, "brig.role=net-holder") == 0;
		box = box || (starts_with(*l, "brig.box=") && strcmp(*l + 9, s->name) == 0);
	}
	CU_ASSERT_TRUE(role && box);
	/* another box of the same policy: the same box for the warm pool, its own holder */
	brig_spec *s3 = make_ok(p, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_STRING_NOT_EQUAL(s3->net_holder->name, h->name);
	CU_ASSERT_TRUE(spec_same_box(s, s3));
	free(s3->net_holder->hostname); /* a holder that differs is another box */
	s3->net_holder->hostname = xstrdup("other");
	CU_ASSERT_FALSE(spec_same_box(s, s3));
	spec_free(s3);
	CU_ASSERT_TRUE(starts_with(e->subnet, "10.2"));
	CU_ASSERT_TRUE(starts_with(e->config_dir, dir));
	cleanup_free char *url = xasprintf("http://%s:3128", e->proxy_address);
	static const char *const vars[] = { "HTTP_PROXY", "http_proxy", "HTTPS_PROXY",
					    "https_proxy" };
	for (size_t i = 0; i < 4; i++) {
		cleanup_free char *want = xasprintf("%s=%s", vars[i], url);
		bool found = false;
		for (char **v = s->env; *v; v++)
			found = found || strcmp(*v, want) == 0;
		CU_ASSERT_TRUE(found);
	}
	/* the configuration enforces the list, the addresses and the SNI */
	CU_ASSERT_PTR_NOT_NULL(strstr(e->config, "acl a0_host dstdomain -n ok.test\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->config, "acl a0_port port 8080\n"));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(e->config, "acl a1_host dstdom_regex -n ^([a-z0-9-]+\\.)+w\\.test$\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->config, "127.0.0.0/8"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->config, "100.64.0.0/10"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->config, "169.254.0.0/16"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->config, "ssl_bump splice sni_ok\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->config, "http_access deny !listed r_list\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->hosts_file, "203.0.113.10 ok.test\n"));
	/* the same allowlist is the same proxy; another is another */
	brig_spec *s2 = make_ok(p, BRIG_LANG_SHELL, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_STRING_EQUAL(s2->egress->proxy_address, e->proxy_address);
	CU_ASSERT_TRUE(egress_same(s->egress, s2->egress));
	spec_free(s2);
	brig_policy *q = load_ok("{\"egress\": {\"allow\": [\"ok.test:8081\"]}}");
	s2 = make_ok(q, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_STRING_NOT_EQUAL(s2->egress->network, e->network);
	CU_ASSERT_FALSE(spec_same_box(s, s2));
	spec_free(s2);
	/* gVisor: the runtime registered for egress boxes */
	s2 = make_ok(q, BRIG_LANG_PYTHON, BRIG_ISOLATION_GVISOR);
	CU_ASSERT_STRING_EQUAL(s2->runtime, "runsc-egress");
	CU_ASSERT_STRING_EQUAL(s2->net_holder->runtime, "runc"); /* it runs no agent code */
	spec_free(s2);
	brig_policy_free(q);
	/* no egress: no network at all */
	q = brig_policy_new_default();
	s2 = make_ok(q, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER);
	CU_ASSERT_PTR_NULL(s2->egress);
	CU_ASSERT_PTR_NULL(s2->net_holder);
	CU_ASSERT_STRING_EQUAL(s2->network, "none");
	spec_free(s2);
	brig_policy_free(q);
	spec_free(s);
	brig_policy_free(p);
	unsetenv("BRIG_CACHE_DIR");
	rmdir(dir);
}

static CU_TestInfo tests[] = {
	{ "defaults", test_defaults },
	{ "empty object is the defaults", test_empty_object_is_defaults },
	{ "edges: timeout_seconds", test_edges_timeout },
	{ "edges: max_timeout_seconds", test_edges_max_timeout },
	{ "edges: memory_mb", test_edges_memory },
	{ "edges: pids_limit", test_edges_pids },
	{ "edges: nofile", test_edges_nofile },
	{ "edges: tmpfs_mb", test_edges_tmpfs },
	{ "edges: max_input_bytes", test_edges_input },
	{ "edges: max_output_bytes", test_edges_output },
	{ "edges: max_concurrent_runs", test_edges_concurrency },
	{ "edges: cpus", test_edges_cpus },
	{ "huge integers refused", test_huge_integer_refused },
	{ "integer keys: wrong types", test_int_wrong_types },
	{ "other keys: wrong types", test_other_wrong_types },
	{ "NUL inside a string", test_nul_in_string },
	{ "unknown top-level key", test_unknown_top_level_key },
	{ "unknown images key", test_unknown_images_key },
	{ "user: root refused", test_user_root_refused },
	{ "user: not numeric", test_user_not_numeric },
	{ "user: accepted", test_user_accepted },
	{ "uid_range: parsed and bounded", test_uid_range },
	{ "images: accepted forms", test_image_forms_accepted },
	{ "images: refused forms", test_image_forms_refused },
	{ "images: error message", test_image_error_message },
	{ "images: pins", test_image_pins },
	{ "images: partial object keeps defaults", test_partial_images_keep_defaults },
	{ "a file may loosen", test_file_may_loosen },
	{ "require_pinned", test_require_pinned },
	{ "require_digest: renamed", test_require_digest_renamed },
	{ "max_timeout below timeout", test_max_timeout_below_timeout },
	{ "backend", test_backend },
	{ "isolation", test_isolation },
	{ "audit_log", test_audit_log },
	{ "seccomp: values", test_seccomp_values },
	{ "seccomp: profile files", test_seccomp_file },
	{ "seccomp: object form and deny list", test_seccomp_object },
	{ "syntax error: line and column", test_syntax_error_line_col },
	{ "top level must be an object", test_top_level_must_be_object },
	{ "file not found", test_file_not_found },
	{ "file: load and origin", test_file_load_and_origin },
	{ "file: 1 MiB cap", test_file_size_cap },
	{ "NULL arguments", test_null_arguments },
	{ "policy_validate on a struct", test_validate_struct },
	{ "override: integers loosen", test_override_ints_loosen },
	{ "override: integer edges", test_override_int_edges },
	{ "override: not an integer", test_override_not_integer },
	{ "override: memory suffixes", test_override_memory_suffixes },
	{ "override: cpus", test_override_cpus },
	{ "override: network", test_override_network },
	{ "override: isolation", test_override_isolation },
	{ "override: require_pinned", test_override_require_pinned },
	{ "override: seccomp", test_override_seccomp },
	{ "override: seccomp deny list", test_override_seccomp_deny },
	{ "override: strings", test_override_strings },
	{ "override: timeouts cross-field", test_override_timeouts_cross_field },
	{ "override: unknown key", test_override_unknown_key },
	{ "to_json: order and shape", test_to_json_order_and_shape },
	{ "to_json: cpus text", test_to_json_cpus_text },
	{ "to_json: round trip", test_to_json_round_trip },
	{ "copy", test_copy },
	{ "spec: python, every field", test_spec_python },
	{ "spec: node and shell", test_spec_node_and_shell },
	{ "spec: gvisor pids translation", test_spec_gvisor_pids },
	{ "spec: network and user", test_spec_network_and_user },
	{ "spec: limits", test_spec_limits },
	{ "spec: owner label", test_spec_owner_label },
	{ "spec: input at max and max+1", test_spec_input_limit },
	{ "spec: empty code", test_spec_empty_code },
	{ "spec: timeout default and max", test_spec_timeout_default_and_max },
	{ "spec: timeout refused", test_spec_timeout_refuse },
	{ "spec: timeout clamped", test_spec_timeout_clamp },
	{ "spec: bad requests", test_spec_bad_requests },
	{ "spec: isolation floor", test_spec_isolation_floor },
	{ "spec: seccomp profile file", test_spec_seccomp_file },
	{ "spec: seccomp engine default", test_spec_seccomp_engine },
	{ "spec: seccomp brig profile", test_spec_seccomp_brig },
	{ "spec: seccomp file with deny", test_spec_seccomp_file_deny },
	{ "random names", test_random_names },
	{ "parse /proc stat starttime", test_parse_starttime },
	{ "warm pool keys: defaults, edges, types, overrides", test_warm_pool_keys },
	{ "workspace keys: defaults, edges, types, rules, overrides", test_workspace_keys },
	{ "spec_same_box", test_spec_same_box },
	{ "spec: the image ID and its pin", test_spec_image_id },
	{ "workspace box: the run's change line", test_workspace_changes },
	{ "spec: the gVisor box is final (wrapper, env, slack)", test_spec_gvisor_final_box },
	{ "outcome -> result: verdicts, marker, cap", test_finish_outcome },
	{ "egress: allowlist entries and hosts", test_egress_entries },
	{ "egress: policy keys, types, limits, round trip", test_egress_policy_keys },
	{ "egress: overrides and loosening", test_egress_override },
	{ "egress: a box's decisions from the proxy's log", test_egress_decisions },
	{ "spec: egress network, proxy, env, config", test_spec_egress },
	CU_TEST_INFO_NULL,
};

BRIG_CUNIT_MAIN("policy", tests)
