/* audit.c - append-only JSON lines, one per execution (see audit.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <time.h>

#include "audit.h"
#include "brig-spec.h"
#include "policy.h"
#include "util.h"

#define AUDIT_LOCK_MS  5000
#define AUDIT_MIN_FREE (64 * 1024) /* room for a line, checked before every run */

struct audit_log {
	int fd;
	int lock_fd; /* PATH.lock: what the appends lock (see open_lock) */
	char *path;
	char *warning;
};

/* Open without blocking (a FIFO in the log's place must not hang brig), then check it is a
 * regular file before anything is written. */
static int open_regular(const char *path, int flags, mode_t mode, struct stat *st, brig_error **err)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);
	if (fd < 0 && errno == ENXIO) /* a FIFO without a reader, or a socket */
		return brig_fail(err, BRIG_E_AUDIT, 0, "%s is not a regular file", path);
	if (fd < 0)
		return brig_fail(err, BRIG_E_AUDIT, errno, "cannot open %s", path);
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return brig_fail(err, BRIG_E_AUDIT, 0, "%s is not a regular file", path);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		close(fd);
		return brig_fail(err, BRIG_E_AUDIT, errno, "cannot set up %s", path);
	}
	return fd;
}

/* The appends lock PATH.lock, a file only brig's user can open: a lock on the log itself could
 * be held by anyone who can read the log (a shared flock needs only read access), and every run
 * would then wait, fail and go unaudited. */
static int open_lock(const char *path, brig_error **err)
{
	cleanup_free char *lock = xasprintf("%s.lock", path);
	struct stat st = { 0 };
	int fd = open_regular(lock, O_RDWR | O_CREAT, 0600, &st, err);
	if (fd < 0)
		return brig_error_prefix(err, "audit log lock");
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return brig_fail(
			err, BRIG_E_AUDIT, 0,
			"audit log lock %s must belong to this user (uid %u) with mode 0600 "
			"(it is uid %u, mode %04o): others could hold it and stall auditing",
			lock, (unsigned)geteuid(), (unsigned)st.st_uid,
			(unsigned)(st.st_mode & 07777));
	}
	return fd;
}

int audit_open(const char *path, audit_log **out, brig_error **err)
{
	if (!path || path[0] != '/')
		return brig_fail(err, BRIG_E_AUDIT, 0, "audit log %s: the path must be absolute",
				 path ? path : "(null)");
	struct stat st = { 0 };
	int fd = open_regular(path, O_WRONLY | O_APPEND | O_CREAT, 0600, &st, err);
	if (fd < 0)
		return brig_error_prefix(err, "audit log");
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		close(fd);
		return brig_fail(
			err, BRIG_E_AUDIT, 0,
			"audit log %s is writable by %s (mode %04o): lines could be forged "
			"or erased; chmod go-w it",
			path, st.st_mode & S_IWOTH ? "everyone" : "its group",
			(unsigned)(st.st_mode & 07777));
	}
	int lock_fd = open_lock(path, err);
	if (lock_fd < 0) {
		close(fd);
		return lock_fd;
	}
	audit_log *a = xcalloc(1, sizeof *a);
	a->fd = fd;
	a->lock_fd = lock_fd;
	a->path = xstrdup(path);
	if (st.st_mode & S_IROTH)
		a->warning = xasprintf("audit log %s is readable by every user (mode %04o): its "
				       "lines name the code's hashes, the limits and the errors; "
				       "consider chmod o-r",
				       path, (unsigned)(st.st_mode & 07777));
	*out = a;
	return 0;
}

const char *audit_warning(const audit_log *a)
{
	return a ? a->warning : NULL;
}

void audit_close(audit_log *a)
{
	if (!a)
		return;
	close(a->fd);
	close(a->lock_fd);
	free(a->path);
	free(a->warning);
	free(a);
}

const char *audit_path(const audit_log *a)
{
	return a->path;
}

static void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

#define MIB (1024 * 1024)

/* The limits the box got, as the engine got them.  Where that differs from the policy's own
 * value (gVisor's translated pids limit, the wrapper's process in RLIMIT_NPROC, the wrapper
 * line's room in the output cap), "policy" holds the policy's value beside it. */
