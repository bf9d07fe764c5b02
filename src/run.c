/* run.c - one run: a slot, the backend, the final spec, the box, the result, the audit line.
 *
 * The contract with a backend (brig-backend.h): it executes the spec and reports what it saw in
 * a brig_outcome; the host alone turns that into the result (verdict, identity fields, the
 * sandbox_error text: spec_finish_outcome) and the audit line, from the same final spec.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "egress.h"
#include "images.h"
#include "internal.h"
#include "lang.h"
#include "loader.h"
#include "pool.h"
#include "probe.h"
#include "reap.h"
#include "spare.h"
#include "uids.h"
#include "workspace.h"

/* ---- max_concurrent_runs ----------------------------------------------------------------- */

static bool cancel_pending(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return fd >= 0 && poll(&p, 1, 0) > 0;
}

/* Wait for one of the context's max_concurrent_runs slots.  0, BRIG_E_BUSY when none freed
 * within wait_ms (< 0: do not wait), or BRIG_E_CANCELLED. */
int run_slot_take(brig_ctx *ctx, int cancel_fd, int wait_ms, brig_error **err)
{
	int64_t until = now_ms() + (wait_ms > 0 ? wait_ms : 0);
	int r = 0;
	pthread_mutex_lock(&ctx->lock);
	while (ctx->running >= ctx->policy->max_concurrent_runs) {
		if (cancel_pending(cancel_fd)) {
			r = brig_fail(err, BRIG_E_CANCELLED, 0,
				      "cancelled while waiting for a run slot");
			break;
		}
		int64_t now = now_ms();
		if (wait_ms < 0 || now >= until) {
			r = brig_fail(
				err, BRIG_E_BUSY, 0,
				"%d runs (the policy's max_concurrent_runs) are in flight and "
				"none ended within %d ms",
				ctx->policy->max_concurrent_runs, wait_ms < 0 ? 0 : wait_ms);
			break;
		}
		/* the cancel fd is looked at every 100 ms */
		cond_wait_until(&ctx->slot_free, &ctx->lock, now + 100 < until ? now + 100 : until);
	}
	if (r == 0)
		ctx->running++;
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

void run_slot_release(brig_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->running--;
	pthread_cond_signal(&ctx->slot_free);
	pthread_mutex_unlock(&ctx->lock);
}

/* ---- audit ------------------------------------------------------------------------------- */

typedef struct run_ctx {
	brig_ctx *ctx;
	const brig_run_options *opts;
	const brig_request *req;
	char sha[65];
	loaded_backend *lb;
	brig_spec *spec;    /* the box that ran (the pool's when pooled) */
	brig_spec *cold;    /* the one built for this run (owned) */
	pool_entry *pooled; /* the warm pool's container that ran it, released at the end */
	uid_lease lease;    /* the cold box's uid (user "auto") while it may run */
	const char *ws_id;  /* the workspace asked for, or NULL */
	ws_handle ws;       /* held (locked) while the box runs in it */
	brig_result res;
	char *notice;
	bool spare;     /* its box's network holder was a spare (spare.h) */
	bool holder_up; /* ...or either way ran: spares of its configuration may follow */
} run_ctx;

/* The audit line of this run (refused when res is NULL); 0, or the log's failure. */
static int audit_outcome(run_ctx *rc, const brig_result *res, const brig_error *refusal,
			 brig_error **err)
{
	brig_ctx *ctx = rc->ctx;
	pthread_mutex_lock(&ctx->lock);
	audit_log *a = ctx->audit;
	int r = 0;
	if (a) {
		const brig_request *req = rc->req;
		audit_entry e = {
			.front_door =
				rc->opts && rc->opts->front_door ? rc->opts->front_door : "lib",
			.language = req->language,
			.code_sha256 = rc->sha,
			.code_bytes = req->code ? req->code_len : 0,
			.policy = ctx->policy,
			.spec = rc->spec,
			.timeout_seconds = req->timeout_seconds,
			.result = res,
			.refusal = refusal ? refusal->message : NULL,
			.traceparent =
				rc->opts && BRIG_HAS_FIELD(rc->opts, brig_run_options, traceparent)
					? rc->opts->traceparent
					: NULL,
			.backend = rc->lb ? rc->lb->be->name : NULL,
			.runtime = rc->lb ? rc->lb->runtime : NULL,
			.image = (unsigned)req->language < BRIG_LANG_COUNT
					 ? ctx->policy->images[req->language]
					 : NULL,
			.image_id = rc->spec ? rc->spec->image_id : NULL,
			.workspace = rc->ws_id,
			.net_holder_spare = rc->spare,
		};
		r = audit_append(a, &e, err);
	}
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

static int audit_check(brig_ctx *ctx, brig_error **err)
{
	pthread_mutex_lock(&ctx->lock);
	int r = ctx->audit ? audit_ready(ctx->audit, err) : 0;
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

/* Nothing ran: audit the refusal and hand it to the caller (with the log's failure, if any). */
static int refuse(run_ctx *rc, int r, brig_error *refusal, brig_error **err)
{
	brig_error *ae = NULL;
	audit_outcome(rc, NULL, refusal, &ae);
	if (ae && refusal) { /* nothing ran, but the operator must hear the log failed */
		char *m = xasprintf("%s (and the audit log failed too: %s)", refusal->message,
				    ae->message);
		free(refusal->message);
		refusal->message = m;
	}
	brig_error_free(ae);
	if (err) {
		brig_error_free(*err);
		*err = refusal;
	} else {
		brig_error_free(refusal);
	}
	return r;
}

/* ---- the box ------------------------------------------------------------------------------ */

/* A backend that returned < 0 attempted nothing; the run still reached the sandbox stage, so
 * it is reported as the sandbox's failure, with the backend's words. */
static void failed_before_start(brig_outcome *o, const brig_error *e)
{
	o->sandbox_error = xstrdup(e && e->message ? e->message : "the backend failed");
	o->transient = e && e->transient;
}

/* How many idle boxes one call tries before it runs cold: a box the backend finds stale (its
 * egress proxy was restarted while it waited) is dropped and the next one taken.  The boxes
 * that waited with it are stale too; one call drops them all rather than each later call
 * running cold in turn.  A bound, not a pool size (policy warm_pool is far smaller). */
#define POOL_TAKE_TRIES 32

/* The run in a container the warm pool started before, if one with exactly this box is idle.
 * False when none took it (then nothing ran).  The used container is removed in the
 * background: the result does not wait for the DELETE. */
static bool run_pooled(run_ctx *rc, const brig_run_control *ctl, brig_outcome *o)
{
	for (int tries = 0; tries < POOL_TAKE_TRIES; tries++) {
		int64_t t0 = now_ms();
		pool_entry *pe = pool_take(rc->ctx->pool, rc->lb, rc->req->language, rc->cold);
		if (!pe)
			return false;
		int64_t t1 = now_ms();
		brig_spec *box = pool_entry_spec(pe); /* the waiting box: name, marker, limits */
		/* this run's stdin (brig-init's header with this run's deadline, the code) and
		 * limit, borrowed from the run's own spec for the hand-over */
		const char *own = box->stdin_data;
		size_t own_len = box->stdin_len;
		box->stdin_data = rc->cold->stdin_data;
		box->stdin_len = rc->cold->stdin_len;
		box->timeout_ms = rc->cold->timeout_ms;
		brig_error *e = NULL;
		int r = rc->lb->be->run_prepared(pool_entry_handle(pe), box, ctl, o, &e);
		box->stdin_data = own;
		box->stdin_len = own_len;
		if (r == BRIG_E_UNAVAILABLE) { /* nothing was handed over: try the next one */
			core_debug("run: %s: %s", box->name, e ? e->message : "stale");
			brig_error_free(e);
			pool_release(rc->ctx->pool, pe);
			continue;
		}
		if (r < 0)
			failed_before_start(o, e);
		brig_error_free(e);
		/* the entry and its spec live until the result and the audit line are written */
		rc->pooled = pe;
		rc->spec = box;
		rc->res.pooled = true;
		core_debug("run: %s pooled: take %lld ms, run_prepared %lld ms", box->name,
			   (long long)(t1 - t0), (long long)(now_ms() - t1));
		return true;
	}
	return false;
}

/* Write `text` to dir/name (mode 0644: the proxy reads it as an unprivileged user), replacing
 * it atomically; unchanged content is left alone. */
static int write_config(const char *dir, const char *name, const char *text, brig_error **err)
{
	cleanup_free char *file = xasprintf("%s/%s", dir, name);
	cleanup_free char *tmp = xasprintf("%s/.%s.XXXXXX", dir, name);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return brig_fail(err, BRIG_E_SANDBOX, errno, "egress: cannot write %s", file);
	bool ok = fchmod(fd, 0644) == 0 && write_all(fd, text, strlen(text)) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, file) < 0) {
		int e = errno;
		unlink(tmp);
		return brig_fail(err, BRIG_E_SANDBOX, e, "egress: cannot write %s", file);
	}
	return 0;
}

/* The proxy of the box's allowlist is up and answering before the box exists: its
 * configuration written where the proxy mounts it, then the backend's egress_ensure.  A proxy
 * that cannot start is the sandbox's failure: the box never runs with other network. */
static int egress_up_locked(const loaded_backend *lb, const brig_egress *e, brig_error **err);

/* One at a time in a process: concurrent runs and warm-pool starts that find no proxy would
 * each create its networks and container, and all but one fail on the name (a warm pool of
 * three languages did, measured).  A proxy that answers costs a look and a CONNECT (~5 ms). */
int run_egress_up(const loaded_backend *lb, const brig_egress *e, brig_error **err)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	if (!e)
		return 0;
	pthread_mutex_lock(&lock);
	int r = egress_up_locked(lb, e, err);
	pthread_mutex_unlock(&lock);
	return r;
}

