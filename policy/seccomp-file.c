/* seccomp-file.c - an operator's own engine JSON profile with the policy's deny list applied:
 * the names leave every rule and get an EPERM rule of their own.
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

/* ---- an operator's profile file -------------------------------------------------------------- */

/* The rule without the denied names; false when none is left (drop the rule). */
static bool strip_rule(json_object *rule, char *const *deny)
{
	json_object *v;
	if (json_object_object_get_ex(rule, "name", &v) &&
	    sc_strv_has(deny, json_object_get_string(v)))
		return false; /* moby's old single-name form */
	if (!json_object_object_get_ex(rule, "names", &v) ||
	    !json_object_is_type(v, json_type_array))
		return true;
	json_object *keep = json_object_new_array();
	size_t n = json_object_array_length(v);
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(v, i);
		if (!json_object_is_type(s, json_type_string) ||
		    !sc_strv_has(deny, json_object_get_string(s)))
			json_object_array_add(keep, json_object_get(s));
	}
	bool left = json_object_array_length(keep) > 0 || n == 0;
	json_object_object_add(rule, "names", keep);
	return left;
}

int policy_seccomp_json_deny(const char *profile, char *const *deny, char **out, char *why,
			     size_t why_len)
{
	*out = NULL;
	cleanup_json json_object *root = NULL;
	const char *bad = NULL;
	size_t at = 0;
	if (json_parse_strict(profile, strlen(profile), SECCOMP_JSON_DEPTH, &root, &bad, &at) < 0 ||
	    !json_object_is_type(root, json_type_object)) {
		snprintf(why, why_len, "the profile is not a JSON object");
		return -1;
	}
	json_object *rules = NULL;
	if (!json_object_object_get_ex(root, "syscalls", &rules) || !rules) {
		rules = json_object_new_array();
		json_object_object_add(root, "syscalls", rules);
	}
	if (!json_object_is_type(rules, json_type_array)) {
		snprintf(why, why_len, "the profile's \"syscalls\" is not an array");
		return -1;
	}
	json_object *kept = json_object_new_array();
	size_t n = json_object_array_length(rules);
	for (size_t i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(rules, i);
		if (!json_object_is_type(r, json_type_object) || strip_rule(r, deny))
			json_object_array_add(kept, json_object_get(r));
	}
	json_object *names = json_object_new_array();
	for (size_t i = 0; deny[i]; i++) {
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen = seen || strcmp(deny[i], deny[j]) == 0;
		if (!seen)
			json_object_array_add(names, json_object_new_string(deny[i]));
	}
	json_object *d = json_object_new_object();
	json_object_object_add(d, "names", names);
	json_object_object_add(d, "action", json_object_new_string("SCMP_ACT_ERRNO"));
	json_object_object_add(d, "errnoRet", json_object_new_int(EPERM));
	json_object_object_add(d, "comment", json_object_new_string(POLICY_SECCOMP_DENY_REASON));
	json_object_array_add(kept, d);
	json_object_object_add(root, "syscalls", kept);
	*out = xstrdup(json_object_to_json_string_ext(
		root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	return 0;
}
