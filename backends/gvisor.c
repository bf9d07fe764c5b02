/* gvisor.c - the gVisor backend: the Engine API flow of libdock (the same code as docker-api),
 * with every container run by gVisor's runsc as registered in dockerd.  The runtime is
 * "runsc-seccomp" (runsc --network=none --oci-seccomp): without --oci-seccomp runsc ignores the
 * container's seccomp profile, and brig promises the same controls on every backend.
 *
 * What this file adds to libdock:
 *   probe  the runtime is registered AND a smoke container (the hardened flags, the shell
 *          image) really runs under it within a deadline, on a kernel that is not the host's
 *          (gVisor's own) and with the container's seccomp filter in force;
 *   run    the program runs under a small /bin/sh wrapper that reports the program's own exit
 *          status 2 on stderr (then taken out again): when gVisor's kernel panics, runsc exits
 *          2 as well, and only the wrapper's word tells the two apart (see unwrap_result);
 *   explain  the wrapped spec: explain shows exactly what runs.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/utsname.h>

#include "brig-backend.h"
#include "capture.h"
#include "dock.h"
#include "dock_http.h"
#include "frames.h"
#include "gvisor_cache.h"
#include "plugin_host.h"
#include "spec-access.h"

#define RUNTIME_DEFAULT  "runsc-seccomp"
#define RUNTIME_ENV      "BRIG_GVISOR_RUNTIME" /* tests: a runtime that does not exist */
#define PROBE_IMAGE      "brig/shell:bookworm" /* the default policy's shell image */
#define PROBE_IMAGE_ENV  "BRIG_GVISOR_PROBE_IMAGE"
#define PROBE_MS         15000L /* create .. exit of the smoke container */
#define PROBE_DELETE_MS  10000L
#define PROBE_OUTPUT_MAX 16384
#define PIDS_ENV         "BRIG_GVISOR_PIDS_LIMIT" /* tests: provoke a sentry panic; only lowers */
#define MARKER_SUFFIX    ":exited-2"
#define WRAPPER_SCRIPT   "\"$@\"; s=$?; [ \"$s\" -ne 2 ] || printf '%s\\n' \"$0\" >&2; exit \"$s\""
#define SETUP_HINT                                                         \
	"run scripts/setup-host (it registers runsc and runsc-seccomp in " \
	"/etc/docker/daemon.json, runtimeArgs [\"--network=none\"] and "   \
	"[\"--network=none\", \"--oci-seccomp\"], and reloads dockerd with SIGHUP)"

/* The runtime: $BRIG_GVISOR_RUNTIME (secure_getenv), else runsc-seccomp.  NULL when the
 * variable is set to something that is not a runtime name: then nothing runs. */
static const char *gv_runtime(void)
{
	const char *v = secure_getenv(RUNTIME_ENV);
	if (!v || !*v)
		return RUNTIME_DEFAULT;
	return dock_valid_name(v) ? v : NULL;
}

/* ---- probe: registered, and a smoke container really runs on gVisor ------------------------ */

/* "brig.owner=PID:STARTTIME" (field 22 of /proc/self/stat), as the host labels a run's box:
 * `brig gc` and the test suites leave a container alone while its owner lives.  "" if
 * /proc/self/stat cannot be read. */
static void owner_label(char *buf, size_t len)
{
	char stat[1024];
	buf[0] = '\0';
	FILE *f = fopen("/proc/self/stat", "re");
	if (!f)
		return;
	size_t n = fread(stat, 1, sizeof stat - 1, f);
	fclose(f);
	stat[n] = '\0';
	const char *p = strrchr(stat, ')'); /* comm may hold spaces and ')' */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || p[1] < '0' || p[1] > '9')
		return;
	snprintf(buf, len, "brig.owner=%ld:%.*s", (long)getpid(), (int)strspn(p + 1, "0123456789"),
		 p + 1);
}

