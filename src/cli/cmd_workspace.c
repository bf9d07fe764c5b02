/* cmd_workspace.c - `brig workspace create|ls|rm|put|get|files`: files that live across runs. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"

static void ws_usage(FILE *f)
{
	fputs("Usage: brig workspace COMMAND [OPTIONS] [ARGS]\n"
	      "Files that live across runs, with the policy's quotas and lifetime "
	      "(brig-policy(5),\n"
	      "workspaces); every run in a workspace is still a fresh box (brig run -w ID).\n\n"
	      "Commands:\n"
	      "  create               make a workspace; prints its id (--json: id, limits, "
	      "expiry)\n"
	      "  ls                   the workspaces of this user (--json: as an array)\n"
	      "  rm ID                end a workspace now (its files are gone)\n"
	      "  put ID PATH [FILE|-] write FILE (default: standard input) as PATH\n"
	      "  get ID PATH          the file PATH on standard output\n"
	      "  files ID             the files of the workspace, sizes and use of the quotas\n\n"
	      "Options:\n"
	      "      --json           JSON on standard output\n"
	      "  -h, --help           this text\n\n" CLI_POLICY_HELP,
	      f);
}

static void print_json(json_object *o)
{
	printf("%s\n",
	       json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
}

static long long jget(json_object *o, const char *k)
{
	json_object *v = NULL;
	return json_object_object_get_ex(o, k, &v) ? (long long)json_object_get_int64(v) : 0;
}

static const char *jstr(json_object *o, const char *k)
{
	json_object *v = NULL;
	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "";
}

/* Read all of fd, at most limit+1 bytes (enough to tell "too large"). */
static int read_input(const char *file, size_t limit, strbuf *sb)
{
	int fd = STDIN_FILENO;
	if (file && strcmp(file, "-") != 0 && (fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
		return cli_usage("cannot open %s: %s", file, strerror(errno));
	char buf[65536];
	while (sb->len <= limit) {
		size_t want = limit + 1 - sb->len < sizeof buf ? limit + 1 - sb->len : sizeof buf;
		ssize_t n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		sb_append(sb, buf, (size_t)n);
	}
	if (fd != STDIN_FILENO)
		close(fd);
	return 0;
}

static int ws_create(brig_ctx *ctx, bool json)
{
	json_object *info = NULL;
	brig_error *err = NULL;
	if (brig_workspace_create(ctx, "cli", &info, &err) < 0)
		return cli_report(err);
	if (json)
		print_json(info);
	else
		printf("%s\n", jstr(info, "id"));
	json_object_put(info);
	return 0;
}

static int ws_ls(brig_ctx *ctx, bool json)
{
	json_object *a = NULL;
	brig_error *err = NULL;
	if (brig_workspace_list(ctx, &a, &err) < 0)
		return cli_report(err);
	if (json) {
		print_json(a);
	} else {
		long long now = (long long)time(NULL);
		printf("%-32s  %8s  %9s  %10s  %s\n", "ID", "SIZE_MB", "MAX_FILES", "IDLE_LEFT",
		       "LIFE_LEFT");
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *w = json_object_array_get_idx(a, i);
			printf("%-32s  %8lld  %9lld  %9llds  %llds\n", jstr(w, "id"),
			       jget(w, "size_mb"), jget(w, "max_files"),
			       jget(w, "idle_expires") - now, jget(w, "expires") - now);
		}
	}
	json_object_put(a);
	return 0;
}

static int ws_files(brig_ctx *ctx, const char *id, bool json)
{
	json_object *o = NULL, *files = NULL;
	brig_error *err = NULL;
	if (brig_workspace_files(ctx, id, "cli", &o, &err) < 0)
		return cli_report(err);
	if (json) {
		print_json(o);
	} else if (json_object_object_get_ex(o, "files", &files)) {
		for (size_t i = 0; i < json_object_array_length(files); i++) {
			json_object *f = json_object_array_get_idx(files, i);
			printf("%-5s %10lld  %s\n", jstr(f, "type"), jget(f, "size"),
			       jstr(f, "path"));
		}
		printf("# %lld entries, %lld of %lld bytes and %lld of %lld files of the quotas "
		       "used\n",
		       jget(o, "count"), jget(o, "used_bytes"), jget(o, "size_bytes"),
		       jget(o, "used_files"), jget(o, "max_files"));
	}
	json_object_put(o);
	return 0;
}

/* The options of `brig workspace` and of its subcommand: -1 when they parsed, else the exit
 * status (--help printed, or a usage error). */
static int ws_options(int argc, char **argv, const char *optstring, const struct option *longopts,
		      cli_policy_opts *pol, bool *json)
{
	int c;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		if (cli_policy_option(pol, c, optarg))
			continue;
		if (c == OPT_JSON) {
			*json = cli_json = true;
		} else if (c == 'h') {
			ws_usage(stdout);
			return 0;
		} else {
			ws_usage(stderr);
			return EXIT_USAGE;
		}
	}
	return -1;
}

