/* dispatch.c - the context, backend choice and the status page.
 *
 * `auto` picks the strongest isolation available, then the fastest backend at that level.  A
 * named backend, or a minimum isolation level, that is not available is an error that says why:
 * never a silent fallback to something weaker.  When `auto` chose a weaker backend than one it
 * would have preferred (within the policy's minimum), it says so.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "egress.h"
#include "internal.h"
#include "loader.h"
#include "pool.h"
#include "spare.h"
#include "probe.h"
#include "reap.h"
#include "workspace.h"

/* 16 hex digits naming this installation: the real path of its plugin directory.  Boxes carry
 * it (label brig.install), and gc touches only the boxes of its own installation: a system
 * brig and a build tree's do not reap each other's. */
static void install_id(const char *dir, char out[17])
{
	char sha[65], *real = realpath(dir, NULL);
	sha256_hex(real ? real : dir, strlen(real ? real : dir), sha);
	free(real);
	for (int i = 0; i < 16; i++)
		out[i] = sha[i];
	out[16] = '\0';
}

int brig_ctx_new(brig_policy *policy, brig_ctx **out, brig_error **err)
{
	*out = NULL;
	if (!policy)
		return brig_fail(err, BRIG_E_USAGE, 0, "brig_ctx_new: no policy");
	brig_ctx *ctx = xcalloc(1, sizeof *ctx);
	ctx->policy = policy;
	ctx->use_probe_cache = true;
	pthread_mutex_init(&ctx->lock, NULL);
	cond_init_monotonic(&ctx->slot_free);
	int r = loader_load_dir(loader_backend_dir(), &ctx->backends, &ctx->n_backends,
				&ctx->refused, err);
	if (r < 0) {
		brig_ctx_free(ctx);
		return r;
	}
	install_id(loader_backend_dir(), ctx->install);
	brig_error *ie = NULL;
	ctx->init = loader_find_init(loader_backend_dir(), &ie);
	if (!ctx->init)
		ctx->init_error = xstrdup(ie && ie->message ? ie->message : "brig-init not found");
	brig_error_free(ie);
	for (size_t i = 0; i < ctx->n_backends; i++) {
		loaded_backend *lb = &ctx->backends[i];
		const char *rt =
			lb->be->isolation >= BRIG_ISOLATION_GVISOR ? policy->gvisor_runtime : NULL;
		if (!rt && BE_HAS(lb->be, default_runtime))
			rt = lb->be->default_runtime;
		lb->runtime = xstrdup(rt ? rt : "runc");
	}
	if (policy->audit_log) {
		r = brig_ctx_set_audit_log(ctx, policy->audit_log, err);
		if (r < 0) {
			brig_ctx_free(ctx);
			return r;
		}
	}
	*out = ctx;
	return 0;
}

