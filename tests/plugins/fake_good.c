/* fake_good.c - test plugins built only for the tests (never installed).
 * FAKE_NAME / FAKE_ISOLATION / FAKE_AVAILABLE select the variant at compile time:
 *   fake          container isolation, available: run() echoes the code to stdout; code "exit N"
 *                 exits N; "oom" reports an OOM kill; "hang" honours the cancel fd.
 *   fake-gvisor   gvisor isolation, NOT available (for the fail-closed tests).
 * FAKE_FEATURES (default: seccomp profile + cancel) and FAKE_STRUCT_SIZE make the variants
 * that lack a feature or have an older, shorter table.
 * Every variant has the prepared-container hooks for the warm pool tests: code
 * "stale" makes run_prepared refuse (nothing handed over); FAKE_PREPARE_FAIL in the
 * environment makes prepare fail; fake_pool_counts() reports prepared / live handles.
 */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brig-backend.h"

static const brig_host_services *host;
static int n_prepared, n_live, n_run_prepared;

#ifndef FAKE_SPEED
#define FAKE_SPEED 1
#endif
#ifndef FAKE_FEATURES
#define FAKE_FEATURES                                                               \
	(BRIG_FEATURE_SECCOMP_PROFILE | BRIG_FEATURE_CANCEL | BRIG_FEATURE_MOUNTS | \
	 BRIG_FEATURE_MASKED_PATHS | BRIG_FEATURE_IMAGE_ID)
#endif

static int fake_probe(const brig_probe_request *req, brig_probe_info *info, brig_error **err)
{
	(void)err;
	(void)req;
	/* $FAKE_DOWN: the engine is down (transient) - the tests of probes that recover */
	info->available = FAKE_AVAILABLE && !getenv("FAKE_DOWN");
	snprintf(info->runtime, sizeof info->runtime, "%s", FAKE_RUNTIME);
	snprintf(info->version, sizeof info->version, "fake 1.0");
	if (!FAKE_AVAILABLE)
		snprintf(info->reason, sizeof info->reason, "runsc is not registered (fake)");
	else if (!info->available) {
		snprintf(info->reason, sizeof info->reason, "the fake engine is down");
		info->transient = true;
	}
	return 0;
}

static int fake_explain(const brig_spec *spec, char **out, brig_error **err)
{
	(void)err;
	char *s = NULL;
	if (asprintf(&s, "fake-run %s %s pids=%lld\n", spec->image, spec->name,
		     (long long)spec->pids_limit) < 0)
		return BRIG_E_SYSTEM;
	*out = s;
	return 0;
}

static char *dup_bytes(const char *p, size_t n)
{
	char *c = malloc(n + 1);
	if (c) {
		memcpy(c, p, n);
		c[n] = '\0';
	}
	return c;
}

static int fake_run(const brig_spec *spec, const brig_run_control *ctl, brig_outcome *out,
		    brig_error **err)
{
	const char *code = spec->stdin_data;
	size_t len = spec->stdin_len;
	/* what brig-init does in a real box: the header line is its, the rest the program's */
	const char *nl = len > 14 && memcmp(code, "BRIG-DEADLINE ", 14) == 0
				 ? memchr(code, '\n', len)
				 : NULL;
	if (nl) {
		len -= (size_t)(nl + 1 - code);
		code = nl + 1;
	}
	if (len == 4 && memcmp(code, "hang", 4) == 0) {
		struct pollfd pf = { ctl->cancel_fd, POLLIN, 0 };
		poll(&pf, 1, (int)spec->timeout_ms);
		out->cancelled = pf.revents != 0;
		out->timed_out = !pf.revents;
		out->exit_code = 137;
		return 0;
	}
	if (len == 4 && memcmp(code, "fail", 4) == 0) { /* nothing attempted */
		*err = host->error_new(BRIG_E_SANDBOX, 0, "fake engine failure");
		return BRIG_E_SANDBOX;
	}
	if (len == 7 && memcmp(code, "midfail", 7) == 0) { /* attempted: output, then failure */
		out->stdout_data = dup_bytes("partial", 7);
		out->stdout_len = 7;
		out->sandbox_error = strdup("fake engine died midway");
		out->transient = true;
		return 0;
	}
	out->stdout_data = dup_bytes(code, len);
	out->stdout_len = len;
	out->exit_code = 0;
	if (len > 5 && memcmp(code, "exit ", 5) == 0)
		out->exit_code = (int)strtol(code + 5, NULL, 10);
	if (len == 3 && memcmp(code, "oom", 3) == 0) {
		out->exit_code = 137;
		out->oom_killed = true;
	}
	return 0;
}

