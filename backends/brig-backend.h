/* brig-backend.h - the backend plugin ABI (brig-backend(7)).
 *
 * A backend is a shared object in $(pkglibdir)/backends (or $BRIG_BACKEND_DIR) that exports ONE
 * symbol, BRIG_BACKEND_ENTRY_SYMBOL, of type brig_backend_entry_fn.  The host calls it with its
 * ABI major and a table of host services; the plugin returns a pointer to a static, const
 * brig_backend table (or NULL to decline).
 *
 * Versioning (the lesson of crun's custom handlers, done as its seccomp-notify plugins do):
 *   - abi_major changes only when an existing field or hook changes meaning: the host refuses a
 *     mismatch;
 *   - new hooks and fields are only ever APPENDED and abi_minor is bumped;
 *   - every struct that crosses the ABI carries struct_size (first, or right after the two ABI
 *     numbers in the two tables, which keep the layout of every major so that any host can read
 *     a plugin's major), and its reader touches only the fields that size covers
 *     (BRIG_HAS_FIELD): the host checks a table's struct_size before it touches any hook
 *     beyond BRIG_BACKEND_MIN_SIZE, a plugin checks the spec's, the run control's and the
 *     outcome's;
 *   - a NULL hook means "not supported"; `features` says which parts of a spec the backend
 *     honours, and the host refuses to hand it a spec that needs more.
 *
 * The contract of every hook: it returns 0, or a negative brig_status with an error made with
 * host->error_new.  A backend never prints and never exits, and it never decides policy: it
 * receives an immutable, validated, final brig_spec (brig-spec.h) and renders and executes it.
 */
#ifndef BRIG_BACKEND_H
#define BRIG_BACKEND_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brig-spec.h"
#include "brig.h"

#define BRIG_BACKEND_ABI_MAJOR    2
#define BRIG_BACKEND_ABI_MINOR    5
#define BRIG_BACKEND_ENTRY_SYMBOL "brig_backend_entry"
/* The name ending of a spare network holder not claimed yet (claim_spare) */
#define BRIG_SPARE_SUFFIX "-spare"

enum brig_log_level {
	BRIG_LOG_ERROR = 0,
	BRIG_LOG_WARN = 1,
	BRIG_LOG_INFO = 2,
	BRIG_LOG_DEBUG = 3
};

typedef struct brig_host_services {
	uint32_t abi_major;
	uint32_t abi_minor;
	size_t struct_size;
	/* Allocate an error; `errnum` may be 0.  Never returns NULL. */
	brig_error *(*error_new)(int status, int errnum, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));
	/* Diagnostics; routed by the front end (stderr with BRIG_DEBUG). */
	void (*log)(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
} brig_host_services;

/* What the host asks probe() about. */
typedef struct brig_probe_request {
	size_t struct_size;
	const char *runtime; /* the OCI runtime to look for, e.g. "runc", "runsc-seccomp" */
} brig_probe_request;

/* What probe() found. */
typedef struct brig_probe_info {
	size_t struct_size;
	bool available;
	/* !available: the reason is transient (the engine is not reachable, or restarting), so
	 * asking again later may succeed without anyone changing the set-up */
	bool transient;
	char reason[512];  /* why not, and how to fix it, when !available */
	char version[128]; /* engine version, e.g. "20.10.24+dfsg1 (API 1.41)" */
	char runtime[64];  /* the OCI runtime this backend runs containers with */
	/* What the runtime is (the engine's ID, the runtime's registration, its binary): the
	 * host keys a cached verification of it on this, "" if it cannot be keyed */
	char identity[512];
} brig_probe_info;

/* Per-run control handed to run() and run_prepared(). */
typedef struct brig_run_control {
	size_t struct_size;
	int cancel_fd; /* -1, or readable when the run must be cancelled: kill, cancelled */

	/* ---- appended in ABI 2.5 ---- */
	/* NULL, or called once the box exists and before it starts (run(), not run_prepared());
	 * < 0 (with *err) means it must not start: the run fails as if its start had.  A box with
	 * a network holder gets it here (a spare claimed, or one started): the holder never runs
	 * without its box. */
	int (*before_start)(void *arg, brig_error **err);
	void *before_start_arg;
} brig_run_control;

/* How a run ended, as the backend observed it: the host alone derives the verdict and writes
 * the result (identity fields, sandbox_error text).  The buffers and strings are malloc'ed by
 * the plugin and freed by the host (one process, one malloc). */
