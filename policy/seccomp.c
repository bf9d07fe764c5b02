/* seccomp.c - brig's seccomp profile compiled with libseccomp (every rule proven valid before a
 * run), rendered as the engine's JSON profile for an isolation level, counted and labelled for
 * `brig explain`, and cached per process (policy_seccomp_brig).  The model: seccomp-model.h;
 * the parser: seccomp-parse.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "seccomp-model.h"
#include "text.h"

/* ---- compiling with libseccomp --------------------------------------------------------------- */

static char *rule_where(const policy_seccomp *sc, int line)
{
	if (line == 0)
		return xstrdup("seccomp.deny");
	return xasprintf("%s:%d", sc->origin, line);
}

static int add_rule(const policy_seccomp *sc, scmp_filter_ctx ctx, const struct sc_rule *r,
		    int isolation, brig_error **err)
{
	int e = sc_rule_errno(sc, r, isolation);
	/* The default action already: libseccomp refuses such a rule and the engine skips it. */
	if (e == sc->default_errno)
		return 0;
	uint32_t action = e ? SCMP_ACT_ERRNO((uint32_t)e) : SCMP_ACT_ALLOW;
	struct scmp_arg_cmp cmp[SC_MAX_CONDS];
	for (size_t i = 0; i < r->n_conds; i++)
		cmp[i] = (struct scmp_arg_cmp){ r->conds[i].arg, r->conds[i].op, r->conds[i].value,
						r->conds[i].value_two };
	for (size_t i = 0; i < r->n; i++) {
		int nr = seccomp_syscall_resolve_name(r->names[i]);
		int rc = nr == __NR_SCMP_ERROR ? -ENOENT
					       : seccomp_rule_add_array(ctx, action, nr,
									(unsigned)r->n_conds, cmp);
		if (rc < 0) {
			cleanup_free char *where = rule_where(sc, r->lines[i]);
			return brig_fail(err, BRIG_E_POLICY, 0,
					 "%s: libseccomp refused the rule for \"%s\": %s", where,
					 r->names[i], strerror(-rc));
		}
	}
	return 0;
}

int policy_seccomp_compile(const policy_seccomp *sc, int isolation, bool thorough, brig_error **err)
{
	uint32_t native = seccomp_arch_native();
	const char *arch = sc_engine_arch(native);
	cleanup_scmp scmp_filter_ctx ctx =
		seccomp_init(SCMP_ACT_ERRNO((uint32_t)sc->default_errno));
	if (!ctx)
		return brig_fail(err, BRIG_E_SYSTEM, 0, "libseccomp: seccomp_init failed");
	for (size_t i = 0; thorough && i < sc->n_arches; i++) {
		if (sc->arches[i].token != native)
			continue;
		for (size_t j = 0; j < sc->arches[i].n_subs; j++) {
			int rc = seccomp_arch_add(ctx, sc->arches[i].sub_tokens[j]);
			if (rc < 0 && rc != -EEXIST)
				return brig_fail(err, BRIG_E_POLICY, 0,
						 "%s: libseccomp refused %s: %s", sc->origin,
						 sc->arches[i].subs[j], strerror(-rc));
		}
	}
	for (size_t i = 0; i < sc->n_rules; i++) {
		if (!sc_rule_applies(&sc->rules[i], arch))
			continue;
		int rc = add_rule(sc, ctx, &sc->rules[i], isolation, err);
		if (rc < 0)
			return rc;
	}
	if (!thorough)
		return 0;
	/* Generate the BPF program too: the last check libseccomp makes. */
	cleanup_close int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot open /dev/null");
	int rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return brig_fail(err, BRIG_E_POLICY, 0,
				 "%s: libseccomp cannot build the filter: %s", sc->origin,
				 strerror(-rc));
	return 0;
}

/* ---- rendering ------------------------------------------------------------------------------- */