typedef struct smoke {
	const dock_engine *eng;
	const char *runtime;
	const char *image;
	char name[32];
	char owner[64];
	char *labels[4]; /* brig=1, brig.probe=gvisor, the owner (when known) */
	char *base;      /* "/v1.41/containers/NAME" */
	bool may_exist;
	strbuf out; /* what the smoke container printed */
	int exit_code;
} smoke;

/* The smoke container: the hardened flags of a real run, small limits, and one busybox `cat`
 * of the two files that tell whose kernel it is and whether its seccomp filter is in force.
 * The engine's default seccomp profile is enough for that.  Output through json-file (read back
 * with GET /logs) keeps this flow to plain requests, each with its own deadline. */
static void smoke_spec(const smoke *sm, brig_spec *s)
{
	static char *argv[] = { "cat", "/proc/version", "/proc/self/status", NULL };
	static char *env[] = { "PATH=/usr/bin:/bin", NULL };
	memset(s, 0, sizeof *s);
	s->struct_size = sizeof *s;
	s->name = (char *)sm->name;
	s->language = "shell";
	s->image = (char *)sm->image;
	s->argv = argv;
	s->env = env;
	s->labels = (char **)sm->labels;
	s->workdir = "/tmp";
	s->user = "65534:65534";
	s->hostname = "sandbox";
	s->network = "none";
	s->dns = BRIG_NEUTRAL_DNS;
	s->runtime = (char *)sm->runtime;
	s->read_only_rootfs = true;
	s->tmpfs_path = "/tmp";
	s->tmpfs_options = "rw,noexec,nosuid,nodev,size=1m";
	s->shm_bytes = 1 << 20;
	s->memory_bytes = s->memory_swap_bytes = 128 << 20;
	s->nano_cpus = 1000000000;
	s->pids_limit = 256; /* an idle sandbox has ~40 host tasks */
	s->pids_guest = 8;   /* no nproc: under runc it would count the host's uid 65534 */
	s->nofile = 64;
	s->cap_drop_all = true;
	s->no_new_privileges = true;
	s->log_driver = "json-file";
}

static int smoke_http_fail(const smoke *sm, const char *what, const dock_response *resp,
			   brig_error **err)
{
	cleanup_free char *txt = dock_error_text(resp);
	const char *hint = strstr(txt, "network")
				   ? " (runsc needs runtimeArgs [\"--network=none\"] "
				     "on this host: " SETUP_HINT ")"
				   : "";
	return plugin_fail(err, BRIG_E_UNAVAILABLE, 0,
			   "%s a smoke-test container under runtime %s: dockerd answered HTTP "
			   "%ld: %s%s",
			   what, sm->runtime, resp->status, txt, hint);
}

#define SMOKE_HANG_FMT                                                                             \
	"a smoke-test container under runtime %s did not run within %ld s (a runtime that hangs, " \
	"e.g. runsc --platform=kvm on some hosts)"

/* One request of the smoke flow on `base` + `suffix`, bounded by the probe's deadline. */
static int smoke_request(smoke *sm, const char *method, const char *base, const char *suffix,
			 const char *json, int64_t deadline, dock_response *resp, brig_error **err)
{
	int64_t left = deadline - now_ms();
	if (left <= 0)
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, SMOKE_HANG_FMT, sm->runtime,
				   PROBE_MS / 1000);
	cleanup_free char *path = xasprintf("%s%s", base, suffix);
	int r = dock_request(sm->eng->socket, method, path, json, left, resp, err);
	if (r < 0 && resp->timed_out)
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, SMOKE_HANG_FMT, sm->runtime,
				   PROBE_MS / 1000);
	return r;
}

