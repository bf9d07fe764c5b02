/* cmd_info.c - `brig policy`, `brig doctor`, `brig gc`. */
#include "config.h"

#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "util.h"

enum { OPT_SECCOMP_PROFILE = 2000 };

/* Parse the shared operator options, and --json / --seccomp-profile for the callers that take
 * them; prints usage for --help (returns -1). */
static int parse_opts(int argc, char **argv, cli_policy_opts *o, bool *json, bool *seccomp,
		      const char *usage)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "seccomp-profile", no_argument, NULL, OPT_SECCOMP_PROFILE },
		CLI_POLICY_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (cli_policy_option(o, c, optarg))
			continue;
		if (c == OPT_JSON && json) {
			*json = cli_json = true;
			continue;
		}
		if (c == OPT_SECCOMP_PROFILE && seccomp) {
			*seccomp = true;
			continue;
		}
		FILE *f = c == 'h' ? stdout : stderr;
		fputs(usage, f);
		fputs(CLI_POLICY_HELP, f);
		return c == 'h' ? -1 : EXIT_USAGE;
	}
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

int cli_parse_simple(int argc, char **argv, cli_policy_opts *o, bool *json, const char *usage)
{
	return parse_opts(argc, argv, o, json, NULL, usage);
}

/* The rendered seccomp profile, for `docker run --security-opt seccomp=FILE` by hand. */
static int print_seccomp(const brig_policy *p, const char *isolation)
{
	brig_policy_limits lim;
	brig_policy_get_limits(p, &lim);
	int iso = isolation && strcmp(isolation, "gvisor") == 0 ? BRIG_ISOLATION_GVISOR
								: lim.isolation;
	char *json = NULL, *label = NULL;
	brig_error *err = NULL;
	if (brig_policy_seccomp_json(p, iso, &json, &label, &err) < 0)
		return cli_report(err);
	fprintf(stderr, "brig: %s, %s isolation\n", label, brig_isolation_name(iso));
	printf("%s\n", json);
	free(json);
	free(label);
	return 0;
}

int cmd_policy(int argc, char **argv)
{
	cli_policy_opts o = { 0 };
	bool seccomp = false;
	int r = parse_opts(
		argc, argv, &o, NULL, &seccomp,
		"Usage: brig policy [--seccomp-profile] [OPTIONS]\n"
		"Validate the policy and print the effective policy (file + operator\n"
		"flags) as JSON.  Exit 2 with the file, key and reason if it is invalid.\n"
		"  --seccomp-profile  print instead the seccomp profile runs get, as the\n"
		"                     engine's JSON (rendered for --isolation, default\n"
		"                     the policy's minimum)\n\n");
	if (r)
		return r < 0 ? 0 : r;
	brig_policy *p = NULL;
	r = cli_load_policy(&o, &p);
	if (r)
		return r;
	if (seccomp) {
		r = print_seccomp(p, o.isolation);
		brig_policy_free(p);
		return r;
	}
	cleanup_free char *js = brig_policy_to_json(p);
	printf("%s\n", js);
	brig_policy_free(p);
	return 0;
}

static void print_backends(json_object *st)
{
	json_object *arr = NULL;
	json_object_object_get_ex(st, "backends", &arr);
	printf("%-12s %-10s %-10s %-14s %s\n", "BACKEND", "ISOLATION", "AVAILABLE", "RUNTIME",
	       "DETAIL");
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *b = json_object_array_get_idx(arr, i);
		bool ok = cli_bool(b, "available");
		printf("%-12s %-10s %-10s %-14s %s\n", cli_str(b, "name", "?"),
		       cli_str(b, "isolation", "?"), ok ? "yes" : "no", cli_str(b, "runtime", "-"),
		       ok ? cli_str(b, "version", "") : cli_str(b, "reason", ""));
	}
	json_object *ref = NULL;
	json_object_object_get_ex(st, "refused_plugins", &ref);
	for (size_t i = 0; ref && i < json_object_array_length(ref); i++)
		printf("refused plugin: %s\n",
		       json_object_get_string(json_object_array_get_idx(ref, i)));
	if (!arr || json_object_array_length(arr) == 0)
		printf("(no backend plugins in %s)\n", cli_str(st, "backend_dir", "?"));
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *b = json_object_array_get_idx(arr, i);
		if (strcmp(cli_str(b, "isolation", ""), "gvisor") == 0)
			printf("note: %s: /tmp is noexec, but gVisor (runsc 20221219) enforces it "
			       "only for execve: `ld.so /tmp/x` and dlopen/ctypes.CDLL of a file "
			       "there work (see brig(1), GVISOR)\n",
			       cli_str(b, "name", "?"));
	}
}

