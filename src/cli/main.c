/* main.c - `brig`: dispatch to the subcommands; shared policy/ctx helpers. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "util.h"

void cli_error(const char *fmt, ...)
{
	int saved = errno; /* for %m */
	va_list ap;
	va_start(ap, fmt);
	fputs("brig: ", stderr);
	errno = saved;
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

bool cli_json;

static void json_error(int status, const char *msg, bool transient, int code)
{
	if (!cli_json)
		return;
	json_object *e = json_object_new_object();
	json_object_object_add(e, "status", json_object_new_string(brig_status_name(status)));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(e, "transient", json_object_new_boolean(transient));
	json_object_object_add(e, "exit_code", json_object_new_int(code));
	json_object *o = json_object_new_object();
	json_object_object_add(o, "error", e);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(o);
}

int cli_usage(const char *fmt, ...)
{
	int saved = errno; /* for %m */
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	errno = saved;
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cli_error("%s", msg);
	json_error(BRIG_E_USAGE, msg, false, EXIT_USAGE);
	return EXIT_USAGE;
}

int cli_report(brig_error *err)
{
	int code = err ? brig_status_exit_code(err->status) : EXIT_SANDBOX;
	const char *msg = err && err->message ? err->message : "unknown error";
	cli_error("%s", msg);
	json_error(err ? err->status : BRIG_E_SANDBOX, msg, err && err->transient, code);
	brig_error_free(err);
	return code;
}

bool cli_policy_option(cli_policy_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case OPT_POLICY:
		o->policy_file = arg;
		return true;
	case OPT_BACKEND:
		o->backend = arg;
		return true;
	case OPT_ISOLATION:
		o->isolation = arg;
		return true;
	case OPT_MEMORY:
		o->memory = arg;
		return true;
	case OPT_CPUS:
		o->cpus = arg;
		return true;
	case OPT_ALLOW_NETWORK:
		o->allow_network = true;
		return true;
	case OPT_AUDIT_LOG:
		o->audit_log = arg;
		return true;
	default:
		return false;
	}
}

static int override(brig_policy *p, const char *key, const char *value, const char *flag)
{
	if (!value)
		return 0;
	bool loosened = false;
	brig_error *err = NULL;
	if (brig_policy_override(p, key, value, &loosened, &err) < 0)
		return cli_report(err);
	if (loosened)
		fprintf(stderr,
			"brig: warning: %s %s loosens the policy's %s (operator override in "
			"effect)\n",
			flag, value, key);
	return 0;
}

int cli_load_policy(const cli_policy_opts *o, brig_policy **out)
{
	const char *path = o->policy_file;
	if (!path)
		path = getenv("BRIG_POLICY");
	if (!path && access(SYSCONFDIR "/brig/policy.json", F_OK) == 0)
		path = SYSCONFDIR "/brig/policy.json";
	brig_policy *p = NULL;
	brig_error *err = NULL;
	if (path && *path) {
		if (brig_policy_load_file(path, &p, &err) < 0)
			return cli_report(err);
	} else {
		p = brig_policy_new_default();
	}
	int r = override(p, "backend", o->backend, "--backend");
	if (!r)
		r = override(p, "isolation", o->isolation, "--isolation");
	if (!r)
		r = override(p, "memory_mb", o->memory, "--memory");
	if (!r)
		r = override(p, "cpus", o->cpus, "--cpus");
	if (!r && o->allow_network)
		r = override(p, "network", "true", "--allow-network");
	if (r) {
		brig_policy_free(p);
		return r;
	}
	*out = p;
	return 0;
}

int cli_make_ctx(const cli_policy_opts *o, brig_ctx **out)
{
	brig_policy *p = NULL;
	int r = cli_load_policy(o, &p);
	if (r)
		return r;
	brig_error *err = NULL;
	/* no warm pool: one-shot commands start nothing ahead (brig mcp starts it itself) */
	if (brig_ctx_new(p, out, &err) < 0)
		return cli_report(err);
	if (o->audit_log && brig_ctx_set_audit_log(*out, o->audit_log, &err) < 0) {
		brig_ctx_free(*out);
		*out = NULL;
		return cli_report(err);
	}
	for (const char *const *w = brig_ctx_warnings(*out); *w; w++)
		cli_error("warning: %s", *w);
	return 0;
}

static void usage(FILE *f)
{
	fputs("Usage: brig COMMAND [OPTIONS]\n"
	      "Run untrusted Python, JavaScript (node) or shell code in a fresh, hardened, "
	      "throwaway\n"
	      "container: no network, read-only root, noexec /tmp, uid 65534, no capabilities, "
	      "hard\n"
	      "memory/CPU/pids/fd/time/output limits.\n\n"
	      "Commands:\n"
	      "  run [FILE|-]   run code and report how it ended\n"
	      "  explain        print exactly what `run` would start\n"
	      "  policy         print the effective policy as JSON\n"
	      "  doctor         detect runtimes, show the backend `auto` picks and missing images\n"
	      "  images         the runtime images in force: IDs, contents, pins\n"
	      "  mcp            serve the Model Context Protocol on stdio (tools run_code, "
	      "sandbox_status)\n"
	      "  workspace      files that live across runs: create, ls, rm, put, get, files\n"
	      "  gc             remove containers left by brig processes that no longer exist,\n"
	      "                 and workspaces whose idle TTL or lifetime is over\n"
	      "  version        print the version\n\n"
	      "`brig COMMAND --help` describes each command.  See brig(1) and brig-policy(5).\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "run", cmd_run },       { "explain", cmd_explain },
		{ "policy", cmd_policy }, { "doctor", cmd_doctor },
		{ "mcp", cmd_mcp },       { "gc", cmd_gc },
		{ "images", cmd_images }, { "workspace", cmd_workspace },
	};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (strcmp(cmd, cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1);
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
		printf("brig %s\n", brig_version());
		return 0;
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		usage(stdout);
		return 0;
	}
	cli_error("unknown command '%s' (try brig --help)", cmd);
	return EXIT_USAGE;
}
