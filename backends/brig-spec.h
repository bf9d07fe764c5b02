/* brig-spec.h - the container spec: the single, final description of one box.
 *
 * libbrig builds it from the validated policy, the request and the traits of the runtime that
 * will run it (policy/spec.c); every runtime-specific decision (gVisor's exit-status wrapper,
 * its pids translation, the environment it needs, the output slack of the wrapper's line, the
 * seccomp rendering) is already made when a backend sees it.  Backends render it (docker CLI
 * argv, Engine API JSON) and execute it, nothing more: `brig explain`, the audit line, the warm
 * pool's "same box" test and the parity tests all read this same struct.
 *
 * Part of the public backend ABI (brig-backend(7)).  Rules for this struct and every struct
 * that crosses the ABI: struct_size is the first member; fields are only ever appended; a
 * reader touches a field only if struct_size covers it (BRIG_HAS_FIELD).  The host owns the
 * spec; a backend never modifies or frees it.
 */
#ifndef BRIG_SPEC_H
#define BRIG_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brig.h"

/* Does the struct at `s` (with its own struct_size) include `field`? */
#define BRIG_HAS_FIELD(s, type, field) \
	((s)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* The box's nameserver when it has no network: RFC 5737 documentation space (TEST-NET-2), which
 * routes nowhere.  Without one the engine copies the host's resolv.conf into the box (measured:
 * the host's DNS server showed).  TEST-NET-1 is not used: lab VMs number their own links from
 * it. */
#define BRIG_NEUTRAL_DNS "198.51.100.1"

/* One mount besides the root and the tmpfs: a read-only bind of a host file (brig's init), a
 * named volume (a workspace).  Rendered as --mount / HostConfig.Mounts. */
typedef enum brig_mount_type {
	BRIG_MOUNT_BIND = 1,   /* source: absolute host path */
	BRIG_MOUNT_VOLUME = 2, /* source: volume name */
} brig_mount_type;

typedef struct brig_mount {
	size_t struct_size;
	brig_mount_type type;
	char *source;
	char *target;   /* absolute path in the box */
	bool read_only; /* the box cannot write it */
	bool no_copy;   /* volume: the engine must not copy the image's directory over it */
} brig_mount;

/* A box's egress: it joins only `network`, an --internal Docker network without an address of
 * the host's on it, where the proxy (squid, configured from the policy's validated allowlist)
 * is the only way out.  The box's env points HTTP(S)_PROXY (both cases) at the proxy; it has no
 * resolver (spec->dns is the neutral one): the proxy resolves names.  The backend that runs the
 * box makes sure the proxy is up (brig_backend.egress_ensure) before it creates the box. */
/* The name the host's own requests to a proxy use (health checks, log marks); the proxy's
 * configuration refuses them, and hands a CONNECT to it to its TLS port (the health check of
 * both its ports). */
#define BRIG_EGRESS_HEALTH_HOST "brig-health.invalid"

typedef struct brig_egress {
	size_t struct_size;
	char *digest;        /* first 12 hex digits of the SHA-256 of the allowlist + hosts map */
	char *network;       /* the internal network, "brig-egress-" + digest */
	char *subnet;        /* its IPv4 subnet, "10.208.4.0/22" */
	char *gateway;       /* the address Docker reserves in it (the host gets none) */
	char *outer_network; /* the proxies' network with a route out */
	char *proxy_name;    /* the proxy's container name, "brig-egress-" + digest */
	char *proxy_image;
	char *proxy_address; /* its address on `network` */
	int proxy_port;      /* the boxes' port; its TLS port is proxy_port + 1, on its loopback */
	char **allow;        /* the allowlist, "host:port", NULL-terminated */
	char **hosts;     /* the proxy's static names, "name=address", NULL-terminated, or NULL */
	char *config;     /* the proxy's squid.conf */
	char *hosts_file; /* the proxy's hosts file (from `hosts`) */
	/* the host directory holding squid.conf and hosts, mounted read-only into the proxy at
	 * /etc/brig-egress; the host writes it before egress_ensure */
	char *config_dir;
	/* first 16 hex digits of the SHA-256 of config + hosts_file: a running proxy labelled
	 * with another (the host's addresses changed) is replaced */
	char *config_digest;
} brig_egress;

typedef struct brig_spec {
	size_t struct_size;

	/* ---- identity ---- */
	char *name;     /* container name, "brig-" + 16 hex digits, unique per box */
	char *language; /* "python" | "node" | "shell" */
	char *image;    /* the policy's reference (tag, digest or ID), never pulled; see image_id */
	char **labels;  /* "key=value", NULL-terminated; always includes "brig=1" and the owner */

	/* ---- the process ---- */
	char **argv;    /* the complete command as it runs, wrapper included, NULL-terminated */
	char **env;     /* "KEY=VALUE", NULL-terminated: the complete environment */
	char *workdir;  /* "/tmp" */
	char *user;     /* "65534:65534" */
	char *hostname; /* neutral name inside the box */
	/* When non-NULL, brig-init (the box's PID 1, argv[0]) prints this line on stderr when the
	 * program has ended, whatever its status: under gVisor an exit 2 without it is the
	 * sandbox's kernel crashing.  The host takes the line out (spec_finish_outcome). */
	char *exit_marker;

	/* ---- network ---- */
	char *network; /* "none", "bridge" when the operator allowed the network, or the egress
			* network (egress below) */
	char *dns;     /* the box's only nameserver, or NULL for the engine's choice */

	/* ---- runtime and file system ---- */
	char *runtime; /* OCI runtime as registered in the engine: "runc", "runsc-seccomp", ... */
	bool read_only_rootfs;
	char *tmpfs_path;    /* "/tmp" */
	char *tmpfs_options; /* "rw,noexec,nosuid,nodev,size=64m" */
	int64_t shm_bytes;   /* size of /dev/shm (writable even with a read-only root) */
	brig_mount **mounts; /* NULL-terminated, or NULL: none */
	/* Paths the box must see empty (files read as /dev/null, directories as an empty
	 * read-only tmpfs): the engine's own defaults and what else would show the host (its
	 * kernel command line, host-wide counters); NULL-terminated, or NULL: the engine's
	 * defaults.  The engine's MaskedPaths: the list replaces the engine's, so it repeats it. */
	char **masked_paths;
	bool cgroupns_private; /* the box sees its own cgroup as / (no host container ids) */

	/* ---- limits, as the engine gets them ---- */
	int64_t memory_bytes;
	int64_t memory_swap_bytes; /* == memory_bytes: no swap */
	int64_t nano_cpus;         /* 1e9 per CPU */
	int64_t pids_limit;        /* the engine's pids cgroup limit (translated for gVisor) */
	int64_t pids_guest;        /* the process budget the policy promises to the program */
	int64_t nofile;            /* RLIMIT_NOFILE soft = hard */
	int64_t nproc;             /* RLIMIT_NPROC soft = hard, 0: not set (see policy/spec.c) */
	int64_t core;              /* RLIMIT_CORE soft = hard: 0, no core dumps */

	/* ---- privileges ---- */
	bool cap_drop_all;
	bool no_new_privileges;
	char *seccomp_profile; /* engine JSON profile text; NULL: the engine's default profile */
	char *seccomp_name;    /* where the profile came from, for explain */
	char *log_driver;      /* "none": output only through the attach stream */

	/* ---- this run ---- */
	/* The box's stdin, as the backend must stream it: brig-init's header line ("BRIG-DEADLINE
	 * <ms>": the box's own deadline), then the code.  Owned by the host. */
	const char *stdin_data;
	size_t stdin_len;
	int64_t timeout_ms;      /* wall time, from the container start (or the hand-over) */
	size_t max_output_bytes; /* stdout + stderr combined the backend keeps; more kills the run
				  * (the program's cap plus the wrapper line's slack) */
	size_t output_limit;     /* the program's own cap (the policy's max_output_bytes) */
	size_t max_input_bytes;

	/* ---- appended in ABI 2.1 ---- */
	/* The image the box starts from, "sha256:<64 hex>": what `image` named when the host
	 * looked it up for this box, verified against the policy's pin (BRIG_FEATURE_IMAGE_ID).
	 * NULL when the host did not look it up: the box starts from `image`. */
	char *image_id;

	/* ---- appended in ABI 2.2: workspaces ---- */
	/* The workspace the box works in (its id), or NULL: then one of `mounts` is the
	 * workspace's volume at /workspace, and the box starts there.  brig_spec never says how
	 * the volume was made (the host's business, src/workspace.c). */
	char *workspace;

	/* ---- appended in ABI 2.3: egress ---- */
	/* The box's way out through the proxy, or NULL: no egress (network is "none" or
	 * "bridge").  When set, `network` is egress->network and a backend needs
	 * BRIG_FEATURE_NETWORKS. */
	brig_egress *egress;

	/* ---- appended in ABI 2.4: the box's network holder ---- */
	/* With egress: the container whose network namespace the box runs in (`network` is
	 * "container:" + its name; the box's hostname and dns are NULL, the holder has them).  The
	 * holder sits on egress->network and runs nothing of the agent's; the host starts it
	 * (brig_backend.start_detached) before the box and removes it after.  The engine wires a
	 * network into a container in ~400 ms (dockerd 20.10, a veth into the bridge) and releases
	 * it at the container's exit: a holder started ahead of the call (the warm pool) takes
	 * both out of the call.  NULL without egress. */
	struct brig_spec *net_holder;

	/* ---- appended in ABI 2.5 ---- */
	/* start_detached(): the engine removes the container when it exits (a holder whose sleep
	 * ended); remove() of such a container stops it and waits for the engine's removal. */
	bool auto_remove;
} brig_spec;

/* The reference a backend starts the box from: the verified ID, so that a tag moved between
 * the host's lookup and the container's creation cannot put another image in the box. */
static inline const char *brig_spec_image(const brig_spec *s)
{
	return BRIG_HAS_FIELD(s, brig_spec, image_id) && s->image_id ? s->image_id : s->image;
}

#endif /* BRIG_SPEC_H */