static int egress_up_locked(const loaded_backend *lb, const brig_egress *e, brig_error **err)
{
	int64_t t0 = now_ms();
	if (!BE_HOOK(lb->be, egress_ensure))
		return brig_fail(err, BRIG_E_SANDBOX, 0, "egress: backend %s cannot start proxies",
				 lb->be->name);
	if (mkdir(e->config_dir, 0755) < 0 && errno != EEXIST)
		return brig_fail(err, BRIG_E_SANDBOX, errno, "egress: cannot create %s",
				 e->config_dir);
	/* touched by every cold run and warm start: brig gc leaves a directory in use alone */
	if (chmod(e->config_dir, 0755) < 0 || utimensat(AT_FDCWD, e->config_dir, NULL, 0) < 0)
		return brig_fail(err, BRIG_E_SANDBOX, errno, "egress: cannot chmod or touch %s",
				 e->config_dir);
	int r = write_config(e->config_dir, "squid.conf", e->config, err);
	if (r == 0)
		r = write_config(e->config_dir, "hosts", e->hosts_file, err);
	if (r == 0)
		r = lb->be->egress_ensure(e, err);
	if (r < 0)
		brig_error_prefix(err, "egress proxy %s", e->proxy_name);
	core_debug("run: egress proxy %s ready in %lld ms", e->proxy_name,
		   (long long)(now_ms() - t0));
	return r;
}