typedef struct fake_box {
	char *name;
	bool used;
} fake_box;

static int fake_prepare(const brig_spec *spec, void **handle, brig_error **err)
{
	if (getenv("FAKE_PREPARE_FAIL")) {
		*err = host->error_new(BRIG_E_SANDBOX, 0, "fake prepare failure");
		return BRIG_E_SANDBOX;
	}
	fake_box *b = calloc(1, sizeof *b);
	if (!b || !(b->name = strdup(spec->name))) {
		free(b);
		return BRIG_E_SYSTEM;
	}
	__atomic_add_fetch(&n_prepared, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&n_live, 1, __ATOMIC_SEQ_CST);
	*handle = b;
	return 0;
}

static int fake_run_prepared(void *handle, const brig_spec *spec, const brig_run_control *ctl,
			     brig_outcome *out, brig_error **err)
{
	fake_box *b = handle;
	if (b->used || strcmp(b->name, spec->name) != 0) {
		*err = host->error_new(BRIG_E_SANDBOX, 0, "fake: box reused or misnamed");
		return BRIG_E_SANDBOX;
	}
	size_t n = spec->stdin_len;
	if (n >= 6 && memcmp(spec->stdin_data + n - 6, "\nstale", 6) == 0) {
		*err = host->error_new(BRIG_E_UNAVAILABLE, 0, "fake: stale box");
		return BRIG_E_UNAVAILABLE;
	}
	b->used = true;
	__atomic_add_fetch(&n_run_prepared, 1, __ATOMIC_SEQ_CST);
	return fake_run(spec, ctl, out, err);
}

static void fake_discard(void *handle)
{
	fake_box *b = handle;
	__atomic_sub_fetch(&n_live, 1, __ATOMIC_SEQ_CST);
	free(b->name);
	free(b);
}

/* For the tests, found with dlsym: boxes prepared, still live, and run. */
__attribute__((visibility("default"))) void fake_pool_counts(int *prepared, int *live, int *ran);
__attribute__((visibility("default"))) void fake_pool_counts(int *prepared, int *live, int *ran)
{
	*prepared = __atomic_load_n(&n_prepared, __ATOMIC_SEQ_CST);
	*live = __atomic_load_n(&n_live, __ATOMIC_SEQ_CST);
	*ran = __atomic_load_n(&n_run_prepared, __ATOMIC_SEQ_CST);
}

/* The ID every present image has; the tests "rebuild" an image under its tag by changing it
 * (fake_set_image_id, found with dlsym: the pool's workers look images up meanwhile). */
static pthread_mutex_t image_lock = PTHREAD_MUTEX_INITIALIZER;
static char image_id[80] =
	"sha256:0000000000000000000000000000000000000000000000000000000000000007";

__attribute__((visibility("default"))) void fake_set_image_id(const char *id);
__attribute__((visibility("default"))) void fake_set_image_id(const char *id)
{
	pthread_mutex_lock(&image_lock);
	snprintf(image_id, sizeof image_id, "%s", id);
	pthread_mutex_unlock(&image_lock);
}

static char **strv2(const char *a, const char *b)
{
	char **v = calloc(3, sizeof *v);
	if (v) {
		v[0] = strdup(a);
		v[1] = b ? strdup(b) : NULL;
	}
	return v;
}

