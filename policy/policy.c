/* policy.c - THE policy validator: built-in defaults, JSON loading, operator overrides and the
 * effective policy as JSON.  One table of keys drives all four, so they cannot disagree about a
 * key's type, range, order or which direction of change loosens it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "egress.h"
#include "lang.h"
#include "policy.h"
#include "policy-seccomp.h"
#include "text.h"
#include "util.h"

#define POLICY_FILE_MAX   (1024 * 1024) /* policy and seccomp files; real ones are ~1 KiB */
#define POLICY_JSON_DEPTH 16            /* a policy is 2 levels deep; refuse absurd nesting early */
#define POLICY_ID_MAX     4294967294ULL /* (uid_t)-1 means "unchanged" to the kernel */
#define OVERRIDE_ORIGIN   "command line"
#define ALNUM             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

enum key_kind {
	KEY_INT,
	KEY_CPUS,
	KEY_BOOL,
	KEY_STRING,
	KEY_OPT_STRING,
	KEY_ISOLATION,
	KEY_IMAGES,
	KEY_SECCOMP,
	KEY_EGRESS
};

/* Which change of the value loosens the policy (the caller of an override must warn).
 * LOOSE_SECCOMP: a profile that may allow more, or fewer denied syscalls.
 * LOOSE_EGRESS: an allowlist entry or a static name that was not there before. */
enum loosen { LOOSE_NEVER, LOOSE_UP, LOOSE_DOWN, LOOSE_SECCOMP, LOOSE_EGRESS };

/* Checks a string value; on failure returns -1 and fills `why` (without the key). */
typedef int (*string_check_fn)(const char *v, char *why, size_t why_len);

struct policy_key {
	const char *name;
	enum key_kind kind;
	size_t offset;
	bool is_long; /* KEY_INT: the field is a long, else an int */
	long min, max;
	enum loosen loosen;
	string_check_fn check;
};

/* The policy file's spelling of the isolation levels (a file format contract, not a label). */
static const char *const isolation_names[] = {
	[BRIG_ISOLATION_CONTAINER] = "container",
	[BRIG_ISOLATION_GVISOR] = "gvisor",
};

static inline void json_putp(json_object **o)
{
	if (*o)
		json_object_put(*o);
}
#define cleanup_json __attribute__((cleanup(json_putp)))

static inline void policy_freep(brig_policy **p)
{
	brig_policy_free(*p);
}
#define cleanup_policy __attribute__((cleanup(policy_freep)))

/* ---- small helpers ------------------------------------------------------------------------- */

/* `s` double-quoted, escaped and bounded: values from a file or a command line end up on an
 * operator's terminal. */
char *policy_quoted(const char *s)
{
	strbuf sb;
	sb_init(&sb);
	sb_puts(&sb, "\"");
	size_t i = 0;
	for (; i < 80 && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			sb_printf(&sb, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			sb_printf(&sb, "\\x%02x", c);
		else
			sb_append(&sb, &s[i], 1);
	}
	sb_puts(&sb, s[i] ? "\"..." : "\"");
	return sb_steal(&sb);
}

/* A key name as shown in a message: as is when plain, quoted otherwise (it may be anything). */
static char *key_display(const char *key)
{
	if (*key && strspn(key, ALNUM "_.-[]") == strlen(key))
		return xstrdup(key);
	return policy_quoted(key);
}

/* Every validation error has one shape: "ORIGIN: KEY.PATH: reason". */
static int __attribute__((format(printf, 5, 6)))
key_fail(brig_error **err, int status, const char *origin, const char *key, const char *fmt, ...)
{
	if (!err)
		return status;
	va_list ap;
	va_start(ap, fmt);
	brig_error *e = brig_error_newv(status, 0, fmt, ap);
	va_end(ap);
	brig_error_free(*err);
	*err = e;
	cleanup_free char *k = key_display(key);
	brig_error_prefix(err, "%s: %s", origin, k);
	return status;
}

static bool has_control_char(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static void replace_str(char **slot, const char *v)
{
	free(*slot);
	*slot = v ? xstrdup(v) : NULL;
}

static int isolation_parse(const char *s)
{
	for (int i = BRIG_ISOLATION_CONTAINER; i <= BRIG_ISOLATION_GVISOR; i++)
		if (strcmp(s, isolation_names[i]) == 0)
			return i;
	return -1;
}

static bool isolation_valid(int i)
{
	return i == BRIG_ISOLATION_CONTAINER || i == BRIG_ISOLATION_GVISOR;
}

/* Exact language names only: the images object of a file is no place for aliases. */
static int language_index(const char *name)
{
	for (int i = 0; i < BRIG_LANG_COUNT; i++)
		if (strcmp(name, brig_language_name((brig_language)i)) == 0)
			return i;
	return -1;
}

/* ---- files and JSON text ------------------------------------------------------------------- */

/* Read a whole file of at most `cap` bytes into sb (NUL-terminated).  -1 with errno on failure,
 * EFBIG when too large.  No O_NONBLOCK: a named pipe (e.g. <(jq ...)) is a fine policy source. */
static int read_file_capped(const char *path, size_t cap, strbuf *sb)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	char buf[16384];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (int)n;
		sb_append(sb, buf, (size_t)n);
		if (sb->len > cap) {
			errno = EFBIG;
			return -1;
		}
	}
}

/* 1-based line and byte column of offset `off`. */
static void locate(const char *text, size_t off, size_t *line, size_t *col)
{
	size_t start = 0;
	*line = 1;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			start = i + 1;
		}
	}
	*col = off - start + 1;
}

/* Parse `text` (`len` bytes) as one strict JSON value into *out (NULL for a JSON null).  On
 * failure returns -1 and fills `why` with "LINE:COL: invalid JSON: reason". */
static int parse_json(const char *text, size_t len, json_object **out, char *why, size_t why_len)
{
	const char *reason = NULL;
	size_t where = 0, line, col;
	if (json_parse_strict(text, len, POLICY_JSON_DEPTH, out, &reason, &where) == 0)
		return 0;
	locate(text, where, &line, &col);
	snprintf(why, why_len, "%zu:%zu: invalid JSON: %s", line, col, reason);
	return -1;
}

int policy_read_seccomp(const char *path, char **text, char *why, size_t why_len)
{
	strbuf sb;
	sb_init(&sb);
	*text = NULL;
	if (read_file_capped(path, POLICY_FILE_MAX, &sb) < 0) {
		int e = errno;
		sb_free(&sb);
		if (e == EFBIG)
			snprintf(why, why_len, "%s is larger than 1 MiB", path);
		else
			snprintf(why, why_len, "cannot read %s: %s", path, strerror(e));
		return -1;
	}
	size_t len = sb.len;
	cleanup_free char *data = sb_steal(&sb);
	char jwhy[256];
	cleanup_json json_object *obj = NULL;
	if (parse_json(data, len, &obj, jwhy, sizeof jwhy) < 0) {
		snprintf(why, why_len, "%s:%s", path, jwhy);
		return -1;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		snprintf(why, why_len,
			 "%s is not a JSON object (a seccomp profile is {\"defaultAction\": ...})",
			 path);
		return -1;
	}
	*text = steal_pointer(&data);
	return 0;
}