static int smoke_create(smoke *sm, int64_t deadline, brig_error **err)
{
	brig_spec s;
	smoke_spec(sm, &s);
	json_object *body = dock_create_body(&s, true);
	cleanup_free char *base = xasprintf("/v%s/containers/create?name=", sm->eng->api);
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	sm->may_exist = true; /* even a create that timed out may have happened */
	int r = smoke_request(
		sm, "POST", base, sm->name,
		json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
							     JSON_C_TO_STRING_NOSLASHESCAPE),
		deadline, &resp, err);
	json_object_put(body);
	if (r < 0)
		return r;
	if (resp.status == 201)
		return 0;
	sm->may_exist = resp.status != 409;
	cleanup_free char *txt = dock_error_text(&resp);
	if (resp.status == 404 && strstr(txt, "No such image"))
		return plugin_fail(
			err, BRIG_E_UNAVAILABLE, 0,
			"cannot test runtime %s: the smoke-test image %s is not in the "
			"engine (build it with scripts/setup-host, or name a local image "
			"with busybox cat in $%s)",
			sm->runtime, sm->image, PROBE_IMAGE_ENV);
	return smoke_http_fail(sm, "creating", &resp, err);
}

static int smoke_start_wait(smoke *sm, int64_t deadline, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = smoke_request(sm, "POST", sm->base, "/start", NULL, deadline, &resp, err);
	if (r < 0)
		return r;
	if (resp.status != 204 && resp.status != 304)
		return smoke_http_fail(sm, "starting", &resp, err);
	dock_response_free(&resp);
	dock_response_init(&resp);
	r = smoke_request(sm, "POST", sm->base, "/wait?condition=not-running", NULL, deadline,
			  &resp, err);
	if (r < 0)
		return r;
	json_object *o = json_tokener_parse(resp.body.data ? resp.body.data : ""), *code = NULL;
	if (resp.status == 200 && json_object_object_get_ex(o, "StatusCode", &code))
		sm->exit_code = json_object_get_int(code);
	json_object_put(o);
	if (!code)
		return smoke_http_fail(sm, "waiting for", &resp, err);
	return 0;
}

static int smoke_logs(smoke *sm, int64_t deadline, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = smoke_request(sm, "GET", sm->base, "/logs?stdout=1&stderr=1", NULL, deadline, &resp,
			      err);
	if (r < 0)
		return r;
	if (resp.status != 200)
		return smoke_http_fail(sm, "reading the output of", &resp, err);
	capture cap;
	frames fr;
	capture_init(&cap, PROBE_OUTPUT_MAX);
	frames_init(&fr);
	frames_feed(&fr, &cap, resp.body.data ? resp.body.data : "", resp.body.len);
	sb_append(&sm->out, cap.out.data ? cap.out.data : "", cap.out.len);
	sb_append(&sm->out, cap.err.data ? cap.err.data : "", cap.err.len);
	frames_free(&fr);
	capture_free(&cap);
	return 0;
}

static void smoke_delete(smoke *sm)
{
	if (!sm->may_exist)
		return;
	cleanup_error brig_error *e = NULL;
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	cleanup_free char *path = xasprintf("%s?force=1&v=1", sm->base);
	if (dock_request(sm->eng->socket, "DELETE", path, NULL, PROBE_DELETE_MS, &resp, &e) == 0 &&
	    (resp.status == 204 || resp.status == 404 || resp.status == 409))
		return;
	plugin_log(BRIG_LOG_WARN, "smoke-test container %s was not removed (`brig gc` will): %s",
		   sm->name, e ? e->message : "unexpected HTTP status");
}

/* The value after `key` up to the end of its line, or "" (bounded copy into buf). */
static const char *line_value(const char *text, const char *key, char *buf, size_t len)
{
	const char *p = strstr(text, key);
	buf[0] = '\0';
	if (!p)
		return buf;
	p += strlen(key);
	p += strspn(p, " \t");
	size_t n = strcspn(p, "\n");
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
	return buf;
}

/* Whose kernel, and is the seccomp filter in force?  "Linux version R ..." must not name the
 * host's release (runc would show it); "Seccomp: 2" (filter mode) proves --oci-seccomp. */
