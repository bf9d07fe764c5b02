/* cmd_run.c - `brig run` and `brig explain`. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "lang.h"
#include "util.h"

typedef struct run_opts {
	cli_policy_opts pol;
	const char *language;
	const char *code;
	const char *timeout;
	const char *file;
	const char *workspace;
	bool json;
} run_opts;

static void run_usage(FILE *f, const char *cmd)
{
	fprintf(f,
		"Usage: brig %s [OPTIONS] [FILE|-]\n"
		"%s\n\n"
		"The code comes from -c, from FILE, or from standard input (FILE omitted or -).\n\n"
		"Request options (may only tighten the policy):\n"
		"  -l, --language LANG   python, node or shell (aliases py, javascript, js, sh);\n"
		"                        default: from FILE's extension (.py .js .mjs .cjs .sh)\n"
		"  -c, --code CODE       the program text\n"
		"  -t, --timeout SECS    wall-time limit; above the policy's max_timeout_seconds "
		"is\n"
		"                        refused (exit 2)\n"
		"  -w, --workspace ID    run in this workspace (brig workspace create): its files\n"
		"                        at /workspace, where the program starts\n"
		"      --json            run: the result object as JSON on stdout; explain: the\n"
		"                        final box as JSON (every field, the backend's rendering)\n"
		"  -h, --help            this text\n\n" CLI_POLICY_HELP "\n"
		"Exit status (run): the program's own; 124 timeout, 137 out of memory, 141 output\n"
		"limit, 130 interrupted, 125 the sandbox failed, 2 bad usage or refused request.\n",
		cmd,
		strcmp(cmd, "run") == 0
			? "Run code in a fresh hardened container and report how it ended."
			: "Print the exact container command `brig run` would start (nothing "
			  "runs).");
}

static int parse_run_opts(int argc, char **argv, const char *cmd, run_opts *o)
{
	static const struct option longopts[] = {
		{ "language", required_argument, NULL, 'l' },
		{ "code", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		CLI_POLICY_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "l:c:t:w:h", longopts, NULL)) != -1) {
		if (cli_policy_option(&o->pol, c, optarg))
			continue;
		switch (c) {
		case 'l':
			o->language = optarg;
			break;
		case 'c':
			o->code = optarg;
			break;
		case 't':
			o->timeout = optarg;
			break;
		case 'w':
			o->workspace = optarg;
			break;
		case OPT_JSON:
			o->json = cli_json = true;
			break;
		case 'h':
			run_usage(stdout, cmd);
			return -1;
		default:
			run_usage(stderr, cmd);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		o->file = argv[optind++];
	if (optind < argc) {
		return cli_usage("%s: unexpected argument '%s'", cmd, argv[optind]);
	}
	if (o->code && o->file) {
		return cli_usage("%s: give the code with -c or as FILE, not both", cmd);
	}
	return 0;
}

static const char *language_from_file(const char *file)
{
	const lang_info *li = lang_by_file(file);
	return li ? li->name : NULL;
}

/* Read at most limit+1 bytes: enough to tell "too large" without reading unbounded input. */
static int read_code(const char *file, size_t limit, strbuf *sb)
{
	int fd = STDIN_FILENO;
	if (file && strcmp(file, "-") != 0) {
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			return cli_usage("cannot open %s: %s", file, strerror(errno));
		}
	}
	char buf[65536];
	while (sb->len <= limit) {
		size_t want = limit + 1 - sb->len < sizeof buf ? limit + 1 - sb->len : sizeof buf;
		ssize_t n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int ex = cli_usage("cannot read %s: %m", file ? file : "standard input");
			if (fd != STDIN_FILENO)
				close(fd);
			return ex;
		}
		if (n == 0)
			break;
		sb_append(sb, buf, (size_t)n);
	}
	if (fd != STDIN_FILENO)
		close(fd);
	return 0;
}

static int build_request(const run_opts *o, const brig_policy *p, brig_request *req, strbuf *code,
			 bool code_required)
{
	const char *lang = o->language ? o->language : language_from_file(o->file);
	if (!lang) {
		return cli_usage(
			"which language? use -l python|node|shell (or a .py/.js/.sh file)");
	}
	int l = brig_language_parse(lang);
	if (l < 0) {
		return cli_usage("unknown language '%s' (use python, node or shell)", lang);
	}
	req->language = (brig_language)l;
	if (o->timeout) {
		long t;
		if (!parse_long(o->timeout, 1, 86400, &t)) {
			return cli_usage("--timeout: '%s' is not a whole number of seconds >= 1",
					 o->timeout);
		}
		req->timeout_seconds = (int)t;
	}
	if (o->code) {
		sb_puts(code, o->code);
	} else if (o->file || code_required) {
		brig_policy_limits lim;
		brig_policy_get_limits(p, &lim);
		int r = read_code(o->file, (size_t)lim.max_input_bytes, code);
		if (r)
			return r;
	}
	req->code = code->data ? code->data : "";
	req->code_len = code->len;
	return 0;
}

/* ---- signals: a handler only writes to a pipe that the run watches as its cancel fd ---- */

static int cancel_pipe[2] = { -1, -1 };
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	int saved = errno;
	got_signal = sig;
	if (cancel_pipe[1] >= 0)
		(void)!write(cancel_pipe[1], "x", 1);
	errno = saved;
}