/* ---- string checks --------------------------------------------------------------------------- */

/* A decimal id without sign or spaces, 0..POLICY_ID_MAX; false (and *range if too big) if not. */
static bool parse_id(const char *s, size_t n, unsigned long long *out, bool *range)
{
	unsigned long long v = 0;
	*range = false;
	if (n == 0 || strspn(s, "0123456789") < n)
		return false;
	for (size_t i = 0; i < n; i++) {
		v = v * 10 + (unsigned long long)(s[i] - '0');
		if (v > POLICY_ID_MAX) {
			*range = true;
			return false;
		}
	}
	*out = v;
	return true;
}

/* Numeric "UID:GID" only: a name would be resolved by the image, which the operator does not
 * control, and root is refused outright. */
static int check_user(const char *v, char *why, size_t n)
{
	if (strcmp(v, "auto") == 0)
		return 0; /* a uid of its own for every box, from uid_range */
	cleanup_free char *q = policy_quoted(v);
	const char *colon = strchr(v, ':');
	unsigned long long id[2];
	bool range[2] = { false, false };
	if (!colon || !parse_id(v, (size_t)(colon - v), &id[0], &range[0]) ||
	    !parse_id(colon + 1, strlen(colon + 1), &id[1], &range[1])) {
		if (range[0] || range[1])
			snprintf(why, n, "%s: %s is out of range (1..%llu)", q,
				 range[0] ? "uid" : "gid", POLICY_ID_MAX);
		else
			snprintf(why, n, "%s is not a numeric UID:GID (write e.g. 65534:65534)", q);
		return -1;
	}
	if (id[0] == 0) {
		snprintf(why, n, "uid 0 (root) is refused; use an unprivileged uid such as 65534");
		return -1;
	}
	if (id[1] == 0) {
		snprintf(why, n, "gid 0 (root) is refused; use an unprivileged gid such as 65534");
		return -1;
	}
	return 0;
}

