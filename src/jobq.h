/* jobq.h - a job queue and the worker threads that run its jobs.
 *
 * One implementation serves the MCP calls (run_code, sandbox_status) and the warm pool (its
 * refills and removals).  Jobs run first in, first out; a job may say "not before" a time (the
 * pool's backoff), and waits in the queue until then.  Worker threads start on demand, up to
 * max_workers, and exit after idle_ms with nothing due (an idle server holds no thread).  A
 * queued job can be cancelled; jobq_stop drops the queued ones (their drop hook), lets the
 * running ones finish and joins every worker.
 *
 * A job is the caller's memory, usually the first member of a bigger struct.  The queue never
 * frees one: from the moment run or drop is called, the job is the caller's again.  run and
 * drop are called without the queue's lock held; they may submit jobs.
 */
#ifndef BRIG_JOBQ_H
#define BRIG_JOBQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct jobq jobq;
typedef struct jobq_job jobq_job;

struct jobq_job {
	void (*run)(jobq_job *job);
	void (*drop)(jobq_job *job); /* jobq_stop dropped it unrun (NULL: nothing to do) */
	int64_t not_before;          /* now_ms() time it may start; 0: at once */
	jobq_job *next;              /* the queue's */
};

typedef struct jobq_config {
	const char *name; /* the workers' thread name (copied; 15 bytes are kept) */
	int max_workers;  /* >= 1 */
	size_t stack;     /* a worker's stack size; 0: the default */
	int idle_ms;      /* a worker with nothing due for this long exits */
	/* the last worker to exit gives the workers' freed heap back (malloc_trim) */
	bool trim_when_idle;
} jobq_config;

jobq *jobq_new(const jobq_config *cfg);

/* Queue a job (job->run and job->not_before set).  0; ESHUTDOWN once jobq_stop has begun;
 * else the errno of pthread_create when no worker is live and none could start (the job is
 * not queued then). */
int jobq_submit(jobq *q, jobq_job *job);

/* Take a job out of the queue before it starts: true when it was queued (neither run nor
 * drop will be called); false when it is running or done. */
bool jobq_cancel(jobq *q, jobq_job *job);

/* Queued jobs and jobs running now. */
void jobq_counts(jobq *q, int *queued, int *running);

/* Refuse new jobs, drop the queued ones (drop is called for each), wait for the running ones
 * and join every worker.  The queue can be freed after. */
void jobq_stop(jobq *q);

void jobq_free(jobq *q);

#endif