static int egress_up(run_ctx *rc, brig_error **err)
{
	return run_egress_up(rc->lb, rc->cold->egress, err);
}

int run_holder_up(const loaded_backend *lb, const brig_spec *spec, brig_error **err)
{
	const brig_spec *h = spec->net_holder;
	if (!h)
		return 0;
	if (!BE_HOOK(lb->be, start_detached) || !BE_HOOK(lb->be, remove))
		return brig_fail(err, BRIG_E_SANDBOX, 0,
				 "egress: backend %s cannot start a network holder", lb->be->name);
	int64_t t0 = now_ms();
	int r = lb->be->start_detached(h, err);
	if (r < 0)
		brig_error_prefix(err, "network holder %s", h->name);
	core_debug("run: network holder %s started in %lld ms", h->name,
		   (long long)(now_ms() - t0));
	return r;
}

void run_holder_down(const loaded_backend *lb, const brig_spec *spec)
{
	const brig_spec *h = spec->net_holder;
	if (!h || !BE_HOOK(lb->be, remove))
		return;
	brig_error *e = NULL;
	if (lb->be->remove(h->name, &e) < 0) /* its brig.owner label: the reaper finds it */
		core_debug("cannot remove the network holder %s: %s", h->name,
			   e && e->message ? e->message : "?");
	brig_error_free(e);
}