static int check_backend(const char *v, char *why, size_t n)
{
	size_t len = strlen(v);
	if (len >= 1 && len <= 32 && strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-") == len)
		return 0;
	cleanup_free char *q = policy_quoted(v);
	snprintf(why, n,
		 "%s is not a backend name (\"auto\", or 1 to 32 of a-z 0-9 -, e.g. docker-cli)",
		 q);
	return -1;
}

int policy_uid_range(const char *v, unsigned long long *first, unsigned long long *count)
{
	const char *dash = strchr(v, '-');
	unsigned long long a, b;
	bool range;
	if (!dash || !parse_id(v, (size_t)(dash - v), &a, &range) ||
	    !parse_id(dash + 1, strlen(dash + 1), &b, &range) || b < a ||
	    b - a + 1 > POLICY_UID_RANGE_MAX || a < POLICY_UID_RANGE_MIN)
		return -1;
	*first = a;
	*count = b - a + 1;
	return 0;
}

/* "FIRST-LAST": the uids brig gives boxes one each (user "auto"), away from the host's own users
 * and the subordinate ranges of rootless containers. */
static int check_uid_range(const char *v, char *why, size_t n)
{
	unsigned long long first, count;
	if (policy_uid_range(v, &first, &count) == 0)
		return 0;
	cleanup_free char *q = policy_quoted(v);
	snprintf(why, n,
		 "%s is not a uid range \"FIRST-LAST\" with FIRST >= %llu and at most %llu uids "
		 "(e.g. %s)",
		 q, (unsigned long long)POLICY_UID_RANGE_MIN,
		 (unsigned long long)POLICY_UID_RANGE_MAX, POLICY_UID_RANGE_DEFAULT);
	return -1;
}

/* An OCI runtime name as dockerd registers it (a key of daemon.json's "runtimes").  Whether it
 * is gVisor is not taken on trust: the dispatcher runs a smoke box under it first. */
static int check_runtime(const char *v, char *why, size_t n)
{
	size_t len = strlen(v);
	if (len >= 1 && len <= 64 && strchr(ALNUM, v[0]) && strspn(v, ALNUM "_.-") == len)
		return 0;
	cleanup_free char *q = policy_quoted(v);
	snprintf(why, n, "%s is not a runtime name (1 to 64 of A-Z a-z 0-9 _ . -)", q);
	return -1;
}

/* "brig", "engine", or an absolute path to a profile that is readable and a JSON object now, so
 * that a typo fails at load time and not at the first run. */
static int check_seccomp(const char *v, char *why, size_t n)
{
	if (strcmp(v, "brig") == 0 || strcmp(v, "engine") == 0)
		return 0;
	if (v[0] != '/' || has_control_char(v)) {
		cleanup_free char *q = policy_quoted(v);
		snprintf(why, n,
			 "%s is not \"brig\", \"engine\" or an absolute path to a seccomp profile",
			 q);
		return -1;
	}
	cleanup_free char *text = NULL;
	return policy_read_seccomp(v, &text, why, n);
}

/* Only the shape: whether it is writable is checked when a context opens it, so that
 * `brig policy` works on a machine without the log directory. */
static int check_audit_log(const char *v, char *why, size_t n)
{
	if (v[0] == '/' && !has_control_char(v))
		return 0;
	cleanup_free char *q = policy_quoted(v);
	snprintf(why, n, "%s is not an absolute path (or null for no audit log)", q);
	return -1;
}

/* ---- the key table ----------------------------------------------------------------------- */

/* Kept by hand: clang-format mangles _Generic. */
/* clang-format off */
#define INT_KEY(n, f, lo, hi)                                                                      \
	{                                                                                          \
		.name = n, .kind = KEY_INT, .offset = offsetof(brig_policy, f),                    \
		.is_long = _Generic(((brig_policy *)0)->f, long: true, default: false),            \
		.min = lo, .max = hi, .loosen = LOOSE_UP                                           \
	}
#define KEY_INT_NEVER(n, f, lo, hi)                                                                \
	{                                                                                          \
		.name = n, .kind = KEY_INT, .offset = offsetof(brig_policy, f), .is_long = false,  \
		.min = lo, .max = hi, .loosen = LOOSE_NEVER                                        \
	}
/* clang-format on */
#define KEY(n, k, f, l, c)                                                                        \
	{                                                                                         \
		.name = n, .kind = k, .offset = offsetof(brig_policy, f), .loosen = l, .check = c \
	}

/* In the order of brig-policy(5), which is also the order of brig_policy_to_json. */
static const struct policy_key keys[] = {
	INT_KEY("timeout_seconds", timeout_seconds, POLICY_TIMEOUT_MIN, POLICY_TIMEOUT_MAX),
	INT_KEY("max_timeout_seconds", max_timeout_seconds, POLICY_TIMEOUT_MIN, POLICY_TIMEOUT_MAX),
	INT_KEY("memory_mb", memory_mb, POLICY_MEMORY_MB_MIN, POLICY_MEMORY_MB_MAX),
	KEY("cpus", KEY_CPUS, cpus, LOOSE_UP, NULL),
	INT_KEY("pids_limit", pids_limit, POLICY_PIDS_MIN, POLICY_PIDS_MAX),
	INT_KEY("nofile", nofile, POLICY_NOFILE_MIN, POLICY_NOFILE_MAX),
	INT_KEY("tmpfs_mb", tmpfs_mb, POLICY_TMPFS_MB_MIN, POLICY_TMPFS_MB_MAX),
	INT_KEY("max_input_bytes", max_input_bytes, POLICY_INPUT_MIN, POLICY_INPUT_MAX),
	INT_KEY("max_output_bytes", max_output_bytes, POLICY_OUTPUT_MIN, POLICY_OUTPUT_MAX),
	KEY("network", KEY_BOOL, network, LOOSE_UP, NULL),
	KEY("user", KEY_STRING, user, LOOSE_NEVER, check_user),
	KEY("images", KEY_IMAGES, images, LOOSE_NEVER, NULL),
	KEY("require_pinned", KEY_BOOL, require_pinned, LOOSE_DOWN, NULL),
	KEY("backend", KEY_STRING, backend, LOOSE_NEVER, check_backend),
	KEY("isolation", KEY_ISOLATION, isolation, LOOSE_DOWN, NULL),
	KEY("seccomp", KEY_SECCOMP, seccomp_profile, LOOSE_SECCOMP, check_seccomp),
	INT_KEY("max_concurrent_runs", max_concurrent_runs, POLICY_CONCURRENT_MIN,
		POLICY_CONCURRENT_MAX),
	KEY("audit_log", KEY_OPT_STRING, audit_log, LOOSE_NEVER, check_audit_log),
	INT_KEY("warm_pool", warm_pool, 0, POLICY_WARM_POOL_MAX),
	INT_KEY("memory_budget_mb", memory_budget_mb, 0, POLICY_BUDGET_MB_MAX),
	KEY("gvisor_runtime", KEY_STRING, gvisor_runtime, LOOSE_NEVER, check_runtime),
	/* the engine's bound on gVisor's own host threads, not the program's budget (pids_limit,
	 * RLIMIT_NPROC inside gVisor): 0 is "translated", so up and down say nothing here */
	KEY_INT_NEVER("gvisor_pids_limit", gvisor_pids_limit, 0, POLICY_GVISOR_PIDS_MAX),
	KEY("mask_host_details", KEY_BOOL, mask_host_details, LOOSE_DOWN, NULL),
	KEY("uid_range", KEY_STRING, uid_range, LOOSE_NEVER, check_uid_range),
	/* the "workspaces" object: its members are keys of their own ("workspaces.size_mb") */
	KEY("workspaces.enabled", KEY_BOOL, ws.enabled, LOOSE_UP, NULL),
	INT_KEY("workspaces.max_count", ws.max_count, 1, POLICY_WS_COUNT_MAX),
	INT_KEY("workspaces.size_mb", ws.size_mb, 1, POLICY_WS_SIZE_MB_MAX),
	INT_KEY("workspaces.max_files", ws.max_files, POLICY_WS_FILES_MIN, POLICY_WS_FILES_MAX),
	INT_KEY("workspaces.idle_ttl_seconds", ws.idle_ttl_seconds, POLICY_WS_TTL_MIN,
		POLICY_WS_LIFETIME_MAX),
	INT_KEY("workspaces.max_lifetime_seconds", ws.max_lifetime_seconds, POLICY_WS_TTL_MIN,
		POLICY_WS_LIFETIME_MAX),
	INT_KEY("workspaces.max_transfer_bytes", ws.max_transfer_bytes, 1, POLICY_WS_TRANSFER_MAX),
	KEY("egress", KEY_EGRESS, egress_allow, LOOSE_EGRESS, NULL),
	KEY("gvisor_egress_runtime", KEY_STRING, gvisor_egress_runtime, LOOSE_NEVER, check_runtime),
};
#define GROUP_WORKSPACES "workspaces"
#define N_KEYS           (sizeof keys / sizeof keys[0])

/* Names brig no longer reads.  A policy that still uses one is refused with the way forward:
 * ignoring a security switch would be worse, and two names for one would let a file say both. */
static const struct {
	const char *name, *why;
} renamed_keys[] = {
	{ "require_digest",
	  "renamed require_pinned (pinning by image ID counts as well as by digest); write "
	  "\"require_pinned\" instead" },
};

/* The error for a key that is not in the table. */
static int unknown_key(brig_error **err, int status, const char *origin, const char *name,
		       const char *why)
{
	for (size_t i = 0; i < sizeof renamed_keys / sizeof *renamed_keys; i++)
		if (strcmp(name, renamed_keys[i].name) == 0)
			why = renamed_keys[i].why;
	return key_fail(err, status, origin, name, "%s", why);
}

static const struct policy_key *key_find(const char *name)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

#define FIELD(p, k, type)  ((type *)((char *)(p) + (k)->offset))
#define CFIELD(p, k, type) ((const type *)((const char *)(p) + (k)->offset))

static long key_get_int(const brig_policy *p, const struct policy_key *k)
{
	return k->is_long ? *CFIELD(p, k, long) : *CFIELD(p, k, int);
}

/* Only called with a value already checked against [k->min, k->max]. */
static void key_set_int(brig_policy *p, const struct policy_key *k, long v)
{
	if (k->is_long)
		*FIELD(p, k, long) = v;
	else
		*FIELD(p, k, int) = (int)v;
}

/* Numeric view of a key, for the loosening comparison. */
static double key_number(const brig_policy *p, const struct policy_key *k)
{
	switch (k->kind) {
	case KEY_INT:
		return (double)key_get_int(p, k);
	case KEY_CPUS:
		return p->cpus;
	case KEY_BOOL:
		return *CFIELD(p, k, bool);
	case KEY_ISOLATION:
		return p->isolation;
	default:
		return 0;
	}
}

/* ---- validation -------------------------------------------------------------------------- */

static int check_int(const struct policy_key *k, long long v, const char *origin, brig_error **err)
{
	if (v >= k->min && v <= k->max)
		return 0;
	return key_fail(err, BRIG_E_POLICY, origin, k->name, "%lld is out of range (%ld..%ld)", v,
			k->min, k->max);
}

static int check_cpus(double v, const char *origin, brig_error **err)
{
	if (v >= POLICY_CPUS_MIN && v <= POLICY_CPUS_MAX) /* false for NaN too */
		return 0;
	return key_fail(err, BRIG_E_POLICY, origin, "cpus", "%g is out of range (%g..%g)", v,
			POLICY_CPUS_MIN, POLICY_CPUS_MAX);
}

static int check_string(const struct policy_key *k, const char *v, const char *origin,
			brig_error **err)
{
	char why[512];
	if (!v)
		return key_fail(err, BRIG_E_POLICY, origin, k->name, "missing");
	if (k->check(v, why, sizeof why) < 0)
		return key_fail(err, BRIG_E_POLICY, origin, k->name, "%s", why);
	return 0;
}

static int check_images(const brig_policy *p, const char *origin, brig_error **err)
{
	char why[512];
	for (int i = 0; i < BRIG_LANG_COUNT; i++) {
		const char *lang = brig_language_name((brig_language)i);
		cleanup_free char *key = xasprintf("images.%s", lang);
		if (policy_check_image(p->images[i], p->require_pinned, why, sizeof why) < 0)
			return key_fail(err, BRIG_E_POLICY, origin, key, "%s", why);
	}
	return 0;
}

/* The profile, then each denied name, resolved by libseccomp now so that a typo fails at load
 * time.  The deny list is brig's edit of a profile: impossible on the engine's built-in one. */
static int check_seccomp_key(const brig_policy *p, const struct policy_key *k, const char *origin,
			     brig_error **err)
{
	char why[512];
	int r = check_string(k, p->seccomp_profile, origin, err);
	size_t n = p->seccomp_deny ? strv_len(p->seccomp_deny) : 0;
	if (r < 0 || n == 0)
		return r;
	if (n > POLICY_SECCOMP_DENY_MAX)
		return key_fail(err, BRIG_E_POLICY, origin, "seccomp.deny", "%zu names; at most %d",
				n, POLICY_SECCOMP_DENY_MAX);
	if (strcmp(p->seccomp_profile, "engine") == 0)
		return key_fail(
			err, BRIG_E_POLICY, origin, "seccomp.deny",
			"cannot be used with the \"engine\" profile: the engine's built-in "
			"profile is not brig's to edit (use \"brig\", brig's profile derived "
			"from it, or a profile file)");
	for (size_t i = 0; i < n; i++) {
		if (policy_seccomp_check_name(p->seccomp_deny[i], why, sizeof why) < 0) {
			cleanup_free char *key = xasprintf("seccomp.deny[%zu]", i);
			return key_fail(err, BRIG_E_POLICY, origin, key, "%s", why);
		}
	}
	return 0;
}

/* Every entry well-formed, no duplicates, bounded; egress and the full network are exclusive
 * (the full network already reaches everything, and "both" would read as a fence). */
static int check_egress(const brig_policy *p, const char *origin, brig_error **err)
{
	char why[512];
	size_t n = p->egress_allow ? strv_len(p->egress_allow) : 0;
	size_t nh = p->egress_hosts ? strv_len(p->egress_hosts) : 0;
	if (n > EGRESS_ALLOW_MAX)
		return key_fail(err, BRIG_E_POLICY, origin, "egress.allow",
				"%zu entries; at most %d", n, EGRESS_ALLOW_MAX);
	if (nh > EGRESS_HOSTS_MAX)
		return key_fail(err, BRIG_E_POLICY, origin, "egress.hosts",
				"%zu entries; at most %d", nh, EGRESS_HOSTS_MAX);
	for (size_t i = 0; i < n; i++) {
		cleanup_free char *key = xasprintf("egress.allow[%zu]", i);
		cleanup_free char *q = policy_quoted(p->egress_allow[i]);
		if (egress_check_entry(p->egress_allow[i], why, sizeof why) < 0)
			return key_fail(err, BRIG_E_POLICY, origin, key, "%s: %s", q, why);
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->egress_allow[j], p->egress_allow[i]) == 0)
				return key_fail(err, BRIG_E_POLICY, origin, key,
						"%s is listed twice", q);
	}
	for (size_t i = 0; i < nh; i++) {
		cleanup_free char *key = xasprintf("egress.hosts[%zu]", i);
		cleanup_free char *q = policy_quoted(p->egress_hosts[i]);
		if (egress_check_host(p->egress_hosts[i], why, sizeof why) < 0)
			return key_fail(err, BRIG_E_POLICY, origin, key, "%s: %s", q, why);
	}
	if (n > 0 && p->network)
		return key_fail(err, BRIG_E_POLICY, origin, "egress.allow",
				"cannot be combined with network true (the full network); use "
				"one or the other");
	return 0;
}

