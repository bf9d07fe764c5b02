/* spec.c - validated policy + request + runtime traits -> the final container spec, and what a
 * backend observed -> the result.  The single point where the policy becomes flags, and the
 * single owner of every runtime-specific decision (see brig-spec.h): every backend renders the
 * same box, and `brig explain`, the audit line and the warm pool see exactly what runs.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "audit.h"
#include "egress.h"
#include "lang.h"
#include "probe.h"
#include "policy-seccomp.h"
#include "spec.h"
#include "util.h"

#define MIB               ((int64_t)1024 * 1024)
#define NAME_PREFIX       "brig-"
#define NAME_RANDOM_BYTES 8
#define SHM_MB_MAX        16 /* /dev/shm stays small: /tmp is the scratch space */

static void mounts_free(brig_mount **m);

static inline void spec_freep(brig_spec **s)
{
	spec_free(*s);
}
#define cleanup_spec __attribute__((cleanup(spec_freep)))

int spec_random_name(char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[NAME_RANDOM_BYTES];
	size_t got = 0;
	if (!buf || len < sizeof NAME_PREFIX + 2 * NAME_RANDOM_BYTES) {
		errno = ERANGE;
		return -1;
	}
	while (got < sizeof rnd) {
		ssize_t n = getrandom(rnd + got, sizeof rnd - got, 0);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0)
			got += (size_t)n;
	}
	memcpy(buf, NAME_PREFIX, sizeof NAME_PREFIX - 1);
	char *d = buf + sizeof NAME_PREFIX - 1;
	for (size_t i = 0; i < sizeof rnd; i++) {
		*d++ = hex[rnd[i] >> 4];
		*d++ = hex[rnd[i] & 15];
	}
	*d = '\0';
	return 0;
}

bool spec_ws_id_valid(const char *id)
{
	return id && strlen(id) == SPEC_WS_ID_HEX &&
	       strspn(id, "0123456789abcdef") == SPEC_WS_ID_HEX;
}

/* "brig.owner=PID:STARTTIME:PIDNS": with the start time, gc can tell a live owner from a reused
 * pid; with the pid namespace, a pid of another namespace from one of ours. */
static int owner_label(char **out, brig_error **err)
{
	cleanup_free char *id = proc_owner_id();
	if (!id)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot read /proc/self/stat");
	*out = xasprintf("brig.owner=%s", id);
	return 0;
}

/* ---- gVisor's traits ------------------------------------------------------------------------
 * Everything below that depends on the isolation level is what gVisor (runsc 20221219, ptrace
 * platform) needs of a box; runc boxes get the policy as it is. */

/* The engine's pids limit under gVisor, measured on the 2-vCPU host lab machine (peak
 * pids.current of the container's pids cgroup, runsc-seccomp, the default policy otherwise):
 *   - the cgroup counts gVisor's own host tasks: sentry threads, gofer threads and, for every
 *     guest address space, a ptrace stub process with one thread per sentry thread that ever
 *     ran it; stubs are pooled, never freed, so the count only grows during a run;
 *   - idle python/shell 38-40, node 45; python with 60 threads 102; node with 8 workers 76;
 *     a busybox script running 200 commands 138; python forking 60 children 472-483; shell with
 *     60 background `sleep`s 635-680; 8 shell loops spawning `ls` for 30 s: 900-1289;
 *   - a fork bomb (guest held to 64 tasks by RLIMIT_NPROC, the spec's nproc): 2164 after 5 s,
 *     5489 after 30 s, 6389 after 100 s (levelling off); with 16 tasks 375, with 8 tasks 154
 *     after 30 s: it grows with the square of the guest's budget;
 *   - at the limit the sentry panics (exit 2, output lost): reported as sandbox_error (see
 *     spec_finish_outcome), but it must not happen to a program within its budget.
 * The guest's own budget is RLIMIT_NPROC, enforced by gVisor per sandbox; this limit is the
 * host's bound on gVisor itself, set above everything measured (a fork bomb at the default 64
 * ends as timeout or oom, never as a panic) and clamped at 32768, the kernel's default pid_max:
 * beyond ~100 guest processes the host's pid_max, not this limit, bounds a sandbox.  The
 * policy's gvisor_pids_limit replaces the translation (an operator's host may differ).  Runc
 * counts the program's processes only: the limit is the budget. */
#define GVISOR_PIDS_BASE 1024
#define GVISOR_PIDS_MAX  32768
int64_t spec_engine_pids_limit(const brig_policy *p, int64_t guest, int isolation)
{
	if (isolation != BRIG_ISOLATION_GVISOR)
		return guest;
	if (p && p->gvisor_pids_limit > 0)
		return p->gvisor_pids_limit;
	if (guest > 128) /* 1024 + 2 * 128^2 > GVISOR_PIDS_MAX already; no overflow */
		return GVISOR_PIDS_MAX;
	int64_t n = GVISOR_PIDS_BASE + 2 * guest * guest;
	return n < GVISOR_PIDS_MAX ? n : GVISOR_PIDS_MAX;
}

/* Every box runs its program under brig-init (src/init/brig-init.c), bind-mounted read-only
 * from the host as PID 1: the box's own deadline (from the header line brig writes before the
 * code), so that a box never outlives a brig that was killed; the reaper of its orphans; and,
 * under gVisor, the witness of the program's own exit status.  When gVisor's kernel (the
 * sentry) panics - at the latest when the sandbox's host tasks reach the engine's pids limit -
 * runsc exits 2 and the rest of the output is lost: nothing in the engine's state tells it from
 * a program that exits 2 (both are ExitCode 2, State.Error empty, the same events).  So under
 * gVisor brig-init prints a marker on stderr when the program has ended, whatever its status;
 * spec_finish_outcome takes the line out again.  No signal ends a process with 2: exit 2
 * without the line is the sentry's.  A sentry that died some other way (exit 137 once in CI,
 * at the same pids limit) is not told from a program that killed its PID 1 (gVisor gives
 * PID 1 no signal protection; the marker is in /proc/1/cmdline): that box keeps its status,
 * with a notice that brig-init did not see the program end. */
#define MARKER_SUFFIX ":exited"

static void init_wrap(brig_spec *s, const spec_target *t)
{
	bool gvisor = t->isolation == BRIG_ISOLATION_GVISOR;
	if (gvisor)
		s->exit_marker = xasprintf("%s" MARKER_SUFFIX, s->name);
	size_t n = strv_len(s->argv), k = 0;
	char **argv = xcalloc(n + 5, sizeof *argv);
	argv[k++] = xstrdup(SPEC_INIT_PATH);
	if (gvisor) {
		argv[k++] = xstrdup("--marker");
		argv[k++] = xstrdup(s->exit_marker);
	}
	argv[k++] = xstrdup("--");
	memcpy(argv + k, s->argv, n * sizeof *argv);
	free(s->argv); /* its strings moved */
	s->argv = argv;
	brig_mount *m = xcalloc(1, sizeof *m);
	*m = (brig_mount){ .struct_size = sizeof *m,
			   .type = BRIG_MOUNT_BIND,
			   .source = xstrdup(t->init),
			   .target = xstrdup(SPEC_INIT_PATH),
			   .read_only = true };
	s->mounts = xcalloc(2, sizeof(brig_mount *));
	s->mounts[0] = m;
	/* room in the backend's cap for the marker line; the program keeps its own cap */
	if (gvisor)
		s->max_output_bytes += strlen(s->exit_marker) + 1;
}

/* gVisor (20221219) answers a write of more than PIPE_BUF bytes to the box's stdout or stderr
 * - host pipes to dockerd - with a short count once the pipe is full, where Linux blocks until
 * all is written.  Python with PYTHONUNBUFFERED writes through a raw FileIO and drops the rest
 * silently (measured: print of 10 MiB -> 64 KiB delivered, exit 0; 8 KiB lines in a loop lose
 * ~16%).  Buffered, Python retries short writes; node and busybox always do.  The price: output
 * still in Python's buffer (< 8 KiB) is lost when brig kills the program (flush=True keeps it). */
