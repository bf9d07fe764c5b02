/* files.c - brig-init --workspace-tool: the file operations libbrig performs in a workspace,
 * run as a program of a hardened box that mounts it (never from the host: src/workspace.c).
 *
 *   put PATH        stdin becomes the file PATH (missing directories are made); prints its size
 *   get PATH MAX    the file PATH on stdout, refused when larger than MAX bytes
 *   list MAX        one line per entry, "TYPE SIZE MTIME PATH" (f d l o; PATH escaped as in
 *                   tree.h), at most MAX of them, then "total COUNT BYTES" and
 *                   "usage USED SIZE IUSED INODES" (the quotas' use)
 *
 * PATH is relative to the working directory (the workspace) and made of plain components.
 * No symbolic link is followed, anywhere in the path: each directory is opened with O_NOFOLLOW
 * from the one before it, so a link the program planted cannot lead a transfer out of the
 * workspace (in this box it could only reach the box's own read-only view anyway).  Failures
 * exit with a TOOL_* status and one line on stderr; libbrig turns both into its error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "tree.h"

#define PATH_MAX_BYTES 1024

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	dprintf(STDERR_FILENO, "%s\n", msg);
	return code;
}

/* A full file system: the size quota or the file quota, told apart by what is left. */
static int no_space(int dirfd, const char *what)
{
	struct statvfs vs;
	if (fstatvfs(dirfd, &vs) == 0 && vs.f_ffree == 0)
		return fail(TOOL_NO_INODES, "%s: the workspace's file quota is full", what);
	return fail(TOOL_NO_SPACE, "%s: the workspace's size quota is full", what);
}

static int write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Why opening `name` in dirfd as a directory failed, as a TOOL_* status. */
static int dir_failure(int dirfd, const char *name, const char *path, int e)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return fail(TOOL_SYMLINK, "%s: %s is a symbolic link (links are not followed)",
			    path, name);
	if (e == ELOOP)
		return fail(TOOL_SYMLINK, "%s: %s is a symbolic link (links are not followed)",
			    path, name);
	if (e == ENOENT)
		return fail(TOOL_NOT_FOUND, "%s: no such file or directory", path);
	if (e == ENOTDIR)
		return fail(TOOL_NOT_DIR, "%s: %s is not a directory", path, name);
	return fail(TOOL_IO, "%s: %s: %s", path, name, strerror(e));
}

/* openat(O_NOFOLLOW | O_DIRECTORY) alone is not enough: gVisor (20221219) follows a symlink
 * there (measured: a link to /etc let `get etc/passwd` read the image's file).  So the entry is
 * looked at first (a link is refused) and the directory opened must be that same entry (a
 * link swapped in between is refused too).  -1 with errno set (ELOOP for a link). */
