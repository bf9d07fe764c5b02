/* test_pool.c - the warm pool (src/pool.c) and brig_run's pooled path, with the fake plugin's
 * prepared-container hooks (tests/plugins/fake_good.c): no container engine needed. */
#include "config.h"

#include <limits.h>
#include <dlfcn.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "internal.h"
#include "pool.h"

#define WAIT_MS 5000

/* An audit log and the lock file brig keeps beside it (PATH.lock). */
static void unlink_audit_log(const char *path)
{
	char lock[PATH_MAX];
	unlink(path);
	snprintf(lock, sizeof lock, "%s.lock", path);
	unlink(lock);
}

static void counts(int *prepared, int *live, int *ran);

static brig_ctx *make_ctx(const char *policy_json)
{
	int unused[3];
	counts(&unused[0], &unused[1], &unused[2]); /* load our reference first */
	setenv("BRIG_BACKEND_DIR", getenv("BRIG_TEST_PLUGIN_DIR"), 1);
	brig_policy *p = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_policy_load_string(policy_json, "test", &p, &err), 0);
	brig_ctx *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_ctx_new(p, &ctx, &err), 0);
	CU_ASSERT_PTR_NULL(ctx->pool); /* a library context starts nothing ahead by itself */
	CU_ASSERT_EQUAL_FATAL(brig_ctx_start_warm_pool(ctx, &err), 0);
	return ctx;
}

/* The fake plugin's counters (cumulative for the process): boxes prepared, still live (not
 * discarded), run.  The test holds its own reference to the plugin so that the counters
 * outlive each context. */
static void *fake_lib;

static void counts(int *prepared, int *live, int *ran)
{
	if (!fake_lib) {
		cleanup_free char *path = xasprintf("%s/fake.so", getenv("BRIG_TEST_PLUGIN_DIR"));
		fake_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(fake_lib);
	void (*fn)(int *, int *, int *) = NULL;
	*(void **)&fn = dlsym(fake_lib, "fake_pool_counts");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fn);
	fn(prepared, live, ran);
}

static json_object *pool_status(brig_ctx *ctx)
{
	return pool_status_json(ctx->pool, ctx->policy);
}

static int status_int(json_object *st, const char *lang, const char *key)
{
	json_object *v = st;
	if (lang) {
		json_object_object_get_ex(v, "languages", &v);
		json_object_object_get_ex(v, lang, &v);
	}
	json_object_object_get_ex(v, key, &v);
	return json_object_get_int(v);
}

static int run_code(brig_ctx *ctx, brig_language lang, const char *code, brig_result *res)
{
	brig_request req = { .language = lang, .code = code, .code_len = strlen(code) };
	brig_error *err = NULL;
	int r = brig_run(ctx, &req, NULL, res, &err);
	brig_error_free(err);
	return r;
}

/* Taken containers are removed in the background: wait until only the idle ones are live. */
static void wait_settled(brig_ctx *ctx, int idle_expected)
{
	int prepared, live, ran;
	for (int i = 0; i < WAIT_MS / 10; i++) {
		counts(&prepared, &live, &ran);
		json_object *st = pool_status(ctx);
		int idle = 0, starting = 0;
		for (int l = 0; l < BRIG_LANG_COUNT; l++) {
			idle += status_int(st, brig_language_name(l), "idle");
			starting += status_int(st, brig_language_name(l), "starting");
		}
		int removing = status_int(st, NULL, "removing");
		json_object_put(st);
		if (idle == idle_expected && starting == 0 && removing == 0 && live == idle)
			return;
		usleep(10000);
	}
	CU_FAIL("the pool did not settle");
}

