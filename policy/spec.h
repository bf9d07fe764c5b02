/* spec.h - the container spec: the single point where a validated policy and a request become
 * every flag of one container.  Backends only render it (docker CLI argv, Engine API JSON); they
 * never read the policy.  The struct is part of the backend ABI (backends/brig-backend.h): fields
 * are only ever appended, and struct_size tells a backend which ones exist.
 */
#ifndef BRIG_SPEC_H
#define BRIG_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brig.h"

/* The box's nameserver when it has no network: RFC 5737 documentation space (TEST-NET-2), which
 * routes nowhere.  Without one the engine copies the host's resolv.conf into the box (measured:
 * the host's DNS server showed).  TEST-NET-1 is not used: lab VMs number their own links from
 * it (this one's default gateway was 192.0.2.1). */
#define BRIG_NEUTRAL_DNS "198.51.100.1"

typedef struct brig_spec {
	size_t struct_size;

	char *name;     /* container name, "brig-" + 16 hex digits, unique per run */
	char *language; /* "python" | "node" | "shell" */
	char *image;    /* tag- or digest-qualified reference, never pulled */
	char **argv;    /* command, NULL-terminated, e.g. {"python3", "-", NULL} */
	char **env;     /* "KEY=VALUE", NULL-terminated: the complete environment */
	char **labels;  /* "key=value", NULL-terminated; always includes "brig=1" */
	char *workdir;  /* "/tmp" */
	char *user;     /* "65534:65534" */
	char *hostname; /* neutral name inside the box */
	char *network;  /* "none", or "bridge" when the operator allowed network */
	char *runtime;  /* OCI runtime as registered in the engine: "runc", "runsc", ... */

	bool read_only_rootfs;
	char *tmpfs_path;    /* "/tmp" */
	char *tmpfs_options; /* "rw,noexec,nosuid,nodev,size=64m" */
	int64_t shm_bytes;   /* size of /dev/shm (writable even with a read-only root) */
	int64_t memory_bytes;
	int64_t memory_swap_bytes; /* == memory_bytes: no swap */
	int64_t nano_cpus;         /* 1e9 per CPU */
	int64_t pids_limit;        /* as given to the engine (already translated for runsc) */
	int64_t pids_guest;        /* the process budget the policy promises to the program */
	int64_t nofile;            /* RLIMIT_NOFILE soft = hard */
	bool cap_drop_all;
	bool no_new_privileges;
	char *seccomp_profile; /* engine JSON profile text; NULL: the engine's default profile */
	char *seccomp_name;    /* where the profile came from, for explain */
	char *log_driver;      /* "none": output only through the attach stream */

	const char *stdin_data; /* the code (borrowed from the request) */
	size_t stdin_len;
	int64_t timeout_ms;      /* wall time, from the container start request */
	size_t max_output_bytes; /* stdout + stderr combined, enforced while reading */
	size_t max_input_bytes;

	/* --- appended after ABI 1.0 (check struct_size) --- */
	char *dns; /* the box's only nameserver; without a network a neutral address that routes
		    * nowhere, so the host's resolver configuration never shows inside */
	/* RLIMIT_NPROC (soft = hard) for the box's user, 0: not set.  Under gVisor it is
	 * pids_guest: the sentry counts only the sandbox's own tasks, so it is the program's exact
	 * process budget there (under runc it would count every process of that uid on the host,
	 * so it is not used) */
	int64_t nproc;
} brig_spec;

#endif /* BRIG_SPEC_H */