static json_object *strv_json(char *const *v)
{
	json_object *a = json_object_new_array();
	for (; v && *v; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

static json_object *args_json(const struct sc_rule *r)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < r->n_conds; i++) {
		const struct sc_cond *c = &r->conds[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "index", json_object_new_int((int)c->arg));
		json_object_object_add(o, "value", json_object_new_uint64(c->value));
		if (c->value_two)
			json_object_object_add(o, "valueTwo", json_object_new_uint64(c->value_two));
		json_object_object_add(o, "op", json_object_new_string(sc_op_json(c->op)));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *rule_json(const policy_seccomp *sc, const struct sc_rule *r, int isolation)
{
	int e = sc_rule_errno(sc, r, isolation);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "names", strv_json(r->names));
	json_object_object_add(o, "action",
			       json_object_new_string(e ? "SCMP_ACT_ERRNO" : "SCMP_ACT_ALLOW"));
	if (e)
		json_object_object_add(o, "errnoRet", json_object_new_int(e));
	if (r->n_conds)
		json_object_object_add(o, "args", args_json(r));
	if (r->reason) {
		cleanup_free char *c =
			e == r->errno_ret ? xstrdup(r->reason)
					  : xasprintf("%s [gVisor: allowed, runsc would answer "
						      "EPERM instead of %s]",
						      r->reason, sc_errno_name(r->errno_ret));
		json_object_object_add(o, "comment", json_object_new_string(c));
	}
	if (r->arches || r->min_kernel) {
		json_object *inc = json_object_new_object();
		if (r->arches)
			json_object_object_add(inc, "arches", strv_json(r->arches));
		if (r->min_kernel)
			json_object_object_add(inc, "minKernel",
					       json_object_new_string(r->min_kernel));
		json_object_object_add(o, "includes", inc);
	}
	if (r->not_arches) {
		json_object *exc = json_object_new_object();
		json_object_object_add(exc, "arches", strv_json(r->not_arches));
		json_object_object_add(o, "excludes", exc);
	}
	return o;
}

static json_object *arch_map_json(const policy_seccomp *sc)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < sc->n_arches; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "architecture",
				       json_object_new_string(sc->arches[i].name));
		json_object_object_add(o, "subArchitectures",
				       sc->arches[i].n_subs ? strv_json(sc->arches[i].subs) : NULL);
		json_object_array_add(a, o);
	}
	return a;
}

char *policy_seccomp_render(const policy_seccomp *sc, int isolation)
{
	cleanup_json json_object *o = json_object_new_object();
	json_object_object_add(o, "defaultAction", json_object_new_string("SCMP_ACT_ERRNO"));
	json_object_object_add(o, "defaultErrnoRet", json_object_new_int(sc->default_errno));
	json_object_object_add(o, "archMap", arch_map_json(sc));
	json_object *rules = json_object_new_array();
	for (size_t i = 0; i < sc->n_rules; i++)
		json_object_array_add(rules, rule_json(sc, &sc->rules[i], isolation));
	json_object_object_add(o, "syscalls", rules);
	return xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* ---- counting and labels --------------------------------------------------------------------- */

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t count_distinct(const char **v, size_t n)
{
	size_t d = 0;
	qsort(v, n, sizeof *v, str_cmp);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(v[i - 1], v[i]) != 0)
			d++;
	return d;
}

void policy_seccomp_count(const policy_seccomp *sc, int isolation, size_t *allowed, size_t *denied)
{
	size_t n = 0, na = 0, nd = 0;
	for (size_t i = 0; i < sc->n_rules; i++)
		n += sc->rules[i].n;
	cleanup_free const char **a = xcalloc(n ? n : 1, sizeof *a);
	cleanup_free const char **d = xcalloc(n ? n : 1, sizeof *d);
	for (size_t i = 0; i < sc->n_rules; i++) {
		bool allow = sc_rule_errno(sc, &sc->rules[i], isolation) == 0;
		for (size_t j = 0; j < sc->rules[i].n; j++) {
			if (allow)
				a[na++] = sc->rules[i].names[j];
			else
				d[nd++] = sc->rules[i].names[j];
		}
	}
	*allowed = count_distinct(a, na);
	*denied = count_distinct(d, nd);
}