static void limits_json(json_object *o, const brig_policy *p, const brig_spec *s, int timeout,
			bool spare)
{
	json_object *l = json_object_new_object(), *pol = json_object_new_object();
	if (!s) { /* refused: nothing ran, the policy's limits are what would have applied */
		json_object_object_add(l, "timeout_seconds",
				       json_object_new_int(timeout ? timeout : p->timeout_seconds));
		json_object_object_add(l, "memory_mb", json_object_new_int(p->memory_mb));
		json_object_object_add(l, "cpus", json_object_new_double(p->cpus));
		json_object_object_add(l, "pids_limit", json_object_new_int(p->pids_limit));
		json_object_object_add(l, "nofile", json_object_new_int(p->nofile));
		json_object_object_add(l, "tmpfs_mb", json_object_new_int(p->tmpfs_mb));
		json_object_object_add(l, "max_input_bytes",
				       json_object_new_int64(p->max_input_bytes));
		json_object_object_add(l, "max_output_bytes",
				       json_object_new_int64(p->max_output_bytes));
		json_object_object_add(l, "network", json_object_new_boolean(p->network));
		if (p->egress_allow && p->egress_allow[0]) {
			json_object *a = json_object_new_array();
			for (char **x = p->egress_allow; *x; x++)
				json_object_array_add(a, json_object_new_string(*x));
			json_object_object_add(l, "egress_allow", a);
		}
		json_object_object_add(o, "limits", l);
		json_object_put(pol);
		return;
	}
	json_object_object_add(l, "timeout_seconds",
			       json_object_new_int((int)(s->timeout_ms / 1000)));
	json_object_object_add(l, "memory_mb", json_object_new_int64(s->memory_bytes / MIB));
	json_object_object_add(l, "memory_swap_mb",
			       json_object_new_int64(s->memory_swap_bytes / MIB));
	json_object_object_add(l, "cpus", json_object_new_double((double)s->nano_cpus / 1e9));
	json_object_object_add(l, "pids_limit", json_object_new_int64(s->pids_limit));
	if (s->pids_limit != p->pids_limit)
		json_object_object_add(pol, "pids_limit", json_object_new_int(p->pids_limit));
	json_object_object_add(l, "nproc", s->nproc ? json_object_new_int64(s->nproc) : NULL);
	json_object_object_add(l, "nofile", json_object_new_int64(s->nofile));
	json_object_object_add(l, "tmpfs", json_object_new_string(s->tmpfs_options));
	json_object_object_add(l, "shm_mb", json_object_new_int64(s->shm_bytes / MIB));
	json_object_object_add(l, "max_input_bytes",
			       json_object_new_int64((int64_t)s->max_input_bytes));
	json_object_object_add(l, "max_output_bytes",
			       json_object_new_int64((int64_t)s->max_output_bytes));
	if (s->max_output_bytes != (size_t)p->max_output_bytes)
		json_object_object_add(pol, "max_output_bytes",
				       json_object_new_int64(p->max_output_bytes));
	json_object_object_add(l, "network", json_object_new_string(s->network));
	if (s->egress) {
		json_object *e = json_object_new_object(), *a = json_object_new_array();
		for (char **x = s->egress->allow; *x; x++)
			json_object_array_add(a, json_object_new_string(*x));
		json_object_object_add(e, "allow", a);
		json_object_object_add(e, "proxy", json_object_new_string(s->egress->proxy_name));
		json_object_object_add(e, "proxy_address",
				       json_object_new_string(s->egress->proxy_address));
		json_object_object_add(e, "network", json_object_new_string(s->egress->network));
		/* the box runs in its holder's network namespace (network "container:" + it) */
		json_object_object_add(e, "net_holder",
				       s->net_holder ? json_object_new_string(s->net_holder->name)
						     : NULL);
		/* ...a spare one, started ahead by an earlier brig (spare.h) */
		json_object_object_add(e, "net_holder_spare",
				       s->net_holder ? json_object_new_boolean(spare) : NULL);
		json_object_object_add(l, "egress", e);
	}
	json_object_object_add(l, "user", json_object_new_string(s->user));
	json_object_object_add(l, "read_only_rootfs", json_object_new_boolean(s->read_only_rootfs));
	json_object_object_add(l, "cap_drop_all", json_object_new_boolean(s->cap_drop_all));
	json_object_object_add(l, "no_new_privileges",
			       json_object_new_boolean(s->no_new_privileges));
	json_object_object_add(
		l, "seccomp",
		json_object_new_string(s->seccomp_name ? s->seccomp_name : "engine default"));
	json_object_object_add(o, "limits", l);
	if (json_object_object_length(pol))
		json_object_object_add(o, "policy", pol);
	else
		json_object_put(pol);
}

