/* policy-seccomp.h - brig's own seccomp profile: the data in policy/seccomp-profile.txt (embedded
 * at build time) parsed, every syscall name resolved with libseccomp, the filter built once with
 * libseccomp to prove the rules valid, and rendered as the engine's JSON profile.  The grammar of
 * the data is described at the top of seccomp-profile.txt.
 */
#ifndef BRIG_POLICY_SECCOMP_H
#define BRIG_POLICY_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

#include "brig.h"

/* The profile source, generated from seccomp-profile.txt by Makefile.am (seccomp-data.c). */
extern const char policy_seccomp_data[];
#define POLICY_SECCOMP_ORIGIN "seccomp-profile.txt"

/* The key path of the operator's deny list, used as the reason of its rule. */
#define POLICY_SECCOMP_DENY_REASON "the operator's policy (seccomp.deny)"

typedef struct policy_seccomp policy_seccomp;

/* Parse profile source `text`; errors read "ORIGIN:LINE: reason" (BRIG_E_POLICY). */
int policy_seccomp_parse(const char *text, const char *origin, policy_seccomp **out,
			 brig_error **err);
void policy_seccomp_free(policy_seccomp *sc);

/* Deny `names` (NULL-terminated) too: they leave every allow and errno rule and join an EPERM
 * rule of their own, unless a deny line already has them. */
int policy_seccomp_deny(policy_seccomp *sc, char *const *names, brig_error **err);

/* Build the filter for this machine's architecture with libseccomp and throw it away: proves
 * that libseccomp takes every rule.  `thorough` adds the sub-architectures of the arch map entry
 * (x86 and x32 on x86_64) and generates the BPF program: complete, but 10 to 50 ms with
 * libseccomp 2.5, so a run makes the quick check (under 1 ms) and the unit tests the thorough
 * one. */
int policy_seccomp_compile(const policy_seccomp *sc, int isolation, bool thorough,
			   brig_error **err);

/* The engine's JSON profile text (malloc'ed) for a box of `isolation`. */
char *policy_seccomp_render(const policy_seccomp *sc, int isolation);

/* Distinct syscall names allowed (by any rule) and refused by an explicit rule. */
void policy_seccomp_count(const policy_seccomp *sc, int isolation, size_t *allowed, size_t *denied);

/* Whether `name` is in an allow rule (with or without conditions) at `isolation`. */
bool policy_seccomp_allows(const policy_seccomp *sc, const char *name, int isolation);

/* A syscall name libseccomp knows; on failure -1 and why (the name quoted). */
int policy_seccomp_check_name(const char *name, char *why, size_t why_len);

/* brig's profile for one run: parsed, `deny` applied, compiled, rendered for `isolation`, and
 * its label for `brig explain` ("brig default (N syscalls allowed, M denied)"). */
int policy_seccomp_brig(char *const *deny, int isolation, char **json, char **label,
			brig_error **err);

/* An engine JSON profile (an operator's file) with `deny` applied the same way: the names leave
 * every rule and get an EPERM rule.  On failure -1 and why. */
int policy_seccomp_json_deny(const char *profile, char *const *deny, char **out, char *why,
			     size_t why_len);

/* "a, b, c" (malloc'ed), for labels. */
char *policy_seccomp_join(char *const *names);

#endif /* BRIG_POLICY_SECCOMP_H */