/* Append `text` to the result's notice ("; " between two). */
static void notice_add(run_ctx *rc, const char *text)
{
	char *n = rc->notice ? xasprintf("%s; %s", rc->notice, text) : xstrdup(text);
	free(rc->notice);
	rc->notice = n;
}

/* brig_run_control.before_start of a cold box with a network holder: a spare claimed, else
 * one started; the box exists, so the holder never runs without it (the reaper's rule). */
static int holder_before_start(void *arg, brig_error **err)
{
	run_ctx *rc = arg;
	rc->spare = spare_claim(rc->ctx, rc->lb, rc->cold->net_holder);
	int r = rc->spare ? 0 : run_holder_up(rc->lb, rc->cold, err);
	rc->holder_up = r == 0;
	return r;
}

static void run_box(run_ctx *rc, const brig_run_control *ctl)
{
	brig_outcome o = { .struct_size = sizeof o, .exit_code = -1 };
	pool_run_begin(rc->ctx->pool);
	int64_t t0 = now_ms();
	/* A warm box's proxy is checked at its hand-over (the one it started with, marked again);
	 * only a cold box needs the proxy ensured before it exists. */
	if (!run_pooled(rc, ctl, &o)) {
		brig_error *e = NULL;
		rc->spec = rc->cold;
		/* a backend of ABI 2.5 calls before_start between the box's creation and start */
		bool at_start = rc->cold->net_holder && rc->lb->be->abi_minor >= 5 &&
				BE_HOOK(rc->lb->be, claim_spare);
		brig_run_control c = *ctl;
		if (at_start) {
			c.before_start = holder_before_start;
			c.before_start_arg = rc;
		}
		if (egress_up(rc, &e) < 0 ||
		    (!at_start && !(rc->holder_up = run_holder_up(rc->lb, rc->cold, &e) == 0)) ||
		    rc->lb->be->run(rc->cold, &c, &o, &e) < 0)
			failed_before_start(&o, e);
		/* after the box (the address was its); with spares, by spare_detach's process */
		if (!rc->ctx->spares)
			run_holder_down(rc->lb, rc->cold);
		brig_error_free(e);
	}
	rc->res.duration_ms = now_ms() - t0;
	pool_run_end(rc->ctx->pool);
	if (o.sandbox_error && o.transient)
		probe_invalidate(rc->lb); /* the engine went away? ask again next time */
	const char *note = spec_finish_outcome(rc->spec, &o, &rc->res);
	if (note)
		notice_add(rc, note);
	if (rc->spec->egress &&
	    o.egress_log) /* the proxy's decisions, for the model and the audit */
		rc->res.egress = egress_decisions(o.egress_log);
	else if (rc->spec->egress && o.egress_note) /* null decisions say why, in the notice */
		notice_add(rc, o.egress_note);
	outcome_clear(&o);
}

