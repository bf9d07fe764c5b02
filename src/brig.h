/* brig.h - public API of libbrig: run untrusted code in a hardened, throwaway container.
 *
 * Error contract (as crun's): every function that can fail returns a negative brig_status and,
 * when `err` is not NULL, fills *err with a heap-allocated brig_error that the caller frees with
 * brig_error_free().  The library never prints and never exits.
 *
 * A run that reached the sandbox returns 0 and reports how it ended in brig_result.verdict,
 * including BRIG_VERDICT_SANDBOX_ERROR when the sandbox itself failed (no daemon, no image).
 * A negative return means nothing ran: the request was refused (too large, timeout above the
 * policy's maximum), the policy is invalid, or the backend/isolation the operator asked for is
 * not available (never a silent fallback).
 */
#ifndef BRIG_H
#define BRIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct json_object; /* json-c's: the *_object functions hand out trees the caller puts */

#if defined(BRIG_BUILDING_LIBRARY)
#define BRIG_PUBLIC __attribute__((visibility("default")))
#else
#define BRIG_PUBLIC
#endif

/* Failure categories.  Front ends map them to exit codes (see brig(1)). */
typedef enum brig_status {
	BRIG_OK = 0,
	BRIG_E_USAGE = -1,       /* malformed request or argument                    (exit 2)   */
	BRIG_E_POLICY = -2,      /* invalid policy file or override                  (exit 2)   */
	BRIG_E_REFUSED = -3,     /* request refused by policy (input too large, ...) (exit 2)   */
	BRIG_E_UNAVAILABLE = -4, /* requested backend / isolation level not usable   (exit 125) */
	BRIG_E_SANDBOX = -5,     /* the sandbox machinery failed                     (exit 125) */
	BRIG_E_SYSTEM = -6,      /* host resource failure (fork, pipe, memory)       (exit 125) */
	BRIG_E_PLUGIN = -7,      /* a backend plugin was refused (ABI, symbol)       (exit 125) */
	BRIG_E_AUDIT = -8,       /* audit log configured but not writable            (exit 125) */
	BRIG_E_BUSY = -9,        /* too many runs queued                             (exit 125) */
	BRIG_E_CANCELLED = -10,  /* the caller cancelled the run                     (exit 130) */
	BRIG_E_NOT_FOUND = -11,  /* no such workspace (unknown, expired, lost), file (exit 2)   */
} brig_status;

typedef struct brig_error {
	int status;      /* a brig_status */
	int errno_value; /* errno at the failure, 0 if none */
	char *message;   /* human-readable, with context, no trailing newline */
	/* The condition may pass by itself (the engine is not reachable yet, or restarting):
	 * trying again later may help.  False when someone has to change something first. */
	bool transient;
} brig_error;

BRIG_PUBLIC void brig_error_free(brig_error *err);
/* Exit status a command-line front end should use for this error. */
BRIG_PUBLIC int brig_status_exit_code(int status);
/* The status as a stable lower-case word ("ok", "usage", "policy", "refused", "unavailable",
 * "sandbox", "system", "plugin", "audit", "busy", "cancelled"; "unknown" otherwise). */
BRIG_PUBLIC const char *brig_status_name(int status);

typedef enum brig_language {
	BRIG_LANG_PYTHON = 0,
	BRIG_LANG_NODE = 1,
	BRIG_LANG_SHELL = 2,
} brig_language;
#define BRIG_LANG_COUNT 3

/* "python", "node", "shell" */
BRIG_PUBLIC const char *brig_language_name(brig_language lang);
/* Accepts the names and the aliases py, python3, javascript, js, nodejs, sh.  -1 if unknown. */
BRIG_PUBLIC int brig_language_parse(const char *name);

typedef enum brig_verdict {
	BRIG_VERDICT_SUCCESS = 0,
	BRIG_VERDICT_ERROR = 1,         /* the program exited non-zero */
	BRIG_VERDICT_TIMEOUT = 2,       /* killed at the wall-time deadline */
	BRIG_VERDICT_OOM = 3,           /* killed by the memory limit */
	BRIG_VERDICT_OUTPUT_LIMIT = 4,  /* killed for exceeding max_output_bytes */
	BRIG_VERDICT_SANDBOX_ERROR = 5, /* the sandbox itself failed */
	BRIG_VERDICT_CANCELLED = 6,     /* killed because the caller cancelled */
} brig_verdict;

BRIG_PUBLIC const char *brig_verdict_name(brig_verdict v);

typedef enum brig_isolation {
	BRIG_ISOLATION_CONTAINER = 1, /* namespaces + cgroups + seccomp on the host kernel (runc) */
	BRIG_ISOLATION_GVISOR = 2,    /* gVisor user-space kernel (runsc) */
} brig_isolation;

