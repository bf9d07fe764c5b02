/* brig-backend.h - the backend plugin ABI.
 *
 * A backend is a shared object in $(pkglibdir)/backends (or $BRIG_BACKEND_DIR) that exports ONE
 * symbol, BRIG_BACKEND_ENTRY_SYMBOL, of type brig_backend_entry_fn.  The host calls it with its
 * ABI major and a table of host services; the plugin returns a pointer to a static, const
 * brig_backend table (or NULL to decline).
 *
 * Versioning (the lesson of crun's custom handlers, done as its seccomp-notify plugins do):
 *   - abi_major changes only when an existing field changes meaning: the host refuses a mismatch;
 *   - new hooks and fields are only ever APPENDED, abi_minor is bumped, and the host checks
 *     struct_size before it touches any field beyond BRIG_BACKEND_MIN_SIZE;
 *   - a NULL hook means "not supported".
 * Every hook reports failure as a negative brig_status plus an error made with host->error_new;
 * a backend never prints and never exits.  It receives an immutable, validated brig_spec and
 * must not assume fields past spec->struct_size exist.
 */
#ifndef BRIG_BACKEND_H
#define BRIG_BACKEND_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brig.h"
#include "spec.h"

#define BRIG_BACKEND_ABI_MAJOR    1
#define BRIG_BACKEND_ABI_MINOR    1 /* 1: prepare, run_prepared, discard */
#define BRIG_BACKEND_ENTRY_SYMBOL "brig_backend_entry"

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
	/* Diagnostics; routed by the front end (stderr for the CLI and MCP server). */
	void (*log)(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
} brig_host_services;

/* What probe() found. */
typedef struct brig_probe_info {
	bool available;
	char reason[512];  /* why not, and how to fix it, when !available */
	char version[128]; /* engine version, e.g. "20.10.24+dfsg1 (API 1.41)" */
	char runtime[64];  /* the OCI runtime this backend runs containers with */
} brig_probe_info;

/* Per-run control handed to run(). */
typedef struct brig_run_control {
	size_t struct_size;
	int cancel_fd; /* -1, or readable when the run must be cancelled: kill, verdict cancelled */
} brig_run_control;

/* Feature bits. */
#define BRIG_FEATURE_SECCOMP_PROFILE (1u << 0) /* honours spec->seccomp_profile */
#define BRIG_FEATURE_CANCEL          (1u << 1) /* run() watches cancel_fd */

typedef struct brig_backend {
	uint32_t abi_major;
	uint32_t abi_minor;
	size_t struct_size; /* sizeof(brig_backend) as the plugin was compiled */
	const char *name;   /* "docker-cli", "docker-api", "gvisor" */
	const char *description;
	int isolation;  /* brig_isolation it provides */
	int speed_rank; /* lower is faster; auto picks the lowest at the strongest isolation */
	uint32_t features;

	/* Is this runtime usable here?  Fills *info (available or the reason).  Returns < 0 only
	 * when probing itself failed unexpectedly. */
	int (*probe)(brig_probe_info *info, brig_error **err);
	/* Render the spec for humans, copy-pasteable where possible (malloc'ed into *out). */
	int (*explain)(const brig_spec *spec, char **out, brig_error **err);
	/* Execute the spec: fill res (exit_code, verdict, output, flags; the host fills the rest).
	 * The container is gone when run() returns, whatever happened. */
	int (*run)(const brig_spec *spec, const brig_run_control *ctl, brig_result *res,
		   brig_error **err);
	/* Remove the named container if it exists; idempotent. */
	int (*remove)(const char *container_name, brig_error **err);
	/* 1 if the image is present in the engine, 0 if not. */
	int (*image_exists)(const char *image, brig_error **err);
	/* Names of containers carrying `label` (key=value), NULL-terminated, malloc'ed array of
	 * malloc'ed strings; for `brig gc`. */
	int (*list_labelled)(const char *label, char ***names, char ***owner_labels,
			     brig_error **err);

	/* ---- ABI 1.1: prepared containers, for the host's warm pool ---- */
	/* Create, attach and START a container with exactly `spec` (its stdin_data and timeout_ms
	 * are ignored), its program blocked reading the code from stdin.  *handle belongs to the
	 * plugin; the host ends every handle with exactly one discard(). */
	int (*prepare)(const brig_spec *spec, void **handle, brig_error **err);
	/* Hand spec->stdin_data to a prepared container and collect the result exactly as run()
	 * does; the wall-time limit (spec->timeout_ms) starts now.  At most once per handle.
	 * Returns BRIG_E_UNAVAILABLE, having sent nothing, when the container is no longer
	 * waiting for its code (it exited, the engine restarted): the host may then run the
	 * request elsewhere.  The container is left for discard() to remove. */
	int (*run_prepared)(void *handle, const brig_spec *spec, const brig_run_control *ctl,
			    brig_result *res, brig_error **err);
	/* Remove the container of a handle (used or not) and free the handle.  A failed removal
	 * is logged; the brig label lets `brig gc` find the container later. */
	void (*discard)(void *handle);
} brig_backend;

/* Fields up to and including `run` are required of every plugin. */
#define BRIG_BACKEND_MIN_SIZE (offsetof(brig_backend, run) + sizeof(((brig_backend *)0)->run))

typedef const brig_backend *(*brig_backend_entry_fn)(uint32_t host_abi_major,
						     const brig_host_services *host);

#endif /* BRIG_BACKEND_H */