static int smoke_verdict(const smoke *sm, brig_probe_info *info, int64_t ms, brig_error **err)
{
	const char *out = sm->out.data ? sm->out.data : "";
	char release[64], seccomp[16];
	line_value(out, "Linux version", release, sizeof release);
	release[strcspn(release, " ")] = '\0';
	line_value(out, "\nSeccomp:", seccomp, sizeof seccomp);
	struct utsname host;
	if (sm->exit_code != 0 || !release[0])
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0,
				   "a smoke-test container under runtime %s exited %d with "
				   "unexpected output: %.200s",
				   sm->runtime, sm->exit_code, out);
	if (uname(&host) == 0 && strcmp(release, host.release) == 0)
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0,
				   "runtime %s runs containers on the host's own kernel (%s), not "
				   "on gVisor's: it is not runsc; " SETUP_HINT,
				   sm->runtime, release);
	if (strcmp(seccomp, "2") != 0)
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0,
				   "runtime %s does not apply the container's seccomp profile "
				   "inside gVisor (Seccomp: %s in the smoke-test container): "
				   "register runsc with runtimeArgs [\"--network=none\", "
				   "\"--oci-seccomp\"] as runsc-seccomp; " SETUP_HINT,
				   sm->runtime, seccomp[0] ? seccomp : "absent");
	size_t n = strlen(info->version);
	snprintf(info->version + n, sizeof info->version - n,
		 ", gVisor kernel %s, smoke test %lld ms", release, (long long)ms);
	return 0;
}

static const char *probe_image(void)
{
	const char *img = secure_getenv(PROBE_IMAGE_ENV);
	return img && *img ? img : PROBE_IMAGE;
}

/* Create, start, wait, read, check: all within PROBE_MS; the container is removed whatever
 * happened (a failed removal is logged and left to `brig gc`, found by its label). */
static int smoke_test(const dock_engine *eng, const char *runtime, brig_probe_info *info,
		      brig_error **err)
{
	unsigned char rnd[6];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return plugin_fail(err, BRIG_E_SYSTEM, 0, "getrandom failed");
	smoke sm = { .eng = eng, .runtime = runtime, .image = probe_image() };
	snprintf(sm.name, sizeof sm.name, "brig-probe-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
		 rnd[2], rnd[3], rnd[4], rnd[5]);
	owner_label(sm.owner, sizeof sm.owner);
	sm.labels[0] = "brig=1";
	sm.labels[1] = "brig.probe=gvisor";
	sm.labels[2] = sm.owner[0] ? sm.owner : NULL;
	sm.base = xasprintf("/v%s/containers/%s", eng->api, sm.name);
	sb_init(&sm.out);
	int64_t t0 = now_ms(), deadline = t0 + PROBE_MS;
	int r = smoke_create(&sm, deadline, err);
	if (r == 0)
		r = smoke_start_wait(&sm, deadline, err);
	if (r == 0)
		r = smoke_logs(&sm, deadline, err);
	int64_t ms = now_ms() - t0;
	smoke_delete(&sm);
	plugin_log(BRIG_LOG_DEBUG,
		   "gvisor probe: smoke container %s under %s: %lld ms, delete %lld ms", sm.name,
		   runtime, (long long)ms, (long long)(now_ms() - t0 - ms));
	if (r == 0)
		r = smoke_verdict(&sm, info, ms, err);
	free(sm.base);
	sb_free(&sm.out);
	return r;
}

