/* capture.h - stdout/stderr collection shared by every backend: the output cap is enforced
 * while reading (max_output_bytes, stdout + stderr combined), never after buffering all of it.
 * The verdict is not a backend's business: the host derives it from the outcome.
 */
#ifndef BRIG_CAPTURE_H
#define BRIG_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "brig-backend.h"
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
void capture_free(capture *c);

/* How a run ended, as the backend observed it. */
typedef struct run_outcome {
	int exit_code;   /* from the engine; -1 unknown */
	bool timed_out;  /* brig killed it at the deadline */
	bool truncated;  /* brig killed it for output */
	bool oom_killed; /* engine State.OOMKilled */
	bool cancelled;  /* brig killed it because the caller cancelled */
} run_outcome;

/* Hand the buffers, the observations and (when not NULL) the sandbox's failure to the host's
 * outcome struct, as far as its struct_size reaches. */
void capture_to_outcome(capture *c, const run_outcome *o, const char *sandbox_error, bool transient,
			brig_outcome *out);

#endif
