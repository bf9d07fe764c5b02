/* cli.h - the brig command-line front end: the only place (with the MCP server) that turns
 * errors into text and exit codes. */
#ifndef BRIG_CLI_H
#define BRIG_CLI_H

#include <json-c/json.h>
#include <stdbool.h>

#include "brig.h"

/* Exit codes of `brig run` (see brig(1)). */
#define EXIT_USAGE        2
#define EXIT_SANDBOX      125
#define EXIT_TIMEOUT      124
#define EXIT_OOM          137
#define EXIT_OUTPUT_LIMIT 141
#define EXIT_CANCELLED    130

/* Operator options shared by run, explain, doctor, policy and mcp. */
typedef struct cli_policy_opts {
	const char *policy_file;
	const char *backend;
	const char *isolation;
	const char *memory;
	const char *cpus;
	bool allow_network;
	const char *audit_log;
} cli_policy_opts;

/* Print "brig: message" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the error and return its exit code (frees it).  Under --json (cli_json) the error is
 * also the JSON object on stdout: {"error": {"status", "message", "transient", "exit_code"}},
 * so that a program reading stdout never gets nothing. */
int cli_report(brig_error *err);
extern bool cli_json;
/* A usage error after the options were read: printed like cli_report; returns EXIT_USAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* --policy FILE, else $BRIG_POLICY, else SYSCONFDIR/brig/policy.json if present, else defaults;
 * then the operator's flags (warning on stderr for each that loosens).  Returns 0 or an exit
 * code. */
int cli_load_policy(const cli_policy_opts *o, brig_policy **out);
/* Policy + plugins + audit log; returns 0 or an exit code. */
int cli_make_ctx(const cli_policy_opts *o, brig_ctx **out);
/* Parse the shared operator options and --json (when `json` is not NULL); prints usage and the
 * operator options' help for --help (returns -1), else 0 or an exit code. */
int cli_parse_simple(int argc, char **argv, cli_policy_opts *o, bool *json, const char *usage);
/* A string member of a status object, or dflt; a boolean member (false when absent). */
static inline const char *cli_str(json_object *o, const char *key, const char *dflt)
{
	json_object *v;
	if (json_object_object_get_ex(o, key, &v) && json_object_get_type(v) == json_type_string)
		return json_object_get_string(v);
	return dflt;
}
static inline bool cli_bool(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}
/* The images of brig_images_object (or of the status), one line each under `brig doctor`;
 * returns how many cannot be used as they are (missing, unknown, a broken pin). */
int cli_print_image_summary(json_object *images);

/* Handle one of the shared operator options in a getopt_long loop; true if it was one. */
bool cli_policy_option(cli_policy_opts *o, int opt, const char *arg);

/* getopt_long codes of the shared options (long-only). */
enum {
	OPT_POLICY = 1000,
	OPT_BACKEND,
	OPT_ISOLATION,
	OPT_MEMORY,
	OPT_CPUS,
	OPT_ALLOW_NETWORK,
	OPT_AUDIT_LOG,
	OPT_JSON,
};
#define CLI_POLICY_LONGOPTS                                                \
	{ "policy", required_argument, NULL, OPT_POLICY },                 \
		{ "backend", required_argument, NULL, OPT_BACKEND },       \
		{ "isolation", required_argument, NULL, OPT_ISOLATION },   \
		{ "memory", required_argument, NULL, OPT_MEMORY },         \
		{ "cpus", required_argument, NULL, OPT_CPUS },             \
		{ "allow-network", no_argument, NULL, OPT_ALLOW_NETWORK }, \
	{                                                                  \
		"audit-log", required_argument, NULL, OPT_AUDIT_LOG        \
	}
#define CLI_POLICY_HELP                                                                 \
	"Operator options (may loosen the policy; each loosening prints a warning):\n"  \
	"      --policy FILE      policy file (default: $BRIG_POLICY, else " SYSCONFDIR \
	"/brig/policy.json if present, else the built-in strict defaults)\n"            \
	"      --backend NAME     auto, docker-cli, docker-api or gvisor\n"             \
	"      --isolation LEVEL  minimum isolation: container or gvisor\n"             \
	"      --memory SIZE      memory limit, e.g. 512m or 1g\n"                      \
	"      --cpus N           CPU limit, e.g. 0.5\n"                                \
	"      --allow-network    give the box a network (off by default)\n"            \
	"      --audit-log FILE   append one JSON line per execution to FILE\n"

int cmd_run(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_images(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_workspace(int argc, char **argv);

#endif
