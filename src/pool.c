/* pool.c - the warm pool (see pool.h for the rules).
 *
 * One mutex guards everything; no engine call is made while holding it.  The work is done by
 * "steps", jobs on the pool's job queue (jobq.h, the one the MCP calls use too), at most
 * POOL_WORKERS at once.  A step loops: remove a used or drained container if there is one (also
 * while stopping), else start one for the language with the fewest idle + starting containers
 * that is below warm_pool, has no failure backoff running and fits the memory budget; with
 * nothing to do it ends, after queueing a step "not before" the earliest backoff end.  A take, a
 * release, the end of a run or a drain queues a step when none is queued; the queue's workers
 * exit when idle, so an idle pool holds no thread.
 *
 * Starting a container costs the engine (and the CPUs) about what a cold run costs, so refills
 * never compete with runs for more than the operator allows: runs + starts stay within
 * max_concurrent_runs (under saturation the pool simply stops refilling and costs nothing), and
 * while runs are in flight only a language with no idle container is refilled (a start next
 * to a warm run slows it; the others are refilled once the runs are done).  The backend is chosen
 * once, by the first step (dispatch_select probes, which must not block brig_ctx_new).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "images.h"
#include "jobq.h"
#include "loader.h"
#include "pool.h"
#include "uids.h"
#include "workspace.h"

#define BACKOFF_MIN_MS   1000
#define BACKOFF_MAX_MS   60000
#define WORKER_STACK     (256 * 1024) /* engine calls and JSON: well under 64 KiB used */
#define STOP_HELPERS     12           /* extra steps removing containers at the stop */
#define POOL_ERROR_BYTES 300
/* A worker with nothing to do for this long exits: an idle pool holds no thread, and the
 * exiting threads' malloc caches go back to the heap, which the last one trims (for an idle
 * `brig mcp` RSS).  A new one costs ~50 us next to a container start's ~100s of ms. */
#define WORKER_IDLE_MS 500
/* How often the pool asks the dispatcher which backend runs get (cheap: its answers are
 * cached), and how soon again when there was none. */
#define POOL_CHOOSE_EVERY_MS 5000
#define POOL_CHOOSE_RETRY_MS 2000
/* An idle box for a workspace is dropped after this long, or after half the workspace's idle
 * TTL when that is shorter: it never holds the workspace's RAM (its tmpfs) for long unused. */
#define POOL_WS_KEEP_MS 60000

typedef struct pool_step pool_step;

struct pool_entry {
	pool_entry *next;
	const loaded_backend *lb;
	brig_spec *spec; /* what it was started with: its name and its box */
	void *handle;    /* the backend's */
	uid_lease lease; /* its uid (user "auto"; none in a workspace: the workspace's) */
	int lang;
};

/* A workspace a call ended in: the pool keeps (at most) one box for it, of the language of its
 * last call, the box a cold run in it would get (spec_build with the workspace). */
typedef struct pool_ws {
	struct pool_ws *next;
	char id[SPEC_WS_ID_HEX + 1];
	int lang;        /* of its last call: the box to have */
	long size_mb;    /* its tmpfs, RAM: counted in the budget while a box is pooled for it */
	int64_t keep_ms; /* how long an idle box (or the wish for one) is kept */
	int64_t drop_at;
	pool_entry *box; /* the idle box, or NULL: wanted (or starting) */
	bool starting;   /* a step starts its box, holding the workspace's lock */
	bool again;      /* another call ended in it while the box was starting */
	bool gone;       /* dropped while starting: that step frees it */
} pool_ws;

enum pool_state { POOL_STARTING, POOL_ON, POOL_WAITING, POOL_DISABLED };