typedef struct brig_outcome {
	size_t struct_size;
	int exit_code;     /* the box's exit status (137 when killed); -1 unknown */
	bool timed_out;    /* the backend killed it at the deadline */
	bool truncated;    /* the backend killed it for exceeding max_output_bytes */
	bool cancelled;    /* the backend killed it because cancel_fd became readable */
	bool oom_killed;   /* the engine reported an OOM kill */
	char *stdout_data; /* what was captured, also when the sandbox failed midway */
	size_t stdout_len;
	char *stderr_data;
	size_t stderr_len;
	/* The machinery failed after the box was attempted (engine error, broken stream): why.
	 * NULL when the box ran to its end. */
	char *sandbox_error;
	bool transient; /* sandbox_error may go away by itself (engine unreachable) */

	/* ---- appended in ABI 2.3: egress ---- */
	/* A box with egress: the proxy's access log lines of this box (those whose client is the
	 * box's address on the internal network, from the backend's mark in the log before the
	 * box got its code to its end), each ending in "\n"; "" when it made no request; NULL when
	 * they cannot be known (egress_note says why). */
	char *egress_log;
	/* Why egress_log is NULL (the proxy did not answer, its log rotated past the box's
	 * start...), for the result's notice; NULL otherwise. */
	char *egress_note;
} brig_outcome;

/* What image_inspect() found (appended in ABI 2.1).  The host allocates it and sets
 * struct_size; the plugin fills what that covers; the arrays and their strings are malloc'ed by
 * the plugin and freed by the host. */
typedef struct brig_image_info {
	size_t struct_size;
	char id[80];         /* "sha256:<64 hex>" */
	int64_t size;        /* bytes, -1 unknown */
	char created[64];    /* as the engine reports it (RFC 3339), "" unknown */
	char **repo_tags;    /* "NAME:TAG", NULL-terminated, or NULL */
	char **repo_digests; /* "NAME@sha256:<64 hex>": the registry digests it is known by */
	char **labels;       /* "KEY=VALUE", NULL-terminated, or NULL */
} brig_image_info;

/* Feature bits: what of a spec the backend honours.  The host computes what a spec needs and
 * refuses a backend lacking any of it (never runs a box with less than it describes). */
#define BRIG_FEATURE_SECCOMP_PROFILE (1u << 0) /* spec->seccomp_profile */
#define BRIG_FEATURE_CANCEL          (1u << 1) /* run() watches cancel_fd */
#define BRIG_FEATURE_MOUNTS          (1u << 2) /* spec->mounts (bind and volume) */
#define BRIG_FEATURE_NETWORKS        (1u << 3) /* spec->network other than none and bridge */
#define BRIG_FEATURE_MASKED_PATHS    (1u << 4) /* spec->masked_paths */
#define BRIG_FEATURE_IMAGE_ID        (1u << 5) /* starts the box from spec->image_id */
#define BRIG_FEATURE_WORKSPACES      (1u << 6) /* ABI 2.2: the four workspace hooks below */