static void timestamp(char *buf, size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char base[32];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}

/* Wait for the audit lock: it is held for one append, so a bounded wait suffices, and a brig
 * stopped while holding it (SIGSTOP) cannot hang every other run. */
static int lock_log(const audit_log *a, brig_error **err)
{
	int64_t give_up = now_ms() + AUDIT_LOCK_MS;
	while (flock(a->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return brig_fail(err, BRIG_E_AUDIT, errno, "cannot lock audit log %s",
					 a->path);
		if (now_ms() >= give_up)
			return brig_fail(err, BRIG_E_AUDIT, 0,
					 "audit log %s: another process held its lock for %d ms",
					 a->path, AUDIT_LOCK_MS);
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

int audit_ready(audit_log *a, brig_error **err)
{
	int r = lock_log(a, err);
	if (r < 0)
		return r;
	struct stat st;
	struct statvfs vs;
	if (fstat(a->fd, &st) < 0 || fstatvfs(a->fd, &vs) < 0)
		r = brig_fail(err, BRIG_E_AUDIT, errno, "cannot check audit log %s", a->path);
	else if (st.st_nlink == 0)
		r = brig_fail(err, BRIG_E_AUDIT, 0, "audit log %s was removed", a->path);
	else if ((unsigned long long)vs.f_bavail * vs.f_frsize < AUDIT_MIN_FREE)
		r = brig_fail(err, BRIG_E_AUDIT, ENOSPC,
			      "audit log %s: no room for the run's line on its file system",
			      a->path);
	flock(a->lock_fd, LOCK_UN);
	return r;
}

/* Append one line: whole, or not at all.
 *
 * One write(2) on an O_APPEND fd keeps lines from concurrent runs from interleaving, but a full
 * file system makes it short: the kernel writes what fits and the file ends in half a line
 * (measured on a full tmpfs: it fills the last page, then ENOSPC).  So every brig append holds
 * an exclusive flock(2) on the log, notes the size first and, after a short write, truncates
 * the partial line away: under the lock nothing can have been appended after it, so the
 * truncation removes exactly our own bytes.  (Without the lock, "truncate back" would race
 * with other writers and could cut their lines.)  The run is then reported as not audited
 * (BRIG_E_AUDIT, exit 125), which the callers turn into a failure. */
static int append_line(audit_log *a, const char *line, size_t len, brig_error **err)
{
	int r = lock_log(a, err);
	if (r < 0)
		return r;
	struct stat st;
	if (fstat(a->fd, &st) < 0) {
		r = brig_fail(err, BRIG_E_AUDIT, errno, "cannot stat audit log %s", a->path);
		goto out;
	}
	ssize_t w;
	do
		w = write(a->fd, line, len);
	while (w < 0 && errno == EINTR);
	if (w >= 0 && (size_t)w == len)
		goto out;
	int saved = w < 0 ? errno : ENOSPC;
	bool torn = w > 0;
	if (torn && ftruncate(a->fd, st.st_size) < 0)
		r = brig_fail(
			err, BRIG_E_AUDIT, saved,
			"audit log %s: the line for this run was cut short (%zd of %zu bytes) "
			"and the partial line could not be removed (%s): the log now ends "
			"in an incomplete line",
			a->path, w, len, strerror(errno));
	else
		r = brig_fail(err, BRIG_E_AUDIT, saved,
			      "cannot write audit log %s: the line for this run was not recorded%s",
			      a->path, torn ? " (the partial line was removed)" : "");
out:
	flock(a->lock_fd, LOCK_UN);
	return r;
}

/* n lowercase hex digits; *nonzero: not all of them '0'. */
static bool lower_hex(const char *s, size_t n, bool *nonzero)
{
	*nonzero = false;
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
		*nonzero = *nonzero || s[i] != '0';
	}
	return true;
}

/* The trace id and parent span id of a W3C Trace Context traceparent, or false when it is not
 * well formed: "VV-TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT-PPPPPPPPPPPPPPPP-FF", 55 characters of
 * lowercase hex and dashes, version ff invalid, neither id all zeros.  The value comes from a
 * client: nothing else of it reaches the log. */
static bool traceparent_ids(const char *tp, char trace_id[33], char span_id[17])
{
	bool nz_version, nz_flags, nz_trace, nz_span;
	if (!tp || strnlen(tp, 56) != 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-' ||
	    !lower_hex(tp, 2, &nz_version) || strncmp(tp, "ff", 2) == 0 ||
	    !lower_hex(tp + 3, 32, &nz_trace) || !nz_trace || !lower_hex(tp + 36, 16, &nz_span) ||
	    !nz_span || !lower_hex(tp + 53, 2, &nz_flags))
		return false;
	memcpy(trace_id, tp + 3, 32);
	trace_id[32] = '\0';
	memcpy(span_id, tp + 36, 16);
	span_id[16] = '\0';
	return true;
}

int audit_append(audit_log *a, const audit_entry *e, brig_error **err)
{
	char ts[48];
	timestamp(ts, sizeof ts);
	const brig_result *r = e->result;
	json_object *o = json_object_new_object();
	add_str(o, "ts", ts);
	add_str(o, "front_door", e->front_door);
	add_str(o, "language", brig_language_name(e->language));
	add_str(o, "image", e->image);
	add_str(o, "image_id", e->image_id);
	add_str(o, "backend", e->backend);
	add_str(o, "runtime", e->runtime);
	add_str(o, "code_sha256", e->code_sha256);
	json_object_object_add(o, "code_bytes", json_object_new_int64((int64_t)e->code_bytes));
	add_str(o, "verdict",
		r                               ? brig_verdict_name(r->verdict)
		: e->transfer_op && !e->refusal ? "success"
						: "refused");
	json_object_object_add(o, "exit_code", r ? json_object_new_int(r->exit_code) : NULL);
	json_object_object_add(o, "duration_ms", json_object_new_int64(r ? r->duration_ms : 0));
	json_object_object_add(
		o, "output_bytes",
		json_object_new_int64(r ? (int64_t)(r->stdout_len + r->stderr_len) : 0));
	add_str(o, "container", r ? r->container : NULL);
	json_object_object_add(o, "pooled", json_object_new_boolean(r && r->pooled));
	add_str(o, "error", r ? r->error : e->refusal);
	/* every line says which workspace it was in (null: none) */
	add_str(o, "workspace",
		e->workspace ? e->workspace : (e->spec ? e->spec->workspace : NULL));
	if (e->transfer_op) {
		json_object *t = json_object_new_object();
		add_str(t, "op", e->transfer_op);
		add_str(t, "path", e->transfer_path);
		json_object_object_add(t, "bytes", json_object_new_int64(e->transfer_bytes));
		add_str(t, "sha256", e->transfer_sha256);
		json_object_object_add(o, "transfer", t);
	}
	/* a box with egress: the proxy's decisions for it (null: its log could not be read) */
	if (e->spec && e->spec->egress && r)
		json_object_object_add(o, "egress_decisions",
				       BRIG_HAS_FIELD(r, brig_result, egress) && r->egress
					       ? json_tokener_parse(r->egress)
					       : NULL);
	if (e->policy)
		limits_json(o, e->policy, e->spec, e->timeout_seconds, e->net_holder_spare);
	/* so that an operator can join this line with the caller's traces */
	char trace_id[33], span_id[17];
	bool traced = traceparent_ids(e->traceparent, trace_id, span_id);
	add_str(o, "trace_id", traced ? trace_id : NULL);
	add_str(o, "parent_span_id", traced ? span_id : NULL);
	const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE);
	char *line = xasprintf("%s\n", js);
	json_object_put(o);
	size_t len = strlen(line);
	int rc = append_line(a, line, len, err);
	free(line);
	return rc;
}