static void test_pooled_runs_once_each(void)
{
	int prepared0, live0, ran0;
	counts(&prepared0, &live0, &ran0);
	CU_ASSERT_EQUAL(live0, 0);
	brig_ctx *ctx = make_ctx("{\"warm_pool\": 2}");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx->pool);
	CU_ASSERT_FATAL(pool_wait_idle(ctx->pool, BRIG_LANG_PYTHON, 2, WAIT_MS));
	char *names[5] = { NULL };
	for (int i = 0; i < 5; i++) {
		brig_result res = { .struct_size = sizeof res };
		CU_ASSERT_EQUAL_FATAL(run_code(ctx, BRIG_LANG_PYTHON, "exit 3", &res), 0);
		CU_ASSERT_EQUAL(res.verdict, BRIG_VERDICT_ERROR);
		CU_ASSERT_EQUAL(res.exit_code, 3);
		CU_ASSERT_STRING_EQUAL(res.stdout_data, "exit 3");
		CU_ASSERT_TRUE(res.pooled);
		names[i] = xstrdup(res.container);
		for (int j = 0; j < i; j++)
			CU_ASSERT_STRING_NOT_EQUAL(names[i], names[j]); /* never reused */
		brig_result_clear(&res);
		CU_ASSERT_FATAL(pool_wait_idle(ctx->pool, BRIG_LANG_PYTHON, 2, WAIT_MS));
	}
	wait_settled(ctx, 6);
	int prepared, live, ran;
	counts(&prepared, &live, &ran);
	CU_ASSERT_EQUAL(ran - ran0, 5);
	CU_ASSERT_EQUAL(prepared - prepared0, 6 + 5); /* 2 per language, one refill per run */
	CU_ASSERT_EQUAL(live, 6);
	json_object *st = pool_status(ctx);
	CU_ASSERT_EQUAL(status_int(st, NULL, "taken"), 5);
	CU_ASSERT_EQUAL(status_int(st, "python", "idle"), 2); /* never more than warm_pool */
	CU_ASSERT_EQUAL(status_int(st, "node", "idle"), 2);
	json_object_put(st);
	brig_ctx_free(ctx);
	counts(&prepared, &live, &ran);
	CU_ASSERT_EQUAL(live, 0); /* brig_ctx_free discarded every box */
	for (int i = 0; i < 5; i++)
		free(names[i]);
}

static void test_off(void)
{
	brig_ctx *ctx = make_ctx("{\"warm_pool\": 0}");
	CU_ASSERT_PTR_NULL(ctx->pool);
	brig_result res = { .struct_size = sizeof res };
	CU_ASSERT_EQUAL(run_code(ctx, BRIG_LANG_SHELL, "hello", &res), 0);
	CU_ASSERT_FALSE(res.pooled);
	CU_ASSERT_STRING_EQUAL(res.stdout_data, "hello");
	brig_result_clear(&res);
	json_object *st = pool_status(ctx);
	json_object *v = NULL;
	CU_ASSERT(json_object_object_get_ex(st, "state", &v) &&
		  strcmp(json_object_get_string(v), "off") == 0);
	json_object_put(st);
	brig_ctx_free(ctx);
}

static void test_memory_budget(void)
{
	/* 256 MiB boxes in 600 MiB: two boxes in all, whatever warm_pool says */
	brig_ctx *ctx =
		make_ctx("{\"warm_pool\": 4, \"memory_mb\": 256, \"memory_budget_mb\": 600}");
	usleep(200000);
	wait_settled(ctx, 2);
	json_object *st = pool_status(ctx);
	int idle = 0;
	for (int l = 0; l < BRIG_LANG_COUNT; l++)
		idle += status_int(st, brig_language_name(l), "idle");
	CU_ASSERT_EQUAL(idle, 2);
	json_object_put(st);
	brig_ctx_free(ctx);
}

typedef struct hang_arg {
	brig_ctx *ctx;
	int cancel_fd;
	brig_result res;
} hang_arg;

static void *hang_thread(void *a)
{
	hang_arg *h = a;
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "hang", .code_len = 4 };
	brig_run_options o = { .struct_size = sizeof o, .cancel_fd = h->cancel_fd };
	brig_error *err = NULL;
	h->res.struct_size = sizeof h->res;
	brig_run(h->ctx, &req, &o, &h->res, &err);
	brig_error_free(err);
	return NULL;
}