struct brig_pool {
	brig_ctx *ctx;
	int target;  /* warm_pool */
	int max_ops; /* max_concurrent_runs: runs + starts at once */
	long memory_mb, budget_mb;
	pthread_mutex_t lock;
	pthread_cond_t changed; /* pool_wait_idle, the backend choice and pool_free wait here */
	enum pool_state state;
	bool choosing;
	const loaded_backend *lb;
	int64_t choose_at; /* when to ask the dispatcher again (follow_backend) */
	char *reason;      /* why POOL_WAITING or POOL_DISABLED */
	pool_entry *idle[BRIG_LANG_COUNT];
	int n_idle[BRIG_LANG_COUNT], n_starting[BRIG_LANG_COUNT];
	int64_t retry_at[BRIG_LANG_COUNT];
	int backoff_ms[BRIG_LANG_COUNT];
	char *error[BRIG_LANG_COUNT]; /* the last failed start, until one succeeds */
	pool_ws *ws;                  /* the workspaces with a box (idle, starting or wanted) */
	int ws_idle, ws_starting;
	long ws_mb; /* size_mb of the workspaces with an idle or starting box */
	pool_entry *removals;
	int n_removing;
	int running;
	bool stopping;
	long taken, started, drained;
	jobq *q;
	int steps;        /* queued or running */
	int steps_queued; /* of them, queued to start at once */
	pool_step *timer; /* the step queued "not before" a backoff end, or NULL */
	int64_t timer_at;
};

/* A step: a job of the pool's queue. */
struct pool_step {
	jobq_job job; /* first: the queue hands back this */
	brig_pool *p;
};

static void entry_free(pool_entry *e)
{
	spec_free(e->spec);
	uid_lease_release(&e->lease); /* the box is gone: its uid is free */
	free(e);
}

/* ---- under the lock ------------------------------------------------------------------- */

static int total(const int *v)
{
	int n = 0;
	for (int l = 0; l < BRIG_LANG_COUNT; l++)
		n += v[l];
	return n;
}

/* One more container fits: (idle + starting + running + 1) * memory_mb, plus the size of every
 * workspace with a pooled box (tmpfs is RAM) and extra_mb (the new box's workspace) <= budget. */
static bool budget_allows(const brig_pool *p, long extra_mb)
{
	long n = total(p->n_idle) + total(p->n_starting) + p->ws_idle + p->ws_starting +
		 p->running + 1;
	return n * p->memory_mb + p->ws_mb + extra_mb <= p->budget_mb;
}

/* Runs + starts stay within max_concurrent_runs. */
static bool ops_allow(const brig_pool *p)
{
	return p->running + total(p->n_starting) + p->ws_starting < p->max_ops;
}

/* The language to start a container for now, or -1; *wake_at: the earliest backoff end. */
static int pick_language(const brig_pool *p, int64_t now, int64_t *wake_at)
{
	int best = -1, best_have = 0;
	if (!ops_allow(p))
		return -1;
	for (int l = 0; l < BRIG_LANG_COUNT; l++) {
		int have = p->n_idle[l] + p->n_starting[l];
		if (have >= p->target || (p->running > 0 && p->n_idle[l] > 0))
			continue;
		if (now < p->retry_at[l]) {
			if (!*wake_at || p->retry_at[l] < *wake_at)
				*wake_at = p->retry_at[l];
			continue;
		}
		if (best < 0 || have < best_have)
			best = l, best_have = have;
	}
	return best >= 0 && budget_allows(p, 0) ? best : -1;
}

static void step_run(jobq_job *job);
static void step_drop(jobq_job *job);

static void cancel_timer(brig_pool *p);

/* Queue a step to start at once (at = 0) or not before `at`.  Locked. */
static void submit_step(brig_pool *p, int64_t at)
{
	if (at && p->stopping)
		return; /* nothing waits for a back-off once the pool stops */
	if (at)
		cancel_timer(p); /* one queued timer at most: the earliest wake-up */
	pool_step *st = xcalloc(1, sizeof *st);
	st->p = p;
	st->job.run = step_run;
	st->job.drop = step_drop;
	st->job.not_before = at;
	int e = jobq_submit(p->q, &st->job);
	if (e) {
		core_debug("pool: cannot queue a step: %s", strerror(e));
		free(st);
		return;
	}
	p->steps++;
	if (at) {
		p->timer = st;
		p->timer_at = at;
	} else {
		p->steps_queued++;
	}
}

/* Take the queued timer step out (a running one ends by itself).  Locked. */
static void cancel_timer(brig_pool *p)
{
	if (p->timer && jobq_cancel(p->q, &p->timer->job)) {
		free(p->timer);
		p->steps--;
	}
	p->timer = NULL;
	p->timer_at = 0;
}