static int validate_key(const brig_policy *p, const struct policy_key *k, const char *origin,
			brig_error **err)
{
	switch (k->kind) {
	case KEY_INT:
		return check_int(k, key_get_int(p, k), origin, err);
	case KEY_CPUS:
		return check_cpus(p->cpus, origin, err);
	case KEY_BOOL:
		return 0;
	case KEY_STRING:
		return check_string(k, *CFIELD(p, k, char *), origin, err);
	case KEY_OPT_STRING:
		return *CFIELD(p, k, char *) ? check_string(k, *CFIELD(p, k, char *), origin, err)
					     : 0;
	case KEY_ISOLATION:
		if (isolation_valid(p->isolation))
			return 0;
		return key_fail(err, BRIG_E_POLICY, origin, k->name, "%d is not an isolation level",
				p->isolation);
	case KEY_IMAGES:
		return check_images(p, origin, err);
	case KEY_SECCOMP:
		return check_seccomp_key(p, k, origin, err);
	case KEY_EGRESS:
		return check_egress(p, origin, err);
	}
	return 0;
}

static int validate_timeouts(const brig_policy *p, const char *origin, brig_error **err)
{
	if (p->max_timeout_seconds < p->timeout_seconds)
		return key_fail(
			err, BRIG_E_POLICY, origin, "max_timeout_seconds",
			"%d is below timeout_seconds (%d); a request could never get the default",
			p->max_timeout_seconds, p->timeout_seconds);
	if (p->ws.idle_ttl_seconds > p->ws.max_lifetime_seconds)
		return key_fail(err, BRIG_E_POLICY, origin, "workspaces.idle_ttl_seconds",
				"%d is above workspaces.max_lifetime_seconds (%d)",
				p->ws.idle_ttl_seconds, p->ws.max_lifetime_seconds);
	/* tmpfs is RAM: every workspace full at once must stay within what a host can give */
	if ((long long)p->ws.size_mb * p->ws.max_count > POLICY_WS_SIZE_MB_MAX * 4LL)
		return key_fail(err, BRIG_E_POLICY, origin, "workspaces.size_mb",
				"%d MiB x workspaces.max_count %d is above %d MiB (tmpfs is RAM)",
				p->ws.size_mb, p->ws.max_count, POLICY_WS_SIZE_MB_MAX * 4);
	return 0;
}

int policy_validate(const brig_policy *p, const char *origin, brig_error **err)
{
	if (!p)
		return brig_fail(err, BRIG_E_USAGE, 0, "policy_validate: no policy");
	if (!origin)
		origin = "policy";
	for (size_t i = 0; i < N_KEYS; i++) {
		int r = validate_key(p, &keys[i], origin, err);
		if (r < 0)
			return r;
	}
	return validate_timeouts(p, origin, err);
}

/* ---- lifetime ---------------------------------------------------------------------------- */