/* A run in flight counts against the budget: the pool refills only once it has ended. */
static void test_budget_counts_running(void)
{
	brig_ctx *ctx =
		make_ctx("{\"warm_pool\": 1, \"memory_mb\": 100, \"memory_budget_mb\": 300}");
	wait_settled(ctx, 3);
	int pfd[2];
	CU_ASSERT_FATAL(pipe(pfd) == 0);
	hang_arg h = { .ctx = ctx, .cancel_fd = pfd[0] };
	pthread_t t;
	CU_ASSERT_FATAL(pthread_create(&t, NULL, hang_thread, &h) == 0);
	usleep(300000); /* the shell box is taken and running: 2 idle + 1 running = the budget */
	json_object *st = pool_status(ctx);
	CU_ASSERT_EQUAL(status_int(st, NULL, "running"), 1);
	CU_ASSERT_EQUAL(status_int(st, "shell", "idle"), 0);
	CU_ASSERT_EQUAL(status_int(st, "shell", "starting"), 0);
	json_object_put(st);
	CU_ASSERT_EQUAL(write(pfd[1], "x", 1), 1);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(h.res.verdict, BRIG_VERDICT_CANCELLED); /* cancel reaches a pooled box */
	CU_ASSERT_TRUE(h.res.pooled);
	brig_result_clear(&h.res);
	CU_ASSERT(pool_wait_idle(ctx->pool, BRIG_LANG_SHELL, 1, WAIT_MS)); /* refilled */
	close(pfd[0]);
	close(pfd[1]);
	brig_ctx_free(ctx);
}

static void test_stale_box_runs_cold(void)
{
	int prepared0, live0, ran0;
	counts(&prepared0, &live0, &ran0);
	brig_ctx *ctx = make_ctx("{\"warm_pool\": 1}");
	CU_ASSERT_FATAL(pool_wait_idle(ctx->pool, BRIG_LANG_NODE, 1, WAIT_MS));
	brig_result res = { .struct_size = sizeof res };
	CU_ASSERT_EQUAL(run_code(ctx, BRIG_LANG_NODE, "stale", &res), 0);
	CU_ASSERT_FALSE(res.pooled); /* the box refused before anything was handed over */
	CU_ASSERT_EQUAL(res.verdict, BRIG_VERDICT_SUCCESS);
	CU_ASSERT_STRING_EQUAL(res.stdout_data, "stale");
	brig_result_clear(&res);
	wait_settled(ctx, 3);
	int prepared, live, ran;
	counts(&prepared, &live, &ran);
	CU_ASSERT_EQUAL(ran, ran0);
	CU_ASSERT_EQUAL(live, 3);
	brig_ctx_free(ctx);
}

static void test_prepare_failure_backs_off(void)
{
	setenv("FAKE_PREPARE_FAIL", "1", 1);
	brig_ctx *ctx = make_ctx("{\"warm_pool\": 2}");
	usleep(300000);
	brig_result res = { .struct_size = sizeof res };
	CU_ASSERT_EQUAL(run_code(ctx, BRIG_LANG_PYTHON, "cold", &res), 0);
	CU_ASSERT_FALSE(res.pooled);
	CU_ASSERT_STRING_EQUAL(res.stdout_data, "cold");
	brig_result_clear(&res);
	json_object *st = pool_status(ctx);
	json_object *v = st;
	json_object_object_get_ex(v, "languages", &v);
	json_object_object_get_ex(v, "python", &v);
	json_object_object_get_ex(v, "error", &v);
	CU_ASSERT_PTR_NOT_NULL(v && strstr(json_object_get_string(v), "fake prepare failure"));
	CU_ASSERT_EQUAL(status_int(st, NULL, "started"), 0);
	json_object_put(st);
	brig_ctx_free(ctx);
	unsetenv("FAKE_PREPARE_FAIL"); /* only once no worker reads the environment */
}

/* A box that no longer matches the spec a run gets (the seccomp profile file changed) is
 * never used: the language is drained and refilled with the new box. */