/* There is work (a removal, a refill, a changed budget): a queued step will see it; queue one
 * unless one is queued already or POOL_WORKERS are out.  Locked. */
static void wake_workers(brig_pool *p)
{
	if (p->steps_queued == 0 && p->steps < POOL_WORKERS && !p->stopping)
		submit_step(p, 0);
}

static void push_removal(brig_pool *p, pool_entry *e)
{
	e->next = p->removals;
	p->removals = e;
	wake_workers(p);
}

/* Every idle container of `lang` goes to removal. */
static void drain(brig_pool *p, int lang)
{
	while (p->idle[lang]) {
		pool_entry *e = p->idle[lang];
		p->idle[lang] = e->next;
		p->n_idle[lang]--;
		p->drained++;
		push_removal(p, e);
	}
}

/* ---- workspace boxes (locked) ---- */

static pool_ws *find_ws(const brig_pool *p, const char *id)
{
	pool_ws *w = p->ws;
	while (w && strcmp(w->id, id) != 0)
		w = w->next;
	return w;
}

static void unlink_ws(brig_pool *p, pool_ws *w)
{
	pool_ws **pp = &p->ws;
	while (*pp && *pp != w)
		pp = &(*pp)->next;
	if (*pp)
		*pp = w->next;
	w->next = NULL;
}

/* Its idle box goes to removal. */
static void drop_ws_box(brig_pool *p, pool_ws *w)
{
	if (!w->box)
		return;
	push_removal(p, w->box);
	w->box = NULL;
	p->ws_idle--;
	p->ws_mb -= w->size_mb;
	p->drained++;
}

/* The pool keeps nothing for w any more (a box starting for it is removed when started). */
static void forget_ws(brig_pool *p, pool_ws *w)
{
	drop_ws_box(p, w);
	unlink_ws(p, w);
	if (w->starting)
		w->gone = true;
	else
		free(w);
}

static void drain_ws(brig_pool *p)
{
	while (p->ws)
		forget_ws(p, p->ws);
}

/* Idle boxes (and wishes) past their keep time are dropped; *wake_at: the earliest next. */
static void expire_ws(brig_pool *p, int64_t now, int64_t *wake_at)
{
	for (pool_ws *w = p->ws, *next; w; w = next) {
		next = w->next;
		if (w->starting)
			continue;
		if (w->drop_at <= now) {
			core_debug("pool: workspace %s: idle box dropped after %lld ms", w->id,
				   (long long)w->keep_ms);
			forget_ws(p, w);
		} else if (!*wake_at || w->drop_at < *wake_at) {
			*wake_at = w->drop_at;
		}
	}
}

/* The workspace to start a box for now, or NULL. */
static pool_ws *pick_ws(const brig_pool *p)
{
	if (!ops_allow(p))
		return NULL;
	for (pool_ws *w = p->ws; w; w = w->next)
		if (!w->box && !w->starting && budget_allows(p, w->size_mb))
			return w;
	return NULL;
}

static void append_idle(brig_pool *p, int lang, pool_entry *e)
{
	pool_entry **pp = &p->idle[lang];
	while (*pp)
		pp = &(*pp)->next;
	e->next = NULL;
	*pp = e; /* oldest first: the next take gets the container that waited longest */
	p->n_idle[lang]++;
	pthread_cond_broadcast(&p->changed);
}

static void set_error(brig_pool *p, int lang, const char *msg)
{
	free(p->error[lang]);
	p->error[lang] = msg ? xstrndup(msg, strnlen(msg, POOL_ERROR_BYTES)) : NULL;
}

/* ---- steps ------------------------------------------------------------------------------- */

/* Follow the dispatcher's choice: the backend a run would get now (the probes expire, so it
 * can change: dockerd came up, gVisor passed its smoke test later).  Idle containers of another
 * backend are drained.  Locked on entry and exit; false when no backend can fill the pool now
 * (p->reason says why; asked again after pool_retry_at). */