static void fill_identity(run_ctx *rc)
{
	brig_result *res = &rc->res;
	res->language = rc->req->language;
	res->image = xstrdup(rc->spec->image);
	res->backend = xstrdup(rc->lb->be->name);
	res->runtime = xstrdup(rc->spec->runtime);
	res->container = xstrdup(rc->spec->name);
	res->user = xstrdup(rc->spec->user);
	res->workspace = rc->spec->workspace ? xstrdup(rc->spec->workspace) : NULL;
	res->notice = steal_pointer(&rc->notice);
	memcpy(res->code_sha256, rc->sha, sizeof res->code_sha256);
}

/* Copy the result into the caller's struct, as far as its struct_size reaches; what an older
 * caller's struct has no room for is freed here. */
static void deliver(brig_result *full, brig_result *out)
{
	size_t n = out->struct_size < sizeof *full ? out->struct_size : sizeof *full;
	if (!BRIG_HAS_FIELD(out, brig_result, user))
		free(full->user);
	if (!BRIG_HAS_FIELD(out, brig_result, workspace_changes)) {
		free(full->workspace);
		free(full->workspace_changes);
	}
	if (!BRIG_HAS_FIELD(out, brig_result, egress))
		free(full->egress);
	full->struct_size = out->struct_size;
	memcpy(out, full, n);
	memset(full, 0, sizeof *full);
}

/* Select, build the final spec, and check the backend honours all of it. */
static int prepare_run(run_ctx *rc, brig_timeout_mode mode, bool cancellable, brig_error **err)
{
	char *fallback = NULL;
	int r = spec_check_request(rc->ctx->policy, rc->req, mode, err); /* before probing */
	if (r == 0 && !rc->ctx->init)
		r = brig_fail(err, BRIG_E_UNAVAILABLE, 0, "%s", rc->ctx->init_error);
	if (r == 0)
		r = dispatch_select(rc->ctx, &rc->lb, &fallback, err);
	if (r == 0)
		reap_at_start(rc->ctx, rc->lb); /* what killed brig processes left behind */
	/* in a workspace, the box is the workspace's uid; else one leased for it */
	if (r == 0 && rc->ws_id)
		r = ws_acquire(rc->ctx, rc->lb, rc->ws_id,
			       rc->ctx->policy->max_timeout_seconds * 1000, &rc->ws, err);
	else if (r == 0)
		r = uid_lease_take(rc->ctx->policy, &rc->lease, err);
	cleanup_free char *user = rc->ws.user ? xstrdup(rc->ws.user) : uid_lease_user(&rc->lease);
	spec_target t = rc->lb ? dispatch_target(rc->ctx, rc->lb) : (spec_target){ 0 };
	t.user = user;
	t.workspace = rc->ws.user ? rc->ws.id : NULL;
	box_images im = { 0 };
	if (r == 0)
		image_targets(rc->ctx, rc->lb, rc->req->language, &im, &t);
	if (r == 0)
		r = spec_build(rc->ctx->policy, rc->req, mode, &t, &rc->cold, &rc->notice, err);
	box_images_clear(&im);
	cleanup_free char *refused =
		r == 0 ? dispatch_refusal(rc->lb, rc->cold, cancellable, "honour this box") : NULL;
	if (refused)
		r = brig_fail(err, BRIG_E_UNAVAILABLE, 0, "%s", refused);
	if (r == 0 && fallback)
		notice_add(rc, fallback);
	free(fallback);
	return r;
}

