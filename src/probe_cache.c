/* probe_cache.c - a passed verification of a runtime (probe.c's smoke box), shared between
 * brig processes.
 *
 * The smoke box costs ~0.4 s under gVisor: a long-lived `brig mcp` pays it once, but every
 * one-shot `brig run` would pay it again.  A passed verification is remembered in a small file,
 * keyed on everything its verdict depends on - brig's version, the user, the backend, what the
 * backend's probe says the runtime is (the engine's socket and ID, the runtime's registration
 * in dockerd, its binary's device, inode, size, mtime and ctime), the host's kernel release and
 * the smoke box's image and seccomp profile - and trusted for BRIG_GVISOR_PROBE_TTL seconds
 * (default 600, 0: never).  Any change of those is a different key, so it is verified again; a
 * failed verification is never remembered.
 *
 * Nothing here can weaken isolation: a run still names the runtime explicitly, so a runtime
 * that went away makes the run fail, never fall back.  The file lives in a directory of the
 * user's own ($BRIG_CACHE_DIR, else /run/brig for root, else $XDG_RUNTIME_DIR/brig), mode 0700,
 * and is only read when it is a regular file of the user's, not writable by others, reached
 * without following a symlink.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "loader.h"
#include "probe.h"
#include "util.h"

#define TTL_ENV     "BRIG_GVISOR_PROBE_TTL"
#define DIR_ENV     "BRIG_CACHE_DIR" /* instead of /run/brig or $XDG_RUNTIME_DIR/brig */
#define TTL_DEFAULT 600L
#define TTL_MAX     86400L
#define FILE_NAME   "probe-cache"
#define FILE_MAX    8192

static long cache_ttl(void)
{
	const char *v = secure_getenv(TTL_ENV);
	long ttl;
	if (!v || !*v)
		return TTL_DEFAULT;
	if (!parse_long(v, 0, TTL_MAX, &ttl)) {
		core_debug("$%s=%s is not 0..%ld seconds: not caching the probe", TTL_ENV, v,
			   TTL_MAX);
		return 0;
	}
	return ttl;
}

/* The user's own directory for the file, created if missing; NULL if there is none fit. */
char *cache_dir(void)
{
	char *dir;
	const char *own = secure_getenv(DIR_ENV);
	if (own && own[0] == '/') {
		dir = xstrdup(own);
	} else if (geteuid() == 0) {
		dir = xstrdup("/run/brig");
	} else {
		const char *x = secure_getenv("XDG_RUNTIME_DIR");
		if (!x || x[0] != '/')
			return NULL;
		dir = xasprintf("%s/brig", x);
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		core_debug("probe cache: cannot create %s: %m", dir);
		free(dir);
		return NULL;
	}
	struct stat st;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) != 0) {
		core_debug("probe cache: %s is not a directory of this user's with mode 0700: "
			   "not caching",
			   dir);
		free(dir);
		return NULL;
	}
	return dir;
}

char *probe_cache_key(const char *backend, const brig_probe_info *info, const brig_spec *smoke)
{
	struct utsname u;
	if (!info->identity[0] || uname(&u) < 0)
		return NULL; /* a runtime the backend cannot name for sure: nothing is cached */
	return xasprintf("brig %s\nuid %u\nbackend %s\n%s\nkernel %s\nimage %s %s\nseccomp %s\n",
			 PACKAGE_VERSION, (unsigned)geteuid(), backend, info->identity, u.release,
			 smoke->image, smoke->image_id ? smoke->image_id : "-",
			 smoke->seccomp_name ? smoke->seccomp_name : "engine");
}

bool probe_cache_load(const char *key, char *version, size_t version_len)
{
	long ttl = cache_ttl();
	if (!key || ttl == 0)
		return false;
	cleanup_free char *dir = cache_dir();
	if (!dir)
		return false;
	cleanup_free char *file = xasprintf("%s/" FILE_NAME, dir);
	/* O_NONBLOCK: a FIFO in its place must not hang brig (it is then not a regular file) */
	int fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[FILE_MAX + 1];
	struct stat st;
	ssize_t n = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (st.st_mode & 022) == 0)
		n = read(fd, buf, FILE_MAX);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* KEY, then "passed EPOCH\n", then "version TEXT\n" */
	size_t klen = strlen(key);
	if (strncmp(buf, key, klen) != 0 || strncmp(buf + klen, "passed ", 7) != 0)
		return false;
	char *nl = strchr(buf + klen + 7, '\n');
	long at;
	if (!nl)
		return false;
	*nl = '\0';
	if (!parse_long(buf + klen + 7, 0, LONG_MAX, &at) || strncmp(nl + 1, "version ", 8) != 0)
		return false;
	long long age = (long long)time(NULL) - at;
	if (age < 0 || age >= ttl)
		return false;
	const char *v = nl + 1 + 8;
	size_t vlen = strcspn(v, "\n");
	snprintf(version, version_len, "%.*s (cached %llds ago)", (int)vlen, v, age);
	return true;
}

void probe_cache_store(const char *key, const char *version)
{
	if (!key || cache_ttl() == 0)
		return;
	cleanup_free char *dir = cache_dir();
	if (!dir)
		return;
	cleanup_free char *tmp = xasprintf("%s/" FILE_NAME ".XXXXXX", dir);
	cleanup_free char *file = xasprintf("%s/" FILE_NAME, dir);
	cleanup_free char *text =
		xasprintf("%spassed %lld\nversion %s\n", key, (long long)time(NULL), version);
	int fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0)
		return;
	bool ok = write_all(fd, text, strlen(text)) == 0;
	ok = close(fd) == 0 && ok;
	/* rename: a reader sees the old file or the new one, never half of one */
	if (!ok || rename(tmp, file) < 0) {
		core_debug("probe cache: cannot write %s: %m", file);
		unlink(tmp);
	}
}
