/* util.c - allocation, buffers, errors, parsing and clock helpers (see util.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>

#include "util.h"

static void __attribute__((noreturn)) oom(void)
{
	static const char msg[] = "brig: out of memory\n";
	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

size_t strv_len(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

char **strv_copy(char *const *v)
{
	size_t n = strv_len(v);
	char **c = xcalloc(n + 1, sizeof *c);
	for (size_t i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

void sb_init(strbuf *sb)
{
	sb->data = NULL;
	sb->len = 0;
	sb->cap = 0;
}

static void sb_grow(strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->cap)
		return;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap < sb->len + extra + 1) {
		if (cap > SIZE_MAX / 2)
			oom();
		cap *= 2;
	}
	sb->data = xrealloc(sb->data, cap);
	sb->cap = cap;
}

void sb_append(strbuf *sb, const void *data, size_t n)
{
	sb_grow(sb, n);
	if (n)
		memcpy(sb->data + sb->len, data, n);
	sb->len += n;
	sb->data[sb->len] = '\0';
}

void sb_puts(strbuf *sb, const char *s)
{
	sb_append(sb, s, strlen(s));
}

void sb_printf(strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	sb_puts(sb, s);
	free(s);
}

char *sb_steal(strbuf *sb)
{
	char *d = sb->data ? sb->data : xstrdup("");
	sb_init(sb);
	return d;
}

void sb_free(strbuf *sb)
{
	free(sb->data);
	sb_init(sb);
}

brig_error *brig_error_newv(int status, int errnum, const char *fmt, va_list ap)
{
	brig_error *e = xcalloc(1, sizeof *e);
	e->status = status;
	e->errno_value = errnum;
	char *msg = xvasprintf(fmt, ap);
	if (errnum) {
		e->message = xasprintf("%s: %s", msg, strerror(errnum));
		free(msg);
	} else {
		e->message = msg;
	}
	return e;
}

brig_error *brig_error_new(int status, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	brig_error *e = brig_error_newv(status, errnum, fmt, ap);
	va_end(ap);
	return e;
}

/* Not brig_error_free(): this file is also linked into the plugins, which must not depend on
 * libbrig's symbols. */
static void error_free(brig_error *e)
{
	if (e) {
		free(e->message);
		free(e);
	}
}

int brig_fail(brig_error **err, int status, int errnum, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		error_free(*err);
		*err = brig_error_newv(status, errnum, fmt, ap);
		va_end(ap);
	}
	return status;
}

int brig_error_prefix(brig_error **err, const char *fmt, ...)
{
	if (!err || !*err)
		return BRIG_E_SYSTEM;
	va_list ap;
	va_start(ap, fmt);
	char *ctx = xvasprintf(fmt, ap);
	va_end(ap);
	char *m = xasprintf("%s: %s", ctx, (*err)->message);
	free(ctx);
	free((*err)->message);
	(*err)->message = m;
	return (*err)->status;
}

bool parse_long(const char *s, long min, long max, long *out)
{
	if (!s || !*s)
		return false;
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end != '\0' || end == s || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool parse_double(const char *s, double min, double max, double *out)
{
	if (!s || !*s)
		return false;
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end != '\0' || end == s || !isfinite(v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}

int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cond_init_monotonic(pthread_cond_t *cond)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &ca);
	pthread_condattr_destroy(&ca);
}

void cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, int64_t deadline_ms)
{
	if (deadline_ms <= now_ms())
		return;
	struct timespec ts = { .tv_sec = (time_t)(deadline_ms / 1000),
			       .tv_nsec = (long)(deadline_ms % 1000) * 1000000L };
	pthread_cond_timedwait(cond, mutex, &ts);
}

int proc_stat_starttime(const char *stat_text, unsigned long long *out)
{
	/* "pid (comm) state ppid ...": comm is free text, so fields count from the LAST ')' */
	const char *p = stat_text ? strrchr(stat_text, ')') : NULL;
	if (!p)
		return -1;
	p++;
	/* a zombie (Z) or dead (X) process runs nothing: for brig it is gone (a SIGKILLed brig
	 * stays a zombie until its parent reaps it, and its boxes are orphans already) - unless
	 * it is a thread group leader that called pthread_exit while other threads run on */
	const char *state = p + strspn(p, " ");
	bool zombie = *state == 'Z' || *state == 'X';
	long threads = 0;
	for (int field = 3; field < 22; field++) {
		p += strspn(p, " ");
		size_t n = strcspn(p, " \n");
		if (n == 0)
			return -1;
		if (field == 20) /* num_threads */
			threads = strtol(p, NULL, 10);
		p += n;
	}
	if (zombie && threads <= 1)
		return -1;
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

int proc_starttime(long pid, unsigned long long *out)
{
	char path[64], buf[1024];
	if (pid > 0)
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	else
		snprintf(path, sizeof path, "/proc/self/stat");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n;
	do
		n = read(fd, buf, sizeof buf - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return proc_stat_starttime(buf, out);
}

static unsigned long long pidns_inode(void)
{
	struct stat st;
	return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

char *proc_owner_id(void)
{
	unsigned long long start, ns = pidns_inode();
	if (proc_starttime(0, &start) < 0 || !ns)
		return NULL;
	return xasprintf("%ld:%llu:%llu", (long)getpid(), start, ns);
}

/* Decimal digits up to the delimiter (or the end), into *out; the rest after it in *next. */
static bool owner_field(const char *s, char delim, unsigned long long *out, const char **next)
{
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n > 20 || (s[n] != delim && s[n] != '\0'))
		return false;
	errno = 0;
	char *end;
	*out = strtoull(s, &end, 10);
	if (errno || end != s + n)
		return false;
	*next = s[n] ? s + n + 1 : NULL;
	return true;
}

owner_state proc_owner_state(const char *owner)
{
	/* "PID:START" (brig before 0.2) or "PID:START:PIDNS" */
	unsigned long long pid, want, ns = 0, start;
	const char *p = owner, *q = NULL, *r = NULL, *end = NULL;
	if (!p || !owner_field(p, ':', &pid, &q) || !q || !owner_field(q, ':', &want, &r) ||
	    (r && (!owner_field(r, '\0', &ns, &end) || end)) || pid == 0 || pid > (1ULL << 30))
		return OWNER_MALFORMED;
	if (r && ns != pidns_inode())
		return OWNER_ELSEWHERE;
	return proc_starttime((long)pid, &start) == 0 && start == want ? OWNER_ALIVE : OWNER_DEAD;
}

bool proc_owner_alive(const char *owner)
{
	owner_state s = proc_owner_state(owner);
	return s == OWNER_ALIVE || s == OWNER_ELSEWHERE;
}

int set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -1;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl);
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int flock_wait(int fd, int wait_ms)
{
	int64_t until = now_ms() + (wait_ms > 0 ? wait_ms : 0);
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (now_ms() >= until)
			return -1;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}