static void test_changed_box_drains(void)
{
	char path[] = "/tmp/brig-seccomp-XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, "{\"defaultAction\": \"SCMP_ACT_ALLOW\"}", 35), 35);
	close(fd);
	cleanup_free char *pol = xasprintf("{\"warm_pool\": 1, \"seccomp\": \"%s\"}", path);
	brig_ctx *ctx = make_ctx(pol);
	CU_ASSERT_FATAL(pool_wait_idle(ctx->pool, BRIG_LANG_PYTHON, 1, WAIT_MS));
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"defaultAction\": \"SCMP_ACT_ERRNO\"}", f);
	fclose(f);
	brig_result res = { .struct_size = sizeof res };
	CU_ASSERT_EQUAL(run_code(ctx, BRIG_LANG_PYTHON, "x", &res), 0);
	CU_ASSERT_FALSE(res.pooled);
	brig_result_clear(&res);
	CU_ASSERT_FATAL(pool_wait_idle(ctx->pool, BRIG_LANG_PYTHON, 1, WAIT_MS));
	CU_ASSERT_EQUAL(run_code(ctx, BRIG_LANG_PYTHON, "y", &res), 0);
	CU_ASSERT_TRUE(res.pooled); /* the refill has the new box */
	brig_result_clear(&res);
	json_object *st = pool_status(ctx);
	CU_ASSERT_EQUAL(status_int(st, NULL, "drained"), 1);
	json_object_put(st);
	brig_ctx_free(ctx);
	unlink(path);
}

static void set_image_id(const char *id)
{
	void (*fn)(const char *) = NULL;
	*(void **)&fn = dlsym(fake_lib, "fake_set_image_id");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fn);
	fn(id);
}

#define ID_A "sha256:000000000000000000000000000000000000000000000000000000000000000a"
#define ID_B "sha256:000000000000000000000000000000000000000000000000000000000000000b"

/* An image rebuilt under its tag: the boxes started from the old one are drained, never handed
 * a run; the audit line names the ID each run started from. */
static void test_rebuilt_image_drains(void)
{
	char path[] = "/tmp/brig-audit-XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	brig_ctx *ctx = make_ctx("{\"warm_pool\": 1}");
	set_image_id(ID_A);
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_ctx_set_audit_log(ctx, path, &err), 0);
	wait_settled(ctx, 3);
	/* the boxes started before set_image_id may carry the fake's default ID: take them out */
	brig_result res = { .struct_size = sizeof res };
	CU_ASSERT_EQUAL(run_code(ctx, BRIG_LANG_SHELL, "a0", &res), 0);
	brig_result_clear(&res);
	CU_ASSERT_FATAL(pool_wait_idle(ctx->pool, BRIG_LANG_SHELL, 1, WAIT_MS));
	CU_ASSERT_EQUAL(run_code(ctx, BRIG_LANG_SHELL, "a1", &res), 0);
	CU_ASSERT_TRUE(res.pooled); /* a box of image A */
	brig_result_clear(&res);
	CU_ASSERT_FATAL(pool_wait_idle(ctx->pool, BRIG_LANG_SHELL, 1, WAIT_MS));
	json_object *st = pool_status(ctx);
	int drained = status_int(st, NULL, "drained");
	json_object_put(st);
	set_image_id(ID_B); /* rebuilt under the same tag */
	CU_ASSERT_EQUAL(run_code(ctx, BRIG_LANG_SHELL, "b1", &res), 0);
	CU_ASSERT_FALSE(res.pooled); /* the idle box of A was not used */
	brig_result_clear(&res);
	st = pool_status(ctx);
	CU_ASSERT_EQUAL(status_int(st, NULL, "drained"), drained + 1);
	json_object_put(st);
	CU_ASSERT_FATAL(pool_wait_idle(ctx->pool, BRIG_LANG_SHELL, 1, WAIT_MS));
	CU_ASSERT_EQUAL(run_code(ctx, BRIG_LANG_SHELL, "b2", &res), 0);
	CU_ASSERT_TRUE(res.pooled); /* the refill is a box of B */
	brig_result_clear(&res);
	brig_ctx_free(ctx);
	set_image_id("sha256:0000000000000000000000000000000000000000000000000000000000000007");
	/* a1 ran in a box of A, b1 and b2 in boxes of B */
	FILE *f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	char line[4096];
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		n++;
		const char *want =
			n == 2 ? "\"image_id\":\"" ID_A "\"" : "\"image_id\":\"" ID_B "\"";
		if (n >= 2)
			CU_ASSERT_PTR_NOT_NULL(strstr(line, want));
	}
	CU_ASSERT_EQUAL(n, 4);
	fclose(f);
	unlink_audit_log(path);
}

