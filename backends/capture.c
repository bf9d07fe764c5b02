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

void capture_free(capture *c)
{
	sb_free(&c->out);
	sb_free(&c->err);
}

void capture_to_outcome(capture *c, const run_outcome *o, const char *sandbox_error, bool transient,
			brig_outcome *out)
{
	if (!out || !BRIG_HAS_FIELD(out, brig_outcome, transient))
		return; /* a host older than every field used here: it cannot read an outcome */
	out->exit_code = o->exit_code;
	out->timed_out = o->timed_out;
	out->truncated = o->truncated;
	out->cancelled = o->cancelled;
	out->oom_killed = o->oom_killed;
	out->stdout_len = c->out.len;
	out->stdout_data = sb_steal(&c->out);
	out->stderr_len = c->err.len;
	out->stderr_data = sb_steal(&c->err);
	if (sandbox_error) {
		out->sandbox_error = xstrdup(sandbox_error);
		out->transient = transient;
	}
}