int cmd_workspace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		CLI_POLICY_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	cli_policy_opts pol = { 0 };
	bool json = false;
	optind = 1;
	int r = ws_options(argc, argv, "+h", longopts, &pol, &json);
	if (r >= 0)
		return r;
	if (optind >= argc) {
		ws_usage(stderr);
		return EXIT_USAGE;
	}
	const char *sub = argv[optind++];
	/* the subcommand's own options (--json, operator options) may follow it */
	char **rest = argv + optind - 1;
	int nrest = argc - optind + 1;
	optind = 0; /* 0: getopt starts afresh (the "+" above must not stay in force) */
	r = ws_options(nrest, rest, "h", longopts, &pol, &json);
	if (r >= 0)
		return r;
	char **args = rest + optind;
	int nargs = nrest - optind;
	static const struct {
		const char *name;
		int min, max;
	} subs[] = { { "create", 0, 0 }, { "ls", 0, 0 },  { "rm", 1, 1 },
		     { "put", 2, 3 },    { "get", 2, 2 }, { "files", 1, 1 } };
	size_t k = 0;
	while (k < sizeof subs / sizeof *subs && strcmp(subs[k].name, sub) != 0)
		k++;
	if (k == sizeof subs / sizeof *subs)
		return cli_usage(
			"workspace: unknown command '%s' (create, ls, rm, put, get, files)", sub);
	if (nargs < subs[k].min || nargs > subs[k].max)
		return cli_usage("workspace %s: wrong number of arguments (see brig workspace "
				 "--help)",
				 sub);
	brig_ctx *ctx = NULL;
	r = cli_make_ctx(&pol, &ctx);
	if (r)
		return r;
	brig_error *err = NULL;
	if (strcmp(sub, "create") == 0) {
		r = ws_create(ctx, json);
	} else if (strcmp(sub, "ls") == 0) {
		r = ws_ls(ctx, json);
	} else if (strcmp(sub, "rm") == 0) {
		r = brig_workspace_remove(ctx, args[0], "cli", &err) < 0 ? cli_report(err) : 0;
	} else if (strcmp(sub, "files") == 0) {
		r = ws_files(ctx, args[0], json);
	} else if (strcmp(sub, "put") == 0) {
		strbuf sb;
		sb_init(&sb);
		long max = 0;
		cleanup_free char *pt = brig_policy_to_json(brig_ctx_policy(ctx));
		json_object *pj = json_tokener_parse(pt), *w = NULL;
		if (json_object_object_get_ex(pj, "workspaces", &w))
			max = (long)jget(w, "max_transfer_bytes");
		json_object_put(pj);
		r = read_input(nargs > 2 ? args[2] : NULL, (size_t)max, &sb);
		if (!r && brig_workspace_put(ctx, args[0], args[1], sb.data ? sb.data : "", sb.len,
					     "cli", &err) < 0)
			r = cli_report(err);
		else if (!r && json) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "path", json_object_new_string(args[1]));
			json_object_object_add(o, "bytes", json_object_new_int64((int64_t)sb.len));
			print_json(o);
			json_object_put(o);
		}
		sb_free(&sb);
	} else {
		char *data = NULL;
		size_t len = 0;
		if (brig_workspace_get(ctx, args[0], args[1], &data, &len, "cli", &err) < 0) {
			r = cli_report(err);
		} else {
			fwrite(data, 1, len, stdout);
			fflush(stdout);
		}
		free(data);
	}
	brig_ctx_free(ctx);
	return r;
}