brig_policy *brig_policy_new_default(void)
{
	brig_policy *p = xcalloc(1, sizeof *p);
	p->timeout_seconds = 5;
	p->max_timeout_seconds = 30;
	p->memory_mb = 256;
	p->cpus = 1.0;
	p->pids_limit = 64;
	p->nofile = 64;
	p->tmpfs_mb = 64;
	p->max_input_bytes = 65536;
	p->max_output_bytes = 131072;
	p->network = false;
	p->user = xstrdup("auto");
	for (int i = 0; i < BRIG_LANG_COUNT; i++)
		p->images[i] = xstrdup(lang_get((brig_language)i)->default_image);
	p->require_pinned = false;
	p->backend = xstrdup("auto");
	p->isolation = BRIG_ISOLATION_CONTAINER;
	p->seccomp_profile = xstrdup("brig");
	p->max_concurrent_runs = 4;
	p->warm_pool = 2;
	p->memory_budget_mb = 2048;
	p->gvisor_runtime = xstrdup("runsc-seccomp");
	p->gvisor_pids_limit = 0;
	p->mask_host_details = true;
	p->uid_range = xstrdup(POLICY_UID_RANGE_DEFAULT);
	p->ws = (policy_workspaces){ .enabled = false,
				     .max_count = 4,
				     .size_mb = 64,
				     .max_files = 4096,
				     .idle_ttl_seconds = 1800,
				     .max_lifetime_seconds = 14400,
				     .max_transfer_bytes = 8L * 1024 * 1024 };
	p->egress_allow = NULL;
	p->egress_hosts = NULL;
	p->gvisor_egress_runtime = xstrdup("runsc-egress");
	return p;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

brig_policy *brig_policy_copy(const brig_policy *p)
{
	if (!p)
		return NULL;
	brig_policy *c = xmalloc(sizeof *c);
	*c = *p;
	c->user = dup_or_null(p->user);
	for (int i = 0; i < BRIG_LANG_COUNT; i++)
		c->images[i] = dup_or_null(p->images[i]);
	c->backend = dup_or_null(p->backend);
	c->seccomp_profile = dup_or_null(p->seccomp_profile);
	c->seccomp_deny = p->seccomp_deny ? strv_copy(p->seccomp_deny) : NULL;
	c->audit_log = dup_or_null(p->audit_log);
	c->gvisor_runtime = dup_or_null(p->gvisor_runtime);
	c->uid_range = dup_or_null(p->uid_range);
	c->egress_allow = p->egress_allow ? strv_copy(p->egress_allow) : NULL;
	c->egress_hosts = p->egress_hosts ? strv_copy(p->egress_hosts) : NULL;
	c->gvisor_egress_runtime = dup_or_null(p->gvisor_egress_runtime);
	return c;
}

void brig_policy_free(brig_policy *p)
{
	if (!p)
		return;
	free(p->user);
	for (int i = 0; i < BRIG_LANG_COUNT; i++)
		free(p->images[i]);
	free(p->backend);
	free(p->seccomp_profile);
	strv_free(p->seccomp_deny);
	free(p->audit_log);
	free(p->gvisor_runtime);
	free(p->uid_range);
	strv_free(p->egress_allow);
	strv_free(p->egress_hosts);
	free(p->gvisor_egress_runtime);
	free(p);
}

/* ---- loading JSON ---------------------------------------------------------------------------- */

static const char *json_kind(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_int:
		return "an integer";
	case json_type_double:
		return "a non-integer number";
	case json_type_string:
		return "a string";
	case json_type_array:
		return "an array";
	case json_type_object:
		return "an object";
	}
	return "an unknown value";
}

static int type_fail(brig_error **err, const char *origin, const char *key, const char *expected,
		     json_object *v)
{
	return key_fail(err, BRIG_E_POLICY, origin, key, "expected %s, got %s", expected,
			json_kind(v));
}

/* A JSON string without embedded NULs (C would silently cut it there). */
static const char *json_string(json_object *v)
{
	if (!json_object_is_type(v, json_type_string))
		return NULL;
	const char *s = json_object_get_string(v);
	return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL;
}

static int string_fail(brig_error **err, const char *origin, const char *key, json_object *v)
{
	if (json_object_is_type(v, json_type_string))
		return key_fail(err, BRIG_E_POLICY, origin, key, "contains a NUL character");
	return type_fail(err, origin, key, "a string", v);
}

static int set_isolation(brig_policy *p, const char *s, const char *origin, brig_error **err)
{
	p->isolation = isolation_parse(s);
	if (p->isolation > 0)
		return 0;
	cleanup_free char *q = policy_quoted(s);
	return key_fail(err, BRIG_E_POLICY, origin, "isolation",
			"%s is not an isolation level (container or gvisor)", q);
}

static int apply_images(brig_policy *p, json_object *obj, const char *origin, brig_error **err)
{
	if (!json_object_is_type(obj, json_type_object))
		return type_fail(err, origin, "images", "an object", obj);
	json_object_object_foreach(obj, lang, val)
	{
		cleanup_free char *key = xasprintf("images.%s", lang);
		int i = language_index(lang);
		if (i < 0)
			return key_fail(err, BRIG_E_POLICY, origin, key,
					"unknown key (expected python, node or shell)");
		const char *s = json_string(val);
		if (!s)
			return string_fail(err, origin, key, val);
		replace_str(&p->images[i], s);
	}
	return 0;
}

static void set_seccomp(brig_policy *p, const char *profile, char **deny)
{
	replace_str(&p->seccomp_profile, profile);
	strv_free(p->seccomp_deny);
	p->seccomp_deny = deny;
}

/* The names of "seccomp.deny" (NULL when empty); what they name is checked by policy_validate. */
static int deny_from_json(json_object *v, char ***out, const char *origin, brig_error **err)
{
	if (!json_object_is_type(v, json_type_array))
		return type_fail(err, origin, "seccomp.deny", "an array of syscall names", v);
	size_t n = json_object_array_length(v);
	if (n > POLICY_SECCOMP_DENY_MAX)
		return key_fail(err, BRIG_E_POLICY, origin, "seccomp.deny", "%zu names; at most %d",
				n, POLICY_SECCOMP_DENY_MAX);
	cleanup_strv char **d = n ? xcalloc(n + 1, sizeof *d) : NULL;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		const char *s = json_string(e);
		if (!s) {
			cleanup_free char *key = xasprintf("seccomp.deny[%zu]", i);
			return string_fail(err, origin, key, e);
		}
		d[i] = xstrdup(s);
	}
	strv_free(*out);
	*out = steal_pointer(&d);
	return 0;
}

/* "seccomp": a profile ("brig", "engine" or a path), or {"profile": ..., "deny": [...]} with
 * "brig" as the profile when it is left out. */
static int apply_seccomp(brig_policy *p, json_object *v, const char *origin, brig_error **err)
{
	const char *s = json_string(v);
	if (s) {
		set_seccomp(p, s, NULL);
		return 0;
	}
	if (!json_object_is_type(v, json_type_object)) {
		if (json_object_is_type(v, json_type_string))
			return string_fail(err, origin, "seccomp", v);
		return type_fail(err, origin, "seccomp", "a string or an object", v);
	}
	const char *profile = "brig";
	cleanup_strv char **deny = NULL;
	json_object_object_foreach(v, key, val)
	{
		if (strcmp(key, "profile") == 0) {
			profile = json_string(val);
			if (!profile)
				return string_fail(err, origin, "seccomp.profile", val);
		} else if (strcmp(key, "deny") == 0) {
			int r = deny_from_json(val, &deny, origin, err);
			if (r < 0)
				return r;
		} else {
			cleanup_free char *k = xasprintf("seccomp.%s", key);
			return key_fail(err, BRIG_E_POLICY, origin, k,
					"unknown key (expected profile or deny)");
		}
	}
	set_seccomp(p, profile, steal_pointer(&deny));
	return 0;
}

