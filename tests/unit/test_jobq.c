/* test_jobq.c - the job queue the MCP calls and the warm pool share: order, the worker
 * limit, "not before", cancel, idle exit and stop. */
#include "config.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "jobq.h"
#include "util.h"

typedef struct tjob {
	jobq_job job; /* first */
	int id;
	int64_t ran_at;
	int sleep_ms;
	bool ran, dropped;
} tjob;

static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static int order[64], n_order;
static atomic_int now_running, max_running;

static void tjob_run(jobq_job *j)
{
	tjob *t = (tjob *)j;
	int r = atomic_fetch_add(&now_running, 1) + 1;
	int m = atomic_load(&max_running);
	while (r > m && !atomic_compare_exchange_weak(&max_running, &m, r))
		;
	t->ran_at = now_ms();
	pthread_mutex_lock(&order_lock);
	order[n_order++] = t->id;
	pthread_mutex_unlock(&order_lock);
	if (t->sleep_ms)
		usleep((useconds_t)t->sleep_ms * 1000);
	atomic_fetch_sub(&now_running, 1);
	t->ran = true;
}

static void tjob_drop(jobq_job *j)
{
	((tjob *)j)->dropped = true;
}

static void reset(tjob *t, int n)
{
	memset(t, 0, sizeof *t * (size_t)n);
	for (int i = 0; i < n; i++) {
		t[i].id = i;
		t[i].job.run = tjob_run;
		t[i].job.drop = tjob_drop;
	}
	n_order = 0;
	atomic_store(&now_running, 0);
	atomic_store(&max_running, 0);
}

/* Threads of this process now (/proc/self/task). */
static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static bool wait_threads(int want, int ms)
{
	for (int64_t end = now_ms() + ms; now_ms() < end; usleep(10000))
		if (threads() == want)
			return true;
	return threads() == want;
}