static int gv_probe(brig_probe_info *info, brig_error **err)
{
	(void)err; /* every failure here is an answer: "not available, because ..." */
	memset(info, 0, sizeof *info);
	const char *rt = gv_runtime();
	if (!rt) {
		snprintf(info->reason, sizeof info->reason,
			 "$%s is set to something that is not a runtime name", RUNTIME_ENV);
		return 0;
	}
	snprintf(info->runtime, sizeof info->runtime, "%s", rt);
	cleanup_error brig_error *e = NULL;
	dock_engine eng = { .socket = NULL };
	if (dock_probe_engine(info, &eng) < 0)
		return 0;
	dock_runtime reg;
	int r = dock_runtime_lookup(rt, &reg, &e);
	if (r == 0 && !reg.present)
		r = plugin_fail(
			&e, BRIG_E_UNAVAILABLE, 0,
			"runtime %s is not registered with dockerd at %s (it has: %s): " SETUP_HINT,
			rt, eng.socket, reg.names.data ? reg.names.data : "none");
	/* the registration is read every time; only the smoke test's verdict may be cached */
	cleanup_free char *key =
		r == 0 ? gv_cache_key(eng.socket, info->version, &reg, probe_image()) : NULL;
	char cached[sizeof info->version];
	if (r == 0 && gv_cache_load(key, cached, sizeof cached)) {
		snprintf(info->version, sizeof info->version, "%s", cached);
		plugin_log(BRIG_LOG_DEBUG, "gvisor probe: %s passed its smoke test earlier: %s", rt,
			   cached);
	} else if (r == 0) {
		r = smoke_test(&eng, rt, info, &e);
		if (r == 0)
			gv_cache_store(key, info->version);
	}
	if (r < 0)
		snprintf(info->reason, sizeof info->reason, "%s", e->message);
	info->available = r == 0;
	dock_runtime_free(&reg);
	dock_engine_free(&eng);
	return 0;
}

/* ---- run: the wrapper, and telling a sentry panic from the program's own exit 2 ------------ */

/* The spec as it is run: the original argv under the wrapper, the wrapper's own process added
 * to the RLIMIT_NPROC budget (the program keeps all of its own), room in the output cap for the
 * wrapper's line, and the environment without PYTHONUNBUFFERED (see unbuffered_env).  Borrowed
 * pointers, except the arrays argv and env and the marker (wrapped_free). */
typedef struct wrapped {
	brig_spec spec;
	char **argv;
	char **env;
	char *marker; /* "<container name>:exited-2" */
} wrapped;

static void wrapped_free(wrapped *w)
{
	free(w->argv); /* its strings are the original spec's, the script a literal, the marker */
	free(w->env);  /* its strings are the original spec's */
	free(w->marker);
}

/* gVisor (20221219) answers a write of more than PIPE_BUF bytes to the box's stdout or stderr
 * - host pipes to dockerd - with a short count once the pipe is full, where Linux blocks until
 * all is written.  Python with PYTHONUNBUFFERED writes through a raw FileIO and drops the rest
 * silently (measured: print of 10 MiB -> 64 KiB delivered, exit 0; 8 KiB lines in a loop lose
 * ~16%).  Buffered, Python retries short writes; node and busybox always do.  The price: output
 * still in Python's buffer (< 8 KiB) is lost when brig kills the program (flush=True keeps it). */
static char **unbuffered_env(char *const *env)
{
	size_t n = strv_len(env), k = 0;
	char **out = xcalloc(n + 1, sizeof *out);
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], "PYTHONUNBUFFERED=", 17) != 0)
			out[k++] = env[i];
	return out;
}

static int wrap_spec(const brig_spec *spec, wrapped *w, brig_error **err)
{
	memset(w, 0, sizeof *w);
	if (!spec || spec->struct_size < offsetof(brig_spec, dns) || !dock_valid_name(spec->name) ||
	    !spec->argv || !spec->argv[0])
		return plugin_fail(err, BRIG_E_SANDBOX, 0, "incomplete container spec");
	/* A host older than this plugin hands a shorter struct: its missing fields stay zero. */
	memcpy(&w->spec, spec,
	       spec->struct_size < sizeof w->spec ? spec->struct_size : sizeof w->spec);
	w->spec.struct_size = sizeof w->spec;
	w->marker = xasprintf("%s" MARKER_SUFFIX, spec->name);
	size_t n = strv_len(spec->argv);
	w->argv = xcalloc(n + 5, sizeof *w->argv);
	w->argv[0] = "/bin/sh";
	w->argv[1] = "-c";
	w->argv[2] = WRAPPER_SCRIPT;
	w->argv[3] = w->marker; /* $0 of the script */
	memcpy(w->argv + 4, spec->argv, n * sizeof *spec->argv);
	w->spec.argv = w->argv;
	w->env = unbuffered_env(spec->env);
	w->spec.env = w->env;
	if (w->spec.nproc > 0)
		w->spec.nproc++;
	long lower = 0;
	const char *pl = secure_getenv(PIDS_ENV);
	if (pl && parse_long(pl, 1, INT32_MAX, &lower) && lower < w->spec.pids_limit)
		w->spec.pids_limit = lower;
	w->spec.max_output_bytes += strlen(w->marker) + 1;
	return 0;
}