static void gvisor_env(brig_spec *s)
{
	size_t k = 0;
	for (size_t i = 0; s->env[i]; i++) {
		if (strncmp(s->env[i], "PYTHONUNBUFFERED=", 17) == 0)
			free(s->env[i]);
		else
			s->env[k++] = s->env[i];
	}
	s->env[k] = NULL;
}

/* Every decision that depends on the runtime, made once, here. */
static void apply_runtime_traits(brig_spec *s, const brig_policy *p, const spec_target *t)
{
	init_wrap(s, t);
	s->pids_guest = p->pids_limit;
	if (t->isolation != BRIG_ISOLATION_GVISOR) {
		/* runc: the pids cgroup is the budget, brig-init's own process added (RLIMIT_NPROC
		 * would count every process of the uid on the host, so it is not used) */
		s->pids_limit = p->pids_limit + 1;
		return;
	}
	s->pids_limit = spec_engine_pids_limit(p, p->pids_limit, t->isolation);
	gvisor_env(s);
	/* gVisor counts RLIMIT_NPROC per sandbox: the program's budget, plus brig-init */
	s->nproc = p->pids_limit + 1;
}

/* The box's stdin: brig-init's header (the box's own deadline: the run's limit plus a grace),
 * then the code. */
static void compose_stdin(brig_spec *s, const brig_request *req)
{
	char head[64];
	int n = snprintf(head, sizeof head, SPEC_HEADER_FORMAT,
			 (long long)s->timeout_ms + SPEC_BOX_GRACE_MS);
	char *buf = xmalloc((size_t)n + req->code_len + 1);
	memcpy(buf, head, (size_t)n);
	memcpy(buf + n, req->code, req->code_len);
	buf[(size_t)n + req->code_len] = '\0';
	s->stdin_data = buf;
	s->stdin_len = (size_t)n + req->code_len;
}

char *spec_describe_traits(const brig_spec *s)
{
	strbuf sb;
	sb_init(&sb);
	sb_printf(&sb,
		  "# PID 1 is brig-init (%s, read-only): the box's own deadline (%d ms after the "
		  "run's limit,\n#   read from the first line of stdin), then the program\n",
		  SPEC_INIT_PATH, SPEC_BOX_GRACE_MS);
	if (s->exit_marker)
		sb_printf(
			&sb,
			"# brig-init prints \"%s\" on stderr when the program has ended\n"
			"#   (brig takes it out); exit 2 without it is gVisor's kernel crashing\n",
			s->exit_marker);
	if (s->nproc > 0)
		sb_printf(&sb, "# processes: RLIMIT_NPROC %lld (the program's %lld + brig-init)\n",
			  (long long)s->nproc, (long long)s->pids_guest);
	if (s->pids_limit == s->pids_guest + 1)
		sb_printf(&sb, "# pids limit %lld: the program's %lld + brig-init\n",
			  (long long)s->pids_limit, (long long)s->pids_guest);
	else if (s->pids_limit != s->pids_guest)
		sb_printf(&sb,
			  "# pids limit %lld: the engine's cgroup also counts gVisor's own host "
			  "threads\n",
			  (long long)s->pids_limit);
	bool unbuffered = false;
	for (char **e = s->env; e && *e; e++)
		unbuffered = unbuffered || strncmp(*e, "PYTHONUNBUFFERED=", 17) == 0;
	if (strcmp(s->language, "python") == 0 && !unbuffered)
		sb_puts(&sb, "# env: no PYTHONUNBUFFERED (gVisor cuts big writes to a full pipe\n"
			     "#   short; buffered Python writes the rest, unbuffered drops it)\n");
	if (s->workspace)
		sb_printf(&sb,
			  "# workspace %s: volume " SPEC_WS_VOLUME_PREFIX
			  "%s (tmpfs: size and file quotas,\n#   noexec, nosuid, nodev) at "
			  "%s, the box starts there\n",
			  s->workspace, s->workspace, SPEC_WS_PATH);
	if (s->max_output_bytes != s->output_limit)
		sb_printf(&sb,
			  "# output: the program's cap is %zu bytes; %zu are read to leave room "
			  "for the marker line\n",
			  s->output_limit, s->max_output_bytes);
	if (s->egress) {
		const brig_egress *e = s->egress;
		sb_printf(
			&sb,
			"# egress: the box joins only %s (%s, --internal, no address of the "
			"host's on it),\n"
			"#   in the network namespace of its holder %s (started first, runs "
			"sleep),\n"
			"#   and reaches the proxy %s at %s:%d (image %s, also on %s); no "
			"resolver\n"
			"#   in the box (the proxy resolves names and refuses private, loopback,\n"
			"#   link-local, CGNAT, multicast and the host's addresses); allowed:\n",
			e->network, e->subnet, s->net_holder ? s->net_holder->name : "(none)",
			e->proxy_name, e->proxy_address, e->proxy_port, e->proxy_image,
			e->outer_network);
		for (char **a = e->allow; *a; a++)
			sb_printf(&sb, "#     %s\n", *a);
		for (char **h = e->hosts; h && *h; h++)
			sb_printf(&sb, "#   proxy's static name %s\n", *h);
		sb_printf(&sb, "#   proxy configuration: %s/squid.conf\n", e->config_dir);
		if (strncmp(s->runtime, "runsc", 5) == 0)
			sb_printf(
				&sb,
				"# runtime %s: gVisor with --network=host: the box's network goes\n"
				"#   through the host kernel's stack (in its network holder's "
				"namespace), "
				"not\n"
				"#   gVisor's netstack\n",
				s->runtime);
	}
	return sb_steal(&sb);
}

/* ---- the workspace --------------------------------------------------------------------------- */

static void mount_append(brig_spec *s, brig_mount *m)
{
	size_t n = 0;
	while (s->mounts && s->mounts[n])
		n++;
	s->mounts = xrealloc(s->mounts, (n + 2) * sizeof(brig_mount *));
	s->mounts[n] = m;
	s->mounts[n + 1] = NULL;
}

static void label_append(brig_spec *s, char *label)
{
	size_t n = strv_len(s->labels);
	s->labels = xrealloc(s->labels, (n + 2) * sizeof *s->labels);
	s->labels[n] = label;
	s->labels[n + 1] = NULL;
}

#define CHANGES_SUFFIX ":changes"
#define TREE_LINE_MAX  16384 /* src/init/tree.h: the longest change line */

static brig_mount *ws_mount(const char *id, bool read_only)
{
	brig_mount *m = xcalloc(1, sizeof *m);
	/* nocopy: else the engine copies the image's mount point (root's, 0755) over the
	 * volume's root, and the box's uid cannot write it (hostlab FINDINGS) */
	*m = (brig_mount){ .struct_size = sizeof *m,
			   .type = BRIG_MOUNT_VOLUME,
			   .source = xasprintf(SPEC_WS_VOLUME_PREFIX "%s", id),
			   .target = xstrdup(SPEC_WS_PATH),
			   .read_only = read_only,
			   .no_copy = true };
	return m;
}

/* The box works in the workspace: its volume at /workspace, the box starts there, and the
 * label names it (the workspace id on the box, for gc and for whoever lists containers). */
