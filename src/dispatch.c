/* dispatch.c - the context, runtime detection and backend choice.
 *
 * `auto` picks the strongest isolation available, then the fastest backend at that level.  A
 * named backend, or a minimum isolation level, that is not available is an error that says why:
 * never a silent fallback to something weaker.
 */
#include "config.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "loader.h"
#include "pool.h"

int brig_ctx_new(brig_policy *policy, brig_ctx **out, brig_error **err)
{
	*out = NULL;
	if (!policy)
		return brig_fail(err, BRIG_E_USAGE, 0, "brig_ctx_new: no policy");
	brig_ctx *ctx = xcalloc(1, sizeof *ctx);
	ctx->policy = policy;
	pthread_mutex_init(&ctx->lock, NULL);
	int r = loader_load_dir(loader_backend_dir(), &ctx->backends, &ctx->n_backends,
				&ctx->refused, err);
	if (r < 0) {
		brig_ctx_free(ctx);
		return r;
	}
	if (policy->audit_log) {
		r = brig_ctx_set_audit_log(ctx, policy->audit_log, err);
		if (r < 0) {
			brig_ctx_free(ctx);
			return r;
		}
	}
	ctx->pool = pool_new(ctx); /* warm_pool 0: NULL; never blocks */
	*out = ctx;
	return 0;
}

void brig_ctx_free(brig_ctx *ctx)
{
	if (!ctx)
		return;
	pool_free(ctx->pool); /* its containers are removed with the backends still loaded */
	for (size_t i = 0; i < ctx->n_backends; i++)
		loader_unload(&ctx->backends[i]);
	free(ctx->backends);
	strv_free(ctx->refused);
	audit_close(ctx->audit);
	brig_policy_free(ctx->policy);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

const brig_policy *brig_ctx_policy(const brig_ctx *ctx)
{
	return ctx->policy;
}

int brig_ctx_set_audit_log(brig_ctx *ctx, const char *path, brig_error **err)
{
	audit_log *a = NULL;
	int r = audit_open(path ? path : ctx->policy->audit_log, &a, err);
	if (r < 0)
		return r;
	pthread_mutex_lock(&ctx->lock);
	audit_close(ctx->audit);
	ctx->audit = a;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/* pthread_once has no argument: the backend being probed is handed over in a thread-local. */
static __thread loaded_backend *probing;

static void probe_once_fn(void)
{
	loaded_backend *lb = probing;
	brig_error *e = NULL;
	memset(&lb->info, 0, sizeof lb->info);
	if (lb->be->probe(&lb->info, &e) < 0) {
		lb->info.available = false;
		snprintf(lb->info.reason, sizeof lb->info.reason, "probe failed: %s",
			 e ? e->message : "unknown error");
		brig_error_free(e);
	}
	if (!lb->info.available && !lb->info.reason[0])
		snprintf(lb->info.reason, sizeof lb->info.reason,
			 "not available (no reason given)");
}

void backend_probe(loaded_backend *lb)
{
	probing = lb;
	pthread_once(&lb->probe_once, probe_once_fn);
	probing = NULL;
}

static loaded_backend *find_backend(brig_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < ctx->n_backends; i++)
		if (strcmp(ctx->backends[i].be->name, name) == 0)
			return &ctx->backends[i];
	return NULL;
}

static char *loaded_names(const brig_ctx *ctx)
{
	strbuf sb;
	sb_init(&sb);
	for (size_t i = 0; i < ctx->n_backends; i++)
		sb_printf(&sb, "%s%s", i ? ", " : "", ctx->backends[i].be->name);
	if (ctx->n_backends == 0)
		sb_puts(&sb, "none");
	return sb_steal(&sb);
}

static int select_named(brig_ctx *ctx, const brig_policy *p, loaded_backend **out, brig_error **err)
{
	loaded_backend *lb = find_backend(ctx, p->backend);
	if (!lb) {
		cleanup_free char *names = loaded_names(ctx);
		return brig_fail(
			err, BRIG_E_UNAVAILABLE, 0,
			"backend %s is not installed (loaded backends: %s; plugin directory %s)",
			p->backend, names, loader_backend_dir());
	}
	if (lb->be->isolation < p->isolation)
		return brig_fail(
			err, BRIG_E_UNAVAILABLE, 0,
			"backend %s provides %s isolation but the policy requires at least %s; "
			"refusing to run with weaker isolation",
			p->backend, brig_isolation_name(lb->be->isolation),
			brig_isolation_name(p->isolation));
	backend_probe(lb);
	if (!lb->info.available)
		return brig_fail(err, BRIG_E_UNAVAILABLE, 0, "backend %s is not available: %s",
				 p->backend, lb->info.reason);
	*out = lb;
	return 0;
}

/* Better candidate first: stronger isolation, then faster. */
static int candidate_cmp(const void *a, const void *b)
{
	const loaded_backend *x = *(loaded_backend *const *)a, *y = *(loaded_backend *const *)b;
	if (x->be->isolation != y->be->isolation)
		return y->be->isolation - x->be->isolation;
	return x->be->speed_rank - y->be->speed_rank;
}

static int select_auto(brig_ctx *ctx, const brig_policy *p, loaded_backend **out, brig_error **err)
{
	loaded_backend **cand = xcalloc(ctx->n_backends + 1, sizeof(loaded_backend *));
	size_t n = 0;
	for (size_t i = 0; i < ctx->n_backends; i++)
		if (ctx->backends[i].be->isolation >= p->isolation)
			cand[n++] = &ctx->backends[i];
	qsort(cand, n, sizeof(loaded_backend *), candidate_cmp);
	strbuf why;
	sb_init(&why);
	for (size_t i = 0; i < n; i++) {
		backend_probe(cand[i]);
		if (cand[i]->info.available) {
			*out = cand[i];
			free(cand);
			sb_free(&why);
			return 0;
		}
		sb_printf(&why, "; %s: %s", cand[i]->be->name, cand[i]->info.reason);
	}
	free(cand);
	int r = brig_fail(err, BRIG_E_UNAVAILABLE, 0,
			  "no backend provides %s isolation or stronger here%s%s",
			  brig_isolation_name(p->isolation),
			  n ? "" : " (none installed at that level)", why.data ? why.data : "");
	sb_free(&why);
	return r;
}

int dispatch_select(brig_ctx *ctx, const brig_policy *p, loaded_backend **out, brig_error **err)
{
	if (strcmp(p->backend, "auto") == 0)
		return select_auto(ctx, p, out, err);
	return select_named(ctx, p, out, err);
}

static json_object *backend_json(loaded_backend *lb)
{
	backend_probe(lb);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(lb->be->name));
	json_object_object_add(
		o, "description",
		json_object_new_string(lb->be->description ? lb->be->description : ""));
	json_object_object_add(o, "isolation",
			       json_object_new_string(brig_isolation_name(lb->be->isolation)));
	json_object_object_add(o, "available", json_object_new_boolean(lb->info.available));
	json_object_object_add(o, "reason",
			       lb->info.available ? NULL : json_object_new_string(lb->info.reason));
	json_object_object_add(o, "version", json_object_new_string(lb->info.version));
	json_object_object_add(o, "runtime", json_object_new_string(lb->info.runtime));
	json_object_object_add(o, "path", json_object_new_string(lb->path));
	return o;
}

