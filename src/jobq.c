/* jobq.c - the job queue and its workers (see jobq.h).
 *
 * One mutex guards the queue and the worker slots.  A worker takes the first job that is due,
 * runs it without the lock, and otherwise waits until the earliest "not before" or the end of
 * its idle time.  A worker that exits marks its slot DONE under the lock, after its last use of
 * the queue; the next start in that slot, or jobq_stop, joins it.
 */
#include "config.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif
#include <pthread.h>
#include <stdio.h>

#include "jobq.h"
#include "util.h"

enum slot_state {
	SLOT_FREE, /* no thread */
	SLOT_LIVE, /* running */
	SLOT_DONE  /* exited, past its last use of the lock: to be joined */
};

typedef struct slot {
	jobq *q;
	pthread_t thread;
	enum slot_state state;
} slot;

struct jobq {
	jobq_config cfg; /* cfg.name is not kept: name is the queue's own copy */
	char name[16];
	pthread_mutex_t lock;
	pthread_cond_t work; /* on CLOCK_MONOTONIC (now_ms) */
	jobq_job *head, *tail;
	int queued, running;
	int n_live, n_waiting;
	bool stopping;
	slot *slots;
};

jobq *jobq_new(const jobq_config *cfg)
{
	jobq *q = xcalloc(1, sizeof *q);
	q->cfg = *cfg;
	q->cfg.name = NULL;
	if (cfg->name)
		snprintf(q->name, sizeof q->name, "%s", cfg->name); /* a thread name's 15 bytes */
	if (q->cfg.max_workers < 1)
		q->cfg.max_workers = 1;
	q->slots = xcalloc((size_t)q->cfg.max_workers, sizeof *q->slots);
	pthread_mutex_init(&q->lock, NULL);
	cond_init_monotonic(&q->work);
	return q;
}

/* Locked: unlink and return the first job due at `now`; else NULL and *wake_at is the
 * earliest "not before" still ahead (0: none). */
static jobq_job *take_due(jobq *q, int64_t now, int64_t *wake_at)
{
	*wake_at = 0;
	for (jobq_job **pp = &q->head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next) {
		jobq_job *j = *pp;
		if (j->not_before > now) {
			if (!*wake_at || j->not_before < *wake_at)
				*wake_at = j->not_before;
			continue;
		}
		*pp = j->next;
		if (q->tail == j)
			q->tail = prev;
		j->next = NULL;
		q->queued--;
		return j;
	}
	return NULL;
}

static void *worker_main(void *arg)
{
	slot *s = arg;
	jobq *q = s->q;
	int64_t idle_since = 0;
	if (q->name[0])
		pthread_setname_np(pthread_self(), q->name); /* ps -L, gdb */
	pthread_mutex_lock(&q->lock);
	for (;;) {
		int64_t now = now_ms(), wake_at;
		jobq_job *j = take_due(q, now, &wake_at);
		if (j) {
			q->running++;
			pthread_mutex_unlock(&q->lock);
			j->run(j); /* the job is the caller's again */
			pthread_mutex_lock(&q->lock);
			q->running--;
			idle_since = 0;
			continue;
		}
		if (q->stopping && !q->head)
			break;
		if (!wake_at) { /* nothing later either: idle */
			if (!idle_since)
				idle_since = now;
			if (now - idle_since >= q->cfg.idle_ms)
				break;
			wake_at = idle_since + q->cfg.idle_ms;
		}
		q->n_waiting++;
		cond_wait_until(&q->work, &q->lock, wake_at);
		q->n_waiting--;
	}
	s->state = SLOT_DONE;
	bool last = --q->n_live == 0 && !q->stopping;
	pthread_mutex_unlock(&q->lock);
#ifdef __GLIBC__
	if (last && q->cfg.trim_when_idle)
		malloc_trim(0); /* the workers' freed heap and malloc caches go back */
#else
	(void)last;
#endif
	return NULL;
}

/* Locked: start a worker in a free slot, else in one whose worker exited (joined first: it
 * may still be trimming the heap, so a never-used slot comes first).  0 or an errno. */
static int spawn(jobq *q)
{
	slot *s = NULL;
	for (int i = 0; i < q->cfg.max_workers && !s; i++)
		if (q->slots[i].state == SLOT_FREE)
			s = &q->slots[i];
	for (int i = 0; i < q->cfg.max_workers && !s; i++)
		if (q->slots[i].state == SLOT_DONE)
			s = &q->slots[i];
	if (!s)
		return EAGAIN;
	if (s->state == SLOT_DONE) /* past its last use of the lock: no deadlock */
		pthread_join(s->thread, NULL);
	s->state = SLOT_FREE;
	s->q = q;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	if (q->cfg.stack)
		pthread_attr_setstacksize(&attr, q->cfg.stack);
	int e = pthread_create(&s->thread, &attr, worker_main, s);
	pthread_attr_destroy(&attr);
	if (e)
		return e;
	s->state = SLOT_LIVE;
	q->n_live++;
	return 0;
}

int jobq_submit(jobq *q, jobq_job *job)
{
	pthread_mutex_lock(&q->lock);
	if (q->stopping) {
		pthread_mutex_unlock(&q->lock);
		return ESHUTDOWN;
	}
	/* a waiting worker for every queued job and this one, or one more starts */
	if (q->queued + 1 > q->n_waiting && q->n_live < q->cfg.max_workers) {
		int e = spawn(q);
		if (e && q->n_live == 0) { /* else the live workers take it in turn */
			pthread_mutex_unlock(&q->lock);
			return e;
		}
	}
	job->next = NULL;
	if (q->tail)
		q->tail->next = job;
	else
		q->head = job;
	q->tail = job;
	q->queued++;
	/* every waiter: one waiting for a later job must see that this one is due sooner */
	pthread_cond_broadcast(&q->work);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

bool jobq_cancel(jobq *q, jobq_job *job)
{
	bool found = false;
	pthread_mutex_lock(&q->lock);
	for (jobq_job **pp = &q->head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp != job)
			continue;
		*pp = job->next;
		if (q->tail == job)
			q->tail = prev;
		job->next = NULL;
		q->queued--;
		found = true;
		break;
	}
	pthread_mutex_unlock(&q->lock);
	return found;
}

void jobq_counts(jobq *q, int *queued, int *running)
{
	pthread_mutex_lock(&q->lock);
	if (queued)
		*queued = q->queued;
	if (running)
		*running = q->running;
	pthread_mutex_unlock(&q->lock);
}

void jobq_stop(jobq *q)
{
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	jobq_job *dropped = q->head;
	q->head = q->tail = NULL;
	q->queued = 0;
	/* stopping: no worker starts any more, so these are all the threads there will be */
	pthread_t *threads = xcalloc((size_t)q->cfg.max_workers, sizeof *threads);
	int n = 0;
	for (int i = 0; i < q->cfg.max_workers; i++) {
		if (q->slots[i].state != SLOT_FREE)
			threads[n++] = q->slots[i].thread;
		q->slots[i].state = SLOT_FREE;
	}
	pthread_cond_broadcast(&q->work);
	pthread_mutex_unlock(&q->lock);
	for (jobq_job *j = dropped, *next; j; j = next) {
		next = j->next;
		j->next = NULL;
		if (j->drop)
			j->drop(j);
	}
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	free(threads);
}

void jobq_free(jobq *q)
{
	if (!q)
		return;
	pthread_cond_destroy(&q->work);
	pthread_mutex_destroy(&q->lock);
	free(q->slots);
	free(q);
}