static int add_workspace(brig_spec *s, const char *id, brig_error **err)
{
	if (!spec_ws_id_valid(id))
		return brig_fail(err, BRIG_E_USAGE, 0, "not a workspace id");
	mount_append(s, ws_mount(id, false));
	free(s->workdir);
	s->workdir = xstrdup(SPEC_WS_PATH);
	label_append(s, xasprintf("brig.workspace=%s", id));
	s->workspace = xstrdup(id);
	/* brig-init --changes TAG: after the program, one line on stderr naming the files it
	 * created or changed (src/init/tree.h); TAG is made from the box's name like the exit
	 * marker, and the backend's cap leaves room for the line */
	size_t n = strv_len(s->argv), k = 1;
	s->argv = xrealloc(s->argv, (n + 3) * sizeof *s->argv);
	memmove(s->argv + k + 2, s->argv + k, (n - k + 1) * sizeof *s->argv);
	s->argv[k] = xstrdup("--changes");
	s->argv[k + 1] = xasprintf("%s" CHANGES_SUFFIX, s->name);
	if (s->exit_marker) { /* brig-init takes --marker first */
		char *a = s->argv[k], *b = s->argv[k + 1];
		memmove(s->argv + k, s->argv + k + 2, 2 * sizeof *s->argv);
		s->argv[k + 2] = a;
		s->argv[k + 3] = b;
	}
	s->max_output_bytes += TREE_LINE_MAX + strlen(s->argv[s->exit_marker ? k + 3 : k + 1]) + 2;
	return 0;
}

/* ---- the request ----------------------------------------------------------------------------- */

/* The effective timeout in seconds; *clamped_from is the requested one when it was clamped. */
static int resolve_timeout(const brig_policy *p, const brig_request *req, brig_timeout_mode mode,
			   int *timeout, int *clamped_from, brig_error **err)
{
	int t = req->timeout_seconds;
	*clamped_from = 0;
	if (t < 0)
		return brig_fail(err, BRIG_E_USAGE, 0, "timeout %d s is negative", t);
	if (t == 0)
		t = p->timeout_seconds;
	if (t > p->max_timeout_seconds) {
		if (mode != BRIG_TIMEOUT_CLAMP)
			return brig_fail(
				err, BRIG_E_REFUSED, 0,
				"timeout %d s is above the policy's max_timeout_seconds (%d)", t,
				p->max_timeout_seconds);
		*clamped_from = t;
		t = p->max_timeout_seconds;
	}
	*timeout = t;
	return 0;
}

/* Everything that can refuse the request, checked before anything is allocated. */
static int check_request(const brig_policy *p, const brig_request *req, int isolation,
			 brig_error **err)
{
	if (!lang_get(req->language))
		return brig_fail(err, BRIG_E_USAGE, 0, "unknown language %d", (int)req->language);
	if (!req->code)
		return brig_fail(err, BRIG_E_USAGE, 0, "the request has no code");
	if (req->code_len > (size_t)p->max_input_bytes)
		return brig_fail(err, BRIG_E_REFUSED, 0,
				 "the code is %zu bytes, above the policy's max_input_bytes (%ld)",
				 req->code_len, p->max_input_bytes);
	if (isolation != BRIG_ISOLATION_CONTAINER && isolation != BRIG_ISOLATION_GVISOR)
		return brig_fail(err, BRIG_E_USAGE, 0, "unknown isolation level %d", isolation);
	/* The dispatcher chooses the backend; this is the last line against a silent downgrade. */
	if (isolation < p->isolation)
		return brig_fail(
			err, BRIG_E_UNAVAILABLE, 0,
			"the policy requires gvisor isolation; this backend provides container");
	return 0;
}

/* ---- the box --------------------------------------------------------------------------------- */

static int fill_identity(brig_spec *s, const brig_policy *p, brig_language lang,
			 const char *runtime, const char *install, const char *user,
			 brig_error **err)
{
	char name[sizeof NAME_PREFIX + 2 * NAME_RANDOM_BYTES];
	if (spec_random_name(name, sizeof name) < 0)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot make a container name");
	cleanup_free char *owner = NULL;
	int r = owner_label(&owner, err);
	if (r < 0)
		return r;
	const lang_info *li = lang_get(lang);
	s->name = xstrdup(name);
	s->language = xstrdup(li->name);
	s->image = xstrdup(p->images[lang]);
	s->argv = strv_copy((char *const *)li->argv);
	s->env = strv_copy((char *const *)li->env);
	s->labels = xcalloc(5, sizeof *s->labels);
	s->labels[0] = xstrdup("brig=1");
	s->labels[1] = steal_pointer(&owner);
	s->labels[2] = xasprintf("brig.language=%s", li->name);
	if (install)
		s->labels[3] = xasprintf("brig.install=%s", install);
	s->workdir = xstrdup("/tmp");
	s->user = xstrdup(user ? user : p->user);
	s->hostname = xstrdup("sandbox");
	s->network = xstrdup(p->network ? "bridge" : "none");
	s->dns = p->network ? NULL : xstrdup(BRIG_NEUTRAL_DNS);
	s->runtime = xstrdup(runtime);
	return 0;
}

/* What a box would otherwise read of the host under runc (gVisor shows its own /proc and /sys
 * whatever the engine is told), measured in a box on the 2-vCPU lab VM: the engine's default
 * masks, which a list replaces and so repeats, and
 *   - the VM's kernel command line (its boot parameters and its init's arguments);
 *   - host-wide counters that also tell of other boxes' activity: CPU time (stat), load
 *     (loadavg), disk traffic (diskstats), pressure stall information, interrupts;
 *   - the kernel's own identity: vmcoreinfo, build notes, BTF type data, boot parameters.
 * What stays visible under runc (brig(1) says so): the kernel release and /proc/self/mountinfo
 * (the engine's overlay paths), which no mask can cover per process. */
static const char *const masked_paths[] = {
	/* the engine's defaults (moby 20.10, oci/defaults.go) */
	"/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
	"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
	/* brig's */
	"/proc/cmdline", "/proc/stat", "/proc/loadavg", "/proc/diskstats", "/proc/pressure",
	"/proc/interrupts", "/proc/softirqs", "/sys/kernel/vmcoreinfo", "/sys/kernel/notes",
	"/sys/kernel/btf", "/sys/kernel/boot_params", NULL
};

static void fill_limits(brig_spec *s, const brig_policy *p)
{
	s->read_only_rootfs = true;
	s->tmpfs_path = xstrdup("/tmp");
	s->tmpfs_options = xasprintf("rw,noexec,nosuid,nodev,size=%dm", p->tmpfs_mb);
	s->shm_bytes = (p->tmpfs_mb < SHM_MB_MAX ? p->tmpfs_mb : SHM_MB_MAX) * MIB;
	s->memory_bytes = p->memory_mb * MIB;
	s->memory_swap_bytes = s->memory_bytes; /* equal: no swap */
	/* cpus is validated positive and small: rounding by hand spares brig libm */
	s->nano_cpus = (int64_t)(p->cpus * 1e9 + 0.5);
	s->nofile = p->nofile;
	s->core = 0; /* no core dumps: on hosts that pipe them to a collector they reach its disk */
	s->cgroupns_private = true;
	if (p->mask_host_details)
		s->masked_paths = strv_copy((char *const *)masked_paths);
	s->cap_drop_all = true;
	s->no_new_privileges = true;
	s->log_driver = xstrdup("none");
	s->output_limit = (size_t)p->max_output_bytes;
	s->max_output_bytes = s->output_limit;
	s->max_input_bytes = (size_t)p->max_input_bytes;
}

/* The ID the box starts from: what the engine found for the policy's reference when the host
 * looked it up, and only if that is the image the policy pins.  A rebuilt or retagged image is
 * refused here, before anything starts; the pool's "same box" test then keys on the ID, so a
 * box started from the old image is never handed a run of the new one. */
static int fill_image_id(brig_spec *s, const brig_image_info *found, brig_error **err)
{
	if (!found)
		return 0;
	if (!policy_image_pin_holds(s->image, found->id, found->repo_digests)) {
		cleanup_free char *why = policy_image_mismatch(s->image, found->id);
		return brig_fail(err, BRIG_E_REFUSED, 0, "images.%s: %s; nothing was started",
				 s->language, why);
	}
	s->image_id = xstrdup(found->id);
	return 0;
}

