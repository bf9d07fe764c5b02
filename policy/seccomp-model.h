/* seccomp-model.h - brig's seccomp profile in memory, shared by its three files: the parser
 * of the data (seccomp-parse.c: policy/seccomp-profile.txt, the operator's deny list), the
 * compiler and renderer (seccomp.c: libseccomp, the engine's JSON, labels) and the editor of an
 * operator's profile file (seccomp-file.c).  Private to policy/.
 */
#ifndef BRIG_SECCOMP_MODEL_H
#define BRIG_SECCOMP_MODEL_H

#include <json-c/json.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy-seccomp.h"
#include "util.h"

#define SC_MAX_CONDS       6  /* a syscall has at most six arguments */
#define SC_NAME_MAX        64 /* longer than any syscall name */
#define SC_MAX_SUBS        4
#define NAME_CHARS         "abcdefghijklmnopqrstuvwxyz0123456789_"
#define DIGITS             "0123456789"
#define SECCOMP_JSON_DEPTH 32 /* an engine profile is 5 levels deep */

struct sc_cond {
	unsigned arg;
	enum scmp_compare op;
	uint64_t value, value_two; /* for SCMP_CMP_MASKED_EQ: the mask and the masked value */
};

struct sc_rule {
	char **names; /* NULL-terminated */
	int *lines;   /* the line of each name; 0: the operator's policy */
	size_t n;
	int errno_ret; /* 0: allow */
	bool deny;     /* a deny line (or the operator's list): EPERM, with its reason */
	struct sc_cond conds[SC_MAX_CONDS];
	size_t n_conds;
	char **arches, **not_arches; /* the engine's architecture names, NULL-terminated */
	char *min_kernel;
	char *reason;
	int line;
};

struct sc_arch {
	char *name; /* "SCMP_ARCH_X86_64" */
	uint32_t token;
	char *subs[SC_MAX_SUBS + 1];
	uint32_t sub_tokens[SC_MAX_SUBS];
	size_t n_subs;
};

struct policy_seccomp {
	char *origin;
	int default_errno; /* 0 until the default line */
	struct sc_arch *arches;
	size_t n_arches;
	struct sc_rule *rules;
	size_t n_rules;
	char **policy_deny; /* the operator's names, for the label */
};

static inline void json_putp(json_object **o)
{
	if (*o)
		json_object_put(*o);
}
#define cleanup_json __attribute__((cleanup(json_putp)))

static inline void scmp_releasep(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}
#define cleanup_scmp __attribute__((cleanup(scmp_releasep)))

static inline void sc_freep(policy_seccomp **sc)
{
	policy_seccomp_free(*sc);
}
#define cleanup_sc __attribute__((cleanup(sc_freep)))

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* seccomp-parse.c: the tables */
const char *sc_errno_name(int value);
const char *sc_engine_arch(uint32_t token);
const char *sc_op_json(enum scmp_compare op);
/* runsc --oci-seccomp answers EPERM whatever errno a rule asks for: see seccomp-parse.c */
int sc_rule_errno(const policy_seccomp *sc, const struct sc_rule *r, int isolation);
bool sc_strv_has(char *const *v, const char *s);
/* Whether the rule is in force on the engine architecture `arch`. */
bool sc_rule_applies(const struct sc_rule *r, const char *arch);

#endif