int brig_run(brig_ctx *ctx, const brig_request *req, const brig_run_options *opts, brig_result *res,
	     brig_error **err)
{
	if (!res || res->struct_size < offsetof(brig_result, pooled))
		return brig_fail(err, BRIG_E_USAGE, 0,
				 "brig_run: set res->struct_size = sizeof(brig_result)");
	size_t res_size = res->struct_size;
	memset(res, 0, res_size);
	res->struct_size = res_size;
	res->exit_code = -1;
	if (!req || !lang_get(req->language))
		return brig_fail(err, BRIG_E_USAGE, 0,
				 "unknown language (use python, node or shell)");
	if (!req->code)
		return brig_fail(err, BRIG_E_USAGE, 0, "no code to run");
	bool have = opts && opts->struct_size >= offsetof(brig_run_options, timeout_mode) +
							 sizeof opts->timeout_mode;
	brig_timeout_mode mode = have ? opts->timeout_mode : BRIG_TIMEOUT_CLAMP;
	int cancel_fd = opts ? opts->cancel_fd : -1;
	int wait_ms = opts && BRIG_HAS_FIELD(opts, brig_run_options, queue_wait_ms)
			      ? opts->queue_wait_ms
			      : 0;
	if (wait_ms == 0)
		wait_ms = ctx->policy->max_timeout_seconds * 1000;

	run_ctx rc = { .ctx = ctx,
		       .opts = opts,
		       .req = req,
		       .lease = { .fd = -1 },
		       .ws = WS_HANDLE_INIT,
		       .ws_id = opts && BRIG_HAS_FIELD(opts, brig_run_options, workspace)
					? opts->workspace
					: NULL };
	rc.res.struct_size = sizeof rc.res;
	rc.res.exit_code = -1;
	sha256_hex(req->code, req->code_len, rc.sha);
	brig_error *refusal = NULL;
	int r = prepare_run(&rc, mode, cancel_fd >= 0, &refusal);
	if (r == 0)
		r = audit_check(ctx, &refusal); /* a run that cannot be recorded does not start */
	if (r == 0)
		r = run_slot_take(ctx, cancel_fd, wait_ms, &refusal);
	if (r < 0) {
		rc.spec = NULL;
		spec_free(rc.cold);
		free(rc.notice);
		uid_lease_release(&rc.lease);
		ws_release(&rc.ws);
		return refuse(&rc, r, refusal, err);
	}
	brig_run_control ctl = { .struct_size = sizeof ctl, .cancel_fd = cancel_fd };
	run_box(&rc, &ctl);
	run_slot_release(ctx);
	fill_identity(&rc);
	brig_error *ae = NULL;
	int ar = audit_outcome(&rc, &rc.res, NULL, &ae);
	if (rc.pooled)
		pool_release(ctx->pool, rc.pooled); /* removed in the background */
	else if (ctx->spares)
		spare_after_run(ctx, rc.lb, rc.cold, rc.holder_up); /* removed, spares made */
	spec_free(rc.cold);
	uid_lease_release(&rc.lease); /* the cold box is gone (a pooled one kept its own) */
	bool in_ws = rc.ws.user != NULL;
	ws_release(&rc.ws); /* the next call in the workspace may go */
	if (in_ws)          /* and finds a box of this language started in it */
		pool_want_workspace(ctx->pool, rc.lb, req->language, rc.ws.id, rc.ws.size_mb,
				    rc.ws.idle_ttl);
	deliver(&rc.res, res);
	if (ar < 0) {
		/* The run happened but could not be recorded: fail closed for the caller. */
		if (err) {
			brig_error_free(*err);
			*err = ae;
		} else {
			brig_error_free(ae);
		}
		return BRIG_E_AUDIT;
	}
	return 0;
}