static json_object *images_json(brig_ctx *ctx, loaded_backend *sel)
{
	json_object *arr = json_object_new_array();
	int (*exists)(const char *, brig_error **) = sel ? BE_HOOK(sel->be, image_exists) : NULL;
	for (int l = 0; l < BRIG_LANG_COUNT; l++) {
		json_object *o = json_object_new_object();
		const char *img = ctx->policy->images[l];
		json_object_object_add(o, "language",
				       json_object_new_string(brig_language_name(l)));
		json_object_object_add(o, "image", json_object_new_string(img));
		brig_error *e = NULL;
		int r = exists ? exists(img, &e) : -1;
		json_object_object_add(o, "present",
				       r < 0 ? NULL : json_object_new_boolean(r == 1));
		if (r < 0 && e)
			json_object_object_add(o, "error", json_object_new_string(e->message));
		brig_error_free(e);
		json_object_array_add(arr, o);
	}
	return arr;
}

int brig_status_json(brig_ctx *ctx, char **out, brig_error **err)
{
	json_object *o = json_object_new_object();
	json_object *arr = json_object_new_array();
	for (size_t i = 0; i < ctx->n_backends; i++)
		json_object_array_add(arr, backend_json(&ctx->backends[i]));
	json_object_object_add(o, "backends", arr);
	json_object *ref = json_object_new_array();
	for (char **r = ctx->refused; r && *r; r++)
		json_object_array_add(ref, json_object_new_string(*r));
	json_object_object_add(o, "refused_plugins", ref);
	json_object_object_add(o, "backend_dir", json_object_new_string(loader_backend_dir()));
	json_object_object_add(o, "policy_backend", json_object_new_string(ctx->policy->backend));
	json_object_object_add(o, "isolation_minimum",
			       json_object_new_string(brig_isolation_name(ctx->policy->isolation)));
	loaded_backend *sel = NULL;
	brig_error *e = NULL;
	if (dispatch_select(ctx, ctx->policy, &sel, &e) == 0 && sel) {
		json_object_object_add(o, "selected", json_object_new_string(sel->be->name));
		json_object_object_add(
			o, "isolation",
			json_object_new_string(brig_isolation_name(sel->be->isolation)));
		json_object_object_add(o, "runtime", json_object_new_string(sel->info.runtime));
		json_object_object_add(o, "selection_error", NULL);
	} else {
		json_object_object_add(o, "selected", NULL);
		json_object_object_add(o, "isolation", NULL);
		json_object_object_add(o, "runtime", NULL);
		json_object_object_add(o, "selection_error", json_object_new_string(e->message));
	}
	brig_error_free(e);
	json_object_object_add(o, "images", images_json(ctx, sel));
	json_object_object_add(o, "pool", pool_status_json(ctx->pool, ctx->policy));
	*out = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_SPACED |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	(void)err;
	return 0;
}