/* Images whose name contains "missing" are absent; "labelled" ones carry brig's labels. */
static int fake_image_inspect(const char *image, brig_image_info *info, brig_error **err)
{
	(void)err;
	if (strstr(image, "missing"))
		return 0;
	pthread_mutex_lock(&image_lock);
	snprintf(info->id, sizeof info->id, "%s", image_id);
	pthread_mutex_unlock(&image_lock);
	if (!BRIG_HAS_FIELD(info, brig_image_info, labels))
		return 1;
	info->size = 1234567;
	snprintf(info->created, sizeof info->created, "2026-01-02T03:04:05.123456789Z");
	info->repo_tags = strchr(image, ':') && !strchr(image, '@') ? strv2(image, NULL) : NULL;
	if (strstr(image, "labelled"))
		info->labels = strv2("org.brig.runtime=Fake 1.0", "unrelated=x");
	return 1;
}

static int fake_image_id(const char *image, char *id, size_t id_len, brig_error **err)
{
	brig_image_info info = { .struct_size = offsetof(brig_image_info, size) };
	int r = fake_image_inspect(image, &info, err);
	snprintf(id, id_len, "%s", r == 1 ? info.id : "");
	return r;
}

/* $FAKE_BOXES: "NAME|OWNER;NAME|OWNER..." - the containers the engine would list, for the gc
 * tests; every remove is recorded for fake_gc_log(). */
static char gc_log[4096];

static int fake_list_labelled(const char *label, char ***names, char ***owners, brig_error **err)
{
	(void)err;
	const char *boxes = getenv("FAKE_BOXES");
	size_t n = 0;
	*names = calloc(64, sizeof **names);
	*owners = calloc(64, sizeof **owners);
	snprintf(gc_log, sizeof gc_log, "list %s;", label);
	for (const char *p = boxes; p && *p && n < 63;) {
		const char *bar = strchr(p, '|'), *end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		if (!bar || bar > end)
			break;
		(*names)[n] = strndup(p, (size_t)(bar - p));
		(*owners)[n++] = strndup(bar + 1, (size_t)(end - bar - 1));
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int fake_remove(const char *name, brig_error **err)
{
	(void)err;
	size_t l = strlen(gc_log);
	snprintf(gc_log + l, sizeof gc_log - l, "rm %s;", name);
	return 0;
}

__attribute__((visibility("default"))) const char *fake_gc_log(void);
__attribute__((visibility("default"))) const char *fake_gc_log(void)
{
	return gc_log;
}

static const brig_backend table = {
	.abi_major = FAKE_ABI_MAJOR,
	.abi_minor = BRIG_BACKEND_ABI_MINOR,
	.struct_size = FAKE_STRUCT_SIZE,
	.name = FAKE_NAME,
	.description = "test plugin",
	.isolation = FAKE_ISOLATION,
	.speed_rank = FAKE_SPEED,
	.features = FAKE_FEATURES,
	.default_runtime = FAKE_RUNTIME,
	.probe = fake_probe,
	.explain = fake_explain,
	.run = fake_run,
	.remove = fake_remove,
	.image_id = fake_image_id,
	.list_labelled = fake_list_labelled,
	.prepare = fake_prepare,
	.run_prepared = fake_run_prepared,
	.discard = fake_discard,
	.image_inspect = fake_image_inspect,
};

#ifndef FAKE_NO_ENTRY
__attribute__((visibility("default"))) const brig_backend *
brig_backend_entry(uint32_t host_abi_major, const brig_host_services *services);
__attribute__((visibility("default"))) const brig_backend *
brig_backend_entry(uint32_t host_abi_major, const brig_host_services *services)
{
	(void)host_abi_major;
	host = services;
	return &table;
}
#else
/* A shared object that is not a brig plugin: no entry symbol. */
__attribute__((visibility("default"))) const brig_backend *not_the_entry(void);
__attribute__((visibility("default"))) const brig_backend *not_the_entry(void)
{
	return &table;
}
#endif