BRIG_PUBLIC const char *brig_isolation_name(int isolation);

/* ---- policy ------------------------------------------------------------------------------ */

typedef struct brig_policy brig_policy;

/* The built-in strict defaults. */
BRIG_PUBLIC brig_policy *brig_policy_new_default(void);
/* Parse and validate a JSON policy file over the defaults.  Errors name the file, key path and
 * reason. */
BRIG_PUBLIC int brig_policy_load_file(const char *path, brig_policy **out, brig_error **err);
/* Same, from a string; `origin` names it in errors. */
BRIG_PUBLIC int brig_policy_load_string(const char *json, const char *origin, brig_policy **out,
					brig_error **err);
/* Operator override of one key (CLI flag), value in its JSON/flag text form.  *loosened is set
 * when the new value is less strict than the one in force: the caller must warn. */
BRIG_PUBLIC int brig_policy_override(brig_policy *p, const char *key, const char *value,
				     bool *loosened, brig_error **err);
/* The seccomp profile the policy gives runs at this isolation level, as the engine's JSON (what
 * the docker CLI wants in a file for --security-opt seccomp=FILE); label says which profile. */
BRIG_PUBLIC int brig_policy_seccomp_json(const brig_policy *p, int isolation, char **json,
					 char **label, brig_error **err);
/* The effective policy as pretty JSON (caller frees). */
BRIG_PUBLIC char *brig_policy_to_json(const brig_policy *p);
BRIG_PUBLIC brig_policy *brig_policy_copy(const brig_policy *p);

/* The limits in force, for front ends that describe them (MCP tool schemas, help texts). */
typedef struct brig_policy_limits {
	int timeout_seconds;
	int max_timeout_seconds;
	int memory_mb;
	double cpus;
	int pids_limit;
	int nofile;
	int tmpfs_mb;
	long max_input_bytes;
	long max_output_bytes;
	bool network;
	int isolation; /* minimum brig_isolation */
	int max_concurrent_runs;
} brig_policy_limits;
BRIG_PUBLIC void brig_policy_get_limits(const brig_policy *p, brig_policy_limits *out);
BRIG_PUBLIC void brig_policy_free(brig_policy *p);

/* ---- runs -------------------------------------------------------------------------------- */

/* How a request's timeout above the policy's max_timeout_seconds is treated. */
typedef enum brig_timeout_mode {
	BRIG_TIMEOUT_REFUSE = 0, /* CLI: refuse with BRIG_E_REFUSED */
	BRIG_TIMEOUT_CLAMP = 1, /* library default for agents: clamp, and say so in result.notice */
} brig_timeout_mode;

typedef struct brig_request {
	brig_language language;
	const char *code;
	size_t code_len;
	int timeout_seconds; /* 0: the policy's timeout_seconds */
} brig_request;

typedef struct brig_run_options {
	size_t struct_size;     /* sizeof(brig_run_options) */
	int cancel_fd;          /* -1, or an fd that becomes readable to cancel the run */
	const char *front_door; /* "cli", "mcp", "lib": recorded in the audit log */
	brig_timeout_mode timeout_mode;
	/* How long to wait for one of the context's max_concurrent_runs slots before failing
	 * with BRIG_E_BUSY, in ms; 0: the policy's max_timeout_seconds (by then a running run has
	 * normally reached its deadline), -1: do not wait */
	int queue_wait_ms;
	/* Appended members: read only when struct_size covers them. */
	const char *traceparent; /* NULL, or the caller's W3C Trace Context traceparent
				  * ("00-<trace id>-<parent span id>-<flags>"): recorded as
				  * trace_id and parent_span_id in the audit line when it is
				  * well formed, ignored otherwise */
	const char *workspace; /* NULL, or the id of a workspace to run in (brig_workspace_create):
				* its files at /workspace, where the program starts */
} brig_run_options;

/* The caller sets struct_size = sizeof(brig_result) before brig_run; the library writes only the
 * fields that size covers (fields are only ever appended).  brig_result_clear keeps it. */