static bool follow_backend(brig_pool *p)
{
	int64_t now = now_ms();
	if (p->choosing || now < p->choose_at)
		return p->lb != NULL && p->state == POOL_ON;
	p->choosing = true;
	pthread_mutex_unlock(&p->lock);
	loaded_backend *lb = NULL;
	brig_error *e = NULL;
	char *why = NULL;
	if (dispatch_select(p->ctx, &lb, NULL, &e) < 0)
		why = xasprintf("no backend: %s", e && e->message ? e->message : "?");
	else if (!BE_HOOK(lb->be, prepare) || !BE_HOOK(lb->be, run_prepared) ||
		 !BE_HOOK(lb->be, discard))
		why = xasprintf("backend %s cannot prepare containers", lb->be->name);
	brig_error_free(e);
	pthread_mutex_lock(&p->lock);
	p->choosing = false;
	/* asked again at the next refill after a short while: the dispatcher's answer is cached
	 * anyway, and a negative one expires by itself */
	p->choose_at = now_ms() + (why ? POOL_CHOOSE_RETRY_MS : POOL_CHOOSE_EVERY_MS);
	const loaded_backend *chosen = why ? NULL : lb;
	if (chosen != p->lb) {
		for (int l = 0; l < BRIG_LANG_COUNT; l++)
			drain(p, l);
		drain_ws(p);
		core_debug("pool: %s%s", why ? "waiting: " : "backend ",
			   why ? why : chosen->be->name);
	}
	p->lb = chosen;
	free(p->reason);
	p->reason = why;
	p->state = why ? POOL_WAITING : POOL_ON;
	pthread_cond_broadcast(&p->changed);
	return p->state == POOL_ON;
}

/* Start one container for `lang` (no lock held): the spec a run of `lang` would get - in the
 * workspace ws (held, locked) when not NULL, as prepare_run() builds it for a run there. */
static pool_entry *start_one(brig_pool *p, int lang, const ws_handle *ws, brig_error **err)
{
	const loaded_backend *lb = p->lb;
	brig_request req = { .language = (brig_language)lang, .code = "", .code_len = 0 };
	brig_spec *spec = NULL;
	uid_lease lease = { .fd = -1 }; /* the box's own uid (user "auto"), held while it lives */
	if (!ws && uid_lease_take(p->ctx->policy, &lease, err) < 0)
		return NULL;
	cleanup_free char *user = ws ? xstrdup(ws->user) : uid_lease_user(&lease);
	spec_target t = dispatch_target(p->ctx, lb);
	t.user = user;
	t.workspace = ws ? ws->id : NULL;
	/* the ID the tag names now: a run compares it (spec_same_box), so a rebuilt image drains
	 * the boxes of the old one */
	box_images im;
	image_targets(p->ctx, lb, (brig_language)lang, &im, &t);
	int r = spec_build(p->ctx->policy, &req, BRIG_TIMEOUT_CLAMP, &t, &spec, NULL, err);
	box_images_clear(&im);
	cleanup_free char *refused =
		r == 0 ? dispatch_refusal(lb, spec, true, "honour this box") : NULL;
	if (refused)
		r = brig_fail(err, BRIG_E_UNAVAILABLE, 0, "%s", refused);
	void *handle = NULL;
	int64_t t0 = now_ms();
	/* a box with egress joins its proxy's network: the proxy first, as for a run */
	if (r == 0 && spec->net_holder) { /* it waits as long as its box, removed with it */
		free(spec->net_holder->argv[1]);
		spec->net_holder->argv[1] = xstrdup("infinity");
	}
	if (r == 0 && spec->egress)
		r = run_egress_up(lb, spec->egress, err);
	if (r == 0)
		r = run_holder_up(lb, spec, err);
	if (r < 0 || lb->be->prepare(spec, &handle, err) < 0) {
		if (spec) /* idempotent; a create the engine made before its answer failed */
			run_holder_down(lb, spec);
		spec_free(spec);
		uid_lease_release(&lease);
		return NULL;
	}
	core_debug("pool: %s %s started in %lld ms", brig_language_name((brig_language)lang),
		   spec->name, (long long)(now_ms() - t0));
	pool_entry *e = xcalloc(1, sizeof *e);
	e->lb = lb;
	e->spec = spec;
	e->handle = handle;
	e->lease = lease;
	e->lang = lang;
	return e;
}