/* Returns the number of problems found. */
static int print_choice_and_images(json_object *st)
{
	int problems = 0;
	const char *sel = cli_str(st, "selected", NULL);
	printf("\npolicy: backend %s, isolation at least %s\n", cli_str(st, "policy_backend", "?"),
	       cli_str(st, "isolation_minimum", "?"));
	if (sel)
		printf("selected: %s (%s isolation, runtime %s)\n", sel,
		       cli_str(st, "isolation", "?"), cli_str(st, "runtime", "?"));
	else
		printf("selected: NONE - %s\n", cli_str(st, "selection_error", "?")), problems++;
	json_object *imgs = NULL;
	json_object_object_get_ex(st, "images", &imgs);
	printf("\nimages (details: brig images):\n");
	problems += cli_print_image_summary(imgs);
	json_object *eg = NULL;
	if (json_object_object_get_ex(st, "egress", &eg) && eg) {
		json_object *a = NULL, *present = NULL, *ok = NULL;
		json_object_object_get_ex(eg, "allow", &a);
		json_object_object_get_ex(eg, "proxy_image_present", &present);
		json_object_object_get_ex(eg, "backend_supports", &ok);
		printf("\negress: %zu allowed destination%s through the proxy image %s (%s)\n",
		       json_object_array_length(a), json_object_array_length(a) == 1 ? "" : "s",
		       cli_str(eg, "proxy_image", "?"),
		       !present ? "presence unknown"
		       : json_object_get_boolean(present)
			       ? "present"
			       : "MISSING: scripts/setup-host builds it");
		problems += present && !json_object_get_boolean(present);
		if (ok && !json_object_get_boolean(ok))
			printf("egress: the selected backend cannot put a box on the egress "
			       "network "
			       "(use docker-api or gvisor); runs are refused\n"),
				problems++;
		printf("note: %s\n", cli_str(eg, "gvisor_trade", ""));
	}
	if (problems)
		printf("\nto install the engine and build the runtime images: sudo "
		       "scripts/setup-host\n");
	return problems;
}

int cmd_doctor(int argc, char **argv)
{
	cli_policy_opts o = { 0 };
	bool json = false;
	int r = cli_parse_simple(
		argc, argv, &o, &json,
		"Usage: brig doctor [--json] [OPTIONS]\n"
		"Detect the runtimes (Docker CLI, Docker Engine API, gVisor), show why any\n"
		"is unavailable, which backend `auto` picks under the policy, and which\n"
		"runtime images are missing.  Exit 0 when brig can run code, 1 if not.\n"
		"gVisor's smoke test always runs here (a run may reuse its verdict).\n\n");
	if (r)
		return r < 0 ? 0 : r;
	brig_ctx *ctx = NULL;
	r = cli_make_ctx(&o, &ctx);
	if (r)
		return r;
	/* a check, not a run: gVisor's smoke test is not taken from the cache (and refreshes it) */
	brig_ctx_set_probe_cache(ctx, false);
	json_object *st = brig_status_object(ctx);
	int problems = 1;
	if (json) {
		printf("%s\n", json_object_to_json_string_ext(
				       st, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						   JSON_C_TO_STRING_NOSLASHESCAPE));
		problems = cli_str(st, "selected", NULL) ? 0 : 1;
	} else {
		print_backends(st);
		problems = print_choice_and_images(st);
	}
	json_object_put(st);
	brig_ctx_free(ctx);
	return problems ? 1 : 0;
}

int cmd_gc(int argc, char **argv)
{
	cli_policy_opts o = { 0 };
	int r = cli_parse_simple(
		argc, argv, &o, NULL,
		"Usage: brig gc [OPTIONS]\n"
		"Remove every container labelled brig=1 whose owning brig process no longer\n"
		"exists (left behind when brig was killed with SIGKILL).\n\n");
	if (r)
		return r < 0 ? 0 : r;
	brig_ctx *ctx = NULL;
	r = cli_make_ctx(&o, &ctx);
	if (r)
		return r;
	int removed = 0;
	brig_error *err = NULL;
	r = brig_gc(ctx, &removed, &err);
	printf("removed %d container%s\n", removed, removed == 1 ? "" : "s");
	brig_ctx_free(ctx);
	return r < 0 ? cli_report(err) : 0;
}