static int strings_from_json(json_object *v, const char *key, size_t max, char ***out,
			     const char *origin, brig_error **err)
{
	if (!json_object_is_type(v, json_type_array))
		return type_fail(err, origin, key, "an array of strings", v);
	size_t n = json_object_array_length(v);
	if (n > max)
		return key_fail(err, BRIG_E_POLICY, origin, key, "%zu entries; at most %zu", n,
				max);
	cleanup_strv char **d = n ? xcalloc(n + 1, sizeof *d) : NULL;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		const char *s = json_string(e);
		if (!s) {
			cleanup_free char *k = xasprintf("%s[%zu]", key, i);
			return string_fail(err, origin, k, e);
		}
		d[i] = xstrdup(s);
	}
	strv_free(*out);
	*out = steal_pointer(&d);
	return 0;
}

/* "hosts": {"name": "address", ...} -> "name=address" entries (checked by policy_validate). */
static int hosts_from_json(json_object *v, char ***out, const char *origin, brig_error **err)
{
	if (!json_object_is_type(v, json_type_object))
		return type_fail(err, origin, "egress.hosts", "an object of name: address", v);
	size_t n = (size_t)json_object_object_length(v);
	if (n > EGRESS_HOSTS_MAX)
		return key_fail(err, BRIG_E_POLICY, origin, "egress.hosts",
				"%zu entries; at most %d", n, EGRESS_HOSTS_MAX);
	cleanup_strv char **d = n ? xcalloc(n + 1, sizeof *d) : NULL;
	size_t i = 0;
	json_object_object_foreach(v, name, val)
	{
		if (!d || i >= n)
			break;
		const char *s = json_string(val);
		if (!s) {
			cleanup_free char *k = xasprintf("egress.hosts.%s", name);
			return string_fail(err, origin, k, val);
		}
		d[i++] = xasprintf("%s=%s", name, s);
	}
	strv_free(*out);
	*out = steal_pointer(&d);
	return 0;
}

/* "egress": {"allow": ["host:port", ...], "hosts": {"name": "address"}}; both optional. */
static int apply_egress(brig_policy *p, json_object *v, const char *origin, brig_error **err)
{
	if (!json_object_is_type(v, json_type_object))
		return type_fail(err, origin, "egress", "an object ({\"allow\": [...]})", v);
	cleanup_strv char **allow = NULL;
	cleanup_strv char **hosts = NULL;
	json_object_object_foreach(v, key, val)
	{
		int r;
		if (strcmp(key, "allow") == 0)
			r = strings_from_json(val, "egress.allow", EGRESS_ALLOW_MAX, &allow, origin,
					      err);
		else if (strcmp(key, "hosts") == 0)
			r = hosts_from_json(val, &hosts, origin, err);
		else {
			cleanup_free char *k = xasprintf("egress.%s", key);
			r = key_fail(err, BRIG_E_POLICY, origin, k,
				     "unknown key (expected allow or hosts)");
		}
		if (r < 0)
			return r;
	}
	strv_free(p->egress_allow);
	p->egress_allow = steal_pointer(&allow);
	strv_free(p->egress_hosts);
	p->egress_hosts = steal_pointer(&hosts);
	return 0;
}

static int apply_number(brig_policy *p, const struct policy_key *k, json_object *v,
			const char *origin, brig_error **err)
{
	if (k->kind == KEY_CPUS) {
		if (!json_object_is_type(v, json_type_int) &&
		    !json_object_is_type(v, json_type_double))
			return type_fail(err, origin, k->name, "a number", v);
		p->cpus = json_object_get_double(v);
		return check_cpus(p->cpus, origin, err);
	}
	if (!json_object_is_type(v, json_type_int))
		return type_fail(err, origin, k->name, "an integer", v);
	int64_t x = json_object_get_int64(v); /* saturates: out of range either way */
	int r = check_int(k, x, origin, err);
	if (r == 0)
		key_set_int(p, k, (long)x);
	return r;
}

/* Type-check one top-level value and store it; string contents are checked by policy_validate
 * once the whole file is in (an image's check depends on require_pinned). */
static int apply_value(brig_policy *p, const struct policy_key *k, json_object *v,
		       const char *origin, brig_error **err)
{
	const char *s = json_string(v);
	switch (k->kind) {
	case KEY_INT:
	case KEY_CPUS:
		return apply_number(p, k, v, origin, err);
	case KEY_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return type_fail(err, origin, k->name, "true or false", v);
		*FIELD(p, k, bool) = json_object_get_boolean(v);
		return 0;
	case KEY_OPT_STRING:
		if (!v) {
			replace_str(FIELD(p, k, char *), NULL);
			return 0;
		}
		/* fall through */
	case KEY_STRING:
		if (!s)
			return string_fail(err, origin, k->name, v);
		replace_str(FIELD(p, k, char *), s);
		return 0;
	case KEY_ISOLATION:
		return s ? set_isolation(p, s, origin, err) : string_fail(err, origin, k->name, v);
	case KEY_IMAGES:
		return apply_images(p, v, origin, err);
	case KEY_SECCOMP:
		return apply_seccomp(p, v, origin, err);
	case KEY_EGRESS:
		return apply_egress(p, v, origin, err);
	}
	return 0;
}

/* A group of keys written as an object ("workspaces": {"size_mb": 64}): each member is the
 * key "GROUP.MEMBER" of the table. */