/* Start a container for `lang` and file it.  Locked on entry and exit. */
static void refill(brig_pool *p, int lang)
{
	p->n_starting[lang]++;
	wake_workers(p); /* another worker may start one more meanwhile */
	pthread_mutex_unlock(&p->lock);
	brig_error *err = NULL;
	pool_entry *e = start_one(p, lang, NULL, &err);
	pthread_mutex_lock(&p->lock);
	p->n_starting[lang]--;
	if (e) {
		p->started++;
		p->backoff_ms[lang] = 0;
		p->retry_at[lang] = 0;
		set_error(p, lang, NULL);
		if (p->stopping)
			push_removal(p, e);
		else
			append_idle(p, lang, e);
	} else {
		int b = p->backoff_ms[lang] ? p->backoff_ms[lang] * 2 : BACKOFF_MIN_MS;
		p->backoff_ms[lang] = b > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : b;
		p->retry_at[lang] = now_ms() + p->backoff_ms[lang];
		set_error(p, lang, err && err->message ? err->message : "unknown error");
		core_debug("pool: %s: start failed (retry in %d ms): %s",
			   brig_language_name((brig_language)lang), p->backoff_ms[lang],
			   p->error[lang]);
		pthread_cond_broadcast(&p->changed);
	}
	brig_error_free(err);
}

/* Start the box of workspace w.  It holds the workspace's lock while it starts (not recording
 * a use): no call runs in the workspace meanwhile, and its end (`brig workspace rm`, expiry, in
 * any brig process) cannot come between the check that it lives and the box mounting its volume
 * (the engine would make a new, empty volume of that name).  A call that waits for the lock
 * finds the box idle.  Busy (a call runs in it: its end asks again) or ended: nothing started.
 * Locked on entry and exit. */
static void refill_ws(brig_pool *p, pool_ws *w)
{
	w->starting = true;
	w->again = false;
	p->ws_starting++;
	p->ws_mb += w->size_mb;
	wake_workers(p);
	char id[SPEC_WS_ID_HEX + 1];
	memcpy(id, w->id, sizeof id);
	int lang = w->lang;
	const loaded_backend *lb = p->lb;
	pthread_mutex_unlock(&p->lock);
	brig_error *err = NULL;
	ws_handle h = WS_HANDLE_INIT;
	pool_entry *e = NULL;
	if (ws_acquire(p->ctx, lb, id, 0, &h, &err) == 0)
		e = start_one(p, lang, &h, &err);
	pthread_mutex_lock(&p->lock);
	p->ws_starting--;
	w->starting = false;
	if (e && !w->gone && !p->stopping && e->lb == p->lb && w->lang == lang) {
		p->started++;
		w->box = e;
		p->ws_idle++;
		w->drop_at = now_ms() + w->keep_ms;
		if (!p->timer || w->drop_at < p->timer_at)
			submit_step(p, w->drop_at);
		pthread_cond_broadcast(&p->changed);
	} else {
		p->ws_mb -= w->size_mb;
		if (e)
			push_removal(p, e);
		if (!e)
			core_debug("pool: workspace %s: no box started: %s", id,
				   err && err->message ? err->message : "?");
		if (w->gone)
			free(w);
		else if (!w->again && w->lang == lang)
			forget_ws(p, w); /* the next call's end asks again */
	}
	ws_unlock(&h); /* the box is filed: a call waiting for the workspace takes it */
	brig_error_free(err);
}

/* Remove one container (no lock held while the engine works).  Locked on entry and exit. */
static void remove_one(brig_pool *p)
{
	pool_entry *e = p->removals;
	p->removals = e->next;
	p->n_removing++;
	if (p->removals)
		wake_workers(p); /* the engine removes in parallel well */
	pthread_mutex_unlock(&p->lock);
	e->lb->be->discard(e->handle);
	run_holder_down(e->lb, e->spec);
	entry_free(e);
	pthread_mutex_lock(&p->lock);
	p->n_removing--;
	pthread_cond_broadcast(&p->changed);
	wake_workers(p); /* the budget may allow a start now */
}

