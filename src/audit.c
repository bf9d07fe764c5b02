/* audit.c - append-only JSON lines, one per execution (see audit.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "audit.h"
#include "policy.h"
#include "util.h"

struct audit_log {
	int fd;
	char *path;
};

int audit_open(const char *path, audit_log **out, brig_error **err)
{
	if (!path || path[0] != '/')
		return brig_fail(err, BRIG_E_AUDIT, 0, "audit log %s: the path must be absolute",
				 path ? path : "(null)");
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return brig_fail(err, BRIG_E_AUDIT, errno, "cannot open audit log %s", path);
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return brig_fail(err, BRIG_E_AUDIT, 0, "audit log %s is not a regular file", path);
	}
	audit_log *a = xcalloc(1, sizeof *a);
	a->fd = fd;
	a->path = xstrdup(path);
	*out = a;
	return 0;
}

void audit_close(audit_log *a)
{
	if (!a)
		return;
	close(a->fd);
	free(a->path);
	free(a);
}

const char *audit_path(const audit_log *a)
{
	return a->path;
}

void sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
		abort(); /* libcrypto cannot fail on SHA-256 short of memory corruption */
	static const char hex[] = "0123456789abcdef";
	for (unsigned i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

static void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static json_object *limits_json(const brig_policy *p, int timeout_seconds)
{
	json_object *l = json_object_new_object();
	json_object_object_add(l, "timeout_seconds", json_object_new_int(timeout_seconds));
	json_object_object_add(l, "memory_mb", json_object_new_int(p->memory_mb));
	json_object_object_add(l, "cpus", json_object_new_double(p->cpus));
	json_object_object_add(l, "pids_limit", json_object_new_int(p->pids_limit));
	json_object_object_add(l, "nofile", json_object_new_int(p->nofile));
	json_object_object_add(l, "tmpfs_mb", json_object_new_int(p->tmpfs_mb));
	json_object_object_add(l, "max_input_bytes", json_object_new_int64(p->max_input_bytes));
	json_object_object_add(l, "max_output_bytes", json_object_new_int64(p->max_output_bytes));
	json_object_object_add(l, "network", json_object_new_boolean(p->network));
	return l;
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
	add_str(o, "backend", e->backend);
	add_str(o, "runtime", e->runtime);
	add_str(o, "code_sha256", e->code_sha256);
	json_object_object_add(o, "code_bytes", json_object_new_int64((int64_t)e->code_bytes));
	add_str(o, "verdict", r ? brig_verdict_name(r->verdict) : "refused");
	json_object_object_add(o, "exit_code", r ? json_object_new_int(r->exit_code) : NULL);
	json_object_object_add(o, "duration_ms", json_object_new_int64(r ? r->duration_ms : 0));
	json_object_object_add(
		o, "output_bytes",
		json_object_new_int64(r ? (int64_t)(r->stdout_len + r->stderr_len) : 0));
	add_str(o, "container", r ? r->container : NULL);
	add_str(o, "error", r ? r->error : e->refusal);
	if (e->policy)
		json_object_object_add(o, "limits", limits_json(e->policy, e->timeout_seconds));
	const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE);
	char *line = xasprintf("%s\n", js);
	json_object_put(o);
	size_t len = strlen(line);
	/* One write(2) on an O_APPEND fd: lines from concurrent runs never interleave. */
	ssize_t w;
	do
		w = write(a->fd, line, len);
	while (w < 0 && errno == EINTR);
	int saved = errno;
	free(line);
	if (w < 0)
		return brig_fail(err, BRIG_E_AUDIT, saved, "cannot write audit log %s", a->path);
	if ((size_t)w != len)
		return brig_fail(err, BRIG_E_AUDIT, ENOSPC,
				 "short write to audit log %s (%zd of %zu bytes)", a->path, w, len);
	return 0;
}