typedef struct brig_result {
	size_t struct_size;
	brig_language language;
	char *image;
	char *backend; /* "docker-cli", "docker-api", "gvisor" */
	char *runtime; /* "runc", "runsc", ... */
	int exit_code; /* the program's exit status; 137 when killed; -1 when it never ran */
	brig_verdict verdict;
	char *stdout_data; /* NUL-terminated for convenience; may contain NULs, use the length */
	size_t stdout_len;
	char *stderr_data;
	size_t stderr_len;
	bool timed_out;
	bool output_truncated;
	bool oom_killed;
	long long duration_ms;
	char *error;     /* sandbox_error detail, else NULL */
	char *notice;    /* e.g. "timeout clamped from 60 s to 30 s", else NULL */
	char *container; /* the container's name */
	char code_sha256[65];
	bool pooled; /* the run used a container the warm pool had started before (policy
		      * warm_pool); it still ran only this code, and only once */
	char *user;  /* "UID:GID" the program ran as (under user "auto" a uid of the box's own) */
	char *workspace; /* the workspace the run was in, or NULL */
	/* In a workspace: what the run left, as JSON text {"files":[{"path","size"}] (the
	 * regular files it created or changed, sorted, at most 100), "count" (all of them),
	 * "used_bytes", "size_bytes", "used_files", "max_files"}; NULL when not in a workspace
	 * or when it could not be told. */
	char *workspace_changes;
	/* A box with egress: what the proxy decided for it, as JSON text, an array of {"time",
	 * "method", "host", "port", "status", "address", "bytes_out", "bytes_in", "allowed",
	 * "reason", "sni"} (brig-policy(5), EGRESS); NULL without egress or when the proxy's log
	 * could not be read. */
	char *egress;
} brig_result;

BRIG_PUBLIC void brig_result_clear(brig_result *res);
/* The result object as JSON text (caller frees), or as a json-c tree (json_object_put it):
 * language, image, backend, runtime, exit_code, verdict, stdout, stderr, timed_out,
 * output_truncated, oom_killed, duration_ms, error, notice, container, code_sha256, pooled. */
BRIG_PUBLIC char *brig_result_to_json(const brig_result *res, bool pretty);
BRIG_PUBLIC struct json_object *brig_result_to_object(const brig_result *res);

/* ---- context ----------------------------------------------------------------------------- */

typedef struct brig_ctx brig_ctx;

/* Load the backend plugins and take ownership of `policy` (even on failure).  The policy of a
 * context never changes: a new policy is a new context.  Nothing is started ahead: see
 * brig_ctx_start_warm_pool. */
BRIG_PUBLIC int brig_ctx_new(brig_policy *policy, brig_ctx **out, brig_error **err);
/* Start the warm pool: the policy's warm_pool containers per language started ahead in the
 * background, each used by one run only (brig-policy(5), WARM POOL).  Worth it for a
 * long-lived process (`brig mcp` starts it); a no-op when warm_pool is 0 or it runs already. */
BRIG_PUBLIC int brig_ctx_start_warm_pool(brig_ctx *ctx, brig_error **err);
/* Whether a runtime verification another brig process remembered may be used (default true;
 * `brig doctor` turns it off: a check must check). */
BRIG_PUBLIC void brig_ctx_set_probe_cache(brig_ctx *ctx, bool use);
/* Spare network holders (default off): a cold run with egress takes a holder started ahead by
 * an earlier context (the engine's ~600 ms to start one leaves the run), and brig_ctx_free
 * forks a detached process that removes this context's holders and starts spares for the next.
 * For single-threaded one-shot callers (`brig run`): the fork happens in brig_ctx_free, which
 * no other thread of the caller may be inside brig or libcurl at; the process keeps the
 * caller's file descriptors above 2 until it is done.  A long-lived caller has the warm pool. */
BRIG_PUBLIC void brig_ctx_set_spares(brig_ctx *ctx, bool on);
/* Removes the warm pool's containers before it returns.  No run may be in flight. */
BRIG_PUBLIC void brig_ctx_free(brig_ctx *ctx);
BRIG_PUBLIC const brig_policy *brig_ctx_policy(const brig_ctx *ctx);
/* Append audit lines to this file (NULL: the policy's audit_log).  Fails if not writable, not a
 * regular file, or writable by others; the appends lock PATH.lock (0600, this user's). */
BRIG_PUBLIC int brig_ctx_set_audit_log(brig_ctx *ctx, const char *path, brig_error **err);
/* What the operator should hear about the context's set-up (e.g. an audit log every user can
 * read), NULL-terminated, owned by the context; front ends print them. */
BRIG_PUBLIC const char *const *brig_ctx_warnings(brig_ctx *ctx);

/* Run one request.  Thread-safe: several runs may share a ctx; at most the policy's
 * max_concurrent_runs execute at once, a call beyond that waits for a slot (opts->queue_wait_ms,
 * watching cancel_fd) and fails with BRIG_E_BUSY when none frees in time.  res->struct_size
 * must be set. */
BRIG_PUBLIC int brig_run(brig_ctx *ctx, const brig_request *req, const brig_run_options *opts,
			 brig_result *res, brig_error **err);

/* What the chosen backend would run for this request, for humans (caller frees). */
BRIG_PUBLIC int brig_explain(brig_ctx *ctx, const brig_request *req, char **out, brig_error **err);
/* The same as a json-c tree (json_object_put it), NULL on failure: backend, isolation, runtime,
 * fallback, notes (what the runtime changed in the box), spec (every field of the final box,
 * the seccomp profile as its SHA-256) and rendered (the backend's own rendering). */
