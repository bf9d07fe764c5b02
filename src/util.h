/* util.h - small shared helpers: allocation that aborts on OOM, cleanup attributes, a growable
 * buffer, errors, clocks.  Used by libbrig, the front ends and (as a static convenience copy) the
 * backend plugins.  Nothing here prints except xalloc's abort message.
 */
#ifndef BRIG_UTIL_H
#define BRIG_UTIL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "brig.h"

#define BRIG_HIDDEN __attribute__((visibility("hidden")))

/* ---- memory: abort on OOM (a sandbox host out of memory cannot do anything useful) ---- */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
void strv_free(char **v);
size_t strv_len(char *const *v);
char **strv_copy(char *const *v);

/* ---- cleanup attributes (crun / systemd style) ---- */
static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}
static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
static inline void cleanup_strvp(char ***v)
{
	strv_free(*v);
}
#define cleanup_free  __attribute__((cleanup(cleanup_freep)))
#define cleanup_close __attribute__((cleanup(cleanup_closep)))
#define cleanup_strv  __attribute__((cleanup(cleanup_strvp)))
/* Hand ownership over: return the pointer and null the local so cleanup skips it. */
#define steal_pointer(pp)                     \
	({                                    \
		__typeof__(*(pp)) _p = *(pp); \
		*(pp) = NULL;                 \
		_p;                           \
	})
#define steal_fd(fdp)             \
	({                        \
		int _fd = *(fdp); \
		*(fdp) = -1;      \
		_fd;              \
	})

/* ---- growable byte buffer, always NUL-terminated ---- */
typedef struct strbuf {
	char *data;
	size_t len;
	size_t cap;
} strbuf;
void sb_init(strbuf *sb);
void sb_append(strbuf *sb, const void *data, size_t n);
void sb_puts(strbuf *sb, const char *s);
void sb_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sb_steal(strbuf *sb); /* returns data (never NULL), resets sb */
void sb_free(strbuf *sb);

/* ---- errors ---- */
brig_error *brig_error_new(int status, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
brig_error *brig_error_newv(int status, int errnum, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Fill *err (if err) and return status: `return brig_fail(err, BRIG_E_USAGE, 0, "...")`.
 * *err must be NULL or an error owned by the caller: it is freed and replaced. */
int brig_fail(brig_error **err, int status, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Prefix context to an existing error: "context: old message". */
int brig_error_prefix(brig_error **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- numbers, without atoi/strtol pitfalls ---- */
/* Whole string must be a decimal integer within [min, max]. */
bool parse_long(const char *s, long min, long max, long *out);
bool parse_double(const char *s, double min, double max, double *out);

/* ---- time ---- */
int64_t now_ms(void); /* CLOCK_MONOTONIC in ms */
/* A condition variable whose timed waits run on CLOCK_MONOTONIC (now_ms's clock). */
void cond_init_monotonic(pthread_cond_t *cond);
/* Wait on cond (mutex held) until signalled or now_ms() reaches deadline_ms. */
void cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, int64_t deadline_ms);

/* ---- files ---- */
/* flock(fd, LOCK_EX), tried every 20 ms for up to wait_ms: 0, or -1 (errno) when not taken. */
int flock_wait(int fd, int wait_ms);

/* ---- processes ---- */
/* Field 22 (starttime) of a /proc/PID/stat text; the comm field may hold spaces and ')'.
 * 0, or -1 if the text is malformed or the process is a zombie (it runs nothing any more). */
int proc_stat_starttime(const char *stat_text, unsigned long long *out);
/* The start time of process `pid` (0: this process) from /proc; -1 if it does not exist or
 * is a zombie.
 * With the pid it names a process for good: a pid is reused, the pair is not. */
int proc_starttime(long pid, unsigned long long *out);
/* brig's owner label value for this process, "PID:STARTTIME:PIDNS" (the pid namespace's
 * inode: a pid means something only in its own namespace); NULL if /proc cannot tell. */
char *proc_owner_id(void);
/* What an owner label value says of its process, seen from here. */
typedef enum owner_state {
	OWNER_MALFORMED, /* not an owner label brig writes */
	OWNER_ALIVE,     /* that process still runs */
	OWNER_DEAD,      /* gone (or its pid reused) */
	OWNER_ELSEWHERE, /* a process of another pid namespace: not ours to judge */
} owner_state;
owner_state proc_owner_state(const char *owner);
/* The same as a yes/no: alive, or not ours to judge (gc leaves such a box alone). */
bool proc_owner_alive(const char *owner);

/* ---- fds ---- */
int set_nonblock(int fd, bool on);
/* write all of buf (blocking fd), retrying on EINTR */
int write_all(int fd, const void *buf, size_t len);

#endif /* BRIG_UTIL_H */
