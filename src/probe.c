/* probe.c - backend probes with an expiry, and the verification of gVisor isolation.
 *
 * One owner for what the host knows of a backend: its probe's answer and how long it holds.  A
 * positive answer holds until a run says otherwise (probe_invalidate, called when a run failed
 * in a way that may mean the runtime went away); a negative one only for a short back-off, so
 * a `brig mcp` started before dockerd, or one whose dockerd restarted, recovers by itself, and
 * `auto` falling back from gVisor because of one slow smoke box does not latch for the life of
 * the process.
 *
 * A backend that claims gVisor isolation is not taken at its word: the host builds a small box
 * from an explicit probe policy (spec_build_probe: the same builder as every run) and runs it
 * through the backend's own run hook; the box must report a kernel that is not the host's and
 * its seccomp filter in force (runsc without --oci-seccomp ignores the container's profile).
 * A passed verification is remembered across processes (probe_cache.c).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "images.h"
#include "loader.h"
#include "probe.h"
#include "uids.h"

#define SETUP_HINT                                                                       \
	"run scripts/setup-host (it registers runsc-seccomp in /etc/docker/daemon.json " \
	"with runtimeArgs [\"--network=none\", \"--oci-seccomp\"] and reloads dockerd)"

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
 * host's release (runc would show it); "Seccomp: 2" (filter mode) proves the profile holds. */
static int smoke_verdict(const loaded_backend *lb, const brig_result *res, brig_probe_info *info,
			 int64_t ms)
{
	const char *out = res->stdout_data ? res->stdout_data : "";
	char release[64], seccomp[16];
	line_value(out, "Linux version", release, sizeof release);
	release[strcspn(release, " ")] = '\0';
	line_value(out, "\nSeccomp:", seccomp, sizeof seccomp);
	struct utsname host;
	if (res->verdict != BRIG_VERDICT_SUCCESS || !release[0]) {
		snprintf(info->reason, sizeof info->reason,
			 "a smoke-test box under runtime %s ended %s (exit %d)%s%s: %.160s",
			 lb->runtime, brig_verdict_name(res->verdict), res->exit_code,
			 res->error ? ": " : "", res->error ? res->error : "",
			 res->stderr_len ? res->stderr_data : out);
		return -1;
	}
	if (uname(&host) == 0 && strcmp(release, host.release) == 0) {
		snprintf(info->reason, sizeof info->reason,
			 "runtime %s runs boxes on the host's own kernel (%s), not on gVisor's: it "
			 "is not runsc; " SETUP_HINT,
			 lb->runtime, release);
		return -1;
	}
	if (strcmp(seccomp, "2") != 0) {
		snprintf(info->reason, sizeof info->reason,
			 "runtime %s does not apply the box's seccomp profile inside gVisor "
			 "(Seccomp: %s in the smoke-test box): register runsc with runtimeArgs "
			 "[\"--network=none\", \"--oci-seccomp\"]; " SETUP_HINT,
			 lb->runtime, seccomp[0] ? seccomp : "absent");
		return -1;
	}
	size_t n = strlen(info->version);
	snprintf(info->version + n, sizeof info->version - n,
		 ", gVisor kernel %s, smoke test %lld ms", release, (long long)ms);
	return 0;
}

/* Run the smoke box through the backend; 0 when gVisor isolation holds, else the reason is in
 * info.  A sandbox failure of the smoke box is transient when the backend says so. */