/* The selection and the final spec `brig run` would get, without running anything. */
static int explain_prepare(brig_ctx *ctx, const brig_request *req, const char *ws_id,
			   loaded_backend **lb, brig_spec **spec, char **fallback, brig_error **err)
{
	if (!req || !lang_get(req->language) || !req->code)
		return brig_fail(err, BRIG_E_USAGE, 0, "explain: no language or no code");
	if (!ctx->init)
		return brig_fail(err, BRIG_E_UNAVAILABLE, 0, "%s", ctx->init_error);
	int r = dispatch_select(ctx, lb, fallback, err);
	if (r < 0)
		return r;
	if (!BE_HOOK((*lb)->be, explain))
		return brig_fail(err, BRIG_E_UNAVAILABLE, 0, "backend %s cannot explain its runs",
				 (*lb)->be->name);
	/* under user "auto" an example uid of the range, leased for the moment; in a workspace
	 * the workspace's own */
	uid_lease lease = { .fd = -1 };
	ws_handle ws = WS_HANDLE_INIT;
	r = ws_id ? ws_acquire(ctx, *lb, ws_id, ctx->policy->max_timeout_seconds * 1000, &ws, err)
		  : uid_lease_take(ctx->policy, &lease, err);
	if (r < 0)
		return r;
	cleanup_free char *user = ws.user ? xstrdup(ws.user) : uid_lease_user(&lease);
	spec_target t = dispatch_target(ctx, *lb);
	t.user = user;
	t.workspace = ws.user ? ws.id : NULL;
	box_images im;
	image_targets(ctx, *lb, req->language, &im, &t);
	r = spec_build(ctx->policy, req, BRIG_TIMEOUT_REFUSE, &t, spec, NULL, err);
	box_images_clear(&im);
	uid_lease_release(&lease);
	ws_release(&ws);
	return r;
}

/* Why `brig run` would refuse this box on this backend (as run_prepare does), or NULL: explain
 * still shows the box, and says so. */
static char *explain_refusal(const loaded_backend *lb, const brig_spec *spec)
{
	cleanup_free char *why = dispatch_refusal(lb, spec, false, "honour it");
	return why ? xasprintf("`brig run` refuses this box: %s", why) : NULL;
}

/* The image line of explain: the policy's reference, the ID the box starts from, and whether
 * the policy pins it. */
static char *explain_image(const brig_spec *spec)
{
	const char *pin = policy_image_pin(spec->image);
	if (!spec->image_id)
		return xasprintf("%s (not looked up: the engine resolves it when the box starts)",
				 spec->image);
	return xasprintf("%s = %s (%s)", spec->image, spec->image_id,
			 pin ? "pinned, verified" : "not pinned: the ID the tag names now");
}

/* The label of the spares a box's network holder may be (spare.h), or NULL: none. */
static char *explain_spare_label(const brig_ctx *ctx, const loaded_backend *lb,
				 const brig_spec *spec)
{
	if (!spec->net_holder || lb->be->abi_minor < 5 || !BE_HOOK(lb->be, claim_spare))
		return NULL;
	cleanup_free char *key = spare_key(ctx, spec->net_holder);
	return key ? xasprintf(SPEC_SPARE_LABEL "=%s", key) : NULL;
}

/* The backend's rendering of the box, after its network holder's when it has one (what
 * start_detached does with it), and where a spare may take the holder's place. */
static int explain_text(const brig_ctx *ctx, const loaded_backend *lb, const brig_spec *spec,
			char **out, brig_error **err)
{
	*out = NULL;
	cleanup_free char *holder = NULL;
	int r = 0;
	if (spec->net_holder && !BE_HOOK(lb->be, explain_detached))
		r = brig_fail(err, BRIG_E_UNAVAILABLE, 0,
			      "backend %s cannot render a network holder's detached start",
			      lb->be->name);
	else if (spec->net_holder)
		r = lb->be->explain_detached(spec->net_holder, &holder, err);
	if (r == 0 && spec->net_holder && !holder)
		r = brig_fail(err, BRIG_E_SYSTEM, 0, "backend %s rendered no network holder",
			      lb->be->name);
	cleanup_free char *box = NULL;
	if (r == 0)
		r = lb->be->explain(spec, &box, err);
	if (r < 0)
		return r;
	if (!holder) {
		*out = steal_pointer(&box);
		return 0;
	}
	cleanup_free char *spare = explain_spare_label(ctx, lb, spec);
	if (spare)
		*out = xasprintf(
			"# the network holder (the box runs in its network namespace, on %s), "
			"between the box's creation and its start: `brig run` takes a "
			"running spare labelled %s (renamed %s; started after an earlier "
			"run, the same but for its name, labels and sleep), else starts it "
			"as here\n%s# the box\n%s",
			spec->egress->network, spare, spec->net_holder->name, holder, box);
	else
		*out = xasprintf("# the network holder, started first (the box runs in its network "
				 "namespace, on %s)\n%s# the box\n%s",
				 spec->egress->network, holder, box);
	return 0;
}

