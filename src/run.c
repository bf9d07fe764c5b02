/* run.c - one run: select the backend, build the spec, hand it over, audit the outcome. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "loader.h"
#include "pool.h"

/* Whether the caller's options carry member m: callers built against an older brig.h pass a
 * smaller struct_size, and members appended since are not read from them. */
#define OPTS_HAVE(o, m) ((o) && (o)->struct_size >= offsetof(brig_run_options, m) + sizeof((o)->m))

static void audit_outcome(brig_ctx *ctx, const brig_run_options *opts, const brig_request *req,
			  const char *sha, const brig_spec *spec, const loaded_backend *lb,
			  const brig_result *res, const brig_error *refusal, brig_error **err)
{
	pthread_mutex_lock(&ctx->lock);
	audit_log *a = ctx->audit;
	if (!a) {
		pthread_mutex_unlock(&ctx->lock);
		return;
	}
	audit_entry e = {
		.front_door = opts && opts->front_door ? opts->front_door : "lib",
		.language = req->language,
		.code_sha256 = sha,
		.code_bytes = req->code ? req->code_len : 0,
		.policy = ctx->policy,
		.timeout_seconds = spec ? (int)(spec->timeout_ms / 1000) : req->timeout_seconds,
		.result = res,
		.refusal = refusal ? refusal->message : NULL,
		.backend = lb ? lb->be->name : NULL,
		.runtime = lb ? lb->info.runtime : NULL,
		.image = (unsigned)req->language < BRIG_LANG_COUNT
				 ? ctx->policy->images[req->language]
				 : NULL,
		.traceparent = OPTS_HAVE(opts, traceparent) ? opts->traceparent : NULL,
	};
	brig_error *ae = NULL;
	if (audit_append(a, &e, &ae) < 0 && err) {
		brig_error_free(*err);
		*err = ae;
	} else {
		brig_error_free(ae);
	}
	pthread_mutex_unlock(&ctx->lock);
}

static int check_request(const brig_request *req, brig_error **err)
{
	if (!req || (unsigned)req->language >= BRIG_LANG_COUNT)
		return brig_fail(err, BRIG_E_USAGE, 0,
				 "unknown language (use python, node or shell)");
	if (!req->code)
		return brig_fail(err, BRIG_E_USAGE, 0, "no code to run");
	return 0;
}

static void fill_result_identity(brig_result *res, const brig_request *req, const brig_spec *spec,
				 const loaded_backend *lb, const char *sha, char *notice)
{
	memset(res, 0, sizeof *res);
	res->exit_code = -1;
	res->language = req->language;
	res->image = xstrdup(spec->image);
	res->backend = xstrdup(lb->be->name);
	res->runtime = xstrdup(spec->runtime);
	res->container = xstrdup(spec->name);
	res->notice = notice;
	memcpy(res->code_sha256, sha, sizeof res->code_sha256);
}

/* A backend failure is the sandbox's, not the program's: report it in the result. */
static void sandbox_failed(brig_result *res, const brig_error *e)
{
	res->verdict = BRIG_VERDICT_SANDBOX_ERROR;
	res->exit_code = -1;
	free(res->error);
	res->error = xstrdup(e && e->message ? e->message : "the backend failed without a reason");
}

static void backend_failed(const loaded_backend *lb, const brig_spec *spec, brig_result *res,
			   brig_error *e)
{
	sandbox_failed(res, e);
	int (*rm)(const char *, brig_error **) = BE_HOOK(lb->be, remove);
	if (rm) {
		brig_error *re = NULL;
		rm(spec->name, &re); /* belt and braces: the backend should have removed it */
		brig_error_free(re);
	}
}

/* The run in a container the warm pool started before, if one with exactly this box is idle.
 * False when none took it (then nothing ran).  The used container is removed in the
 * background: the result does not wait for the DELETE. */
static bool run_pooled(brig_ctx *ctx, const loaded_backend *lb, const brig_request *req,
		       brig_spec *spec, const brig_run_control *ctl, brig_result *res)
{
	int64_t t0 = now_ms();
	pool_entry *pe = pool_take(ctx->pool, lb, req->language, spec);
	if (!pe)
		return false;
	int64_t t1 = now_ms();
	char *own = spec->name;
	spec->name = pool_entry_name(pe); /* borrowed for the call: the box's real name */
	brig_error *e = NULL;
	int r = lb->be->run_prepared(pool_entry_handle(pe), spec, ctl, res, &e);
	spec->name = own;
	if (r == BRIG_E_UNAVAILABLE) { /* nothing was handed over: a cold run instead */
		core_debug("run: %s: %s", pool_entry_name(pe), e ? e->message : "stale");
		pool_release(ctx->pool, pe);
		brig_error_free(e);
		return false;
	}
	if (r < 0)
		sandbox_failed(res, e); /* the container is removed with the entry */
	brig_error_free(e);
	res->pooled = true;
	free(res->container);
	res->container = xstrdup(pool_entry_name(pe));
	core_debug("run: %s pooled: take %lld ms, run_prepared %lld ms", res->container,
		   (long long)(t1 - t0), (long long)(now_ms() - t1));
	pool_release(ctx->pool, pe);
	return true;
}

