/* spec.c - validated policy + request -> container spec: the single point where the policy
 * becomes flags.  Everything a backend renders is decided here, so that every backend runs the
 * same box and `brig explain` shows exactly what will run.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "policy.h"
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

/* Measured with runsc under Docker: ~39 host threads for an idle sandbox and ~5 more per guest
 * process, all in the container's pids cgroup.  128 + 8 per guest process covers that with
 * headroom and still bounds a fork bomb.  Recalibrate here if gVisor changes. */
int64_t policy_engine_pids_limit(int64_t guest, int isolation)
{
	if (isolation == BRIG_ISOLATION_GVISOR)
		return 128 + 8 * guest;
	return guest;
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
	s->nano_cpus = llround(p->cpus * 1e9);
	s->pids_guest = p->pids_limit;
	s->pids_limit = policy_engine_pids_limit(p->pids_limit, isolation);
	s->nofile = p->nofile;
	s->cap_drop_all = true;
	s->no_new_privileges = true;
	s->log_driver = xstrdup("none");
	s->max_output_bytes = (size_t)p->max_output_bytes;
	s->max_input_bytes = (size_t)p->max_input_bytes;
}

/* Re-read now: the profile in force is the file as it is at this run. */
static int fill_seccomp(brig_spec *s, const brig_policy *p, brig_error **err)
{
	char why[512];
	if (strcmp(p->seccomp_profile, "engine") == 0) {
		s->seccomp_name = xstrdup("engine default");
		return 0;
	}
	if (policy_read_seccomp(p->seccomp_profile, &s->seccomp_profile, why, sizeof why) < 0)
		return brig_fail(err, BRIG_E_POLICY, 0, "seccomp: %s", why);
	s->seccomp_name = xstrdup(p->seccomp_profile);
	return 0;
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
		r = fill_seccomp(s, p, err);
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