static int apply_group(brig_policy *p, const char *group, json_object *obj, const char *origin,
		       brig_error **err)
{
	if (!json_object_is_type(obj, json_type_object))
		return type_fail(err, origin, group, "an object", obj);
	json_object_object_foreach(obj, name, val)
	{
		cleanup_free char *full = xasprintf("%s.%s", group, name);
		const struct policy_key *k = key_find(full);
		if (!k)
			return key_fail(err, BRIG_E_POLICY, origin, full,
					"unknown key (see brig-policy(5) for the keys)");
		int r = apply_value(p, k, val, origin, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int apply_object(brig_policy *p, json_object *obj, const char *origin, brig_error **err)
{
	json_object_object_foreach(obj, name, val)
	{
		if (strcmp(name, GROUP_WORKSPACES) == 0) {
			int r = apply_group(p, name, val, origin, err);
			if (r < 0)
				return r;
			continue;
		}
		const struct policy_key *k = strchr(name, '.') ? NULL : key_find(name);
		if (!k)
			return unknown_key(err, BRIG_E_POLICY, origin, name,
					   "unknown key (see brig-policy(5) for the keys)");
		int r = apply_value(p, k, val, origin, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* `text` is NUL-terminated at text[len]. */
static int load_buffer(const char *text, size_t len, const char *origin, brig_policy **out,
		       brig_error **err)
{
	char why[256];
	if (len > POLICY_FILE_MAX)
		return brig_fail(err, BRIG_E_POLICY, 0, "%s: larger than 1 MiB", origin);
	cleanup_json json_object *obj = NULL;
	if (parse_json(text, len, &obj, why, sizeof why) < 0)
		return brig_fail(err, BRIG_E_POLICY, 0, "%s:%s", origin, why);
	if (!json_object_is_type(obj, json_type_object))
		return brig_fail(err, BRIG_E_POLICY, 0,
				 "%s: the top level must be a JSON object, not %s", origin,
				 json_kind(obj));
	cleanup_policy brig_policy *p = brig_policy_new_default();
	int r = apply_object(p, obj, origin, err);
	if (r == 0)
		r = policy_validate(p, origin, err);
	if (r == 0)
		*out = steal_pointer(&p);
	return r;
}

int brig_policy_load_string(const char *json, const char *origin, brig_policy **out,
			    brig_error **err)
{
	if (!out || !json)
		return brig_fail(err, BRIG_E_USAGE, 0, "brig_policy_load_string: NULL argument");
	*out = NULL;
	return load_buffer(json, strlen(json), origin ? origin : "policy", out, err);
}

int brig_policy_load_file(const char *path, brig_policy **out, brig_error **err)
{
	if (!out || !path)
		return brig_fail(err, BRIG_E_USAGE, 0, "brig_policy_load_file: NULL argument");
	*out = NULL;
	strbuf sb;
	sb_init(&sb);
	if (read_file_capped(path, POLICY_FILE_MAX, &sb) < 0) {
		int e = errno;
		sb_free(&sb);
		if (e == EFBIG)
			return brig_fail(err, BRIG_E_POLICY, 0,
					 "policy file %s is larger than 1 MiB", path);
		return brig_fail(err, BRIG_E_POLICY, e, "cannot read policy file %s", path);
	}
	size_t len = sb.len;
	cleanup_free char *text = sb_steal(&sb);
	return load_buffer(text, len, path, out, err);
}

/* ---- output ------------------------------------------------------------------------------ */

/* The shortest text that reads back as exactly `d`, always with a '.' or exponent so that it
 * stays visibly a number of CPUs, not a count ("1.0", "0.5", not "0.50000000000000000"). */
static json_object *cpus_to_json(double d)
{
	char buf[64];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	size_t len = strlen(buf);
	if (!strpbrk(buf, ".eEni") && len + 3 <= sizeof buf)
		memcpy(buf + len, ".0", 3);
	return json_object_new_double_s(d, buf);
}

static json_object *images_to_json(const brig_policy *p)
{
	json_object *o = json_object_new_object();
	for (int i = 0; i < BRIG_LANG_COUNT; i++)
		json_object_object_add(o, brig_language_name((brig_language)i),
				       p->images[i] ? json_object_new_string(p->images[i]) : NULL);
	return o;
}

/* The string form when nothing is denied, so that a default policy reads as it is written. */
static json_object *seccomp_to_json(const brig_policy *p)
{
	if (!p->seccomp_deny || !p->seccomp_deny[0])
		return p->seccomp_profile ? json_object_new_string(p->seccomp_profile) : NULL;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "profile", json_object_new_string(p->seccomp_profile));
	json_object *a = json_object_new_array();
	for (char **d = p->seccomp_deny; *d; d++)
		json_object_array_add(a, json_object_new_string(*d));
	json_object_object_add(o, "deny", a);
	return o;
}

static json_object *egress_to_json(const brig_policy *p)
{
	json_object *o = json_object_new_object();
	json_object *a = json_object_new_array();
	for (char **e = p->egress_allow; e && *e; e++)
		json_object_array_add(a, json_object_new_string(*e));
	json_object_object_add(o, "allow", a);
	if (p->egress_hosts && p->egress_hosts[0]) {
		json_object *h = json_object_new_object();
		for (char **e = p->egress_hosts; *e; e++) {
			const char *eq = strchr(*e, '=');
			cleanup_free char *name = xstrndup(*e, (size_t)(eq - *e));
			json_object_object_add(h, name, json_object_new_string(eq + 1));
		}
		json_object_object_add(o, "hosts", h);
	}
	return o;
}

static json_object *key_to_json(const brig_policy *p, const struct policy_key *k)
{
	const char *s;
	switch (k->kind) {
	case KEY_INT:
		return json_object_new_int64(key_get_int(p, k));
	case KEY_CPUS:
		return cpus_to_json(p->cpus);
	case KEY_BOOL:
		return json_object_new_boolean(*CFIELD(p, k, bool));
	case KEY_STRING:
	case KEY_OPT_STRING:
		s = *CFIELD(p, k, char *);
		return s ? json_object_new_string(s) : NULL;
	case KEY_ISOLATION:
		return isolation_valid(p->isolation)
			       ? json_object_new_string(isolation_names[p->isolation])
			       : NULL;
	case KEY_IMAGES:
		return images_to_json(p);
	case KEY_SECCOMP:
		return seccomp_to_json(p);
	case KEY_EGRESS:
		return egress_to_json(p);
	}
	return NULL;
}

char *brig_policy_to_json(const brig_policy *p)
{
	if (!p)
		return NULL;
	cleanup_json json_object *obj = json_object_new_object();
	json_object *group = NULL;
	for (size_t i = 0; i < N_KEYS; i++) {
		const char *dot = strchr(keys[i].name, '.');
		if (!dot) {
			json_object_object_add(obj, keys[i].name, key_to_json(p, &keys[i]));
			continue;
		}
		if (!group) { /* the group's keys are adjacent in the table */
			group = json_object_new_object();
			json_object_object_add(obj, GROUP_WORKSPACES, group);
		}
		json_object_object_add(group, dot + 1, key_to_json(p, &keys[i]));
	}
	return xstrdup(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* ---- operator overrides ------------------------------------------------------------------ */

/* A decimal integer, optional '-', nothing else (strtol would also take spaces and '+'). */
static bool parse_int_text(const char *s, long *out)
{
	const char *d = s[0] == '-' ? s + 1 : s;
	return *d >= '0' && *d <= '9' && parse_long(s, LONG_MIN, LONG_MAX, out);
}

/* MiB, with an optional unit: 512, 512m, 512MiB, 2g, 2GB. */
static bool parse_memory_mb(const char *s, long *out)
{
	static const char *const mib[] = { "", "m", "mb", "mib" }, *const gib[] = { "g", "gb",
										    "gib" };
	size_t n = strspn(s, "0123456789");
	long v, mult = 0;
	if (n == 0 || n > 12)
		return false;
	for (size_t i = 0; i < sizeof mib / sizeof *mib; i++)
		if (strcasecmp(s + n, mib[i]) == 0)
			mult = 1;
	for (size_t i = 0; i < sizeof gib / sizeof *gib; i++)
		if (strcasecmp(s + n, gib[i]) == 0)
			mult = 1024;
	cleanup_free char *digits = xstrndup(s, n);
	if (!mult || !parse_long(digits, 0, LONG_MAX / 1024, &v))
		return false;
	*out = v * mult;
	return true;
}

static int set_number_text(brig_policy *p, const struct policy_key *k, const char *value,
			   brig_error **err)
{
	cleanup_free char *q = policy_quoted(value);
	long v;
	if (k->kind == KEY_CPUS) {
		if (!parse_double(value, -HUGE_VAL, HUGE_VAL, &p->cpus))
			return key_fail(err, BRIG_E_POLICY, OVERRIDE_ORIGIN, k->name,
					"%s is not a number", q);
		return 0;
	}
	bool memory = k->offset == offsetof(brig_policy, memory_mb);
	if (memory ? !parse_memory_mb(value, &v) : !parse_int_text(value, &v))
		return key_fail(err, BRIG_E_POLICY, OVERRIDE_ORIGIN, k->name, "%s is not %s", q,
				memory ? "a size in MiB (e.g. 512, 512m, 2g)" : "an integer");
	int r = check_int(k, v, OVERRIDE_ORIGIN, err);
	if (r == 0)
		key_set_int(p, k, v);
	return r;
}

/* A profile name or path, or the object form as JSON text: {"profile": "brig", "deny": [...]}. */
static int seccomp_from_text(brig_policy *p, const char *value, brig_error **err)
{
	if (value[0] != '{') {
		set_seccomp(p, value, NULL);
		return 0;
	}
	char why[256];
	cleanup_json json_object *obj = NULL;
	if (parse_json(value, strlen(value), &obj, why, sizeof why) < 0)
		return key_fail(err, BRIG_E_POLICY, OVERRIDE_ORIGIN, "seccomp", "%s", why);
	return apply_seccomp(p, obj, OVERRIDE_ORIGIN, err);
}

/* The object form as JSON text ({"allow": [...], "hosts": {...}}), or the allowlist alone as
 * comma-separated entries ("" for none); the hosts map is then kept. */
static int egress_from_text(brig_policy *p, const char *value, brig_error **err)
{
	if (value[0] == '{') {
		char why[256];
		cleanup_json json_object *obj = NULL;
		if (parse_json(value, strlen(value), &obj, why, sizeof why) < 0)
			return key_fail(err, BRIG_E_POLICY, OVERRIDE_ORIGIN, "egress", "%s", why);
		return apply_egress(p, obj, OVERRIDE_ORIGIN, err);
	}
	cleanup_strv char **allow = NULL;
	size_t n = 0;
	for (const char *s = value; *s;) {
		size_t len = strcspn(s, ",");
		if (n >= EGRESS_ALLOW_MAX)
			return key_fail(err, BRIG_E_POLICY, OVERRIDE_ORIGIN, "egress.allow",
					"more than %d entries", EGRESS_ALLOW_MAX);
		allow = xrealloc(allow, (n + 2) * sizeof *allow);
		allow[n++] = xstrndup(s, len);
		allow[n] = NULL;
		s += len + (s[len] == ',');
	}
	strv_free(p->egress_allow);
	p->egress_allow = steal_pointer(&allow);
	return 0;
}

/* Store the flag text `value` of key k (lang: which image) into p; types only, as for a file. */
static int set_from_text(brig_policy *p, const struct policy_key *k, int lang, const char *value,
			 brig_error **err)
{
	cleanup_free char *q = policy_quoted(value);
	switch (k->kind) {
	case KEY_INT:
	case KEY_CPUS:
		return set_number_text(p, k, value, err);
	case KEY_BOOL:
		if (strcmp(value, "true") != 0 && strcmp(value, "false") != 0)
			return key_fail(err, BRIG_E_POLICY, OVERRIDE_ORIGIN, k->name,
					"%s is not true or false", q);
		*FIELD(p, k, bool) = strcmp(value, "true") == 0;
		return 0;
	case KEY_OPT_STRING: /* "" or "null" unset it: a relative path is invalid anyway */
		replace_str(FIELD(p, k, char *),
			    *value && strcmp(value, "null") != 0 ? value : NULL);
		return 0;
	case KEY_STRING:
		replace_str(FIELD(p, k, char *), value);
		return 0;
	case KEY_ISOLATION:
		return set_isolation(p, value, OVERRIDE_ORIGIN, err);
	case KEY_IMAGES:
		replace_str(&p->images[lang], value);
		return 0;
	case KEY_SECCOMP:
		return seccomp_from_text(p, value, err);
	case KEY_EGRESS:
		return egress_from_text(p, value, err);
	}
	return 0;
}

/* The override key: a scalar key, or "images.<language>" (lang set). */
static const struct policy_key *override_key(const char *name, int *lang)
{
	*lang = -1;
	if (strncmp(name, "images.", 7) == 0) {
		*lang = language_index(name + 7);
		return *lang >= 0 ? key_find("images") : NULL;
	}
	if (strcmp(name, "egress.allow") == 0)
		return key_find("egress");
	const struct policy_key *k = key_find(name);
	return k && k->kind != KEY_IMAGES ? k : NULL;
}

static bool names_have(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

/* brig's profile is the engine's minus more, so engine -> brig tightens; any other change of
 * profile may allow more (a file is opaque to this check), and so may a name no longer denied. */
static bool seccomp_looser(const brig_policy *old, const brig_policy *new)
{
	if (strcmp(old->seccomp_profile, new->seccomp_profile) != 0)
		return strcmp(old->seccomp_profile, "engine") != 0 ||
		       strcmp(new->seccomp_profile, "brig") != 0;
	for (char **d = old->seccomp_deny; d && *d; d++)
		if (!names_have(new->seccomp_deny, *d))
			return true;
	return false;
}

static bool is_looser(const brig_policy *old, const brig_policy *new, const struct policy_key *k)
{
	switch (k->loosen) {
	case LOOSE_UP:
		return key_number(new, k) > key_number(old, k);
	case LOOSE_DOWN:
		return key_number(new, k) < key_number(old, k);
	case LOOSE_SECCOMP:
		return seccomp_looser(old, new);
	case LOOSE_EGRESS:
		return !egress_subset(new->egress_allow, old->egress_allow) ||
		       !egress_subset(new->egress_hosts, old->egress_hosts);
	case LOOSE_NEVER:
		break;
	}
	return false;
}

int brig_policy_override(brig_policy *p, const char *key, const char *value, bool *loosened,
			 brig_error **err)
{
	if (loosened)
		*loosened = false;
	if (!p || !key || !value)
		return brig_fail(err, BRIG_E_USAGE, 0, "brig_policy_override: NULL argument");
	int lang;
	const struct policy_key *k = override_key(key, &lang);
	if (!k)
		return unknown_key(err, BRIG_E_USAGE, OVERRIDE_ORIGIN, key, "unknown policy key");
	/* Work on a copy: on any error the policy in force stays exactly as it was. */
	cleanup_policy brig_policy *next = brig_policy_copy(p);
	int r = set_from_text(next, k, lang, value, err);
	/* Only this key and the cross-field rules: the rest was validated when loaded. */
	if (r == 0)
		r = validate_key(next, k, OVERRIDE_ORIGIN, err);
	if (r == 0)
		r = check_images(next, OVERRIDE_ORIGIN, err);
	if (r == 0)
		r = validate_timeouts(next, OVERRIDE_ORIGIN, err);
	if (r == 0)
		r = check_egress(next, OVERRIDE_ORIGIN, err);
	if (r < 0)
		return r;
	if (loosened)
		*loosened = is_looser(p, next, k);
	brig_policy tmp = *p;
	*p = *next;
	*next = tmp; /* the old contents are freed with `next` */
	return 0;
}