int brig_run(brig_ctx *ctx, const brig_request *req, const brig_run_options *opts, brig_result *res,
	     brig_error **err)
{
	memset(res, 0, sizeof *res);
	res->exit_code = -1;
	int r = check_request(req, err);
	if (r < 0)
		return r;
	char sha[65];
	sha256_hex(req->code, req->code_len, sha);
	brig_timeout_mode mode =
		OPTS_HAVE(opts, timeout_mode) ? opts->timeout_mode : BRIG_TIMEOUT_CLAMP;
	loaded_backend *lb = NULL;
	brig_spec *spec = NULL;
	char *notice = NULL;
	brig_error *refusal = NULL;
	r = policy_check_request(ctx->policy, req, mode, &refusal); /* refuse before probing */
	if (r == 0)
		r = dispatch_select(ctx, ctx->policy, &lb, &refusal);
	if (r == 0)
		r = policy_make_spec(ctx->policy, req, mode, lb->info.runtime, lb->be->isolation,
				     &spec, &notice, &refusal);
	if (r >= 0 && !spec) {
		brig_fail(&refusal, BRIG_E_SYSTEM, 0, "no container spec was built");
		r = BRIG_E_SYSTEM;
	}
	if (r < 0) {
		brig_error *ae = NULL;
		audit_outcome(ctx, opts, req, sha, NULL, lb, NULL, refusal, &ae);
		if (ae && refusal) { /* nothing ran, but the operator must hear the log failed */
			char *m = xasprintf("%s (and the audit log failed too: %s)",
					    refusal->message, ae->message);
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
	fill_result_identity(res, req, spec, lb, sha, notice);
	brig_run_control ctl = { .struct_size = sizeof ctl,
				 .cancel_fd = opts ? opts->cancel_fd : -1 };
	pool_run_begin(ctx->pool);
	int64_t t0 = now_ms();
	if (!run_pooled(ctx, lb, req, spec, &ctl, res)) {
		brig_error *be_err = NULL;
		if (lb->be->run(spec, &ctl, res, &be_err) < 0)
			backend_failed(lb, spec, res, be_err);
		brig_error_free(be_err);
	}
	res->duration_ms = now_ms() - t0;
	pool_run_end(ctx->pool);
	if (!res->stdout_data)
		res->stdout_data = xstrdup(""), res->stdout_len = 0;
	if (!res->stderr_data)
		res->stderr_data = xstrdup(""), res->stderr_len = 0;
	brig_error *ae = NULL;
	audit_outcome(ctx, opts, req, sha, spec, lb, res, NULL, &ae);
	spec_free(spec);
	if (ae) {
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

int brig_explain(brig_ctx *ctx, const brig_request *req, char **out, brig_error **err)
{
	int r = check_request(req, err);
	if (r < 0)
		return r;
	loaded_backend *lb = NULL;
	r = dispatch_select(ctx, ctx->policy, &lb, err);
	if (r < 0)
		return r;
	int (*explain)(const brig_spec *, char **, brig_error **) = BE_HOOK(lb->be, explain);
	if (!explain)
		return brig_fail(err, BRIG_E_UNAVAILABLE, 0, "backend %s cannot explain its runs",
				 lb->be->name);
	brig_spec *spec = NULL;
	char *notice = NULL;
	r = policy_make_spec(ctx->policy, req, BRIG_TIMEOUT_REFUSE, lb->info.runtime,
			     lb->be->isolation, &spec, &notice, err);
	free(notice);
	if (r < 0)
		return r;
	char *text = NULL;
	r = explain(spec, &text, err);
	if (r == 0) {
		*out = xasprintf("# backend: %s (%s isolation, runtime %s)\n# seccomp: %s\n%s",
				 lb->be->name, brig_isolation_name(lb->be->isolation),
				 spec->runtime,
				 spec->seccomp_name ? spec->seccomp_name : "engine default", text);
		free(text);
	}
	spec_free(spec);
	return r;
}