/* A step ended (locked): pool_free waits for the last. */
static void step_done(brig_pool *p)
{
	p->steps--;
	pthread_cond_broadcast(&p->changed);
}

/* A step leaves the queue, to run or dropped: its pool, locked; the step is freed. */
static brig_pool *step_dequeued(jobq_job *job)
{
	pool_step *st = (pool_step *)job;
	brig_pool *p = st->p;
	pthread_mutex_lock(&p->lock);
	if (!job->not_before)
		p->steps_queued--;
	else if (p->timer == st)
		p->timer = NULL, p->timer_at = 0;
	free(st);
	return p;
}

static void step_run(jobq_job *job)
{
	brig_pool *p = step_dequeued(job);
	for (;;) {
		if (p->removals) {
			remove_one(p);
			continue;
		}
		if (p->stopping || p->state == POOL_DISABLED)
			break;
		int64_t now = now_ms(), wake_at = 0;
		int lang = -1;
		pool_ws *w = NULL;
		bool on = follow_backend(p); /* may unlock to probe: the stop may come meanwhile */
		if (p->stopping)
			continue; /* the removals, then out */
		if (on)
			lang = pick_language(p, now, &wake_at);
		else if (!p->choosing)
			wake_at = p->choose_at; /* no backend now: ask again then */
		expire_ws(p, now, &wake_at);
		if (p->removals)
			continue;
		if (lang >= 0) {
			refill(p, lang);
			continue;
		}
		if (on && (w = pick_ws(p)) != NULL) {
			refill_ws(p, w);
			continue;
		}
		/* nothing to do now: again when the earliest backoff ends */
		if (wake_at && (!p->timer || wake_at < p->timer_at))
			submit_step(p, wake_at);
		break;
	}
	step_done(p);
	pthread_mutex_unlock(&p->lock);
}

/* The queue stopped before a step ran (pool_free cancels the timer itself; nothing else is
 * queued then). */
static void step_drop(jobq_job *job)
{
	brig_pool *p = step_dequeued(job);
	step_done(p);
	pthread_mutex_unlock(&p->lock);
}

/* ---- the API ------------------------------------------------------------------------------ */

brig_pool *pool_new(brig_ctx *ctx)
{
	const brig_policy *pol = ctx->policy;
	if (pol->warm_pool <= 0)
		return NULL;
	brig_pool *p = xcalloc(1, sizeof *p);
	p->ctx = ctx;
	p->target = pol->warm_pool;
	p->max_ops = pol->max_concurrent_runs > 0 ? pol->max_concurrent_runs : 1;
	p->memory_mb = pol->memory_mb;
	p->budget_mb = pol->memory_budget_mb;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->changed, NULL);
	/* the steps, and at the stop the removals all at once */
	jobq_config qc = { .name = "brig-pool",
			   .max_workers = POOL_WORKERS + STOP_HELPERS,
			   .stack = WORKER_STACK,
			   .idle_ms = WORKER_IDLE_MS,
			   .trim_when_idle = true };
	p->q = jobq_new(&qc);
	int n = p->target * BRIG_LANG_COUNT;
	if (n > POOL_WORKERS)
		n = POOL_WORKERS;
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < n; i++)
		submit_step(p, 0); /* the first fill, in parallel */
	if (p->steps == 0) {
		p->state = POOL_DISABLED;
		p->reason = xstrdup("cannot start a worker thread");
	}
	pthread_mutex_unlock(&p->lock);
	return p;
}