int brig_explain(brig_ctx *ctx, const brig_request *req, char **out, brig_error **err)
{
	return brig_explain_in(ctx, req, NULL, out, err);
}

int brig_explain_in(brig_ctx *ctx, const brig_request *req, const char *id, char **out,
		    brig_error **err)
{
	loaded_backend *lb = NULL;
	brig_spec *spec = NULL;
	cleanup_free char *fallback = NULL;
	int r = explain_prepare(ctx, req, id, &lb, &spec, &fallback, err);
	char *text = NULL;
	if (r == 0 && (!lb || !spec)) {
		(void)brig_fail(err, BRIG_E_SYSTEM, 0, "explain: no backend or no spec");
		r = BRIG_E_SYSTEM;
	}
	if (r == 0)
		r = explain_text(ctx, lb, spec, &text, err);
	if (r == 0) {
		cleanup_free char *traits = spec_describe_traits(spec);
		cleanup_free char *image = explain_image(spec);
		cleanup_free char *refused = explain_refusal(lb, spec);
		*out = xasprintf(
			"# backend: %s (%s isolation, runtime %s)%s%s%s%s\n# image: %s\n# seccomp: "
			"%s\n%s%s",
			lb->be->name, brig_isolation_name(lb->be->isolation), spec->runtime,
			fallback ? "\n# note: " : "", fallback ? fallback : "",
			refused ? "\n# refused: " : "", refused ? refused : "", image,
			spec->seccomp_name ? spec->seccomp_name : "engine default", traits, text);
		free(text);
	}
	spec_free(spec);
	return r;
}

json_object *brig_explain_object(brig_ctx *ctx, const brig_request *req, brig_error **err)
{
	return brig_explain_object_in(ctx, req, NULL, err);
}

json_object *brig_explain_object_in(brig_ctx *ctx, const brig_request *req, const char *id,
				    brig_error **err)
{
	loaded_backend *lb = NULL;
	brig_spec *spec = NULL;
	cleanup_free char *fallback = NULL;
	cleanup_free char *text = NULL;
	int r = explain_prepare(ctx, req, id, &lb, &spec, &fallback, err);
	if (r == 0 && (!lb || !spec)) {
		(void)brig_fail(err, BRIG_E_SYSTEM, 0, "explain: no backend or no spec");
		r = BRIG_E_SYSTEM;
	}
	if (r == 0)
		r = explain_text(ctx, lb, spec, &text, err);
	if (r != 0 || !lb || !spec) {
		spec_free(spec);
		return NULL;
	}
	cleanup_free char *traits = spec_describe_traits(spec);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "backend", json_object_new_string(lb->be->name));
	json_object_object_add(o, "isolation",
			       json_object_new_string(brig_isolation_name(lb->be->isolation)));
	json_object_object_add(o, "runtime", json_object_new_string(spec->runtime));
	json_object_object_add(o, "fallback", fallback ? json_object_new_string(fallback) : NULL);
	cleanup_free char *refused = explain_refusal(lb, spec);
	json_object_object_add(o, "refused", refused ? json_object_new_string(refused) : NULL);
	json_object_object_add(o, "notes", json_object_new_string(traits));
	json_object_object_add(o, "spec", spec_to_json(spec));
	json_object_object_add(o, "rendered", json_object_new_string(text));
	cleanup_free char *spare = explain_spare_label(ctx, lb, spec);
	json_object_object_add(o, "spare_label", spare ? json_object_new_string(spare) : NULL);
	spec_free(spec);
	return o;
}
