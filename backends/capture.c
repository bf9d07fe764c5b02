/* capture.c - capped output collection and verdicts (see capture.h). */
#include "config.h"

#include <string.h>

#include "capture.h"

void capture_init(capture *c, size_t limit)
{
	sb_init(&c->out);
	sb_init(&c->err);
	c->limit = limit;
	c->total = 0;
	c->truncated = false;
}

bool capture_add(capture *c, int stream, const void *data, size_t n)
{
	size_t room = c->limit - c->total;
	size_t keep = n < room ? n : room;
	if (keep) {
		sb_append(stream == 2 ? &c->err : &c->out, data, keep);
		c->total += keep;
	}
	if (keep < n)
		c->truncated = true;
	return c->truncated;
}

void capture_to_result(capture *c, brig_result *res)
{
	res->stdout_len = c->out.len;
	res->stdout_data = sb_steal(&c->out);
	res->stderr_len = c->err.len;
	res->stderr_data = sb_steal(&c->err);
}

void capture_free(capture *c)
{
	sb_free(&c->out);
	sb_free(&c->err);
}

void outcome_to_result(const run_outcome *o, brig_result *res)
{
	res->exit_code = o->exit_code;
	res->timed_out = o->timed_out;
	res->output_truncated = o->truncated;
	res->oom_killed = o->oom_killed;
	if (o->cancelled)
		res->verdict = BRIG_VERDICT_CANCELLED;
	else if (o->timed_out)
		res->verdict = BRIG_VERDICT_TIMEOUT;
	else if (o->truncated)
		res->verdict = BRIG_VERDICT_OUTPUT_LIMIT;
	else if (o->oom_killed && o->exit_code != 0)
		res->verdict =
			BRIG_VERDICT_OOM; /* a child killed while the program went on to succeed
					   * is not the run's fate: success, oom_killed set */
	else if (o->exit_code == 0)
		res->verdict = BRIG_VERDICT_SUCCESS;
	else
		res->verdict = BRIG_VERDICT_ERROR;
}
