/* fuzz_policy.c - libFuzzer target for the policy parser (brig-policy(5)).
 *
 * Every input is parsed with brig_policy_load_string().  When it loads, the effective policy is
 * printed, parsed again and printed again: the two prints must be byte-identical (the printed
 * policy is a fixed point of load + print), otherwise the target aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	brig_policy *p = NULL;
	brig_error *err = NULL;
	if (brig_policy_load_string(text, "fuzz", &p, &err) != 0) {
		brig_error_free(err);
		free(text);
		return 0;
	}
	free(text);

	char *json1 = brig_policy_to_json(p);
	if (!json1)
		abort();
	brig_policy *q = NULL;
	if (brig_policy_load_string(json1, "fuzz-roundtrip", &q, &err) != 0) {
		fprintf(stderr, "fuzz_policy: the printed policy does not load again: %s\n%s\n",
			err && err->message ? err->message : "?", json1);
		abort();
	}
	char *json2 = brig_policy_to_json(q);
	if (!json2 || strcmp(json1, json2) != 0) {
		fprintf(stderr, "fuzz_policy: print/load/print is not stable:\n%s\n---\n%s\n",
			json1, json2 ? json2 : "(null)");
		abort();
	}
	free(json2);
	free(json1);
	brig_policy_free(q);
	brig_policy_free(p);
	return 0;
}