static int open_dir_nofollow(int dirfd, const char *name)
{
	struct stat ls, fs;
	if (fstatat(dirfd, name, &ls, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (S_ISLNK(ls.st_mode)) {
		errno = ELOOP;
		return -1;
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &fs) < 0 || fs.st_dev != ls.st_dev || fs.st_ino != ls.st_ino) {
		close(fd);
		errno = ELOOP;
		return -1;
	}
	return fd;
}

/* Walk to the directory of the last component of `path` (a copy is split in place); *dirfd is
 * that directory, *last its name.  With `create`, missing directories are made. */
static int walk_to_parent(char *path, const char *orig, bool create, int *dirfd, char **last)
{
	size_t len = strlen(path);
	if (len == 0 || len > PATH_MAX_BYTES || path[0] == '/' || path[len - 1] == '/')
		return fail(TOOL_BAD_PATH, "%s: not a relative path to a file", orig);
	int fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail(TOOL_IO, "the workspace: %s", strerror(errno));
	char *comp = path;
	for (;;) {
		char *slash = strchr(comp, '/');
		if (slash)
			*slash = '\0';
		if (!*comp || strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
			close(fd);
			return fail(TOOL_BAD_PATH, "%s: empty, . and .. components are refused",
				    orig);
		}
		if (!slash)
			break;
		struct stat ls;
		if (fstatat(fd, comp, &ls, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST) {
				int r = errno == ENOSPC ? no_space(fd, orig)
							: fail(TOOL_IO, "%s: %s: %s", orig, comp,
							       strerror(errno));
				close(fd);
				return r;
			}
		}
		int next = open_dir_nofollow(fd, comp);
		if (next < 0) {
			int r = dir_failure(fd, comp, orig, errno);
			close(fd);
			return r;
		}
		close(fd);
		fd = next;
		comp = slash + 1;
	}
	*dirfd = fd;
	*last = comp;
	return 0;
}

/* The existing entry `name` may be replaced by a regular file: nothing there, or a file. */
static int check_target(int dirfd, const char *name, const char *path, bool must_exist)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT && !must_exist)
			return 0;
		if (errno == ENOENT)
			return fail(TOOL_NOT_FOUND, "%s: no such file", path);
		return fail(TOOL_IO, "%s: %s", path, strerror(errno));
	}
	if (S_ISLNK(st.st_mode))
		return fail(TOOL_SYMLINK, "%s is a symbolic link (links are not followed)", path);
	if (!S_ISREG(st.st_mode))
		return fail(TOOL_NOT_FILE, "%s is %s, not a regular file", path,
			    S_ISDIR(st.st_mode) ? "a directory" : "a special file");
	return 0;
}

static int copy_in(int dirfd, const char *tmp, const char *path, long long *total)
{
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno == ENOSPC ? no_space(dirfd, path)
				       : fail(TOOL_IO, "%s: %s", path, strerror(errno));
	static char buf[65536];
	int r = 0;
	*total = 0;
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = fail(TOOL_IO, "%s: reading the data: %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (write_all(fd, buf, (size_t)n) < 0) {
			r = errno == ENOSPC ? no_space(dirfd, path)
					    : fail(TOOL_IO, "%s: %s", path, strerror(errno));
			break;
		}
		*total += n;
	}
	if (close(fd) < 0 && r == 0)
		r = errno == ENOSPC ? no_space(dirfd, path)
				    : fail(TOOL_IO, "%s: %s", path, strerror(errno));
	return r;
}

/* The rest of the data, read and dropped: a put that fails (a full quota, a bad path) ends
 * only at the data's end, so the sender never writes into a closed pipe.  The docker client
 * turned that into its own exit 1 in place of the tool's status (seen once under load). */
static void drain_stdin(void)
{
	static char buf[65536];
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
		if (n == 0 || (n < 0 && errno != EINTR))
			return;
	}
}

/* Into a temporary name first, renamed over the target at the end: a failed transfer (a full
 * quota) leaves the old file, or nothing, never half a file. */
static int do_put(const char *path)
{
	char *copy = strdup(path), *name = NULL;
	int dirfd = -1;
	int r = copy ? walk_to_parent(copy, path, true, &dirfd, &name)
		     : fail(TOOL_IO, "out of memory");
	if (r == 0 && !name)
		r = TOOL_IO;
	if (r == 0)
		r = check_target(dirfd, name, path, false);
	char tmp[64];
	snprintf(tmp, sizeof tmp, ".brig-put-%d-%lld", (int)getpid(), (long long)time(NULL));
	long long total = 0;
	if (r == 0) {
		r = copy_in(dirfd, tmp, path, &total);
		if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
			r = fail(TOOL_IO, "%s: %s", path, strerror(errno));
		if (r != 0)
			unlinkat(dirfd, tmp, 0);
	}
	if (r == 0)
		dprintf(STDOUT_FILENO, "%lld\n", total);
	else
		drain_stdin();
	if (dirfd >= 0)
		close(dirfd);
	free(copy);
	return r;
}

static int copy_out(int fd, const char *path)
{
	static char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(TOOL_IO, "%s: %s", path, strerror(errno));
		if (n == 0)
			return 0;
		if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
			return fail(TOOL_IO, "%s: writing it out: %s", path, strerror(errno));
	}
}