BRIG_PUBLIC struct json_object *brig_explain_object(brig_ctx *ctx, const brig_request *req,
						    brig_error **err);

/* The same for a run in workspace `id` (NULL: none), which must be alive. */
BRIG_PUBLIC int brig_explain_in(brig_ctx *ctx, const brig_request *req, const char *id, char **out,
				brig_error **err);
BRIG_PUBLIC struct json_object *brig_explain_object_in(brig_ctx *ctx, const brig_request *req,
						       const char *id, brig_error **err);

/* Detection table, the backend `auto` picks and missing images, as JSON (caller frees):
 * {"backends":[{"name","description","isolation","available","reason","version","runtime"}],
 *  "selected":NAME|null,"selection_error":TEXT|null,"isolation_minimum":..,
 *  "images":[ the entries of brig_images_object ]} */
BRIG_PUBLIC int brig_status_json(brig_ctx *ctx, char **out, brig_error **err);
/* The same as a json-c tree (json_object_put it); never NULL. */
BRIG_PUBLIC struct json_object *brig_status_object(brig_ctx *ctx);

/* The runtime images in force, as the engine has them (`brig images`; the "images" of the status
 * object are the same entries), as a json-c tree (json_object_put it); never NULL:
 * {"backend": the backend that asked|null, "error": why none could|null, "require_pinned",
 *  "images": [{"language", "image" (the policy's reference), "pinned", "pin" (the pinned
 *  "sha256:..."|null), "present" (true|false|null: could not ask), "id", "size", "created",
 *  "tags", "digests", "labelled" (it carries brig's org.brig.* labels), "runtime", "package",
 *  "libraries", "labels" (the org.brig.* ones), "pin_holds" (null when not pinned), "pin_ref"
 *  (the reference that pins this image: what to write in the policy), "problem" (why runs of
 *  this language cannot use it)|null, "error"|null}]} */
BRIG_PUBLIC struct json_object *brig_images_object(brig_ctx *ctx);

/* Remove every container labelled brig whose owning brig process is gone, the workspaces whose
 * idle TTL or lifetime is over, and idle egress proxies.  The count in *removed. */
BRIG_PUBLIC int brig_gc(brig_ctx *ctx, int *removed, brig_error **err);
/* Only the first part of brig_gc: the boxes of brig processes that are gone (what `brig mcp`'s
 * reaper does when its server was killed).  The count in *removed. */
BRIG_PUBLIC int brig_reap(brig_ctx *ctx, int *removed, brig_error **err);

/* ---- workspaces ---------------------------------------------------------------------------
 * Files that live across runs (brig(1), WORKSPACES): a tmpfs volume with the policy's size and
 * file quotas, kept by a holder container until its idle TTL or lifetime ends.  Every run in it
 * is still a fresh box; every file operation happens inside a hardened box too.  Ids are 32 hex
 * digits (128 random bits): whoever knows one can use the workspace.  Calls on one workspace
 * are serialised (a second waits for the first, up to the policy's max_timeout_seconds). */

/* Make a workspace; *info (json_object_put it): id, created, expires (epoch seconds),
 * idle_ttl_seconds, size_mb, max_files, max_transfer_bytes, user. */
BRIG_PUBLIC int brig_workspace_create(brig_ctx *ctx, const char *front_door,
				      struct json_object **info, brig_error **err);
/* End a workspace: its holder, volume and files are gone. */
BRIG_PUBLIC int brig_workspace_remove(brig_ctx *ctx, const char *id, const char *front_door,
				      brig_error **err);
/* The workspaces of this user's brig as a JSON array of the objects create returns, each
 * with last_used (epoch seconds). */
BRIG_PUBLIC int brig_workspace_list(brig_ctx *ctx, struct json_object **out, brig_error **err);
/* Write `data` as the file PATH (relative, plain components; missing directories are made). */
BRIG_PUBLIC int brig_workspace_put(brig_ctx *ctx, const char *id, const char *path,
				   const void *data, size_t len, const char *front_door,
				   brig_error **err);
/* Read the file PATH (*data malloc'ed, NUL-terminated beyond *len). */
BRIG_PUBLIC int brig_workspace_get(brig_ctx *ctx, const char *id, const char *path, char **data,
				   size_t *len, const char *front_door, brig_error **err);
/* The files: {"files":[{"path","type":"file|dir|link|other","size","mtime"}], "count",
 * "bytes", "used_bytes", "size_bytes", "used_files", "max_files", "incomplete"}. */
BRIG_PUBLIC int brig_workspace_files(brig_ctx *ctx, const char *id, const char *front_door,
				     struct json_object **out, brig_error **err);

BRIG_PUBLIC const char *brig_version(void);

#ifdef __cplusplus
}
#endif
#endif /* BRIG_H */