typedef struct brig_backend {
	uint32_t abi_major;
	uint32_t abi_minor;
	size_t struct_size; /* sizeof(brig_backend) as the plugin was compiled */
	const char *name;   /* "docker-cli", "docker-api", "gvisor" */
	const char *description;
	int isolation;               /* brig_isolation it provides */
	int speed_rank;              /* lower is faster; auto picks the lowest at the strongest */
	uint32_t features;           /* BRIG_FEATURE_* */
	const char *default_runtime; /* the runtime it runs containers with, e.g. "runc" */

	/* Is this runtime usable here?  Fills *info (available, or the reason).  Returns < 0 only
	 * when probing itself failed unexpectedly; "not available" is an answer, not a failure. */
	int (*probe)(const brig_probe_request *req, brig_probe_info *info, brig_error **err);
	/* Render the spec for humans, copy-pasteable where possible (malloc'ed into *out). */
	int (*explain)(const brig_spec *spec, char **out, brig_error **err);
	/* Execute the spec and fill *out.  Returns < 0 ONLY when nothing was attempted (no
	 * container may exist); once a container was attempted it returns 0 and reports any
	 * failure of the machinery in out->sandbox_error, with the output captured so far.  The
	 * container is gone when run() returns, whatever happened. */
	int (*run)(const brig_spec *spec, const brig_run_control *ctl, brig_outcome *out,
		   brig_error **err);
	/* Remove the named container if it exists; idempotent. */
	int (*remove)(const char *container_name, brig_error **err);
	/* Look an image up: 1 present (its ID, "sha256:<64 hex>", copied into id), 0 absent. */
	int (*image_id)(const char *image, char *id, size_t id_len, brig_error **err);
	/* Containers carrying `label` (key=value): names and their brig.owner labels ("" if
	 * none), two NULL-terminated malloc'ed arrays of malloc'ed strings, for `brig gc`. */
	int (*list_labelled)(const char *label, char ***names, char ***owner_labels,
			     brig_error **err);

	/* ---- prepared containers, for the host's warm pool ---- */
	/* Create, attach and START a container with exactly `spec` (its stdin_data and timeout_ms
	 * are ignored), its program blocked reading the code from stdin.  *handle belongs to the
	 * plugin; the host ends every handle with exactly one discard(). */
	int (*prepare)(const brig_spec *spec, void **handle, brig_error **err);
	/* Hand spec->stdin_data to a prepared container (spec is the one it was prepared with,
	 * with this run's stdin and timeout) and collect the outcome exactly as run() does; the
	 * wall-time limit starts now.  At most once per handle.  Returns BRIG_E_UNAVAILABLE,
	 * having sent nothing, when the container is no longer waiting for its code (it exited,
	 * the engine restarted): the host may then run the request elsewhere.  The container is
	 * left for discard() to remove. */
	int (*run_prepared)(void *handle, const brig_spec *spec, const brig_run_control *ctl,
			    brig_outcome *out, brig_error **err);
	/* Remove the container of a handle (used or not) and free the handle.  A failed removal
	 * is logged; the brig label lets `brig gc` find the container later. */
	void (*discard)(void *handle);

	/* ---- appended in ABI 2.1 ---- */
	/* Look an image up with what brig shows of it (`brig images`) and checks a pin against:
	 * 1 present (*info filled), 0 absent.  Never pulls. */
	int (*image_inspect)(const char *image, brig_image_info *info, brig_error **err);

	/* ---- appended in ABI 2.2: workspaces (BRIG_FEATURE_WORKSPACES) ----
	 * A workspace is a volume of the engine's local driver kept mounted by a holder
	 * container (src/workspace.c); the host decides every option, the backend only asks the
	 * engine.  Nothing here touches the volume's files. */
	/* Create volume `name` with the local driver, its driver options ("type=tmpfs",
	 * "device=tmpfs", "o=...") and labels ("key=value"), both NULL-terminated. */
	int (*volume_create)(const char *name, char *const *driver_opts, char *const *labels,
			     brig_error **err);
	/* Remove volume `name`; 0 when it is gone (or was never there), BRIG_E_BUSY while a
	 * container still uses it. */
	int (*volume_remove)(const char *name, brig_error **err);
	/* Create and start a container with exactly `spec` (stdin_data and timeout_ms ignored),
	 * detached: no stdin, nothing attached, not removed when it exits (remove() does). */
	int (*start_detached)(const brig_spec *spec, brig_error **err);
	/* The named container's state in *state: 0 no such container, 1 exists but not running,
	 * 2 running, 3 being started (created less than a minute ago and never started: another
	 * process's start_detached may be on its way; older plugins answer 1). */
	int (*container_state)(const char *name, int *state, brig_error **err);

	/* ---- appended in ABI 2.3: egress (BRIG_FEATURE_NETWORKS) ---- */
	/* Make sure the proxy of `egress` runs on its two networks (created if missing) and
	 * answers, within a few seconds; the host has written egress->config_dir.  Concurrent
	 * callers for the same proxy are fine.  0, or < 0 with the reason: then no box may run. */
	int (*egress_ensure)(const brig_egress *egress, brig_error **err);
	/* Remove every egress proxy (and its internal network) that no box is attached to and
	 * that started more than idle_seconds ago; *removed counts the proxies removed. */
	int (*egress_gc)(int idle_seconds, int *removed, brig_error **err);

	/* ---- appended in ABI 2.4: the box's network holder ---- */
	/* Render what start_detached() does with `spec` (creation, start, no stdin, nothing
	 * attached; removed by remove()), for `brig explain` of a box's network holder. */
	int (*explain_detached)(const brig_spec *spec, char **out, brig_error **err);

	/* ---- appended in ABI 2.5: spare network holders ---- */
	/* The running containers labelled `label` ("KEY=VALUE"), named "*" BRIG_SPARE_SUFFIX (a
	 * claimed one keeps its labels, not its name), whose brig.spare-until label (s since the
	 * epoch) is after `now`: with `name` NULL, their number in *count; else rename
	 * one of them to `name` and make sure it still runs under it (one that does not is
	 * removed and the next tried).  1 when claimed, 0 when none was, < 0 with *err. */
	int (*claim_spare)(const char *label, long long now, const char *name, int *count,
			   brig_error **err);
} brig_backend;

/* Fields up to and including `run` are required of every plugin. */
#define BRIG_BACKEND_MIN_SIZE (offsetof(brig_backend, run) + sizeof(((brig_backend *)0)->run))

typedef const brig_backend *(*brig_backend_entry_fn)(uint32_t host_abi_major,
						     const brig_host_services *host);

#endif /* BRIG_BACKEND_H */