/* An operator's file, re-read now: the profile in force is the file as it is at this run. */
static int seccomp_file(brig_spec *s, const brig_policy *p, brig_error **err)
{
	char why[512];
	cleanup_free char *text = NULL;
	if (policy_read_seccomp(p->seccomp_profile, &text, why, sizeof why) < 0)
		return brig_fail(err, BRIG_E_POLICY, 0, "seccomp: %s", why);
	if (!p->seccomp_deny || !p->seccomp_deny[0]) {
		s->seccomp_profile = steal_pointer(&text);
		s->seccomp_name = xstrdup(p->seccomp_profile);
		return 0;
	}
	if (policy_seccomp_json_deny(text, p->seccomp_deny, &s->seccomp_profile, why, sizeof why) <
	    0)
		return brig_fail(err, BRIG_E_POLICY, 0, "seccomp: %s: %s", p->seccomp_profile, why);
	cleanup_free char *names = policy_seccomp_join(p->seccomp_deny);
	s->seccomp_name = xasprintf("%s + deny [%s]", p->seccomp_profile, names);
	return 0;
}

/* brig's own profile (rendered for the isolation level: runsc --oci-seccomp answers EPERM
 * where a rule asks for another errno, see policy/seccomp.c), the engine's default (no
 * profile given: the engine applies its own), or an operator's file. */
static int fill_seccomp(brig_spec *s, const brig_policy *p, int isolation, brig_error **err)
{
	if (strcmp(p->seccomp_profile, "engine") == 0) {
		s->seccomp_name = xstrdup("engine default");
		return 0;
	}
	if (strcmp(p->seccomp_profile, "brig") == 0)
		return policy_seccomp_brig(p->seccomp_deny, isolation, &s->seccomp_profile,
					   &s->seccomp_name, err);
	return seccomp_file(s, p, err);
}

int brig_policy_seccomp_json(const brig_policy *p, int isolation, char **json, char **label,
			     brig_error **err)
{
	brig_spec s = { .struct_size = sizeof s };
	*json = NULL;
	if (label)
		*label = NULL;
	if (isolation != BRIG_ISOLATION_CONTAINER && isolation != BRIG_ISOLATION_GVISOR)
		return brig_fail(err, BRIG_E_USAGE, 0, "unknown isolation level %d", isolation);
	int r = fill_seccomp(&s, p, isolation, err);
	if (r == 0 && !s.seccomp_profile)
		r = brig_fail(err, BRIG_E_USAGE, 0,
			      "the policy uses the engine's built-in seccomp profile (seccomp: "
			      "\"engine\"); brig has no copy of it to print");
	if (r == 0) {
		*json = steal_pointer(&s.seccomp_profile);
		if (label)
			*label = steal_pointer(&s.seccomp_name);
	}
	free(s.seccomp_profile);
	free(s.seccomp_name);
	return r;
}

/* The egress allowlist: the box joins the allowlist's internal network (no route out, no
 * address of the host's on it), its HTTP(S)_PROXY variables point at the proxy, it keeps the
 * neutral nameserver (the proxy resolves names); gVisor boxes run under the runtime registered
 * with --network=host (runsc's own netstack cannot run here: scripts/setup-host). */
static int fill_egress(brig_spec *s, const brig_policy *p, const spec_target *t, brig_language lang,
		       brig_error **err)
{
	if (!p->egress_allow || !p->egress_allow[0])
		return 0;
	cleanup_strv char **blocked = egress_host_addresses();
	cleanup_free char *dir = cache_dir();
	if (!dir)
		return brig_fail(
			err, BRIG_E_UNAVAILABLE, 0,
			"egress: brig has no state directory for the proxy's configuration "
			"(set $BRIG_CACHE_DIR, or $XDG_RUNTIME_DIR for a non-root user)");
	brig_egress *e = egress_build(p->egress_allow, p->egress_hosts, blocked);
	e->config_dir = xasprintf("%s/egress-%s", dir, e->digest);
	s->egress = e;
	free(s->network);
	s->network = xstrdup(e->network);
	free(s->dns);
	s->dns = xstrdup(BRIG_NEUTRAL_DNS);
	cleanup_free char *url = xasprintf("http://%s:%d", e->proxy_address, e->proxy_port);
	const char *vars[] = { "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy" };
	size_t n = strv_len(s->env);
	s->env = xrealloc(s->env, (n + 8) * sizeof *s->env);
	for (size_t i = 0; i < 4; i++)
		s->env[n++] = xasprintf("%s=%s", vars[i], url);
	s->env[n++] = xstrdup("NO_PROXY=" EGRESS_NO_PROXY);
	s->env[n++] = xstrdup("no_proxy=" EGRESS_NO_PROXY);
	/* node's fetch() reads none of them: the node image's preload hands it to undici's
	 * ProxyAgent on HTTPS_PROXY (scripts/build-images) */
	if (lang == BRIG_LANG_NODE)
		s->env[n++] = xstrdup("NODE_OPTIONS=--require=" EGRESS_NODE_PRELOAD);
	s->env[n] = NULL;
	if (t->isolation == BRIG_ISOLATION_GVISOR) {
		free(s->runtime);
		s->runtime = xstrdup(p->gvisor_egress_runtime);
	}
	return 0;
}

/* The spec both holders start from (a workspace's, a box's network holder): the policy's shell
 * image (`image`: as looked up, or NULL), under runc whatever the runs' runtime, 16 MiB, 0.1 CPU,
 * no network and no egress of its own, no workspace; the caller makes its program `sleep`. */
static int build_sleeper(const brig_policy *p, const spec_target *target,
			 const brig_image_info *image, brig_spec **out, brig_error **err)
{
	brig_policy *hp = brig_policy_copy(p);
	hp->timeout_seconds = hp->max_timeout_seconds = 1;
	hp->memory_mb = 16;
	hp->cpus = 0.1;
	hp->pids_limit = 8;
	hp->tmpfs_mb = 1;
	hp->network = false;
	strv_free(hp->egress_allow);
	hp->egress_allow = NULL;
	hp->isolation = BRIG_ISOLATION_CONTAINER;
	spec_target t = *target;
	t.runtime = "runc";
	t.isolation = BRIG_ISOLATION_CONTAINER;
	t.workspace = NULL;
	t.image = image;
	t.holder_image = NULL;
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "", .code_len = 0 };
	*out = NULL;
	int r = spec_build(hp, &req, BRIG_TIMEOUT_REFUSE, &t, out, NULL, err);
	brig_policy_free(hp);
	return r < 0 ? r : *out ? 0 : BRIG_E_SYSTEM;
}

/* The network holder of a box with egress (brig_spec.net_holder): the box runs in its network
 * namespace, so the engine's wiring of the egress network (~400 ms) and its release at the
 * box's exit happen to the holder, which the warm pool starts ahead of the call.  Like the
 * workspace's holder it runs nothing of the agent's, only `sleep`: the policy's shell image
 * under runc whatever the box's runtime (its kernel never runs agent code; a gVisor sandbox
 * would cost ~40 host threads for nothing), the policy's seccomp choice, 16 MiB, 0.1 CPU, no
 * brig-init (no stdin).  It carries the box's owner label: brig removes it after the box, and the
 * reaper removes one whose brig is gone (its name is the box's + SPEC_NET_HOLDER_SUFFIX).  The
 * box's hostname and nameserver are set on the holder (the engine refuses both with a container's
 * network mode; the box sees the holder's). */
static int add_net_holder(brig_spec *s, const brig_policy *p, const spec_target *target,
			  int timeout_s, brig_error **err)
{
	/* the shell image, its pin checked as for any box; the network is set below, by hand */
	brig_spec *h = NULL;
	int r = build_sleeper(p, target, target->holder_image, &h, err);
	if (r < 0)
		return r;
	free(h->name);
	h->name = xasprintf("%s" SPEC_NET_HOLDER_SUFFIX, s->name);
	strv_free(h->argv);
	h->argv = xcalloc(3, sizeof *h->argv);
	h->argv[0] = xstrdup("sleep");
	/* it ends by itself a while after its box would (brig-init's deadline), should brig be
	 * killed before it removes it; a warm box's holder waits as long as its box (pool.c) */
	h->argv[1] =
		xasprintf("%d", timeout_s + SPEC_BOX_GRACE_MS / 1000 + SPEC_NET_HOLDER_SLACK_S);
	mounts_free(h->mounts);
	h->mounts = NULL;
	free(h->workdir);
	h->workdir = xstrdup("/");
	free(h->exit_marker);
	h->exit_marker = NULL;
	/* the box's labels (brig=1, its owner, its installation), its role and its box */
	strv_free(h->labels);
	h->labels = xcalloc(1, sizeof *h->labels);
	for (char **l = s->labels; l && *l; l++)
		if (strncmp(*l, "brig.language=", 14) != 0)
			label_append(h, xstrdup(*l));
	label_append(h, xstrdup("brig.role=net-holder"));
	label_append(h, xasprintf("brig.box=%s", s->name));
	free(h->network);
	h->network = steal_pointer(&s->network);
	s->network = xasprintf("container:%s", h->name);
	free(h->hostname);
	h->hostname = steal_pointer(&s->hostname);
	free(h->dns);
	h->dns = steal_pointer(&s->dns);
	free((char *)h->stdin_data);
	h->stdin_data = NULL;
	h->stdin_len = 0;
	/* nobody, not the box's uid: any box of the same configuration can take a spare holder */
	free(h->user);
	h->user = xstrdup(SPEC_HOLDER_USER);
	h->auto_remove = true; /* it removes itself when its sleep ends */
	s->net_holder = h;
	return 0;
}

void spec_holder_to_spare(brig_spec *h, const char *name, const char *key, const char *domain,
			  long long until, int max_timeout_s)
{
	free(h->name);
	h->name = xstrdup(name);
	char **old = h->labels;
	h->labels = xcalloc(1, sizeof *h->labels);
	for (char **l = old; l && *l; l++)
		if (strcmp(*l, "brig=1") == 0 || strncmp(*l, "brig.install=", 13) == 0)
			label_append(h, xstrdup(*l));
	strv_free(old);
	label_append(h, xstrdup("brig.role=net-spare"));
	label_append(h, xasprintf(SPEC_SPARE_LABEL "=%s", key));
	label_append(h, xasprintf("brig.spare-domain=%s", domain));
	label_append(h, xasprintf("brig.spare-until=%lld", until));
	free(h->argv[1]);
	h->argv[1] = xasprintf("%d", max_timeout_s + SPEC_BOX_GRACE_MS / 1000 +
					     SPEC_NET_HOLDER_SLACK_S + SPEC_SPARE_CLAIM_S);
	h->auto_remove = true;
}

int spec_build(const brig_policy *p, const brig_request *req, brig_timeout_mode mode,
	       const spec_target *target, brig_spec **out, char **notice, brig_error **err)
{
	int timeout = 0, clamped_from = 0;
	if (out)
		*out = NULL;
	if (notice)
		*notice = NULL;
	if (!p || !req || !target || !target->runtime || !out)
		return brig_fail(err, BRIG_E_USAGE, 0, "spec_build: NULL argument");
	if (!target->user && strcmp(p->user, "auto") == 0)
		return brig_fail(err, BRIG_E_USAGE, 0,
				 "spec_build: user \"auto\" needs the box's leased uid");
	if (!target->init || target->init[0] != '/' || strpbrk(target->init, ",\"\n"))
		return brig_fail(err, BRIG_E_UNAVAILABLE, 0,
				 "brig-init (every box's PID 1) is missing or at an unusable path: "
				 "reinstall brig");
	if (p->network && target->isolation >= BRIG_ISOLATION_GVISOR)
		return brig_fail(err, BRIG_E_UNAVAILABLE, 0, "%s", SPEC_GVISOR_NO_NETWORK);
	int r = check_request(p, req, target->isolation, err);
	if (r == 0)
		r = resolve_timeout(p, req, mode, &timeout, &clamped_from, err);
	if (r < 0)
		return r;
	cleanup_spec brig_spec *s = xcalloc(1, sizeof *s);
	s->struct_size = sizeof *s;
	r = fill_identity(s, p, req->language, target->runtime, target->install, target->user, err);
	if (r == 0)
		r = fill_image_id(s, target->image, err);
	if (r == 0)
		r = fill_seccomp(s, p, target->isolation, err);
	if (r < 0)
		return r;
	fill_limits(s, p);
	apply_runtime_traits(s, p, target);
	if (target->workspace && (r = add_workspace(s, target->workspace, err)) < 0)
		return r;
	r = fill_egress(s, p, target, req->language, err);
	if (r == 0 && s->egress)
		r = add_net_holder(s, p, target, timeout, err);
	if (r < 0)
		return r;
	s->timeout_ms = (int64_t)timeout * 1000;
	compose_stdin(s, req);
	if (clamped_from && notice)
		*notice = xasprintf("timeout clamped from %d s to %d s (max_timeout_seconds)",
				    clamped_from, timeout);
	*out = steal_pointer(&s);
	return 0;
}

/* The smoke box: the policy's own shell image and seccomp choice (what its runs get), the rest
 * small and fixed, and a program that shows whose kernel it runs on and whether its seccomp
 * filter is in force (brig_probe_verify reads both). */
int spec_build_probe(const brig_policy *p, const spec_target *target, brig_spec **out,
		     brig_error **err)
{
	static const char code[] = "cat /proc/version /proc/self/status\n";
	brig_policy *probe = brig_policy_copy(p);
	probe->timeout_seconds = probe->max_timeout_seconds = 15;
	probe->memory_mb = 128;
	probe->cpus = 1.0;
	probe->pids_limit = 8;
	probe->tmpfs_mb = 1;
	probe->max_output_bytes = 16384;
	probe->network = false;
	strv_free(probe->egress_allow);
	probe->egress_allow = NULL;
	probe->isolation = BRIG_ISOLATION_CONTAINER; /* the target says what it provides */
	brig_request req = { .language = BRIG_LANG_SHELL,
			     .code = code,
			     .code_len = sizeof code - 1 };
	brig_spec *s = NULL;
	int r = spec_build(probe, &req, BRIG_TIMEOUT_REFUSE, target, &s, NULL, err);
	brig_policy_free(probe);
	if (r < 0 || !s)
		return r < 0 ? r : BRIG_E_SYSTEM;
	free(s->labels[2]);
	s->labels[2] = xstrdup("brig.probe=1");
	*out = s;
	return 0;
}

/* The holder runs no code of the agent's, only `sleep`: under runc whatever the runs' runtime
 * (a gVisor sandbox would cost ~40 host threads and tens of MiB per workspace for nothing),
 * with brig's seccomp profile, no brig-init (no stdin: sleep is its whole program), the
 * volume read-only.  Without an owner label: it outlives the brig that made it, by design. */
int spec_build_holder(const brig_policy *p, const spec_target *target, const char *id,
		      int lifetime_seconds, brig_spec **out, brig_error **err)
{
	if (!spec_ws_id_valid(id))
		return brig_fail(err, BRIG_E_USAGE, 0, "not a workspace id");
	brig_spec *s = NULL;
	int r = build_sleeper(p, target, target->image, &s, err);
	if (r < 0)
		return r;
	free(s->name);
	s->name = xasprintf(SPEC_WS_HOLDER_PREFIX "%s", id);
	strv_free(s->argv);
	s->argv = xcalloc(3, sizeof *s->argv);
	s->argv[0] = xstrdup("sleep");
	s->argv[1] = xasprintf("%d", lifetime_seconds);
	mounts_free(s->mounts);
	s->mounts = NULL;
	mount_append(s, ws_mount(id, true));
	free(s->workdir);
	s->workdir = xstrdup("/");
	/* brig=1, brig.install=..., brig.workspace=ID, brig.role=holder: no owner */
	strv_free(s->labels);
	s->labels = xcalloc(2, sizeof *s->labels);
	s->labels[0] = xstrdup("brig=1");
	if (target->install)
		label_append(s, xasprintf("brig.install=%s", target->install));
	label_append(s, xasprintf("brig.workspace=%s", id));
	label_append(s, xstrdup("brig.role=holder"));
	s->workspace = xstrdup(id);
	s->timeout_ms = (int64_t)lifetime_seconds * 1000;
	free((char *)s->stdin_data);
	s->stdin_data = NULL;
	s->stdin_len = 0;
	*out = s;
	return 0;
}

int spec_build_tool(const brig_policy *p, const spec_target *target, const char *const *tool,
		    const char *data, size_t data_len, brig_spec **out, brig_error **err)
{
	if (!target->workspace)
		return brig_fail(err, BRIG_E_USAGE, 0, "spec_build_tool: no workspace");
	brig_policy *tp = brig_policy_copy(p);
	tp->max_input_bytes = tp->ws.max_transfer_bytes;
	/* a file out, or the listing: room for either beside the program's own lines */
	tp->max_output_bytes = tp->ws.max_transfer_bytes + 1024 * 1024;
	tp->timeout_seconds = tp->max_timeout_seconds;
	/* the tool moves files; it reaches nothing (no egress, no holder) */
	strv_free(tp->egress_allow);
	tp->egress_allow = NULL;
	brig_request req = { .language = BRIG_LANG_SHELL,
			     .code = data ? data : "",
			     .code_len = data ? data_len : 0 };
	brig_spec *s = NULL;
	int r = spec_build(tp, &req, BRIG_TIMEOUT_REFUSE, target, &s, NULL, err);
	brig_policy_free(tp);
	if (r < 0 || !s)
		return r < 0 ? r : BRIG_E_SYSTEM;
	/* the tool reports its own doings: no change line */
	size_t j = 0;
	for (size_t i = 0; s->argv[i]; i++) {
		if (strcmp(s->argv[i], "--changes") == 0 && s->argv[i + 1]) {
			free(s->argv[i]);
			free(s->argv[++i]);
			continue;
		}
		s->argv[j++] = s->argv[i];
	}
	s->argv[j] = NULL;
	/* [brig-init (--marker M) --] [sh] -> [...] [brig-init --workspace-tool TOOL...] */
	size_t k = 0;
	while (s->argv[k] && strcmp(s->argv[k], "--") != 0)
		k++;
	if (!s->argv[k]) {
		spec_free(s);
		return brig_fail(err, BRIG_E_SYSTEM, 0, "spec_build_tool: no brig-init in the box");
	}
	size_t nt = strv_len((char *const *)tool);
	for (size_t i = k + 1; s->argv[i]; i++)
		free(s->argv[i]);
	s->argv = xrealloc(s->argv, (k + 3 + nt + 1) * sizeof *s->argv);
	s->argv[k + 1] = xstrdup(SPEC_INIT_PATH);
	s->argv[k + 2] = xstrdup("--workspace-tool");
	for (size_t i = 0; i < nt; i++)
		s->argv[k + 3 + i] = xstrdup(tool[i]);
	s->argv[k + 3 + nt] = NULL;
	free(s->labels[2]);
	s->labels[2] = xstrdup("brig.language=workspace-tool");
	*out = s;
	return 0;
}

static void mounts_free(brig_mount **m)
{
	for (size_t i = 0; m && m[i]; i++) {
		free(m[i]->source);
		free(m[i]->target);
		free(m[i]);
	}
	free(m);
}

void spec_free(brig_spec *spec)
{
	if (!spec)
		return;
	free(spec->name);
	free(spec->language);
	free(spec->image);
	strv_free(spec->labels);
	strv_free(spec->argv);
	strv_free(spec->env);
	free(spec->workdir);
	free(spec->user);
	free(spec->hostname);
	free(spec->exit_marker);
	free(spec->network);
	free(spec->dns);
	free(spec->runtime);
	free(spec->tmpfs_path);
	free(spec->tmpfs_options);
	mounts_free(spec->mounts);
	strv_free(spec->masked_paths);
	free(spec->seccomp_profile);
	free(spec->seccomp_name);
	free(spec->log_driver);
	free((char *)spec->stdin_data);
	free(spec->image_id);
	free(spec->workspace);
	egress_free(spec->egress);
	spec_free(spec->net_holder);
	free(spec);
}

int spec_check_request(const brig_policy *p, const brig_request *req, brig_timeout_mode mode,
		       brig_error **err)
{
	int timeout = 0, clamped_from = 0;
	int r = check_request(p, req, p->isolation, err);
	if (r == 0)
		r = resolve_timeout(p, req, mode, &timeout, &clamped_from, err);
	return r;
}

/* ---- as JSON --------------------------------------------------------------------------------- */

static json_object *strv_json(char *const *v)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; v && v[i]; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

static json_object *str_json(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *egress_json(const brig_egress *e)
{
	if (!e)
		return NULL;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "digest", str_json(e->digest));
	json_object_object_add(o, "network", str_json(e->network));
	json_object_object_add(o, "subnet", str_json(e->subnet));
	json_object_object_add(o, "gateway", str_json(e->gateway));
	json_object_object_add(o, "outer_network", str_json(e->outer_network));
	json_object_object_add(o, "proxy_name", str_json(e->proxy_name));
	json_object_object_add(o, "proxy_image", str_json(e->proxy_image));
	json_object_object_add(o, "proxy_address", str_json(e->proxy_address));
	json_object_object_add(o, "proxy_port", json_object_new_int(e->proxy_port));
	json_object_object_add(o, "allow", strv_json(e->allow));
	json_object_object_add(o, "hosts", strv_json(e->hosts));
	json_object_object_add(o, "config_dir", str_json(e->config_dir));
	char sha[65];
	sha256_hex(e->config, strlen(e->config), sha);
	json_object_object_add(o, "config_sha256", json_object_new_string(sha));
	return o;
}

json_object *spec_to_json(const brig_spec *s)
{
	json_object *o = json_object_new_object();
#define S(k) json_object_object_add(o, #k, str_json(s->k))
#define I(k) json_object_object_add(o, #k, json_object_new_int64((int64_t)s->k))
#define B(k) json_object_object_add(o, #k, json_object_new_boolean(s->k))
	S(name);
	S(language);
	S(image);
	S(image_id);
	json_object_object_add(o, "labels", strv_json(s->labels));
	json_object_object_add(o, "argv", strv_json(s->argv));
	json_object_object_add(o, "env", strv_json(s->env));
	S(workdir);
	S(user);
	S(hostname);
	S(exit_marker);
	S(network);
	S(dns);
	S(runtime);
	B(read_only_rootfs);
	S(tmpfs_path);
	S(tmpfs_options);
	I(shm_bytes);
	json_object *mounts = json_object_new_array();
	for (brig_mount **m = s->mounts; m && *m; m++) {
		json_object *mo = json_object_new_object();
		json_object_object_add(mo, "type",
				       json_object_new_string((*m)->type == BRIG_MOUNT_VOLUME
								      ? "volume"
								      : "bind"));
		json_object_object_add(mo, "source", str_json((*m)->source));
		json_object_object_add(mo, "target", str_json((*m)->target));
		json_object_object_add(mo, "read_only", json_object_new_boolean((*m)->read_only));
		json_object_object_add(mo, "no_copy", json_object_new_boolean((*m)->no_copy));
		json_object_array_add(mounts, mo);
	}
	json_object_object_add(o, "mounts", mounts);
	json_object_object_add(o, "masked_paths", strv_json(s->masked_paths));
	B(cgroupns_private);
	I(memory_bytes);
	I(memory_swap_bytes);
	I(nano_cpus);
	I(pids_limit);
	I(pids_guest);
	I(nofile);
	I(nproc);
	I(core);
	B(cap_drop_all);
	B(no_new_privileges);
	S(seccomp_name);
	if (s->seccomp_profile) { /* the text is long: its digest says which it is */
		char sha[65];
		sha256_hex(s->seccomp_profile, strlen(s->seccomp_profile), sha);
		json_object_object_add(o, "seccomp_sha256", json_object_new_string(sha));
		json_object_object_add(o, "seccomp_bytes",
				       json_object_new_int64((int64_t)strlen(s->seccomp_profile)));
	} else {
		json_object_object_add(o, "seccomp_sha256", NULL);
	}
	S(log_driver);
	I(stdin_len);
	I(timeout_ms);
	I(max_output_bytes);
	I(output_limit);
	I(max_input_bytes);
	S(workspace);
	json_object_object_add(o, "egress", egress_json(s->egress));
	json_object_object_add(o, "net_holder", s->net_holder ? spec_to_json(s->net_holder) : NULL);
	B(auto_remove);
#undef S
#undef I
#undef B
	return o;
}