void brig_policy_get_limits(const brig_policy *p, brig_policy_limits *out)
{
	*out = (brig_policy_limits){
		.timeout_seconds = p->timeout_seconds,
		.max_timeout_seconds = p->max_timeout_seconds,
		.memory_mb = p->memory_mb,
		.cpus = p->cpus,
		.pids_limit = p->pids_limit,
		.nofile = p->nofile,
		.tmpfs_mb = p->tmpfs_mb,
		.max_input_bytes = p->max_input_bytes,
		.max_output_bytes = p->max_output_bytes,
		.network = p->network,
		.isolation = p->isolation,
		.max_concurrent_runs = p->max_concurrent_runs,
	};
}

/* Is the brig process named by an owner label "pid:starttime" still alive?  The start time
 * (field 22 of /proc/PID/stat) tells a live owner from a reused pid. */
static bool owner_alive(const char *owner)
{
	long pid = 0;
	const char *colon = strchr(owner, ':');
	if (!colon)
		return false;
	cleanup_free char *pid_s = xstrndup(owner, (size_t)(colon - owner));
	if (!parse_long(pid_s, 1, 1L << 30, &pid))
		return false;
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char buf[1024];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return false;
	/* after ") " come fields 3..; starttime is field 22, i.e. the 20th after the ')' */
	char *save = NULL, *tok = strtok_r(p + 1, " ", &save);
	for (int field = 3; tok && field < 22; field++)
		tok = strtok_r(NULL, " ", &save);
	return tok && strcmp(tok, colon + 1) == 0;
}

int brig_gc(brig_ctx *ctx, int *removed, brig_error **err)
{
	*removed = 0;
	loaded_backend *lb = NULL;
	for (size_t i = 0; i < ctx->n_backends && !lb; i++) {
		loaded_backend *c = &ctx->backends[i];
		if (!BE_HOOK(c->be, list_labelled) || !BE_HOOK(c->be, remove))
			continue;
		backend_probe(c);
		if (c->info.available)
			lb = c;
	}
	if (!lb)
		return brig_fail(err, BRIG_E_UNAVAILABLE, 0,
				 "no available backend can list containers (is dockerd running?)");
	char **names = NULL, **owners = NULL;
	int r = lb->be->list_labelled("brig=1", &names, &owners, err);
	if (r < 0)
		return r;
	for (size_t i = 0; names && names[i]; i++) {
		if (owners[i] && owner_alive(owners[i]))
			continue;
		brig_error *e = NULL;
		if (lb->be->remove(names[i], &e) == 0)
			(*removed)++;
		else if (r == 0) {
			r = e->status;
			if (err) {
				brig_error_free(*err);
				*err = e;
				e = NULL;
			}
		}
		brig_error_free(e);
	}
	strv_free(names);
	strv_free(owners);
	return r;
}
