/* seccomp-parse.c - brig's seccomp profile data (policy/seccomp-profile.txt, its grammar at the
 * top of that file) parsed into the model of seccomp-model.h, every syscall name resolved with
 * libseccomp (unknown names refused, crun's way), and the operator's deny list applied.
 */
#include "config.h"

#include <errno.h>
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

/* ---- tables ---------------------------------------------------------------------------------- */

static const struct {
	const char *name;
	int value;
} errno_names[] = {
	{ "EPERM", EPERM },   { "ENOENT", ENOENT }, { "EACCES", EACCES },
	{ "EINVAL", EINVAL }, { "ENOSYS", ENOSYS }, { "EOPNOTSUPP", EOPNOTSUPP },
};

static const struct {
	const char *token;
	enum scmp_compare op;
	const char *json;
} compare_ops[] = {
	{ "!=", SCMP_CMP_NE, "SCMP_CMP_NE" },
	{ "<", SCMP_CMP_LT, "SCMP_CMP_LT" },
	{ "<=", SCMP_CMP_LE, "SCMP_CMP_LE" },
	{ "==", SCMP_CMP_EQ, "SCMP_CMP_EQ" },
	{ ">=", SCMP_CMP_GE, "SCMP_CMP_GE" },
	{ ">", SCMP_CMP_GT, "SCMP_CMP_GT" },
	{ "&", SCMP_CMP_MASKED_EQ, "SCMP_CMP_MASKED_EQ" },
};

const char *sc_op_json(enum scmp_compare op)
{
	for (size_t i = 0; i < N_OF(compare_ops); i++)
		if (compare_ops[i].op == op)
			return compare_ops[i].json;
	return "?";
}

/* libseccomp's architectures under the names the engine uses in includes/excludes.arches. */
static const struct {
	uint32_t token;
	const char *engine;
} arch_names[] = {
	{ SCMP_ARCH_X86_64, "amd64" },
	{ SCMP_ARCH_X86, "x86" },
	{ SCMP_ARCH_X32, "x32" },
	{ SCMP_ARCH_AARCH64, "arm64" },
	{ SCMP_ARCH_ARM, "arm" },
	{ SCMP_ARCH_PPC64LE, "ppc64le" },
	{ SCMP_ARCH_PPC64, "ppc64" },
	{ SCMP_ARCH_PPC, "ppc" },
	{ SCMP_ARCH_S390X, "s390x" },
	{ SCMP_ARCH_S390, "s390" },
	{ SCMP_ARCH_MIPS, "mips" },
	{ SCMP_ARCH_MIPSEL, "mipsel" },
	{ SCMP_ARCH_MIPS64, "mips64" },
	{ SCMP_ARCH_MIPSEL64, "mipsel64" },
	{ SCMP_ARCH_MIPS64N32, "mips64n32" },
	{ SCMP_ARCH_MIPSEL64N32, "mipsel64n32" },
#ifdef SCMP_ARCH_RISCV64
	{ SCMP_ARCH_RISCV64, "riscv64" },
#endif
};

static int errno_value(const char *name)
{
	for (size_t i = 0; i < N_OF(errno_names); i++)
		if (strcmp(name, errno_names[i].name) == 0)
			return errno_names[i].value;
	return -1;
}

const char *sc_errno_name(int value)
{
	for (size_t i = 0; i < N_OF(errno_names); i++)
		if (errno_names[i].value == value)
			return errno_names[i].name;
	return "?";
}

const char *sc_engine_arch(uint32_t token)
{
	for (size_t i = 0; i < N_OF(arch_names); i++)
		if (arch_names[i].token == token)
			return arch_names[i].engine;
	return "";
}

static bool engine_arch_known(const char *name)
{
	for (size_t i = 0; i < N_OF(arch_names); i++)
		if (strcmp(arch_names[i].engine, name) == 0)
			return true;
	return false;
}