static void test_audit_and_json_say_pooled(void)
{
	char path[] = "/tmp/brig-audit-XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	brig_ctx *ctx = make_ctx("{\"warm_pool\": 1}");
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_ctx_set_audit_log(ctx, path, &err), 0);
	CU_ASSERT_FATAL(pool_wait_idle(ctx->pool, BRIG_LANG_SHELL, 1, WAIT_MS));
	brig_result res = { .struct_size = sizeof res };
	CU_ASSERT_EQUAL(run_code(ctx, BRIG_LANG_SHELL, "hi", &res), 0);
	CU_ASSERT_TRUE(res.pooled);
	cleanup_free char *js = brig_result_to_json(&res, false);
	CU_ASSERT_PTR_NOT_NULL(strstr(js, "\"pooled\":true"));
	brig_result_clear(&res);
	brig_ctx_free(ctx);
	char line[4096] = "";
	FILE *f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(line, "\"pooled\":true"));
	unlink_audit_log(path);
}

/* Many threads at once: every run answered, each box used once, nothing left behind. */
#define N_THREADS 8
#define N_RUNS    20

static void *many_runs(void *a)
{
	brig_ctx *ctx = a;
	for (int i = 0; i < N_RUNS; i++) {
		brig_result res = { .struct_size = sizeof res };
		if (run_code(ctx, (brig_language)(i % BRIG_LANG_COUNT), "ok", &res) != 0 ||
		    strcmp(res.stdout_data, "ok") != 0)
			abort();
		brig_result_clear(&res);
	}
	return NULL;
}

static void test_concurrent_runs(void)
{
	int prepared0, live0, ran0;
	counts(&prepared0, &live0, &ran0);
	brig_ctx *ctx = make_ctx("{\"warm_pool\": 3}");
	pthread_t t[N_THREADS];
	for (int i = 0; i < N_THREADS; i++)
		CU_ASSERT_FATAL(pthread_create(&t[i], NULL, many_runs, ctx) == 0);
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(t[i], NULL);
	json_object *st = pool_status(ctx);
	int taken = status_int(st, NULL, "taken");
	json_object_put(st);
	int prepared, live, ran;
	counts(&prepared, &live, &ran);
	CU_ASSERT_EQUAL(ran - ran0, taken); /* every box taken ran exactly once */
	CU_ASSERT(taken > 0);
	brig_ctx_free(ctx);
	counts(&prepared, &live, &ran);
	CU_ASSERT_EQUAL(live, 0);
}

static CU_TestInfo tests[] = {
	{ "pooled runs: each box once, refilled, removed at free", test_pooled_runs_once_each },
	{ "warm_pool 0: no pool, cold runs", test_off },
	{ "memory budget caps idle boxes", test_memory_budget },
	{ "memory budget counts running; cancel on a pooled box", test_budget_counts_running },
	{ "stale box: the run goes cold", test_stale_box_runs_cold },
	{ "prepare failure: error reported, cold runs", test_prepare_failure_backs_off },
	{ "changed box drains the language", test_changed_box_drains },
	{ "audit line and result JSON say pooled", test_audit_and_json_say_pooled },
	{ "a rebuilt image drains its boxes", test_rebuilt_image_drains },
	{ "concurrent runs", test_concurrent_runs },
	CU_TEST_INFO_NULL,
};

static void close_fake(void)
{
	if (fake_lib)
		dlclose(fake_lib);
}

int main(void)
{
	atexit(close_fake);
	return brig_cunit_run("pool", tests);
}
