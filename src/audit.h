/* audit.h - the audit log: one JSON line per execution (refused and failed ones included),
 * appended with O_APPEND in a single write(2) so concurrent runs never interleave.  The code
 * itself is never written, only its SHA-256.
 */
#ifndef BRIG_AUDIT_H
#define BRIG_AUDIT_H

#include "brig.h"

typedef struct audit_log audit_log;

/* Open (create 0600) for appending, and PATH.lock (0600) for the appends' lock; fails if the file
 * cannot be written, is not a regular file (a FIFO does not hang), or others may write it. */
int audit_open(const char *path, audit_log **out, brig_error **err);
/* Can a line be written now (the lock can be taken, the log exists, its file system has room)?
 * Asked before every run: an execution is never unaudited, a run that could not be recorded is
 * refused before it starts. */
int audit_ready(audit_log *a, brig_error **err);
/* What the operator should know about the log (readable by everyone), or NULL. */
const char *audit_warning(const audit_log *a);
void audit_close(audit_log *a);
const char *audit_path(const audit_log *a);

typedef struct audit_entry {
	const char *front_door; /* "cli", "mcp", "lib" */
	brig_language language;
	const char *code_sha256; /* hex */
	size_t code_bytes;
	const brig_policy *policy;    /* the policy in force */
	const struct brig_spec *spec; /* the box as the engine got it; NULL when refused */
	int timeout_seconds;          /* the request's (0: the policy's), when refused */
	const brig_result *result;    /* NULL when refused before running */
	const char *refusal;          /* the refusal message when result == NULL */
	const char *backend;          /* when known */
	const char *runtime;
	const char *image;
	const char *image_id;    /* the ID the box started from (the spec's), when known */
	const char *traceparent; /* the caller's, unchecked: only a well-formed one is recorded */
	const char *workspace;   /* the workspace the run or transfer was in, or NULL */
	bool net_holder_spare;   /* the box's network holder was a spare (spare.h) */
	/* a file transfer in or out of a workspace (no code ran): "put", "get", "list",
	 * "create", "remove"; NULL for a run */
	const char *transfer_op;
	const char *transfer_path;
	long long transfer_bytes;
	const char *transfer_sha256;
} audit_entry;

int audit_append(audit_log *a, const audit_entry *e, brig_error **err);

/* SHA-256 of data as 64 lowercase hex digits + NUL (src/sha256.c, nettle). */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif
