/* spec.c - validated policy + request -> container spec: the single point where the policy
 * becomes flags.  Everything a backend renders is decided here, so that every backend runs the
 * same box and `brig explain` shows exactly what will run.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "policy.h"
#include "policy-seccomp.h"
#include "util.h"

#define MIB               ((int64_t)1024 * 1024)
#define NAME_PREFIX       "brig-"
#define NAME_RANDOM_BYTES 8
#define SHM_MB_MAX        16 /* /dev/shm stays small: /tmp is the scratch space */

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

int spec_parse_starttime(const char *stat_text, unsigned long long *out)
{
	/* "pid (comm) state ppid ..."; comm is free text, so fields count from the LAST ')'. */
	const char *p = stat_text ? strrchr(stat_text, ')') : NULL;
	if (!p)
		return -1;
	p++;
	for (int field = 3; field < 22; field++) {
		p += strspn(p, " ");
		size_t n = strcspn(p, " \n");
		if (n == 0)
			return -1;
		p += n;
	}
	p += strspn(p, " ");
	if (*p < '0' || *p > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	if (errno || (*end != '\0' && *end != ' ' && *end != '\n'))
		return -1;
	*out = v;
	return 0;
}

/* "brig.owner=PID:STARTTIME": with the start time, gc can tell a live owner from a reused pid. */
static int owner_label(char **out, brig_error **err)
{
	char buf[4096];
	cleanup_close int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot open /proc/self/stat");
	ssize_t n;
	do
		n = read(fd, buf, sizeof buf - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot read /proc/self/stat");
	buf[n] = '\0';
	unsigned long long start;
	if (spec_parse_starttime(buf, &start) < 0)
		return brig_fail(err, BRIG_E_SYSTEM, 0, "cannot parse /proc/self/stat");
	*out = xasprintf("brig.owner=%ld:%llu", (long)getpid(), start);
	return 0;
}

/* The engine's pids limit under gVisor (runsc 20221219, ptrace platform), measured on the
 * 2-vCPU host lab machine with tests that are not shipped (peak pids.current of the container's
 * pids cgroup, runsc-seccomp, the default policy otherwise):
 *   - the cgroup counts gVisor's own host tasks: sentry threads, gofer threads and, for every
 *     guest address space, a ptrace stub process with one thread per sentry thread that ever
 *     ran it; stubs are pooled, never freed, so the count only grows during a run;
 *   - idle python/shell 38-40, node 45; python with 60 threads 102; node with 8 workers 76;
 *     a busybox script running 200 commands 138; python forking 60 children 472-483; shell with
 *     60 background `sleep`s 635-680; 8 shell loops spawning `ls` for 30 s: 900-1289;
 *   - a fork bomb (guest held to 64 tasks by RLIMIT_NPROC, the spec's nproc): 2164 after 5 s,
 *     5489 after 30 s, 6389 after 100 s (levelling off); with 16 tasks 375, with 8 tasks 154
 *     after 30 s: it grows with the square of the guest's budget;
 *   - at the limit the sentry panics (exit 2, output lost): the gvisor plugin reports that as
 *     sandbox_error, but it must not happen to a program that stays within its budget.
 * The guest's own budget is RLIMIT_NPROC, enforced by gVisor per sandbox; this limit is the
 * host's bound on gVisor itself, set above everything measured (a fork bomb at the default 64
 * ends as timeout or oom, never as a panic) and clamped at 32768, the kernel's default pid_max:
 * beyond ~100 guest processes the host's pid_max, not this limit, bounds a sandbox (raise it on
 * a gVisor host).  Runc counts the program's processes only: the limit is the budget. */
#define GVISOR_PIDS_BASE 1024
#define GVISOR_PIDS_MAX  32768
int64_t policy_engine_pids_limit(int64_t guest, int isolation)
{
	if (isolation != BRIG_ISOLATION_GVISOR)
		return guest;
	if (guest > 128) /* 1024 + 2 * 128^2 > GVISOR_PIDS_MAX already; no overflow */
		return GVISOR_PIDS_MAX;
	int64_t n = GVISOR_PIDS_BASE + 2 * guest * guest;
	return n < GVISOR_PIDS_MAX ? n : GVISOR_PIDS_MAX;
}

static char **strv_from(const char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	char **c = xcalloc(n + 1, sizeof *c);
	for (size_t i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

static char **language_argv(brig_language lang)
{
	static const char *const argv[BRIG_LANG_COUNT][3] = {
		[BRIG_LANG_PYTHON] = { "python3", "-", NULL },
		[BRIG_LANG_NODE] = { "node", "-", NULL },
		[BRIG_LANG_SHELL] = { "sh", "-s", NULL },
	};
	return strv_from(argv[lang]);
}

/* The complete environment: nothing from the host's leaks in. */
static char **language_env(brig_language lang)
{
	static const char *const base[] = { "HOME=/tmp", "PATH=/usr/local/bin:/usr/bin:/bin",
					    "LANG=C.UTF-8", "TMPDIR=/tmp", NULL };
	static const char *const python[] = {
		"HOME=/tmp",   "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
		"TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1",         "PYTHONUNBUFFERED=1",
		NULL
	};
	return strv_from(lang == BRIG_LANG_PYTHON ? python : base);
}

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
	if ((unsigned)req->language >= BRIG_LANG_COUNT)
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

static int fill_identity(brig_spec *s, const brig_policy *p, brig_language lang,
			 const char *runtime, brig_error **err)
{
	char name[sizeof NAME_PREFIX + 2 * NAME_RANDOM_BYTES];
	if (spec_random_name(name, sizeof name) < 0)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot make a container name");
	cleanup_free char *owner = NULL;
	int r = owner_label(&owner, err);
	if (r < 0)
		return r;
	const char *lang_name = brig_language_name(lang);
	s->name = xstrdup(name);
	s->language = xstrdup(lang_name);
	s->image = xstrdup(p->images[lang]);
	s->argv = language_argv(lang);
	s->env = language_env(lang);
	s->labels = xcalloc(4, sizeof *s->labels);
	s->labels[0] = xstrdup("brig=1");
	s->labels[1] = steal_pointer(&owner);
	s->labels[2] = xasprintf("brig.language=%s", lang_name);
	s->workdir = xstrdup("/tmp");
	s->user = xstrdup(p->user);
	s->hostname = xstrdup("sandbox");
	s->network = xstrdup(p->network ? "bridge" : "none");
	s->dns = p->network ? NULL : xstrdup(BRIG_NEUTRAL_DNS);
	s->runtime = xstrdup(runtime);
	return 0;
}

static void fill_limits(brig_spec *s, const brig_policy *p, int isolation)
{
	s->read_only_rootfs = true;
	s->tmpfs_path = xstrdup("/tmp");
	s->tmpfs_options = xasprintf("rw,noexec,nosuid,nodev,size=%dm", p->tmpfs_mb);
	s->shm_bytes = (p->tmpfs_mb < SHM_MB_MAX ? p->tmpfs_mb : SHM_MB_MAX) * MIB;
	s->memory_bytes = p->memory_mb * MIB;
	s->memory_swap_bytes = s->memory_bytes; /* equal: no swap */
	/* cpus is validated positive and small: rounding by hand spares brig libm (issue 7) */
	s->nano_cpus = (int64_t)(p->cpus * 1e9 + 0.5);
	s->pids_guest = p->pids_limit;
	s->pids_limit = policy_engine_pids_limit(p->pids_limit, isolation);
	s->nproc = isolation == BRIG_ISOLATION_GVISOR ? p->pids_limit : 0;
	s->nofile = p->nofile;
	s->cap_drop_all = true;
	s->no_new_privileges = true;
	s->log_driver = xstrdup("none");
	s->max_output_bytes = (size_t)p->max_output_bytes;
	s->max_input_bytes = (size_t)p->max_input_bytes;
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

/* brig's own profile (rendered for the isolation level: see policy/seccomp.c), the engine's
 * default (no profile given: the engine applies its own), or an operator's file. */
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

int policy_make_spec(const brig_policy *p, const brig_request *req, brig_timeout_mode mode,
		     const char *runtime, int isolation, brig_spec **out, char **notice,
		     brig_error **err)
{
	int timeout = 0, clamped_from = 0;
	if (out)
		*out = NULL;
	if (notice)
		*notice = NULL;
	if (!p || !req || !runtime || !out)
		return brig_fail(err, BRIG_E_USAGE, 0, "policy_make_spec: NULL argument");
	int r = check_request(p, req, isolation, err);
	if (r == 0)
		r = resolve_timeout(p, req, mode, &timeout, &clamped_from, err);
	if (r < 0)
		return r;
	cleanup_spec brig_spec *s = xcalloc(1, sizeof *s);
	s->struct_size = sizeof *s;
	r = fill_identity(s, p, req->language, runtime, err);
	if (r == 0)
		r = fill_seccomp(s, p, isolation, err);
	if (r < 0)
		return r;
	fill_limits(s, p, isolation);
	s->stdin_data = req->code;
	s->stdin_len = req->code_len;
	s->timeout_ms = (int64_t)timeout * 1000;
	if (clamped_from && notice)
		*notice = xasprintf("timeout clamped from %d s to %d s (max_timeout_seconds)",
				    clamped_from, timeout);
	*out = steal_pointer(&s);
	return 0;
}

void spec_free(brig_spec *spec)
{
	if (!spec)
		return;
	free(spec->name);
	free(spec->language);
	free(spec->image);
	strv_free(spec->argv);
	strv_free(spec->env);
	strv_free(spec->labels);
	free(spec->workdir);
	free(spec->user);
	free(spec->hostname);
	free(spec->network);
	free(spec->dns);
	free(spec->runtime);
	free(spec->tmpfs_path);
	free(spec->tmpfs_options);
	free(spec->seccomp_profile);
	free(spec->seccomp_name);
	free(spec->log_driver);
	free(spec); /* stdin_data is the request's */
}

int policy_check_request(const brig_policy *p, const brig_request *req, brig_timeout_mode mode,
			 brig_error **err)
{
	int timeout = 0, clamped_from = 0;
	int r = check_request(p, req, p->isolation, err);
	if (r == 0)
		r = resolve_timeout(p, req, mode, &timeout, &clamped_from, err);
	return r;
}

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

/* Every field is listed here or in the comment below: a field appended to brig_spec must be
 * added, or the warm pool could hand a run a box started with a different one. */
_Static_assert(offsetof(brig_spec, nproc) + sizeof(int64_t) == sizeof(brig_spec),
	       "a field was appended to brig_spec: compare it in spec_same_box()");

bool spec_same_box(const brig_spec *a, const brig_spec *b)
{
	/* Not compared, because they are not the box but the one run: name, stdin_data,
	 * stdin_len, timeout_ms. */
	return str_eq(a->language, b->language) && str_eq(a->image, b->image) &&
	       strv_eq(a->argv, b->argv) && strv_eq(a->env, b->env) &&
	       strv_eq(a->labels, b->labels) && str_eq(a->workdir, b->workdir) &&
	       str_eq(a->user, b->user) && str_eq(a->hostname, b->hostname) &&
	       str_eq(a->network, b->network) && str_eq(a->runtime, b->runtime) &&
	       a->read_only_rootfs == b->read_only_rootfs && str_eq(a->tmpfs_path, b->tmpfs_path) &&
	       str_eq(a->tmpfs_options, b->tmpfs_options) && a->shm_bytes == b->shm_bytes &&
	       a->memory_bytes == b->memory_bytes && a->memory_swap_bytes == b->memory_swap_bytes &&
	       a->nano_cpus == b->nano_cpus && a->pids_limit == b->pids_limit &&
	       a->pids_guest == b->pids_guest && a->nofile == b->nofile &&
	       a->cap_drop_all == b->cap_drop_all && a->no_new_privileges == b->no_new_privileges &&
	       str_eq(a->seccomp_profile, b->seccomp_profile) &&
	       str_eq(a->seccomp_name, b->seccomp_name) && str_eq(a->log_driver, b->log_driver) &&
	       a->max_output_bytes == b->max_output_bytes &&
	       a->max_input_bytes == b->max_input_bytes && str_eq(a->dns, b->dns) &&
	       a->nproc == b->nproc;
}
