/* policy.h - internal view of the policy: THE validator shared by every backend, and the
 * translation policy + request -> container spec.  Only the host (libbrig) includes this;
 * backends see nothing but the resulting brig_spec.
 */
#ifndef BRIG_POLICY_H
#define BRIG_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brig.h"
#include "brig-spec.h"

/* Ranges enforced by the validator (documented in brig-policy(5)). */
#define POLICY_TIMEOUT_MIN      1
#define POLICY_TIMEOUT_MAX      3600
#define POLICY_MEMORY_MB_MIN    16
#define POLICY_MEMORY_MB_MAX    65536
#define POLICY_CPUS_MIN         0.01
#define POLICY_CPUS_MAX         64.0
#define POLICY_PIDS_MIN         8
#define POLICY_PIDS_MAX         4096
#define POLICY_NOFILE_MIN       16
#define POLICY_NOFILE_MAX       65536
#define POLICY_TMPFS_MB_MIN     1
#define POLICY_TMPFS_MB_MAX     4096
#define POLICY_INPUT_MIN        1
#define POLICY_INPUT_MAX        (16 * 1024 * 1024)
#define POLICY_OUTPUT_MIN       1024
#define POLICY_OUTPUT_MAX       (64 * 1024 * 1024)
#define POLICY_CONCURRENT_MIN   1
#define POLICY_CONCURRENT_MAX   64
#define POLICY_SECCOMP_DENY_MAX 128
#define POLICY_WARM_POOL_MAX    16
#define POLICY_BUDGET_MB_MAX    (1024 * 1024)
#define POLICY_GVISOR_PIDS_MAX  32768
/* user "auto": every box a uid of its own from uid_range (per-user kernel budgets such as
 * inotify instances and POSIX message queues are then the box's alone) */
#define POLICY_UID_RANGE_DEFAULT "2000000000-2000001023" /* named in the images: build-images */
#define POLICY_UID_RANGE_MIN     100000
#define POLICY_UID_RANGE_MAX     65536
/* workspaces (src/workspace.c): files that live across runs on a tmpfs volume, so RAM */
#define POLICY_WS_COUNT_MAX    256
#define POLICY_WS_SIZE_MB_MAX  4096
#define POLICY_WS_FILES_MIN    16
#define POLICY_WS_FILES_MAX    1000000
#define POLICY_WS_TTL_MIN      10
#define POLICY_WS_LIFETIME_MAX (30 * 86400)
#define POLICY_WS_TRANSFER_MAX (256L * 1024 * 1024)

/* The `workspaces` object of the policy: all of it the operator's, none of it the agent's. */
typedef struct policy_workspaces {
	bool enabled;             /* false: no workspace can be made or used */
	int max_count;            /* workspaces alive at once (this user's brig) (4) */
	int size_mb;              /* each one's size quota, tmpfs size= (64) */
	int max_files;            /* each one's inode quota, tmpfs nr_inodes= (4096) */
	int idle_ttl_seconds;     /* ended when unused this long (1800) */
	int max_lifetime_seconds; /* ended this long after it was made, used or not (14400) */
	long max_transfer_bytes;  /* one file in or out (put/get) at most (8 MiB) */
} policy_workspaces;

struct brig_policy {
	int timeout_seconds;           /* default wall time per run (5) */
	int max_timeout_seconds;       /* ceiling for a request (30) */
	int memory_mb;                 /* memory = memory+swap (256) */
	double cpus;                   /* (1.0) */
	int pids_limit;                /* processes the program may have (64) */
	int nofile;                    /* RLIMIT_NOFILE (64) */
	int tmpfs_mb;                  /* size of the noexec /tmp (64) */
	long max_input_bytes;          /* code size (65536) */
	long max_output_bytes;         /* stdout + stderr combined (131072) */
	bool network;                  /* false: --network none */
	char *user;                    /* "65534:65534"; uid 0 refused */
	char *images[BRIG_LANG_COUNT]; /* per language; must carry a tag or a digest */
	bool require_pinned;   /* images must be pinned (an image ID or a digest), not a bare tag */
	char *backend;         /* "auto" or a backend name */
	int isolation;         /* minimum brig_isolation (container) */
	char *seccomp_profile; /* "brig" (brig's own profile, policy/seccomp-profile.txt),
				* "engine" (the engine's default) or an absolute path to a JSON
				* profile */
	char **seccomp_deny;   /* more syscall names to deny, NULL-terminated, or NULL for none;
				* never with "engine" */
	int max_concurrent_runs; /* MCP server / library concurrency (4) */
	char *audit_log;         /* path or NULL */
	int warm_pool;           /* started containers kept idle per language, 0: off (2) */
	int memory_budget_mb;    /* cap on (idle + running) * memory_mb for the pool (2048) */
	char *gvisor_runtime;    /* the OCI runtime gVisor boxes run with ("runsc-seccomp") */
	int gvisor_pids_limit;   /* the engine's pids limit under gVisor, 0: translated from
				  * pids_limit (policy/spec.c) */
	bool mask_host_details;  /* mask what would show the host in the box (true) */
	char *uid_range;         /* "FIRST-LAST": the uids of user "auto" */
	policy_workspaces ws;    /* "workspaces": {...} */
	/* egress: "host:port" entries the box may reach through the proxy, NULL-terminated, or
	 * NULL: none (policy/egress.h); never with network true */
	char **egress_allow;
	char **egress_hosts;         /* the proxy's static names, "name=address", or NULL */
	char *gvisor_egress_runtime; /* the OCI runtime of gVisor boxes with egress */
};

/* Validate every field (used after load and after overrides); `origin` names the source. */
int policy_validate(const brig_policy *p, const char *origin, brig_error **err);

/* Parse "FIRST-LAST" (validated already): 0, or -1. */
int policy_uid_range(const char *v, unsigned long long *first, unsigned long long *count);

/* `s` double-quoted, escaped and bounded, for messages (malloc'ed). */
char *policy_quoted(const char *s);

/* ---- image references (image.c) ---- */

/* Image reference check: a tag or a pin is required, and a pin when require_pinned.  0, or -1
 * with the reason (the reference quoted) in `why`. */
int policy_check_image(const char *ref, bool require_pinned, char *why, size_t why_len);
/* What a valid reference pins: "sha256:<64 hex>" (a pointer into ref: the image ID, or the
 * digest after '@'), or NULL for a tag. */
const char *policy_image_pin(const char *ref);
/* What to ask the engine about (malloc'ed): NAME:TAG for NAME:TAG@sha256:..., whose tag must
 * still name the pinned image; the reference itself otherwise. */
char *policy_image_lookup_ref(const char *ref);
/* Is the image the engine found for policy_image_lookup_ref(ref) - its ID and the registry
 * digests it is known by (NAME@sha256:..., NULL-terminated, or NULL) - the one ref pins? */
bool policy_image_pin_holds(const char *ref, const char *id, char *const *repo_digests);
/* The pinned form of ref for the image with ID `id` (malloc'ed): NAME:TAG@ID for a tag, ref
 * itself when it is pinned already. */
char *policy_image_pinned_ref(const char *ref, const char *id);
/* Why the image with ID `id` that ref's lookup found does not hold ref's pin, naming both IDs
 * (malloc'ed). */
char *policy_image_mismatch(const char *ref, const char *id);

/* Read the seccomp profile at absolute `path` (at most 1 MiB, must parse to a JSON object) into
 * *text (malloc'ed).  On failure returns -1 and says why (path included) in `why`. */
int policy_read_seccomp(const char *path, char **text, char *why, size_t why_len);

#endif /* BRIG_POLICY_H */