static int do_get(const char *path, long long max)
{
	char *copy = strdup(path), *name = NULL;
	int dirfd = -1, fd = -1;
	int r = copy ? walk_to_parent(copy, path, false, &dirfd, &name)
		     : fail(TOOL_IO, "out of memory");
	if (r == 0 && !name)
		r = TOOL_IO;
	if (r == 0)
		r = check_target(dirfd, name, path, true);
	struct stat st, ls;
	if (r == 0) {
		fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0)
			r = fail(TOOL_IO, "%s: %s", path, strerror(errno));
		else if (fstatat(dirfd, name, &ls, AT_SYMLINK_NOFOLLOW) < 0 ||
			 S_ISLNK(ls.st_mode) || ls.st_ino != st.st_ino || ls.st_dev != st.st_dev)
			r = fail(TOOL_SYMLINK, "%s is a symbolic link (links are not followed)",
				 path);
		else if (!S_ISREG(st.st_mode))
			r = fail(TOOL_NOT_FILE, "%s is not a regular file", path);
		else if (st.st_size > max)
			r = fail(TOOL_TOO_LARGE,
				 "%s is %lld bytes, above the limit of %lld bytes per transfer",
				 path, (long long)st.st_size, max);
	}
	if (r == 0)
		r = copy_out(fd, path);
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	free(copy);
	return r;
}

typedef struct lister {
	long long max, count, bytes;
	char line[PATH_MAX_BYTES * 3 + 128];
} lister;

static int list_visit(void *arg, const char *path, const struct stat *st)
{
	lister *l = arg;
	l->count++;
	if (S_ISREG(st->st_mode))
		l->bytes += st->st_size;
	if (l->count > l->max)
		return 0;
	char type = S_ISREG(st->st_mode)   ? 'f'
		    : S_ISDIR(st->st_mode) ? 'd'
		    : S_ISLNK(st->st_mode) ? 'l'
					   : 'o';
	size_t n = (size_t)snprintf(l->line, sizeof l->line, "%c %lld %lld ", type,
				    (long long)st->st_size, (long long)st->st_mtim.tv_sec);
	tree_put_escaped(l->line, &n, sizeof l->line - 1, path);
	l->line[n++] = '\n';
	return write_all(STDOUT_FILENO, l->line, n) < 0 ? 1 : 0;
}

static int do_list(long long max)
{
	static lister l;
	l.max = max;
	bool incomplete;
	if (tree_walk(".", list_visit, &l, &incomplete) > 0)
		return fail(TOOL_IO, "writing the list: %s", strerror(errno));
	struct statvfs vs;
	if (statvfs(".", &vs) < 0)
		return fail(TOOL_IO, "the workspace: %s", strerror(errno));
	dprintf(STDOUT_FILENO, "total %lld %lld %d\nusage %llu %llu %llu %llu\n", l.count, l.bytes,
		incomplete ? 1 : 0, (unsigned long long)(vs.f_blocks - vs.f_bfree) * vs.f_frsize,
		(unsigned long long)vs.f_blocks * vs.f_frsize,
		(unsigned long long)(vs.f_files - vs.f_ffree), (unsigned long long)vs.f_files);
	return 0;
}

static bool parse_count(const char *s, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		return false;
	*out = v;
	return true;
}

int files_main(int argc, char **argv)
{
	long long n;
	if (argc == 2 && strcmp(argv[0], "put") == 0)
		return do_put(argv[1]);
	if (argc == 3 && strcmp(argv[0], "get") == 0 && parse_count(argv[2], &n))
		return do_get(argv[1], n);
	if (argc == 2 && strcmp(argv[0], "list") == 0 && parse_count(argv[1], &n))
		return do_list(n);
	return fail(TOOL_BAD_PATH,
		    "usage: brig-init --workspace-tool put PATH | get PATH MAX | list MAX");
}