/* Take the wrapper's line "MARKER\n" out of stderr (its last occurrence: the wrapper writes it
 * after the program has ended).  True if it was there. */
static bool strip_marker(brig_result *res, const char *marker)
{
	size_t m = strlen(marker);
	if (!res->stderr_data || res->stderr_len < m + 1)
		return false;
	for (size_t i = res->stderr_len - m; i-- > 0;) {
		char *p = res->stderr_data + i;
		if (p[m] == '\n' && memcmp(p, marker, m) == 0) {
			memmove(p, p + m + 1, res->stderr_len - i - m - 1);
			res->stderr_len -= m + 1;
			res->stderr_data[res->stderr_len] = '\0';
			return true;
		}
	}
	return false;
}

/* The cap had room for the wrapper's line: hold the program to the real cap.  Bytes beyond it
 * are cut from the end of stderr, then stdout (the capture keeps no arrival order; the two can
 * differ from it only within the wrapper line's few bytes). */
static void hold_to_cap(brig_result *res, size_t cap)
{
	size_t total = res->stdout_len + res->stderr_len;
	if (total <= cap)
		return;
	size_t cut = total - cap, from_err = cut < res->stderr_len ? cut : res->stderr_len;
	res->stderr_len -= from_err;
	res->stdout_len -= cut - from_err;
	if (res->stderr_data)
		res->stderr_data[res->stderr_len] = '\0';
	if (res->stdout_data)
		res->stdout_data[res->stdout_len] = '\0';
	res->output_truncated = true;
	if (res->verdict == BRIG_VERDICT_SUCCESS || res->verdict == BRIG_VERDICT_ERROR ||
	    res->verdict == BRIG_VERDICT_OOM)
		res->verdict = BRIG_VERDICT_OUTPUT_LIMIT;
}

/* When gVisor's kernel (the sentry) panics - at the latest when the sandbox's host tasks,
 * gVisor's own threads included, reach the engine's pids limit - runsc exits 2 and the rest of
 * the output is lost: nothing in the engine's state tells it from a program that exits 2 (both
 * are ExitCode 2, State.Error empty, the same events; the panic text goes to runsc's stderr,
 * which is /dev/null under dockerd).  The wrapper prints its line exactly when the program
 * itself exited 2, so exit 2 without the line is the sandbox's failure. */
static void unwrap_result(const brig_spec *spec, const wrapped *w, brig_result *res)
{
	bool own_exit_2 = strip_marker(res, w->marker);
	hold_to_cap(res, spec->max_output_bytes);
	if (res->verdict != BRIG_VERDICT_ERROR || res->exit_code != 2 || own_exit_2)
		return;
	res->verdict = BRIG_VERDICT_SANDBOX_ERROR;
	res->exit_code = -1;
	free(res->error);
	res->error = xasprintf("gVisor's kernel (the sentry) crashed: the container exited 2 but "
			       "the program did not (runsc panics when the sandbox's host tasks, "
			       "gVisor's own threads included, reach the engine's pids limit of "
			       "%lld); output may be cut short",
			       (long long)w->spec.pids_limit);
}

static int gv_run(const brig_spec *spec, const brig_run_control *ctl, brig_result *res,
		  brig_error **err)
{
	wrapped w;
	int r = wrap_spec(spec, &w, err);
	if (r < 0)
		return r;
	r = dock_run(&w.spec, ctl, res, err);
	if (r == 0)
		unwrap_result(spec, &w, res);
	wrapped_free(&w);
	return r;
}

