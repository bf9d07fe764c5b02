/* capture.h - stdout/stderr collection shared by every backend: the output cap is enforced
 * while reading (max_output_bytes, stdout + stderr combined), never after buffering all of it,
 * and the verdict is derived in one place so every backend reports the same way.
 */
#ifndef BRIG_CAPTURE_H
#define BRIG_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "brig.h"
#include "util.h"

typedef struct capture {
	strbuf out;
	strbuf err;
	size_t limit; /* combined cap */
	size_t total; /* bytes kept so far */
	bool truncated;
} capture;

void capture_init(capture *c, size_t limit);
/* Keep what fits under the cap from `n` bytes of stream 1 (stdout) or 2 (stderr).  Returns
 * true once the cap has been exceeded: the caller must stop the container. */
bool capture_add(capture *c, int stream, const void *data, size_t n);
/* Move the buffers into res->stdout_data/stderr_data (always NUL-terminated). */
void capture_to_result(capture *c, brig_result *res);
void capture_free(capture *c);

/* How a run ended, as the backend observed it. */
typedef struct run_outcome {
	int exit_code;   /* from the engine; -1 unknown */
	bool timed_out;  /* brig killed it at the deadline */
	bool truncated;  /* brig killed it for output */
	bool oom_killed; /* engine State.OOMKilled */
	bool cancelled;  /* brig killed it because the caller cancelled */
} run_outcome;

/* Fill res->exit_code, flags and verdict.  Precedence: cancelled, timeout, output limit, OOM
 * (when the program failed), exit status: what brig did to the box explains the exit code
 * better than the code itself. */
void outcome_to_result(const run_outcome *o, brig_result *res);

#endif