int brig_ctx_start_warm_pool(brig_ctx *ctx, brig_error **err)
{
	(void)err;
	pthread_mutex_lock(&ctx->lock);
	if (!ctx->pool)
		ctx->pool = pool_new(ctx); /* warm_pool 0: NULL; never blocks */
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

void brig_ctx_set_probe_cache(brig_ctx *ctx, bool use)
{
	ctx->use_probe_cache = use;
}

void brig_ctx_set_spares(brig_ctx *ctx, bool on)
{
	ctx->spares = on;
}

void brig_ctx_free(brig_ctx *ctx)
{
	if (!ctx)
		return;
	pool_free(ctx->pool); /* its containers are removed with the backends still loaded */
	spare_detach(ctx);    /* its process uses them too, and no thread of the pool's is left */
	spare_state_free(ctx->spare);
	for (size_t i = 0; i < ctx->n_backends; i++)
		loader_unload(&ctx->backends[i]);
	free(ctx->backends);
	strv_free(ctx->refused);
	audit_close(ctx->audit);
	brig_policy_free(ctx->policy);
	free(ctx->init);
	free(ctx->init_error);
	pthread_cond_destroy(&ctx->slot_free);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

const char *const *brig_ctx_warnings(brig_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	size_t n = 0;
	const char *w = ctx->audit ? audit_warning(ctx->audit) : NULL;
	if (w)
		ctx->warnings[n++] = w;
	ctx->warnings[n] = NULL;
	pthread_mutex_unlock(&ctx->lock);
	return ctx->warnings;
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

spec_target dispatch_target(const brig_ctx *ctx, const loaded_backend *lb)
{
	return (spec_target){ .runtime = lb->runtime,
			      .isolation = lb->be->isolation,
			      .init = ctx->init,
			      .install = ctx->install };
}

uint32_t dispatch_missing_features(const loaded_backend *lb, const brig_spec *spec,
				   bool cancellable)
{
	uint32_t need = 0;
	if (spec->seccomp_profile)
		need |= BRIG_FEATURE_SECCOMP_PROFILE;
	if (cancellable)
		need |= BRIG_FEATURE_CANCEL;
	if (spec->mounts && spec->mounts[0])
		need |= BRIG_FEATURE_MOUNTS;
	if (spec->network && strcmp(spec->network, "none") != 0 &&
	    strcmp(spec->network, "bridge") != 0)
		need |= BRIG_FEATURE_NETWORKS;
	if (spec->masked_paths && spec->masked_paths[0])
		need |= BRIG_FEATURE_MASKED_PATHS;
	if (spec->image_id)
		need |= BRIG_FEATURE_IMAGE_ID;
	uint32_t missing = need & ~lb->be->features;
	/* a plugin older than ABI 2.4 would look for the box's address in the box, not in its
	 * network holder, and lose the audit of its egress: it lacks networks as brig makes them */
	if (spec->net_holder && lb->be->abi_minor < 4)
		missing |= BRIG_FEATURE_NETWORKS;
	return missing;
}

/* "seccomp profile, cancel" for the missing bits (malloc'ed). */
static char *dispatch_feature_names(uint32_t bits)
{
	static const char *const names[] = { "a seccomp profile",
					     "cancellation",
					     "mounts",
					     "networks (with egress: plugin ABI 2.4 or later)",
					     "masked paths (mask_host_details)",
					     "starting a box from a pinned image ID",
					     "workspaces" };
	strbuf sb;
	sb_init(&sb);
	for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
		if (bits & (1u << i))
			sb_printf(&sb, "%s%s", sb.len ? ", " : "", names[i]);
	if (!sb.len)
		sb_puts(&sb, "nothing");
	return sb_steal(&sb);
}

char *dispatch_refusal(const loaded_backend *lb, const brig_spec *spec, bool cancellable,
		       const char *what)
{
	uint32_t missing = dispatch_missing_features(lb, spec, cancellable);
	if (!missing)
		return NULL;
	cleanup_free char *names = dispatch_feature_names(missing);
	return xasprintf("backend %s cannot %s: it lacks support for %s", lb->be->name, what,
			 names);
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

/* The error of an unavailable backend: transient when its probe said so. */
static int unavailable(brig_error **err, const brig_probe_info *info, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int unavailable(brig_error **err, const brig_probe_info *info, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	brig_error *e = brig_error_newv(BRIG_E_UNAVAILABLE, 0, fmt, ap);
	va_end(ap);
	e->transient = info && info->transient;
	if (err) {
		brig_error_free(*err);
		*err = e;
	} else {
		brig_error_free(e);
	}
	return BRIG_E_UNAVAILABLE;
}

static int select_named(brig_ctx *ctx, loaded_backend **out, brig_error **err)
{
	const brig_policy *p = ctx->policy;
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
	brig_probe_info info;
	if (!probe_backend(ctx, lb, &info))
		return unavailable(err, &info, "backend %s is not available: %s", p->backend,
				   info.reason);
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

static int select_auto(brig_ctx *ctx, loaded_backend **out, char **fallback, brig_error **err)
{
	const brig_policy *p = ctx->policy;
	loaded_backend **cand = xcalloc(ctx->n_backends + 1, sizeof(loaded_backend *));
	size_t n = 0;
	for (size_t i = 0; i < ctx->n_backends; i++)
		if (ctx->backends[i].be->isolation >= p->isolation)
			cand[n++] = &ctx->backends[i];
	qsort(cand, n, sizeof(loaded_backend *), candidate_cmp);
	strbuf why;
	sb_init(&why);
	bool transient = false;
	int best_isolation = n ? cand[0]->be->isolation : 0;
	for (size_t i = 0; i < n; i++) {
		brig_probe_info info;
		if (p->network && cand[i]->be->isolation >= BRIG_ISOLATION_GVISOR) {
			/* it could not honour the box (spec_build refuses it): the next one */
			sb_printf(&why, "; %s: %s", cand[i]->be->name, SPEC_GVISOR_NO_NETWORK);
			continue;
		}
		if (probe_backend(ctx, cand[i], &info)) {
			*out = cand[i];
			if (fallback && cand[i]->be->isolation < best_isolation)
				*fallback = xasprintf(
					"ran with %s isolation (%s): the stronger backend is not "
					"available now%s",
					brig_isolation_name(cand[i]->be->isolation),
					cand[i]->be->name, why.data);
			free(cand);
			sb_free(&why);
			return 0;
		}
		transient = transient || info.transient;
		sb_printf(&why, "; %s: %s", cand[i]->be->name, info.reason);
	}
	free(cand);
	brig_probe_info t = { .transient = transient };
	int r = unavailable(err, &t, "no backend provides %s isolation or stronger here%s%s",
			    brig_isolation_name(p->isolation),
			    n ? "" : " (none installed at that level)", why.data ? why.data : "");
	sb_free(&why);
	return r;
}

int dispatch_select(brig_ctx *ctx, loaded_backend **out, char **fallback, brig_error **err)
{
	if (fallback)
		*fallback = NULL;
	if (strcmp(ctx->policy->backend, "auto") == 0)
		return select_auto(ctx, out, fallback, err);
	return select_named(ctx, out, err);
}

/* ---- the status page ------------------------------------------------------------------------- */

static json_object *backend_json(brig_ctx *ctx, loaded_backend *lb)
{
	brig_probe_info info;
	probe_backend(ctx, lb, &info);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(lb->be->name));
	json_object_object_add(
		o, "description",
		json_object_new_string(lb->be->description ? lb->be->description : ""));
	json_object_object_add(o, "isolation",
			       json_object_new_string(brig_isolation_name(lb->be->isolation)));
	json_object_object_add(o, "available", json_object_new_boolean(info.available));
	json_object_object_add(o, "reason",
			       info.available ? NULL : json_object_new_string(info.reason));
	json_object_object_add(o, "transient",
			       json_object_new_boolean(!info.available && info.transient));
	json_object_object_add(o, "version", json_object_new_string(info.version));
	json_object_object_add(o, "runtime", json_object_new_string(lb->runtime));
	json_object_object_add(o, "path", json_object_new_string(lb->path));
	return o;
}

/* The entries of brig_images_object: one report for `brig images`, doctor and sandbox_status. */
static json_object *images_json(brig_ctx *ctx)
{
	json_object *all = brig_images_object(ctx), *arr = NULL;
	if (json_object_object_get_ex(all, "images", &arr))
		json_object_get(arr);
	json_object_put(all);
	return arr ? arr : json_object_new_array();
}

/* With an egress allowlist: what it needs and what it trades (brig doctor); NULL without. */
static json_object *egress_status(brig_ctx *ctx, const loaded_backend *sel)
{
	const brig_policy *p = ctx->policy;
	if (!p->egress_allow || !p->egress_allow[0])
		return NULL;
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	for (char **x = p->egress_allow; *x; x++)
		json_object_array_add(a, json_object_new_string(*x));
	json_object_object_add(o, "allow", a);
	json_object_object_add(o, "proxy_image", json_object_new_string(EGRESS_IMAGE));
	json_object *present = NULL; /* unknown without a backend that can look */
	if (sel && BE_HOOK(sel->be, image_id)) {
		char id[80];
		brig_error *e = NULL;
		int r = sel->be->image_id(EGRESS_IMAGE, id, sizeof id, &e);
		brig_error_free(e);
		if (r >= 0)
			present = json_object_new_boolean(r == 1);
	}
	json_object_object_add(o, "proxy_image_present", present);
	json_object_object_add(
		o, "backend_supports",
		sel ? json_object_new_boolean(sel->be->features & BRIG_FEATURE_NETWORKS) : NULL);
	json_object_object_add(o, "gvisor_runtime",
			       json_object_new_string(p->gvisor_egress_runtime));
	cleanup_free char *trade = xasprintf(
		"gVisor boxes with egress run under %s (runsc --network=host): the host kernel's "
		"network stack in the box's own namespace, wired only to the internal network, "
		"instead of gVisor's own; boxes without egress keep --network=none",
		p->gvisor_egress_runtime);
	json_object_object_add(o, "gvisor_trade", json_object_new_string(trade));
	return o;
}

json_object *brig_status_object(brig_ctx *ctx)
{
	json_object *o = json_object_new_object();
	json_object *arr = json_object_new_array();
	for (size_t i = 0; i < ctx->n_backends; i++)
		json_object_array_add(arr, backend_json(ctx, &ctx->backends[i]));
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
	char *fallback = NULL;
	if (dispatch_select(ctx, &sel, &fallback, &e) == 0 && sel) {
		json_object_object_add(o, "selected", json_object_new_string(sel->be->name));
		json_object_object_add(
			o, "isolation",
			json_object_new_string(brig_isolation_name(sel->be->isolation)));
		json_object_object_add(o, "runtime", json_object_new_string(sel->runtime));
		json_object_object_add(o, "selection_error", NULL);
	} else {
		json_object_object_add(o, "selected", NULL);
		json_object_object_add(o, "isolation", NULL);
		json_object_object_add(o, "runtime", NULL);
		json_object_object_add(o, "selection_error",
				       json_object_new_string(e ? e->message : "no backend"));
	}
	json_object_object_add(o, "fallback", fallback ? json_object_new_string(fallback) : NULL);
	json_object_object_add(o, "egress", egress_status(ctx, sel));
	free(fallback);
	brig_error_free(e);
	json_object_object_add(o, "images", images_json(ctx));
	json_object_object_add(o, "pool", pool_status_json(ctx->pool, ctx->policy));
	json_object *warn = json_object_new_array();
	for (const char *const *w = brig_ctx_warnings(ctx); *w; w++)
		json_object_array_add(warn, json_object_new_string(*w));
	json_object_object_add(o, "warnings", warn);
	return o;
}

int brig_status_json(brig_ctx *ctx, char **out, brig_error **err)
{
	(void)err;
	json_object *o = brig_status_object(ctx);
	*out = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_SPACED |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
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

#define GC_EGRESS_IDLE_S 300

/* ---- gc -------------------------------------------------------------------------------------- */

/* The configuration directories ("egress-<digest>" in the cache directory) of proxies that are
 * gone, untouched for idle_s (every box with egress touches its own before it starts: a run
 * writing one for a proxy it is about to start keeps it). */
static void egress_config_gc(const loaded_backend *eb, long idle_s)
{
	cleanup_free char *dir = cache_dir();
	DIR *d = dir && BE_HOOK(eb->be, container_state) ? opendir(dir) : NULL;
	if (!d)
		return;
	time_t now = time(NULL);
	for (struct dirent *de; (de = readdir(d));) {
		struct stat st;
		if (strncmp(de->d_name, "egress-", 7) != 0 || strlen(de->d_name) != 7 + 12 ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || now - st.st_mtime < idle_s)
			continue;
		cleanup_free char *proxy = xasprintf("brig-%s", de->d_name);
		int state = -1;
		brig_error *e = NULL;
		int r = eb->be->container_state(proxy, &state, &e);
		brig_error_free(e);
		if (r < 0 || state != 0)
			continue;
		int fd = openat(dirfd(d), de->d_name,
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		unlinkat(fd, "squid.conf", 0);
		unlinkat(fd, "hosts", 0);
		close(fd);
		if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
			core_debug("gc: removed %s/%s (its proxy is gone)", dir, de->d_name);
	}
	closedir(d);
}

/* The first available backend that can list and remove boxes, or NULL (an error set). */
static loaded_backend *gc_backend(brig_ctx *ctx, brig_error **err)
{
	for (size_t i = 0; i < ctx->n_backends; i++) {
		loaded_backend *c = &ctx->backends[i];
		if (BE_HOOK(c->be, list_labelled) && BE_HOOK(c->be, remove) &&
		    probe_backend(ctx, c, NULL))
			return c;
	}
	brig_fail(err, BRIG_E_UNAVAILABLE, 0,
		  "no available backend can list containers (is dockerd running?)");
	return NULL;
}

int brig_reap(brig_ctx *ctx, int *removed, brig_error **err)
{
	*removed = 0;
	loaded_backend *lb = gc_backend(ctx, err);
	return lb ? reap_orphans(ctx, lb, removed, err) : BRIG_E_UNAVAILABLE;
}

int brig_gc(brig_ctx *ctx, int *removed, brig_error **err)
{
	*removed = 0;
	loaded_backend *lb = gc_backend(ctx, err);
	if (!lb)
		return BRIG_E_UNAVAILABLE;
	int r = reap_orphans(ctx, lb, removed, err);
	int ended = 0;
	if (r == 0)
		r = ws_expire_all(ctx, lb, &ended, err);
	*removed += ended;
	if (r < 0)
		return r;
	/* egress proxies no box is attached to, started more than GC_EGRESS_IDLE_S ago
	 * ($BRIG_EGRESS_IDLE_SECONDS: an operator's, e.g. 0 in tests) */
	loaded_backend *eb = BE_HOOK(lb->be, egress_gc) ? lb : NULL;
	for (size_t i = 0; i < ctx->n_backends && !eb; i++) {
		loaded_backend *c = &ctx->backends[i];
		if (BE_HOOK(c->be, egress_gc) && probe_backend(ctx, c, NULL))
			eb = c;
	}
	if (!eb)
		return 0;
	/* first the spares: each sits on a proxy's network, which keeps that proxy */
	int spares = 0;
	spare_gc(ctx, eb, &spares);
	*removed += spares;
	long idle = GC_EGRESS_IDLE_S;
	const char *v = secure_getenv("BRIG_EGRESS_IDLE_SECONDS");
	if (v && !parse_long(v, 0, 86400 * 365, &idle))
		idle = GC_EGRESS_IDLE_S;
	int proxies = 0;
	r = eb->be->egress_gc((int)idle, &proxies, err);
	*removed += proxies;
	if (r == 0)
		egress_config_gc(eb, idle);
	return r;
}