/* "SCMP_ARCH_X86_64" -> libseccomp's token, 0 if unknown. */
static uint32_t arch_token(const char *name)
{
	if (strncmp(name, "SCMP_ARCH_", 10) != 0 || strlen(name) > 40)
		return 0;
	char lower[48];
	size_t i = 0;
	for (const char *s = name + 10; *s; s++)
		lower[i++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
	lower[i] = '\0';
	return seccomp_arch_resolve_name(lower);
}

/* Decimal or 0x hexadecimal, the whole word, within 64 bits. */
static bool parse_u64(const char *s, uint64_t *out)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *d = hex ? s + 2 : s;
	size_t n = strlen(d);
	if (n == 0 || strspn(d, hex ? DIGITS "abcdefABCDEF" : DIGITS) != n)
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(d, &end, hex ? 16 : 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static char *version_text(void)
{
	const struct scmp_version *v = seccomp_version();
	return xasprintf("%u.%u.%u", v->major, v->minor, v->micro);
}

int policy_seccomp_check_name(const char *name, char *why, size_t why_len)
{
	size_t len = strlen(name);
	cleanup_free char *q = policy_quoted(name);
	if (len == 0 || len > SC_NAME_MAX || strspn(name, NAME_CHARS) != len) {
		snprintf(why, why_len, "%s is not a syscall name (lowercase letters, digits and _)",
			 q);
		return -1;
	}
	if (seccomp_syscall_resolve_name(name) == __NR_SCMP_ERROR) {
		cleanup_free char *v = version_text();
		snprintf(why, why_len, "%s is not a syscall known to libseccomp %s", q, v);
		return -1;
	}
	return 0;
}

/* ---- the model ------------------------------------------------------------------------------- */

static void rule_clear(struct sc_rule *r)
{
	strv_free(r->names);
	free(r->lines);
	strv_free(r->arches);
	strv_free(r->not_arches);
	free(r->min_kernel);
	free(r->reason);
	memset(r, 0, sizeof *r);
}

void policy_seccomp_free(policy_seccomp *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->n_arches; i++) {
		free(sc->arches[i].name);
		for (size_t j = 0; j < sc->arches[i].n_subs; j++)
			free(sc->arches[i].subs[j]);
	}
	free(sc->arches);
	for (size_t i = 0; i < sc->n_rules; i++)
		rule_clear(&sc->rules[i]);
	free(sc->rules);
	strv_free(sc->policy_deny);
	free(sc->origin);
	free(sc);
}

static void rule_add_name(struct sc_rule *r, const char *name, int line)
{
	r->names = xrealloc(r->names, (r->n + 2) * sizeof *r->names);
	r->lines = xrealloc(r->lines, (r->n + 1) * sizeof *r->lines);
	r->names[r->n] = xstrdup(name);
	r->lines[r->n] = line;
	r->names[++r->n] = NULL;
}

static void rule_remove_name(struct sc_rule *r, size_t i)
{
	free(r->names[i]);
	memmove(&r->names[i], &r->names[i + 1], (r->n - i) * sizeof *r->names);
	memmove(&r->lines[i], &r->lines[i + 1], (r->n - i - 1) * sizeof *r->lines);
	r->n--;
}

static struct sc_rule *append_rule(policy_seccomp *sc, struct sc_rule *r)
{
	sc->rules = xrealloc(sc->rules, (sc->n_rules + 1) * sizeof *sc->rules);
	sc->rules[sc->n_rules] = *r;
	memset(r, 0, sizeof *r);
	return &sc->rules[sc->n_rules++];
}

static void remove_rule(policy_seccomp *sc, size_t i)
{
	rule_clear(&sc->rules[i]);
	memmove(&sc->rules[i], &sc->rules[i + 1], (sc->n_rules - i - 1) * sizeof *sc->rules);
	sc->n_rules--;
}

static bool rule_is_plain(const struct sc_rule *r)
{
	return r->n_conds == 0 && !r->arches && !r->not_arches && !r->min_kernel;
}

/* runsc --oci-seccomp ignores a rule's errnoRet and always answers EPERM (measured).  A rule
 * that returns another errno exists to make the caller fall back (clone3 -> ENOSYS -> glibc
 * uses clone), and EPERM makes it fail instead: python threads and node die at start.  gVisor's
 * own kernel, the sentry, implements every syscall itself, answers ENOSYS for what it lacks
 * (clone3 included) and keeps whatever the call creates inside the sandbox, so under gVisor such
 * a rule is rendered as allow.  Deny rules (EPERM) are unchanged. */
int sc_rule_errno(const policy_seccomp *sc, const struct sc_rule *r, int isolation)
{
	if (isolation == BRIG_ISOLATION_GVISOR && !r->deny && r->errno_ret != 0 &&
	    r->errno_ret != sc->default_errno)
		return 0;
	return r->errno_ret;
}

bool sc_strv_has(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

/* Whether the rule is in force on the engine architecture `arch`. */
bool sc_rule_applies(const struct sc_rule *r, const char *arch)
{
	if (r->arches && !sc_strv_has(r->arches, arch))
		return false;
	return !sc_strv_has(r->not_arches, arch);
}

/* ---- parsing --------------------------------------------------------------------------------- */

struct tok {
	char *s;
	int line;
};

struct parser {
	policy_seccomp *sc;
	brig_error **err;
	struct tok *toks; /* the directive being read */
	size_t n_toks;
	strbuf reason;
	bool in_reason;
	int dir_line;     /* where the directive began */
	long plain_allow; /* index of the rule the plain allow lines go to, or -1 */
};

static int __attribute__((format(printf, 3, 4)))
parse_fail(struct parser *ps, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return brig_fail(ps->err, BRIG_E_POLICY, 0, "%s:%d: %s", ps->sc->origin, line, msg);
}

static void toks_clear(struct parser *ps)
{
	for (size_t i = 0; i < ps->n_toks; i++)
		free(ps->toks[i].s);
	ps->n_toks = 0;
	ps->in_reason = false;
	sb_free(&ps->reason);
	sb_init(&ps->reason);
}

static bool is_option(const char *t)
{
	return strcmp(t, "if") == 0 || strcmp(t, "arches") == 0 || strcmp(t, "not-arches") == 0 ||
	       strcmp(t, "min-kernel") == 0;
}

static int parse_default(struct parser *ps)
{
	int line = ps->toks[0].line;
	if (ps->sc->default_errno)
		return parse_fail(ps, line, "a second default line");
	int e = ps->n_toks == 3 && strcmp(ps->toks[1].s, "errno") == 0 ? errno_value(ps->toks[2].s)
								       : -1;
	if (e <= 0)
		return parse_fail(ps, line,
				  "write \"default errno ERRNO\", e.g. default errno EPERM");
	ps->sc->default_errno = e;
	return 0;
}

static int parse_arch(struct parser *ps)
{
	int line = ps->toks[0].line;
	if (ps->n_toks < 2 || ps->n_toks > 2 + SC_MAX_SUBS)
		return parse_fail(ps, line, "write \"arch NATIVE [SUB...]\" (at most %d SUBs)",
				  SC_MAX_SUBS);
	struct sc_arch a = { 0 };
	for (size_t i = 1; i < ps->n_toks; i++) {
		uint32_t t = arch_token(ps->toks[i].s);
		if (!t) {
			cleanup_free char *q = policy_quoted(ps->toks[i].s);
			for (size_t j = 0; j < a.n_subs; j++)
				free(a.subs[j]);
			free(a.name);
			return parse_fail(ps, ps->toks[i].line,
					  "%s is not an architecture libseccomp knows (write e.g. "
					  "SCMP_ARCH_X86_64)",
					  q);
		}
		if (i == 1) {
			a.name = xstrdup(ps->toks[i].s);
			a.token = t;
		} else {
			a.subs[a.n_subs] = xstrdup(ps->toks[i].s);
			a.sub_tokens[a.n_subs++] = t;
		}
	}
	policy_seccomp *sc = ps->sc;
	sc->arches = xrealloc(sc->arches, (sc->n_arches + 1) * sizeof *sc->arches);
	sc->arches[sc->n_arches++] = a;
	return 0;
}

/* "if argN OP VALUE" or "if argN & MASK == VALUE" at toks[*i] ("if"); advances *i. */
static int parse_cond(struct parser *ps, struct sc_rule *r, size_t *i)
{
	struct tok *t = &ps->toks[*i];
	size_t left = ps->n_toks - *i;
	long idx;
	if (r->n_conds == SC_MAX_CONDS)
		return parse_fail(ps, t->line, "more than %d conditions", SC_MAX_CONDS);
	if (left < 4 || strncmp(t[1].s, "arg", 3) != 0 || !parse_long(t[1].s + 3, 0, 5, &idx) ||
	    strspn(t[1].s + 3, DIGITS) != strlen(t[1].s + 3))
		return parse_fail(ps, t->line, "write \"if argN OP VALUE\" with N 0 to 5");
	struct sc_cond *c = &r->conds[r->n_conds];
	c->arg = (unsigned)idx;
	size_t k;
	for (k = 0; k < N_OF(compare_ops); k++)
		if (strcmp(t[2].s, compare_ops[k].token) == 0)
			break;
	if (k == N_OF(compare_ops))
		return parse_fail(ps, t[2].line, "unknown comparison \"%.16s\" (== != < <= > >= &)",
				  t[2].s);
	c->op = compare_ops[k].op;
	size_t used = 4;
	if (c->op == SCMP_CMP_MASKED_EQ) {
		used = 6;
		if (left < 6 || strcmp(t[4].s, "==") != 0 || !parse_u64(t[3].s, &c->value) ||
		    !parse_u64(t[5].s, &c->value_two))
			return parse_fail(ps, t->line, "write \"if argN & MASK == VALUE\"");
	} else if (!parse_u64(t[3].s, &c->value)) {
		return parse_fail(ps, t[3].line, "\"%.32s\" is not a number (decimal or 0x hex)",
				  t[3].s);
	}
	r->n_conds++;
	*i += used;
	return 0;
}

/* "arches A..." / "not-arches A..." at toks[*i]; advances *i past the names. */
static int parse_arches(struct parser *ps, char ***slot, size_t *i)
{
	struct tok *kw = &ps->toks[*i];
	if (*slot)
		return parse_fail(ps, kw->line, "\"%s\" given twice", kw->s);
	size_t start = ++*i;
	while (*i < ps->n_toks && !is_option(ps->toks[*i].s))
		(*i)++;
	if (*i == start)
		return parse_fail(ps, kw->line, "\"%s\" needs architecture names", kw->s);
	*slot = xcalloc(*i - start + 1, sizeof **slot);
	for (size_t j = start; j < *i; j++) {
		if (!engine_arch_known(ps->toks[j].s)) {
			cleanup_free char *q = policy_quoted(ps->toks[j].s);
			return parse_fail(ps, ps->toks[j].line,
					  "%s is not an architecture (amd64 x86 x32 arm arm64 "
					  "ppc64le s390 s390x riscv64 mips...)",
					  q);
		}
		(*slot)[j - start] = xstrdup(ps->toks[j].s);
	}
	return 0;
}

static int parse_options(struct parser *ps, struct sc_rule *r, size_t i)
{
	while (i < ps->n_toks) {
		struct tok *t = &ps->toks[i];
		int rc = 0;
		if (strcmp(t->s, "if") == 0) {
			rc = parse_cond(ps, r, &i);
		} else if (strcmp(t->s, "arches") == 0) {
			rc = parse_arches(ps, &r->arches, &i);
		} else if (strcmp(t->s, "not-arches") == 0) {
			rc = parse_arches(ps, &r->not_arches, &i);
		} else if (strcmp(t->s, "min-kernel") == 0) {
			const char *v = i + 1 < ps->n_toks ? ps->toks[i + 1].s : "";
			size_t major = strspn(v, DIGITS);
			if (r->min_kernel || major == 0 || v[major] != '.' ||
			    strspn(v + major + 1, DIGITS) != strlen(v + major + 1) ||
			    !v[major + 1] || strlen(v) > 16)
				return parse_fail(ps, t->line, "write \"min-kernel X.Y\" once");
			r->min_kernel = xstrdup(v);
			i += 2;
		} else {
			return parse_fail(ps, t->line,
					  "unexpected \"%.32s\" (options: if, arches, not-arches, "
					  "min-kernel)",
					  t->s);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Names from toks[i] up to the first option word. */
static int parse_names(struct parser *ps, struct sc_rule *r, size_t *i)
{
	char why[256];
	for (; *i < ps->n_toks && !is_option(ps->toks[*i].s); (*i)++) {
		struct tok *t = &ps->toks[*i];
		if (policy_seccomp_check_name(t->s, why, sizeof why) < 0)
			return parse_fail(ps, t->line, "%s", why);
		rule_add_name(r, t->s, t->line);
	}
	if (r->n == 0)
		return parse_fail(ps, ps->toks[0].line, "%s needs at least one syscall name",
				  ps->toks[0].s);
	return 0;
}

static int parse_rule_into(struct parser *ps, struct sc_rule *r)
{
	const char *kw = ps->toks[0].s;
	int line = ps->toks[0].line;
	size_t i = 1;
	r->line = line;
	if (strcmp(kw, "errno") == 0) {
		r->errno_ret = i < ps->n_toks ? errno_value(ps->toks[i].s) : -1;
		if (r->errno_ret <= 0)
			return parse_fail(ps, line,
					  "write \"errno ERRNO NAME...\" (ERRNO e.g. ENOSYS)");
		i++;
	} else if (strcmp(kw, "deny") == 0) {
		r->deny = true;
		r->errno_ret = EPERM;
	}
	int rc = parse_names(ps, r, &i);
	if (rc == 0)
		rc = parse_options(ps, r, i);
	if (rc < 0)
		return rc;
	if (ps->in_reason && ps->reason.len == 0)
		return parse_fail(ps, line, "an empty reason after \"--\"");
	if (ps->in_reason)
		r->reason = xstrdup(ps->reason.data);
	if (r->errno_ret && !r->reason)
		return parse_fail(ps, line, "a %s line needs its reason after \"--\"", kw);
	if (r->deny && !rule_is_plain(r))
		return parse_fail(ps, line, "a deny line takes no conditions");
	return 0;
}

static int parse_rule(struct parser *ps)
{
	struct sc_rule r = { 0 };
	int rc = parse_rule_into(ps, &r);
	if (rc < 0) {
		rule_clear(&r);
		return rc;
	}
	/* Plain allow lines (no options, no reason) form one rule, as in moby's profile. */
	if (!r.errno_ret && !r.reason && rule_is_plain(&r)) {
		if (ps->plain_allow >= 0) {
			struct sc_rule *p = &ps->sc->rules[ps->plain_allow];
			for (size_t i = 0; i < r.n; i++)
				rule_add_name(p, r.names[i], r.lines[i]);
			rule_clear(&r);
			return 0;
		}
		ps->plain_allow = (long)ps->sc->n_rules;
	}
	append_rule(ps->sc, &r);
	return 0;
}

static int dispatch_directive(struct parser *ps)
{
	const char *kw = ps->toks[0].s;
	bool rule = strcmp(kw, "allow") == 0 || strcmp(kw, "errno") == 0 || strcmp(kw, "deny") == 0;
	if (!rule && strcmp(kw, "default") != 0 && strcmp(kw, "arch") != 0)
		return parse_fail(ps, ps->dir_line,
				  "unknown directive \"%.32s\" (default, arch, allow, errno, deny)",
				  kw);
	if (!rule && ps->in_reason)
		return parse_fail(ps, ps->dir_line, "a %s line takes no reason", kw);
	if (rule)
		return parse_rule(ps);
	return strcmp(kw, "default") == 0 ? parse_default(ps) : parse_arch(ps);
}

static int finish_directive(struct parser *ps)
{
	int rc = 0;
	if (ps->n_toks)
		rc = dispatch_directive(ps);
	else if (ps->in_reason)
		rc = parse_fail(ps, ps->dir_line, "a reason without a directive");
	toks_clear(ps);
	return rc;
}

/* Split one line (comment already cut) into words, or into the reason after "--". */
static void add_words(struct parser *ps, char *text, int line)
{
	char *save = NULL;
	for (char *w = strtok_r(text, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
		if (ps->in_reason || strcmp(w, "--") == 0) {
			if (ps->in_reason) {
				if (ps->reason.len)
					sb_puts(&ps->reason, " ");
				sb_puts(&ps->reason, w);
			}
			ps->in_reason = true;
			continue;
		}
		ps->toks = xrealloc(ps->toks, (ps->n_toks + 1) * sizeof *ps->toks);
		ps->toks[ps->n_toks].s = xstrdup(w);
		ps->toks[ps->n_toks++].line = line;
	}
}

static int parse_lines(struct parser *ps, const char *text)
{
	int line = 0;
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		cleanup_free char *l = xstrndup(p, len);
		p += len + (p[len] == '\n');
		line++;
		char *hash = strchr(l, '#');
		if (hash)
			*hash = '\0';
		if (strspn(l, " \t\r") == strlen(l))
			continue;
		if (l[0] == ' ' || l[0] == '\t') {
			if (ps->n_toks == 0 && !ps->in_reason)
				return parse_fail(ps, line,
						  "a continuation line without a directive");
		} else {
			int rc = finish_directive(ps);
			if (rc < 0)
				return rc;
			ps->dir_line = line;
		}
		add_words(ps, l, line);
	}
	return finish_directive(ps);
}

/* Per occurrence of a name: which rule, for the consistency check. */
struct occurrence {
	const char *name;
	size_t rule;
	int line;
};

static int occurrence_cmp(const void *a, const void *b)
{
	const struct occurrence *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->line - y->line;
}

/* Two rules for one name must agree on the action, and at most one may be unconditional. */
static int check_occurrences(struct parser *ps, const struct occurrence *a,
			     const struct occurrence *b)
{
	const struct sc_rule *ra = &ps->sc->rules[a->rule], *rb = &ps->sc->rules[b->rule];
	if (a->rule == b->rule)
		return parse_fail(ps, b->line, "\"%s\" is listed twice in the rule of line %d",
				  b->name, a->line);
	if (ra->errno_ret != rb->errno_ret)
		return parse_fail(ps, b->line,
				  "\"%s\" is also in the rule of line %d, with another action",
				  b->name, a->line);
	if (rule_is_plain(ra) && rule_is_plain(rb))
		return parse_fail(ps, b->line, "\"%s\" is already in the rule of line %d", b->name,
				  a->line);
	return 0;
}

static int check_consistency(struct parser *ps)
{
	policy_seccomp *sc = ps->sc;
	if (!sc->default_errno)
		return brig_fail(ps->err, BRIG_E_POLICY, 0, "%s: no \"default errno\" line",
				 sc->origin);
	if (!sc->n_arches)
		return brig_fail(ps->err, BRIG_E_POLICY, 0, "%s: no \"arch\" line", sc->origin);
	size_t n = 0;
	for (size_t i = 0; i < sc->n_rules; i++)
		n += sc->rules[i].n;
	cleanup_free struct occurrence *occ = xcalloc(n ? n : 1, sizeof *occ);
	n = 0;
	for (size_t i = 0; i < sc->n_rules; i++)
		for (size_t j = 0; j < sc->rules[i].n; j++)
			occ[n++] = (struct occurrence){ sc->rules[i].names[j], i,
							sc->rules[i].lines[j] };
	qsort(occ, n, sizeof *occ, occurrence_cmp);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n && strcmp(occ[i].name, occ[j].name) == 0; j++) {
			int rc = check_occurrences(ps, &occ[i], &occ[j]);
			if (rc < 0)
				return rc;
		}
	return 0;
}

int policy_seccomp_parse(const char *text, const char *origin, policy_seccomp **out,
			 brig_error **err)
{
	if (!text || !out)
		return brig_fail(err, BRIG_E_USAGE, 0, "policy_seccomp_parse: NULL argument");
	*out = NULL;
	cleanup_sc policy_seccomp *sc = xcalloc(1, sizeof *sc);
	sc->origin = xstrdup(origin ? origin : "seccomp profile");
	struct parser ps = { .sc = sc, .err = err, .plain_allow = -1 };
	sb_init(&ps.reason);
	int rc = parse_lines(&ps, text);
	toks_clear(&ps);
	free(ps.toks);
	sb_free(&ps.reason);
	if (rc == 0)
		rc = check_consistency(&ps);
	if (rc == 0)
		*out = steal_pointer(&sc);
	return rc;
}

/* ---- the operator's deny list ---------------------------------------------------------------- */

static bool denied_already(const policy_seccomp *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_rules; i++)
		if (sc->rules[i].deny && sc_strv_has(sc->rules[i].names, name))
			return true;
	return false;
}

int policy_seccomp_deny(policy_seccomp *sc, char *const *names, brig_error **err)
{
	char why[256];
	struct sc_rule add = { .deny = true, .errno_ret = EPERM };
	for (size_t k = 0; names && names[k]; k++) {
		if (policy_seccomp_check_name(names[k], why, sizeof why) < 0) {
			rule_clear(&add);
			return brig_fail(err, BRIG_E_POLICY, 0, "seccomp.deny[%zu]: %s", k, why);
		}
		if (denied_already(sc, names[k]) || sc_strv_has(add.names, names[k]))
			continue;
		for (size_t i = sc->n_rules; i-- > 0;) {
			struct sc_rule *r = &sc->rules[i];
			for (size_t j = r->n; j-- > 0;)
				if (strcmp(r->names[j], names[k]) == 0)
					rule_remove_name(r, j);
			if (r->n == 0)
				remove_rule(sc, i);
		}
		rule_add_name(&add, names[k], 0);
	}
	strv_free(sc->policy_deny);
	sc->policy_deny = names && names[0] ? strv_copy(names) : NULL;
	if (add.n == 0)
		return 0;
	add.reason = xstrdup(POLICY_SECCOMP_DENY_REASON);
	append_rule(sc, &add);
	return 0;
}