static void install_signals(void)
{
	if (pipe2(cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		cancel_pipe[0] = cancel_pipe[1] = -1;
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

static int verdict_exit(const brig_result *res)
{
	switch (res->verdict) {
	case BRIG_VERDICT_SUCCESS:
	case BRIG_VERDICT_ERROR:
		return res->exit_code;
	case BRIG_VERDICT_TIMEOUT:
		return EXIT_TIMEOUT;
	case BRIG_VERDICT_OOM:
		return EXIT_OOM;
	case BRIG_VERDICT_OUTPUT_LIMIT:
		return EXIT_OUTPUT_LIMIT;
	case BRIG_VERDICT_CANCELLED:
		return got_signal ? 128 + got_signal : EXIT_CANCELLED;
	case BRIG_VERDICT_SANDBOX_ERROR:
	default:
		return EXIT_SANDBOX;
	}
}

static void print_summary(const brig_result *res)
{
	double secs = (double)res->duration_ms / 1000.0;
	const char *v = brig_verdict_name(res->verdict);
	if (res->verdict == BRIG_VERDICT_SANDBOX_ERROR)
		fprintf(stderr, "[brig] sandbox_error after %.2fs (%s, %s): %s\n", secs,
			res->backend, res->runtime, res->error ? res->error : "unknown");
	else if (res->verdict == BRIG_VERDICT_ERROR)
		fprintf(stderr, "[brig] error (exit %d) in %.2fs (%s, %s)\n", res->exit_code, secs,
			res->backend, res->runtime);
	else
		fprintf(stderr, "[brig] %s in %.2fs (%s, %s)%s\n", v, secs, res->backend,
			res->runtime, res->output_truncated ? ", output truncated" : "");
	if (res->notice)
		fprintf(stderr, "[brig] note: %s\n", res->notice);
}

static int finish_run(const run_opts *o, const brig_result *res)
{
	if (o->json) {
		cleanup_free char *js = brig_result_to_json(res, true);
		printf("%s\n", js);
	} else {
		fwrite(res->stdout_data, 1, res->stdout_len, stdout);
		fflush(stdout);
		fwrite(res->stderr_data, 1, res->stderr_len, stderr);
		print_summary(res);
	}
	fflush(stdout);
	return verdict_exit(res);
}

int cmd_run(int argc, char **argv)
{
	run_opts o = { 0 };
	int r = parse_run_opts(argc, argv, "run", &o);
	if (r)
		return r < 0 ? 0 : r;
	brig_ctx *ctx = NULL;
	r = cli_make_ctx(&o.pol, &ctx);
	if (r)
		return r;
	/* one run per process: spare network holders for the next (BRIG_SPARES=0: none) */
	const char *sp = getenv("BRIG_SPARES");
	brig_ctx_set_spares(ctx, !sp || strcmp(sp, "0") != 0);
	brig_request req = { 0 };
	strbuf code;
	sb_init(&code);
	r = build_request(&o, brig_ctx_policy(ctx), &req, &code, true);
	if (r) {
		sb_free(&code);
		brig_ctx_free(ctx);
		return r;
	}
	install_signals();
	brig_run_options ro = { .struct_size = sizeof ro,
				.cancel_fd = cancel_pipe[0],
				.front_door = "cli",
				.timeout_mode = BRIG_TIMEOUT_REFUSE,
				.workspace = o.workspace };
	brig_result res = { .struct_size = sizeof res };
	brig_error *err = NULL;
	r = brig_run(ctx, &req, &ro, &res, &err);
	if (r < 0 && !res.backend)
		r = cli_report(err); /* refused: nothing ran */
	else if (r < 0) {
		int code_exit = finish_run(&o, &res);
		(void)code_exit;
		cli_json = false;    /* stdout has its one JSON object, the result */
		r = cli_report(err); /* ran, but e.g. the audit line could not be written */
	} else {
		r = finish_run(&o, &res);
	}
	brig_result_clear(&res);
	sb_free(&code);
	brig_ctx_free(ctx);
	return r;
}

int cmd_explain(int argc, char **argv)
{
	run_opts o = { 0 };
	int r = parse_run_opts(argc, argv, "explain", &o);
	if (r)
		return r < 0 ? 0 : r;
	brig_ctx *ctx = NULL;
	r = cli_make_ctx(&o.pol, &ctx);
	if (r)
		return r;
	brig_request req = { 0 };
	strbuf code;
	sb_init(&code);
	r = build_request(&o, brig_ctx_policy(ctx), &req, &code, false);
	if (!r && o.json) {
		brig_error *err = NULL;
		json_object *x = brig_explain_object_in(ctx, &req, o.workspace, &err);
		if (!x)
			r = cli_report(err);
		else
			printf("%s\n",
			       json_object_to_json_string_ext(
				       x, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						  JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(x);
	} else if (!r) {
		char *text = NULL;
		brig_error *err = NULL;
		if (brig_explain_in(ctx, &req, o.workspace, &text, &err) < 0)
			r = cli_report(err);
		else
			fputs(text, stdout);
		free(text);
	}
	sb_free(&code);
	brig_ctx_free(ctx);
	return r;
}