bool policy_seccomp_allows(const policy_seccomp *sc, const char *name, int isolation)
{
	for (size_t i = 0; i < sc->n_rules; i++)
		if (sc_rule_errno(sc, &sc->rules[i], isolation) == 0 &&
		    sc_strv_has(sc->rules[i].names, name))
			return true;
	return false;
}

char *policy_seccomp_join(char *const *names)
{
	strbuf sb;
	sb_init(&sb);
	for (size_t i = 0; names && names[i]; i++) {
		if (i)
			sb_puts(&sb, ", ");
		sb_puts(&sb, names[i]);
	}
	return sb_steal(&sb);
}

static char *label(const policy_seccomp *sc, int isolation)
{
	strbuf sb;
	sb_init(&sb);
	sb_puts(&sb, "brig default");
	if (sc->policy_deny) {
		cleanup_free char *d = policy_seccomp_join(sc->policy_deny);
		sb_printf(&sb, " + deny [%s]", d);
	}
	bool first = true;
	for (size_t i = 0; i < sc->n_rules; i++) {
		const struct sc_rule *r = &sc->rules[i];
		if (r->errno_ret == sc_rule_errno(sc, r, isolation))
			continue;
		cleanup_free char *names = policy_seccomp_join(r->names);
		sb_printf(&sb, "%s%s", first ? ", gVisor rendering: allowed " : ", ", names);
		first = false;
	}
	size_t allowed, denied;
	policy_seccomp_count(sc, isolation, &allowed, &denied);
	sb_printf(&sb, " (%zu syscalls allowed, %zu denied)", allowed, denied);
	return sb_steal(&sb);
}

/* Parsing, checking and rendering the profile costs ~1.3 ms and thousands of allocations; the
 * result depends only on the deny list and the isolation level, so a long-lived server renders
 * each combination once (process lifetime, a few entries). */
#define RENDER_CACHE_SIZE 4
static struct {
	int isolation;
	char *deny_key;
	char *json;
	char *label;
} render_cache[RENDER_CACHE_SIZE];
static pthread_mutex_t render_lock = PTHREAD_MUTEX_INITIALIZER;

static bool cached(int isolation, const char *key, char **json, char **label_out)
{
	bool hit = false;
	pthread_mutex_lock(&render_lock);
	for (int i = 0; i < RENDER_CACHE_SIZE && !hit; i++) {
		if (render_cache[i].json && render_cache[i].isolation == isolation &&
		    strcmp(render_cache[i].deny_key, key) == 0) {
			*json = xstrdup(render_cache[i].json);
			*label_out = xstrdup(render_cache[i].label);
			hit = true;
		}
	}
	pthread_mutex_unlock(&render_lock);
	return hit;
}

static void remember(int isolation, const char *key, const char *json, const char *label_text)
{
	pthread_mutex_lock(&render_lock);
	for (int i = 0; i < RENDER_CACHE_SIZE; i++) {
		if (!render_cache[i].json) {
			render_cache[i].isolation = isolation;
			render_cache[i].deny_key = xstrdup(key);
			render_cache[i].json = xstrdup(json);
			render_cache[i].label = xstrdup(label_text);
			break;
		}
	}
	pthread_mutex_unlock(&render_lock);
}

int policy_seccomp_brig(char *const *deny, int isolation, char **json, char **label_out,
			brig_error **err)
{
	*json = NULL;
	*label_out = NULL;
	cleanup_free char *key = policy_seccomp_join(deny);
	if (cached(isolation, key ? key : "", json, label_out))
		return 0;
	cleanup_sc policy_seccomp *sc = NULL;
	int rc = policy_seccomp_parse(policy_seccomp_data, POLICY_SECCOMP_ORIGIN, &sc, err);
	if (rc == 0 && deny && deny[0])
		rc = policy_seccomp_deny(sc, deny, err);
	if (rc == 0)
		rc = policy_seccomp_compile(sc, isolation, false, err);
	if (rc != 0) {
		brig_error_prefix(err, "brig's seccomp profile");
		return rc;
	}
	*json = policy_seccomp_render(sc, isolation);
	*label_out = label(sc, isolation);
	remember(isolation, key ? key : "", *json, *label_out);
	return 0;
}
