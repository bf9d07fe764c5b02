/* tree.c - the workspace seen from inside the box (see tree.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tree.h"

#define PATH_BUF 4096

typedef struct walker {
	tree_visit_fn fn;
	void *arg;
	bool *incomplete;
	int rootfd;
	char path[PATH_BUF];
} walker;

/* The names in directory `path` (relative to the root), NUL-separated, into a malloc'ed
 * buffer: the directory is closed before the walk goes deeper, so a deep tree needs no more
 * descriptors than a flat one (the box's RLIMIT_NOFILE may be 16). */
static char *read_names(walker *w, const char *path, size_t *len)
{
	int fd = openat(w->rootfd, *path ? path : ".",
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	char *buf = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		size_t l = strlen(e->d_name) + 1;
		if (n + l > cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			while (ncap < n + l)
				ncap *= 2;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				closedir(d);
				return NULL;
			}
			buf = nb;
			cap = ncap;
		}
		memcpy(buf + n, e->d_name, l);
		n += l;
	}
	closedir(d);
	*len = n;
	return buf ? buf : calloc(1, 1);
}

static int walk_dir(walker *w, size_t plen, int depth)
{
	size_t len = 0;
	char *names = read_names(w, w->path, &len);
	if (!names) {
		*w->incomplete = true;
		return 0;
	}
	int r = 0;
	for (size_t off = 0; off < len && r == 0; off += strlen(names + off) + 1) {
		const char *name = names + off;
		size_t nl = strlen(name);
		size_t sep = plen ? 1 : 0;
		if (plen + sep + nl + 1 > sizeof w->path) {
			*w->incomplete = true;
			continue;
		}
		if (sep)
			w->path[plen] = '/';
		memcpy(w->path + plen + sep, name, nl + 1);
		struct stat st;
		if (fstatat(w->rootfd, w->path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			*w->incomplete = true;
		} else {
			r = w->fn(w->arg, w->path, &st);
			if (r == 0 && S_ISDIR(st.st_mode)) {
				if (depth + 1 < TREE_DEPTH_MAX)
					r = walk_dir(w, plen + sep + nl, depth + 1);
				else
					*w->incomplete = true;
			}
		}
		w->path[plen] = '\0';
	}
	free(names);
	return r;
}

int tree_walk(const char *root, tree_visit_fn fn, void *arg, bool *incomplete)
{
	walker w = { .fn = fn, .arg = arg, .incomplete = incomplete };
	*incomplete = false;
	w.rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.rootfd < 0) {
		*incomplete = true;
		return -1;
	}
	w.path[0] = '\0';
	int r = walk_dir(&w, 0, 0);
	close(w.rootfd);
	return r ? r : (*incomplete ? -1 : 0);
}

void tree_put_escaped(char *out, size_t *n, size_t cap, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p && *n + 4 < cap; p++) {
		if (*p > ' ' && *p < 0x7f && *p != '%') {
			out[(*n)++] = (char)*p;
		} else {
			out[(*n)++] = '%';
			out[(*n)++] = hex[*p >> 4];
			out[(*n)++] = hex[*p & 15];
		}
	}
	out[*n] = '\0';
}

/* ---- what a run created or changed ------------------------------------------------------- */

typedef struct file_id {
	dev_t dev;
	ino_t ino;
	struct timespec ctime; /* any write, chmod or rename moves it; no one can set it back */
	off_t size;
} file_id;

struct tree_snapshot {
	file_id *v;
	size_t n, cap;
	bool failed;
};

static int id_cmp(const void *a, const void *b)
{
	const file_id *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int snap_visit(void *arg, const char *path, const struct stat *st)
{
	(void)path;
	tree_snapshot *s = arg;
	if (!S_ISREG(st->st_mode))
		return 0;
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256;
		file_id *nv = realloc(s->v, ncap * sizeof *nv);
		if (!nv) {
			s->failed = true;
			return 1;
		}
		s->v = nv;
		s->cap = ncap;
	}
	s->v[s->n++] = (file_id){ st->st_dev, st->st_ino, st->st_ctim, st->st_size };
	return 0;
}

tree_snapshot *tree_snapshot_take(const char *root)
{
	tree_snapshot *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	bool incomplete;
	tree_walk(root, snap_visit, s, &incomplete);
	if (s->failed) {
		free(s->v);
		free(s);
		return NULL;
	}
	if (s->n)
		qsort(s->v, s->n, sizeof *s->v, id_cmp);
	return s;
}

typedef struct change {
	char *path;
	off_t size;
} change;

typedef struct changes {
	const tree_snapshot *before;
	change list[TREE_REPORT_MAX];
	size_t listed, total;
} changes;

static bool unchanged(const tree_snapshot *s, const struct stat *st)
{
	file_id key = { .dev = st->st_dev, .ino = st->st_ino };
	const file_id *f = bsearch(&key, s->v, s->n, sizeof *s->v, id_cmp);
	return f && f->size == st->st_size && f->ctime.tv_sec == st->st_ctim.tv_sec &&
	       f->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static int change_visit(void *arg, const char *path, const struct stat *st)
{
	changes *c = arg;
	if (!S_ISREG(st->st_mode) || unchanged(c->before, st))
		return 0;
	c->total++;
	if (c->listed < TREE_REPORT_MAX) {
		change *ch = &c->list[c->listed];
		ch->path = strdup(path);
		ch->size = st->st_size;
		if (ch->path)
			c->listed++;
	}
	return 0;
}

static int change_cmp(const void *a, const void *b)
{
	return strcmp(((const change *)a)->path, ((const change *)b)->path);
}

void tree_report(int fd, const char *tag, const char *root, const tree_snapshot *before)
{
	static char line[TREE_LINE_MAX];
	struct statvfs vs;
	int n0 = -1;
	if (before && statvfs(root, &vs) == 0)
		n0 = snprintf(line, sizeof line, "%s %llu %llu %llu %llu", tag,
			      (unsigned long long)(vs.f_blocks - vs.f_bfree) * vs.f_frsize,
			      (unsigned long long)vs.f_blocks * vs.f_frsize,
			      (unsigned long long)(vs.f_files - vs.f_ffree),
			      (unsigned long long)vs.f_files);
	if (n0 < 0 || (size_t)n0 >= sizeof line - 64) {
		dprintf(fd, "%s ?\n", tag);
		return;
	}
	static changes c;
	memset(&c, 0, sizeof c);
	c.before = before;
	bool incomplete;
	tree_walk(root, change_visit, &c, &incomplete);
	qsort(c.list, c.listed, sizeof *c.list, change_cmp);
	size_t n = (size_t)n0;
	n += (size_t)snprintf(line + n, sizeof line - n, " %zu", c.total);
	for (size_t i = 0; i < c.listed; i++) {
		char num[32];
		int k = snprintf(num, sizeof num, " %lld:", (long long)c.list[i].size);
		/* room for the worst case of this entry (every byte escaped) and the newline */
		if (n + (size_t)k + 3 * strlen(c.list[i].path) + 2 < sizeof line) {
			memcpy(line + n, num, (size_t)k + 1);
			n += (size_t)k;
			tree_put_escaped(line, &n, sizeof line, c.list[i].path);
		}
		free(c.list[i].path);
	}
	line[n++] = '\n';
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, line + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}