static int gv_prepare(const brig_spec *spec, void **handle, brig_error **err)
{
	wrapped w;
	*handle = NULL;
	int r = wrap_spec(spec, &w, err);
	if (r < 0)
		return r;
	r = dock_prepare(&w.spec, handle, err);
	wrapped_free(&w);
	return r;
}

/* The host names the prepared container in spec->name, so the marker is the same. */
static int gv_run_prepared(void *handle, const brig_spec *spec, const brig_run_control *ctl,
			   brig_result *res, brig_error **err)
{
	wrapped w;
	int r = wrap_spec(spec, &w, err);
	if (r < 0)
		return r;
	r = dock_run_prepared(handle, &w.spec, ctl, res, err);
	if (r == 0)
		unwrap_result(spec, &w, res);
	wrapped_free(&w);
	return r;
}

static int gv_explain(const brig_spec *spec, char **out, brig_error **err)
{
	wrapped w;
	int r = wrap_spec(spec, &w, err);
	if (r < 0)
		return r;
	cleanup_free char *body = NULL;
	r = dock_explain("gvisor", &w.spec, &body, err);
	if (r < 0) {
		wrapped_free(&w);
		return r;
	}
	strbuf sb;
	sb_init(&sb);
	sb_printf(&sb, "# gvisor: runtime %s (gVisor's runsc as registered in dockerd)\n",
		  spec->runtime);
	sb_printf(&sb, "# the program runs under /bin/sh -c, which prints \"%s\" on stderr\n",
		  w.marker);
	sb_puts(&sb, "#   when the program itself exits 2 (brig takes it out of the output);\n"
		     "#   exit 2 without it is gVisor's kernel crashing: sandbox_error\n");
	if (w.spec.nproc > 0)
		sb_printf(&sb,
			  "# processes: RLIMIT_NPROC %lld (the program's %lld + the wrapper),\n",
			  (long long)w.spec.nproc, (long long)spec->nproc);
	else
		sb_puts(&sb, "# processes: no RLIMIT_NPROC (the host set none),\n");
	sb_printf(&sb, "#   PidsLimit %lld (it also counts gVisor's own host threads)\n",
		  (long long)w.spec.pids_limit);
	if (strv_len(w.env) < strv_len(spec->env))
		sb_puts(&sb, "# env: no PYTHONUNBUFFERED (gVisor cuts big writes to a full pipe\n"
			     "#   short; buffered Python writes the rest, unbuffered drops it)\n");
	sb_puts(&sb, body);
	*out = sb_steal(&sb);
	wrapped_free(&w);
	return 0;
}

static const brig_backend gvisor_backend = {
	.abi_major = BRIG_BACKEND_ABI_MAJOR,
	.abi_minor = BRIG_BACKEND_ABI_MINOR,
	.struct_size = sizeof(brig_backend),
	.name = "gvisor",
	.description = "Docker Engine API with gVisor (runsc --oci-seccomp): a user-space kernel "
		       "between the program and the host",
	.isolation = BRIG_ISOLATION_GVISOR,
	.speed_rank = 10,
	.features = BRIG_FEATURE_SECCOMP_PROFILE | BRIG_FEATURE_CANCEL,
	.probe = gv_probe,
	.explain = gv_explain,
	.run = gv_run,
	.remove = dock_remove,
	.image_exists = dock_image_exists,
	.list_labelled = dock_list_labelled,
	.prepare = gv_prepare,
	.run_prepared = gv_run_prepared,
	.discard = dock_discard,
};

__attribute__((visibility("default"))) const brig_backend *
brig_backend_entry(uint32_t host_abi_major, const brig_host_services *host);

const brig_backend *brig_backend_entry(uint32_t host_abi_major, const brig_host_services *host)
{
	const brig_backend *be = dock_entry(host_abi_major, host, &gvisor_backend);
	if (be) /* libdock (libbrig-dock.so) has its own view of the host: this is the plugin's */
		plugin_host_set(host);
	return be;
}