/* ---- the same box? --------------------------------------------------------------------------- */

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool strv_eq(char *const *a, char *const *b)
{
	size_t i = 0;
	for (; a && b && a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return (!a || !a[i]) && (!b || !b[i]);
}

/* s is NAME:changes, the change tag add_workspace() makes from the box's name. */
static bool is_changes_tag(const char *s, const char *name)
{
	size_t n = name ? strlen(name) : 0;
	return name && strncmp(s, name, n) == 0 && strcmp(s + n, CHANGES_SUFFIX) == 0;
}

/* brig-init's arguments: equal but for the exit marker and the change tag, both made from the
 * box's name (a box's own, not its shape). */
static bool argv_eq(const brig_spec *a, const brig_spec *b)
{
	char *const *x = a->argv, *const *y = b->argv;
	size_t i = 0;
	for (; x && y && x[i] && y[i]; i++) {
		bool marks = a->exit_marker && b->exit_marker &&
			     strcmp(x[i], a->exit_marker) == 0 && strcmp(y[i], b->exit_marker) == 0;
		bool tags = i > 0 && strcmp(x[i - 1], "--changes") == 0 &&
			    strcmp(y[i - 1], "--changes") == 0 && is_changes_tag(x[i], a->name) &&
			    is_changes_tag(y[i], b->name);
		if (!marks && !tags && strcmp(x[i], y[i]) != 0)
			return false;
	}
	return (!x || !x[i]) && (!y || !y[i]);
}

static bool mounts_eq(brig_mount *const *a, brig_mount *const *b)
{
	size_t i = 0;
	for (; a && b && a[i] && b[i]; i++)
		if (a[i]->type != b[i]->type || !str_eq(a[i]->source, b[i]->source) ||
		    !str_eq(a[i]->target, b[i]->target) || a[i]->read_only != b[i]->read_only ||
		    a[i]->no_copy != b[i]->no_copy)
			return false;
	return (!a || !a[i]) && (!b || !b[i]);
}

/* Every field is compared here or named below: a field appended to brig_spec must be added,
 * or the warm pool could hand a run a box started with a different one. */
_Static_assert(offsetof(brig_spec, auto_remove) ==
			       offsetof(brig_spec, net_holder) + sizeof(brig_spec *) &&
		       offsetof(brig_spec, auto_remove) + sizeof(brig_spec *) == sizeof(brig_spec),
	       "a field was appended to brig_spec: compare it in spec_same_box()");

/* Two boxes' network holders: the same but for their names.  Their labels are their boxes'
 * (compared with the boxes) but brig.language=, plus their role and brig.box=<the one run's
 * box>: derived, not compared again. */
static bool holder_same(const brig_spec *a, const brig_spec *b)
{
	if (!a || !b)
		return !a && !b;
	brig_spec x = *a;
	x.name = b->name;
	x.labels = b->labels;
	x.argv = b->argv; /* how long it waits: a warm box's waits until it is removed */
	return spec_same_box(&x, b);
}

bool spec_same_box(const brig_spec *a, const brig_spec *b)
{
	/* Not compared, because they are not the box but the one run: name (and exit_marker
	 * and a workspace box's change tag, made from it), user outside a workspace (a uid of the
	 * box's own under user "auto"), stdin_data, stdin_len, timeout_ms.  In a workspace the
	 * user is the workspace's, and part of the box. */
	return str_eq(a->language, b->language) && str_eq(a->image, b->image) &&
	       str_eq(a->image_id, b->image_id) && strv_eq(a->labels, b->labels) && argv_eq(a, b) &&
	       (!a->workspace || str_eq(a->user, b->user)) && strv_eq(a->env, b->env) &&
	       str_eq(a->workdir, b->workdir) && str_eq(a->hostname, b->hostname) &&
	       !a->exit_marker == !b->exit_marker &&
	       /* "container:" + the holder's name, the one run's: the holders compared */
	       (a->net_holder || b->net_holder ? holder_same(a->net_holder, b->net_holder)
					       : str_eq(a->network, b->network)) &&
	       str_eq(a->dns, b->dns) && str_eq(a->runtime, b->runtime) &&
	       a->read_only_rootfs == b->read_only_rootfs && str_eq(a->tmpfs_path, b->tmpfs_path) &&
	       str_eq(a->tmpfs_options, b->tmpfs_options) && a->shm_bytes == b->shm_bytes &&
	       mounts_eq(a->mounts, b->mounts) && strv_eq(a->masked_paths, b->masked_paths) &&
	       a->cgroupns_private == b->cgroupns_private && a->core == b->core &&
	       a->memory_bytes == b->memory_bytes && a->memory_swap_bytes == b->memory_swap_bytes &&
	       a->nano_cpus == b->nano_cpus && a->pids_limit == b->pids_limit &&
	       a->pids_guest == b->pids_guest && a->nofile == b->nofile && a->nproc == b->nproc &&
	       a->cap_drop_all == b->cap_drop_all && a->no_new_privileges == b->no_new_privileges &&
	       str_eq(a->seccomp_profile, b->seccomp_profile) &&
	       str_eq(a->seccomp_name, b->seccomp_name) && str_eq(a->log_driver, b->log_driver) &&
	       a->max_output_bytes == b->max_output_bytes && a->output_limit == b->output_limit &&
	       a->max_input_bytes == b->max_input_bytes && str_eq(a->workspace, b->workspace) &&
	       egress_same(a->egress, b->egress) && a->auto_remove == b->auto_remove;
}

/* ---- the outcome ----------------------------------------------------------------------------- */

void outcome_clear(brig_outcome *o)
{
	free(o->stdout_data);
	free(o->stderr_data);
	free(o->sandbox_error);
	if (BRIG_HAS_FIELD(o, brig_outcome, egress_log))
		free(o->egress_log);
	if (BRIG_HAS_FIELD(o, brig_outcome, egress_note))
		free(o->egress_note);
	memset(o, 0, sizeof *o);
	o->struct_size = sizeof *o;
	o->exit_code = -1;
}

/* Take the wrapper's line "MARKER\n" out of stderr (its last occurrence: the wrapper writes it
 * after the program has ended).  True if it was there. */
static bool strip_marker(brig_result *res, const char *marker)
{
	size_t m = strlen(marker);
	if (res->stderr_len < m + 1)
		return false;
	for (size_t i = res->stderr_len - m; i-- > 0;) {
		char *p = res->stderr_data + i;
		if (p[m] == '\n' && memcmp(p, marker, m) == 0) {
			memmove(p, p + m + 1, res->stderr_len - i - m - 1);
			res->stderr_len -= m + 1;
			res->stderr_data[res->stderr_len] = '\0';
			return true;
		}
	}
	return false;
}

/* The backend's cap had room for the wrapper's line: hold the program to its own cap.  Bytes
 * beyond it are cut from the end of stderr, then stdout (the capture keeps no arrival order;
 * the two can differ from it only within the wrapper line's few bytes). */
static void hold_to_cap(brig_result *res, size_t cap)
{
	size_t total = res->stdout_len + res->stderr_len;
	if (total <= cap)
		return;
	size_t cut = total - cap, from_err = cut < res->stderr_len ? cut : res->stderr_len;
	res->stderr_len -= from_err;
	res->stdout_len -= cut - from_err;
	res->stderr_data[res->stderr_len] = '\0';
	res->stdout_data[res->stdout_len] = '\0';
	res->output_truncated = true;
}

/* Precedence: the sandbox failing, then what brig did to the box (cancel, deadline, output
 * cap), then an OOM kill of a program that failed, then the exit status: what happened to the
 * box explains the exit code better than the code itself. */
static brig_verdict verdict_of(const brig_result *res, bool sandbox_failed, bool cancelled)
{
	if (sandbox_failed)
		return BRIG_VERDICT_SANDBOX_ERROR;
	if (cancelled)
		return BRIG_VERDICT_CANCELLED;
	if (res->timed_out)
		return BRIG_VERDICT_TIMEOUT;
	if (res->output_truncated)
		return BRIG_VERDICT_OUTPUT_LIMIT;
	if (res->oom_killed && res->exit_code != 0) /* a child killed while the program went on
						     * to succeed is not the run's fate */
		return BRIG_VERDICT_OOM;
	return res->exit_code == 0 ? BRIG_VERDICT_SUCCESS : BRIG_VERDICT_ERROR;
}

static char *take_bytes(char **data, size_t *len, size_t *out_len)
{
	char *p = steal_pointer(data);
	*out_len = p ? *len : 0;
	*len = 0;
	if (!p)
		return xstrdup("");
	p = xrealloc(p, *out_len + 1); /* NUL-terminated for convenience, whatever came */
	p[*out_len] = '\0';
	return p;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* "%2F" -> "/" (tree.h escapes what would break the line). */
static char *unescape_word(const char *s, size_t n)
{
	char *out = xmalloc(n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		int h = s[i] == '%' && i + 2 < n ? hexval(s[i + 1]) : -1;
		int l = h >= 0 ? hexval(s[i + 2]) : -1;
		if (h >= 0 && l >= 0) {
			*o++ = (char)(h << 4 | l);
			i += 2;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* brig-init's change line "TAG USED SIZE IUSED INODES COUNT SIZE:PATH ..." as JSON text, or
 * NULL for "TAG ?" or anything malformed. */
static char *changes_json(const char *line, size_t len)
{
	cleanup_free char *l = xstrndup(line, len);
	long long v[5];
	char *p = l;
	for (int i = 0; i < 5; i++) {
		char *end = NULL;
		errno = 0;
		v[i] = strtoll(p, &end, 10);
		if (!end || end == p || errno || v[i] < 0)
			return NULL;
		p = end;
	}
	json_object *o = json_object_new_object(), *files = json_object_new_array();
	while (*p) {
		p += strspn(p, " ");
		size_t w = strcspn(p, " ");
		char *colon = memchr(p, ':', w);
		if (!w || !colon)
			break;
		cleanup_free char *path = unescape_word(colon + 1, w - (size_t)(colon + 1 - p));
		json_object *f = json_object_new_object();
		json_object_object_add(f, "path", json_object_new_string(path));
		json_object_object_add(f, "size", json_object_new_int64(strtoll(p, NULL, 10)));
		json_object_array_add(files, f);
		p += w;
	}
	json_object_object_add(o, "files", files);
	json_object_object_add(o, "count", json_object_new_int64(v[4]));
	json_object_object_add(o, "used_bytes", json_object_new_int64(v[0]));
	json_object_object_add(o, "size_bytes", json_object_new_int64(v[1]));
	json_object_object_add(o, "used_files", json_object_new_int64(v[2]));
	json_object_object_add(o, "max_files", json_object_new_int64(v[3]));
	char *t = xstrdup(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return t;
}

/* Take brig-init's change line (its last "TAG ..." line: written after the program and
 * everything it left were gone) out of stderr, into res->workspace_changes. */
static void take_changes(const brig_spec *spec, brig_result *res)
{
	const char *tag = NULL;
	for (size_t i = 0; spec->argv && spec->argv[i]; i++)
		if (strcmp(spec->argv[i], "--changes") == 0)
			tag = spec->argv[i + 1];
	if (!tag || !BRIG_HAS_FIELD(res, brig_result, workspace_changes))
		return;
	size_t t = strlen(tag);
	char *d = res->stderr_data;
	for (size_t i = res->stderr_len; i-- > 0;) {
		if ((i > 0 && d[i - 1] != '\n') || res->stderr_len - i < t + 1 ||
		    memcmp(d + i, tag, t) != 0 || d[i + t] != ' ')
			continue;
		char *nl = memchr(d + i, '\n', res->stderr_len - i);
		size_t end = nl ? (size_t)(nl - d) + 1 : res->stderr_len;
		free(res->workspace_changes);
		res->workspace_changes =
			changes_json(d + i + t + 1, end - i - t - 1 - (nl != NULL));
		memmove(d + i, d + end, res->stderr_len - end);
		res->stderr_len -= end - i;
		d[res->stderr_len] = '\0';
		return;
	}
}

const char *spec_finish_outcome(const brig_spec *spec, brig_outcome *o, brig_result *res)
{
	const char *note = NULL;
	free(res->stdout_data);
	free(res->stderr_data);
	res->stdout_data = take_bytes(&o->stdout_data, &o->stdout_len, &res->stdout_len);
	res->stderr_data = take_bytes(&o->stderr_data, &o->stderr_len, &res->stderr_len);
	res->exit_code = o->exit_code;
	res->timed_out = o->timed_out;
	res->output_truncated = o->truncated;
	res->oom_killed = o->oom_killed;
	bool own_end = spec->exit_marker && strip_marker(res, spec->exit_marker);
	if (spec->workspace)
		take_changes(spec, res);
	hold_to_cap(res, spec->output_limit);
	res->verdict = verdict_of(res, o->sandbox_error != NULL, o->cancelled);
	free(res->error);
	res->error = NULL;
	if (o->sandbox_error) {
		res->exit_code = -1;
		res->error = steal_pointer(&o->sandbox_error);
	} else if (spec->exit_marker && res->verdict == BRIG_VERDICT_ERROR && !own_end &&
		   res->exit_code == 2) {
		res->verdict = BRIG_VERDICT_SANDBOX_ERROR;
		res->exit_code = -1;
		res->error = xasprintf(
			"gVisor's kernel (the sentry) crashed: the container exited 2 but the "
			"program did not (runsc panics when the sandbox's host tasks, gVisor's own "
			"threads included, reach the engine's pids limit of %lld); output may be "
			"cut short",
			(long long)spec->pids_limit);
	} else if (spec->exit_marker && res->verdict == BRIG_VERDICT_ERROR && !own_end) {
		/* an OOM kill of the whole sandbox is "oom" above, brig's own kill not "error" */
		note = "brig-init did not see the program end: the exit status is the box's (the "
		       "program killed its PID 1, or gVisor's kernel died, e.g. at the engine's "
		       "pids limit)";
	}
	return note;
}