static void test_fifo_with_one_worker(void)
{
	tjob t[8];
	reset(t, 8);
	jobq_config c = { .name = "t-fifo", .max_workers = 1, .idle_ms = 100 };
	jobq *q = jobq_new(&c);
	for (int i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(jobq_submit(q, &t[i].job), 0);
	for (int64_t end = now_ms() + 3000; !t[7].ran && now_ms() < end;)
		usleep(10000);
	jobq_stop(q);
	CU_ASSERT_EQUAL(n_order, 8);
	for (int i = 0; i < n_order; i++)
		CU_ASSERT(order[i] == i && t[i].ran && !t[i].dropped); /* first in, first out */
	jobq_free(q);
}

static void test_worker_limit(void)
{
	tjob t[9];
	reset(t, 9);
	for (int i = 0; i < 9; i++)
		t[i].sleep_ms = 60;
	jobq_config c = { .name = "t-limit", .max_workers = 3, .idle_ms = 100 };
	jobq *q = jobq_new(&c);
	int before = threads();
	int64_t t0 = now_ms();
	for (int i = 0; i < 9; i++)
		CU_ASSERT_EQUAL(jobq_submit(q, &t[i].job), 0);
	CU_ASSERT(wait_threads(before, 3000)); /* done, then the workers exit when idle */
	int64_t took = now_ms() - t0;
	for (int i = 0; i < 9; i++)
		CU_ASSERT(t[i].ran);
	CU_ASSERT_EQUAL(atomic_load(&max_running), 3); /* never more, and used fully */
	CU_ASSERT(took >= 3 * 60);                     /* three rounds of three */
	jobq_stop(q);
	jobq_free(q);
}

static void test_not_before(void)
{
	tjob t[2];
	reset(t, 2);
	jobq_config c = { .name = "t-later", .max_workers = 1, .idle_ms = 50 };
	jobq *q = jobq_new(&c);
	int64_t t0 = now_ms();
	t[0].job.not_before = t0 + 300; /* longer than the idle time: a worker waits for it */
	CU_ASSERT_EQUAL(jobq_submit(q, &t[0].job), 0);
	CU_ASSERT_EQUAL(jobq_submit(q, &t[1].job), 0); /* due now: not behind the later one */
	for (int64_t end = t0 + 3000; !t[0].ran && now_ms() < end;)
		usleep(10000);
	CU_ASSERT(t[0].ran && t[1].ran);
	CU_ASSERT(t[0].ran_at >= t0 + 300);
	CU_ASSERT(t[1].ran_at < t0 + 300);
	CU_ASSERT_EQUAL(order[0], 1);
	jobq_stop(q);
	jobq_free(q);
}

static void test_cancel(void)
{
	tjob t[3];
	reset(t, 3);
	t[0].sleep_ms = 200;
	jobq_config c = { .name = "t-cancel", .max_workers = 1, .idle_ms = 100 };
	jobq *q = jobq_new(&c);
	CU_ASSERT_EQUAL(jobq_submit(q, &t[0].job), 0);
	CU_ASSERT_EQUAL(jobq_submit(q, &t[1].job), 0);
	CU_ASSERT_EQUAL(jobq_submit(q, &t[2].job), 0);
	while (atomic_load(&now_running) == 0) /* t[0] is running */
		usleep(1000);
	CU_ASSERT_FALSE(jobq_cancel(q, &t[0].job)); /* running: too late */
	CU_ASSERT_TRUE(jobq_cancel(q, &t[1].job));  /* queued: out */
	CU_ASSERT_FALSE(jobq_cancel(q, &t[1].job)); /* only once */
	int queued = -1, running = -1;
	jobq_counts(q, &queued, &running);
	CU_ASSERT_EQUAL(queued, 1);
	CU_ASSERT_EQUAL(running, 1);
	for (int64_t end = now_ms() + 3000; !t[2].ran && now_ms() < end;)
		usleep(10000);
	CU_ASSERT(t[0].ran && !t[1].ran && !t[1].dropped && t[2].ran);
	jobq_stop(q);
	CU_ASSERT_FALSE(t[1].dropped); /* a cancelled job is the caller's: never dropped */
	jobq_free(q);
}

static void test_idle_exit_and_restart(void)
{
	tjob t[2];
	reset(t, 2);
	jobq_config c = { .name = "t-idle", .max_workers = 2, .idle_ms = 50 };
	jobq *q = jobq_new(&c);
	int before = threads();
	CU_ASSERT_EQUAL(jobq_submit(q, &t[0].job), 0);
	CU_ASSERT(wait_threads(before, 2000)); /* ran, then its worker exited */
	CU_ASSERT(t[0].ran);
	CU_ASSERT_EQUAL(jobq_submit(q, &t[1].job), 0); /* a new worker in the joined slot */
	CU_ASSERT(wait_threads(before, 2000));
	CU_ASSERT(t[1].ran);
	jobq_stop(q);
	jobq_free(q);
}

static void test_stop_drops_queued(void)
{
	tjob t[4];
	reset(t, 4);
	t[0].sleep_ms = 150;
	jobq_config c = { .name = "t-stop", .max_workers = 1, .idle_ms = 1000 };
	jobq *q = jobq_new(&c);
	int before = threads();
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(jobq_submit(q, &t[i].job), 0);
	while (atomic_load(&now_running) == 0)
		usleep(1000);
	jobq_stop(q); /* the running one ends; the rest are dropped; the worker is joined */
	CU_ASSERT(t[0].ran && !t[0].dropped);
	for (int i = 1; i < 4; i++)
		CU_ASSERT(t[i].dropped && !t[i].ran);
	CU_ASSERT_EQUAL(threads(), before);
	tjob late;
	reset(&late, 1);
	CU_ASSERT_EQUAL(jobq_submit(q, &late.job), ESHUTDOWN);
	jobq_free(q);
}

static char seen_name[16];

static void name_run(jobq_job *j)
{
	pthread_getname_np(pthread_self(), seen_name, sizeof seen_name);
	((tjob *)j)->ran = true;
}

static void test_thread_name_is_copied(void)
{
	tjob t;
	reset(&t, 1);
	t.job.run = name_run;
	char name[32];
	snprintf(name, sizeof name, "brig-%s", "named-and-long"); /* 19 bytes: 15 are kept */
	jobq_config c = { .name = name, .max_workers = 1, .idle_ms = 50 };
	jobq *q = jobq_new(&c);
	memset(name, 'X', sizeof name - 1); /* the caller's buffer is gone */
	CU_ASSERT_EQUAL(jobq_submit(q, &t.job), 0);
	for (int64_t end = now_ms() + 3000; !t.ran && now_ms() < end;)
		usleep(10000);
	CU_ASSERT(t.ran);
	CU_ASSERT_STRING_EQUAL(seen_name, "brig-named-and-");
	jobq_stop(q);
	jobq_free(q);
}

static CU_TestInfo tests[] = {
	{ "jobs run first in, first out", test_fifo_with_one_worker },
	{ "never more workers than the limit", test_worker_limit },
	{ "a job waits for its not-before time", test_not_before },
	{ "a queued job can be cancelled, a running one not", test_cancel },
	{ "idle workers exit; a new job starts one again", test_idle_exit_and_restart },
	{ "stop drops the queued jobs and joins the workers", test_stop_drops_queued },
	{ "the workers' name is the queue's own copy", test_thread_name_is_copied },
	CU_TEST_INFO_NULL,
};

BRIG_CUNIT_MAIN("jobq", tests)