static int verify_gvisor(brig_ctx *ctx, loaded_backend *lb, brig_probe_info *info)
{
	uid_lease lease = { .fd = -1 };
	brig_error *e = NULL;
	if (uid_lease_take(ctx->policy, &lease, &e) < 0) {
		snprintf(info->reason, sizeof info->reason, "%s", e->message);
		brig_error_free(e);
		return -1;
	}
	cleanup_free char *user = uid_lease_user(&lease);
	spec_target t = dispatch_target(ctx, lb);
	t.user = user;
	/* the smoke box's program reports what the verdict rests on: it runs in the verified
	 * shell image only, never in whatever a pinned tag names now */
	brig_image_info image = { .struct_size = sizeof image };
	image_probe_target(ctx, lb, &image, &t);
	brig_spec *smoke = NULL;
	int built = spec_build_probe(ctx->policy, &t, &smoke, &e);
	image_info_clear(&image);
	if (built < 0)
		uid_lease_release(&lease);
	if (built < 0) {
		snprintf(info->reason, sizeof info->reason, "cannot build the smoke-test box: %s",
			 e->message);
		brig_error_free(e);
		return -1;
	}
	cleanup_free char *key = probe_cache_key(lb->be->name, info, smoke);
	char cached[sizeof info->version];
	if (ctx->use_probe_cache && probe_cache_load(key, cached, sizeof cached)) {
		core_debug("probe: %s passed its smoke test earlier: %s", lb->be->name, cached);
		snprintf(info->version, sizeof info->version, "%s", cached);
		spec_free(smoke);
		uid_lease_release(&lease);
		return 0;
	}
	brig_run_control ctl = { .struct_size = sizeof ctl, .cancel_fd = -1 };
	brig_outcome o = { .struct_size = sizeof o, .exit_code = -1 };
	brig_result res = { .struct_size = sizeof res, .exit_code = -1 };
	int64_t t0 = now_ms();
	int r = lb->be->run(smoke, &ctl, &o, &e);
	if (r < 0) {
		o.sandbox_error = xstrdup(e && e->message ? e->message : "the backend failed");
		o.transient = e && e->transient;
	}
	brig_error_free(e);
	bool transient = o.sandbox_error && o.transient;
	spec_finish_outcome(smoke, &o, &res);
	outcome_clear(&o);
	int64_t ms = now_ms() - t0;
	r = smoke_verdict(lb, &res, info, ms);
	core_debug("probe: %s: smoke box %s under %s: %lld ms, %s", lb->be->name, smoke->name,
		   lb->runtime, (long long)ms, r == 0 ? "passed" : info->reason);
	if (r == 0)
		probe_cache_store(key, info->version);
	info->transient = r < 0 && transient;
	brig_result_clear(&res);
	spec_free(smoke);
	uid_lease_release(&lease);
	return r;
}

static void probe_now(brig_ctx *ctx, loaded_backend *lb)
{
	brig_probe_info info = { .struct_size = sizeof info };
	brig_probe_request req = { .struct_size = sizeof req, .runtime = lb->runtime };
	brig_error *e = NULL;
	if (lb->be->probe(&req, &info, &e) < 0) {
		info.available = false;
		info.transient = e && e->transient;
		snprintf(info.reason, sizeof info.reason, "probe failed: %s",
			 e ? e->message : "unknown error");
	}
	brig_error_free(e);
	info.struct_size = sizeof info;
	snprintf(info.runtime, sizeof info.runtime, "%s", lb->runtime);
	if (info.available && lb->be->isolation >= BRIG_ISOLATION_GVISOR &&
	    verify_gvisor(ctx, lb, &info) < 0)
		info.available = false;
	if (!info.available && !info.reason[0])
		snprintf(info.reason, sizeof info.reason, "not available (no reason given)");
	int64_t now = now_ms();
	lb->info = info;
	lb->checked_at = now;
	if (info.available) {
		lb->valid_until = INT64_MAX;
		lb->backoff_ms = 0;
	} else {
		int b = lb->backoff_ms ? lb->backoff_ms * 2 : PROBE_BACKOFF_MIN_MS;
		lb->backoff_ms = b > PROBE_BACKOFF_MAX_MS ? PROBE_BACKOFF_MAX_MS : b;
		lb->valid_until = now + lb->backoff_ms;
	}
	core_debug("probe: %s: %s%s", lb->be->name, info.available ? "available, " : "",
		   info.available ? info.version : info.reason);
}

bool probe_backend(brig_ctx *ctx, loaded_backend *lb, brig_probe_info *snap)
{
	pthread_mutex_lock(&lb->probe_lock);
	if (!lb->checked_at || now_ms() >= lb->valid_until)
		probe_now(ctx, lb);
	bool ok = lb->info.available;
	if (snap)
		*snap = lb->info;
	pthread_mutex_unlock(&lb->probe_lock);
	return ok;
}

void probe_invalidate(loaded_backend *lb)
{
	pthread_mutex_lock(&lb->probe_lock);
	lb->valid_until = 0;
	pthread_mutex_unlock(&lb->probe_lock);
}

bool probe_last(loaded_backend *lb, brig_probe_info *snap)
{
	pthread_mutex_lock(&lb->probe_lock);
	bool have = lb->checked_at != 0;
	*snap = lb->info;
	pthread_mutex_unlock(&lb->probe_lock);
	return have;
}