void pool_free(brig_pool *p)
{
	if (!p)
		return;
	int64_t t0 = now_ms();
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	for (int l = 0; l < BRIG_LANG_COUNT; l++)
		drain(p, l);
	drain_ws(p);
	cancel_timer(p); /* the step waiting for a backoff to end has nothing left to do */
	/* The engine removes containers in parallel well (a runsc sandbox takes ~1 s to stop):
	 * every idle container at once, not steps-at-a-time, keeps the shutdown prompt.  No
	 * step starts a container any more; the running ones remove what they started. */
	int pending = 0;
	for (const pool_entry *e = p->removals; e; e = e->next)
		pending++;
	for (int i = p->steps; i < pending && i < POOL_WORKERS + STOP_HELPERS; i++)
		submit_step(p, 0);
	pthread_cond_broadcast(&p->changed);
	while (p->steps > 0)
		pthread_cond_wait(&p->changed, &p->lock);
	pthread_mutex_unlock(&p->lock);
	jobq_stop(p->q);
	jobq_free(p->q);
	/* only without any worker can something be left: remove it here */
	while (p->removals) {
		pool_entry *e = p->removals;
		p->removals = e->next;
		e->lb->be->discard(e->handle);
		run_holder_down(e->lb, e->spec);
		entry_free(e);
	}
	core_debug("pool: stopped in %lld ms (%ld started, %ld taken, %ld drained)",
		   (long long)(now_ms() - t0), p->started, p->taken, p->drained);
	for (int l = 0; l < BRIG_LANG_COUNT; l++)
		free(p->error[l]);
	free(p->reason);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

pool_entry *pool_take(brig_pool *p, const loaded_backend *lb, brig_language lang,
		      const brig_spec *spec)
{
	if (!p || (unsigned)lang >= BRIG_LANG_COUNT)
		return NULL;
	pthread_mutex_lock(&p->lock);
	pool_entry *e = p->idle[lang];
	if (p->lb != lb) { /* the dispatcher chose another backend: follow it now */
		p->choose_at = 0;
		wake_workers(p);
		pthread_mutex_unlock(&p->lock);
		return NULL;
	}
	if (spec->workspace) { /* its workspace's box, never a plain one */
		pool_ws *w = find_ws(p, spec->workspace);
		e = w && w->box && w->box->lang == (int)lang && w->box->lb == lb ? w->box : NULL;
		if (e && !spec_same_box(e->spec, spec)) {
			core_debug("pool: workspace %s: the box changed: dropping its idle one",
				   w->id);
			drop_ws_box(p, w);
			e = NULL;
		} else if (e) {
			w->box = NULL;
			p->ws_idle--;
			p->ws_mb -= w->size_mb;
			p->taken++;
			forget_ws(p, w); /* the call's end asks for the next one */
			wake_workers(p); /* the budget may allow a start now */
		}
		pthread_mutex_unlock(&p->lock);
		return e;
	}
	if (e && e->lb == lb && !spec_same_box(e->spec, spec)) {
		core_debug("pool: %s: the box changed (policy files?): draining %d idle",
			   brig_language_name(lang), p->n_idle[lang]);
		drain(p, (int)lang);
		e = NULL;
	} else if (e && e->lb == lb) {
		p->idle[lang] = e->next;
		p->n_idle[lang]--;
		p->taken++;
		e->next = NULL;
		wake_workers(p); /* refill */
	} else {
		e = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	return e;
}

brig_spec *pool_entry_spec(pool_entry *e)
{
	return e->spec;
}

void *pool_entry_handle(const pool_entry *e)
{
	return e->handle;
}

void pool_release(brig_pool *p, pool_entry *e)
{
	pthread_mutex_lock(&p->lock);
	push_removal(p, e);
	pthread_mutex_unlock(&p->lock);
}

void pool_want_workspace(brig_pool *p, const loaded_backend *lb, brig_language lang, const char *id,
			 long size_mb, long idle_ttl_s)
{
	if (!p || (unsigned)lang >= BRIG_LANG_COUNT || !spec_ws_id_valid(id))
		return;
	pthread_mutex_lock(&p->lock);
	if (p->stopping || p->lb != lb || p->state != POOL_ON) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	pool_ws *w = find_ws(p, id);
	if (!w) {
		w = xcalloc(1, sizeof *w);
		memcpy(w->id, id, sizeof w->id);
		w->size_mb = size_mb; /* fixed for the workspace's life */
		w->next = p->ws;
		p->ws = w;
	}
	if (w->box && w->box->lang != (int)lang)
		drop_ws_box(p, w); /* one box per workspace: of its last call's language */
	w->lang = (int)lang;
	w->keep_ms =
		idle_ttl_s * 1000 / 2 < POOL_WS_KEEP_MS ? idle_ttl_s * 1000 / 2 : POOL_WS_KEEP_MS;
	w->drop_at = now_ms() + w->keep_ms;
	if (w->starting)
		w->again = true;
	wake_workers(p);
	pthread_mutex_unlock(&p->lock);
}

void pool_drop_workspace(brig_pool *p, const char *id)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	pool_ws *w = find_ws(p, id);
	if (w)
		forget_ws(p, w);
	pthread_mutex_unlock(&p->lock);
}

void pool_run_begin(brig_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->running++;
	pthread_mutex_unlock(&p->lock);
}

void pool_run_end(brig_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->running--;
	wake_workers(p); /* the budget may allow a start now */
	pthread_mutex_unlock(&p->lock);
}

static json_object *languages_json(const brig_pool *p)
{
	json_object *o = json_object_new_object();
	for (int l = 0; l < BRIG_LANG_COUNT; l++) {
		json_object *x = json_object_new_object();
		json_object_object_add(x, "idle", json_object_new_int(p ? p->n_idle[l] : 0));
		json_object_object_add(x, "starting",
				       json_object_new_int(p ? p->n_starting[l] : 0));
		json_object_object_add(
			x, "error", p && p->error[l] ? json_object_new_string(p->error[l]) : NULL);
		json_object_object_add(o, brig_language_name((brig_language)l), x);
	}
	return o;
}

json_object *pool_status_json(brig_pool *p, const brig_policy *policy)
{
	static const char *const states[] = { [POOL_STARTING] = "starting",
					      [POOL_ON] = "on",
					      [POOL_WAITING] = "waiting",
					      [POOL_DISABLED] = "disabled" };
	json_object *o = json_object_new_object();
	json_object_object_add(o, "warm_pool", json_object_new_int(policy->warm_pool));
	json_object_object_add(o, "memory_budget_mb",
			       json_object_new_int(policy->memory_budget_mb));
	if (p)
		pthread_mutex_lock(&p->lock);
	json_object_object_add(o, "state", json_object_new_string(p ? states[p->state] : "off"));
	json_object_object_add(o, "backend",
			       p && p->lb ? json_object_new_string(p->lb->be->name) : NULL);
	json_object_object_add(o, "reason",
			       p && p->reason ? json_object_new_string(p->reason) : NULL);
	json_object_object_add(o, "running", json_object_new_int(p ? p->running : 0));
	int removing = p ? p->n_removing : 0;
	for (const pool_entry *e = p ? p->removals : NULL; e; e = e->next)
		removing++;
	json_object_object_add(o, "removing", json_object_new_int(removing));
	json_object_object_add(o, "languages", languages_json(p));
	json_object *ws = json_object_new_object();
	int wanted = 0;
	for (const pool_ws *w = p ? p->ws : NULL; w; w = w->next)
		wanted += !w->box && !w->starting;
	json_object_object_add(ws, "idle", json_object_new_int(p ? p->ws_idle : 0));
	json_object_object_add(ws, "starting", json_object_new_int(p ? p->ws_starting : 0));
	json_object_object_add(ws, "wanted", json_object_new_int(wanted));
	json_object_object_add(ws, "memory_mb", json_object_new_int64(p ? p->ws_mb : 0));
	json_object_object_add(o, "workspaces", ws);
	json_object_object_add(o, "taken", json_object_new_int64(p ? p->taken : 0));
	json_object_object_add(o, "started", json_object_new_int64(p ? p->started : 0));
	json_object_object_add(o, "drained", json_object_new_int64(p ? p->drained : 0));
	if (p)
		pthread_mutex_unlock(&p->lock);
	return o;
}

bool pool_wait_idle(brig_pool *p, brig_language lang, int n, int timeout_ms)
{
	if (!p || (unsigned)lang >= BRIG_LANG_COUNT)
		return false;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->lock);
	int r = 0;
	while (p->n_idle[lang] < n && p->state != POOL_DISABLED && !p->stopping && r == 0)
		r = pthread_cond_timedwait(&p->changed, &p->lock, &ts);
	bool ok = p->n_idle[lang] >= n;
	pthread_mutex_unlock(&p->lock);
	return ok;
}
