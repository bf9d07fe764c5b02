/* cmd_mcp.c - `brig mcp`: serve the Model Context Protocol on stdin/stdout.
 *
 * Only the operator's command line and policy shape the sandbox; the MCP client (and the
 * model behind it) chooses nothing but language, code and a timeout within the policy.
 * Signals only write a byte to a self-pipe; mcp_serve() sees it in its poll loop and shuts
 * down in order (queued calls dropped, running containers removed by brig_run).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mcp/server.h"
#include "util.h"

static int shutdown_pipe_w = -1;

static void on_signal(int sig)
{
	(void)sig;
	int saved = errno;
	if (shutdown_pipe_w >= 0)
		(void)!write(shutdown_pipe_w, "s",
			     1); /* non-blocking: a full pipe already says it */
	errno = saved;
}

static int install_signals(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	shutdown_pipe_w = fds[1];
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* A client that goes away must not kill us mid-write: EPIPE ends the session instead. */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	return 0;
}

/* The policy as loaded once, for the warm pool's context (warm_ctx). */
typedef struct warm_state {
	brig_policy *policy; /* handed to the context when it is made */
	const char *audit_log;
	brig_ctx *ctx; /* made, freed by cmd_mcp */
} warm_state;

static int warm_ctx(void *arg, brig_ctx **out, brig_error **err)
{
	warm_state *w = arg;
	if (w->ctx || !w->policy)
		return brig_fail(err, BRIG_E_USAGE, 0, "the warm pool's context exists already");
	int r = brig_ctx_new(steal_pointer(&w->policy), &w->ctx, err);
	if (r == 0 && w->audit_log)
		r = brig_ctx_set_audit_log(w->ctx, w->audit_log, err);
	if (r < 0) {
		brig_ctx_free(w->ctx);
		w->ctx = NULL;
		return r;
	}
	*out = w->ctx;
	return 0;
}

/* Whether the policy keeps containers warm (warm_pool > 0). */
static bool policy_warm(const brig_policy *p)
{
	cleanup_free char *js = brig_policy_to_json(p);
	json_object *o = js ? json_tokener_parse(js) : NULL, *v = NULL;
	bool warm = json_object_object_get_ex(o, "warm_pool", &v) && json_object_get_int(v) > 0;
	json_object_put(o);
	return warm;
}

/* A server context without a warm pool (the policy, the plugins and the audit log are all
 * checked now, before serving), and the policy for the warm pool's context, made once the
 * opening message fixes the era: a server/discover probe starts no container.  Returns 0 or an
 * exit code. */
static int make_contexts(const cli_policy_opts *po, brig_ctx **cold, warm_state *w)
{
	brig_policy *p = NULL;
	int r = cli_load_policy(po, &p);
	if (r)
		return r;
	brig_error *err = NULL;
	brig_policy *c = brig_policy_copy(p);
	if (brig_policy_override(c, "warm_pool", "0", NULL, &err) < 0 ||
	    brig_ctx_new(steal_pointer(&c), cold, &err) < 0 ||
	    (po->audit_log && brig_ctx_set_audit_log(*cold, po->audit_log, &err) < 0)) {
		brig_policy_free(c);
		brig_policy_free(p);
		brig_ctx_free(*cold);
		*cold = NULL;
		return cli_report(err);
	}
	if (policy_warm(p)) {
		w->policy = p;
		w->audit_log = po->audit_log;
	} else {
		brig_policy_free(p);
	}
	return 0;
}

static void usage(FILE *f)
{
	fputs("Usage: brig mcp [OPTIONS]\n"
	      "Serve the Model Context Protocol (MCP) over stdio for an MCP client\n"
	      "(Claude Desktop, VS Code, goose, any SDK client).  Tools:\n"
	      "  run_code {language, code, timeout_seconds?}   run a program in a fresh box\n"
	      "  sandbox_status {}                             backends, images, limits\n"
	      "stdout carries only protocol messages; logs go to stderr.  The client chooses\n"
	      "only the language, the code and a timeout up to the policy's\n"
	      "max_timeout_seconds; everything else comes from the policy and the options\n"
	      "below.  Stops when stdin closes or on SIGTERM/SIGINT, removing running\n"
	      "containers.\n\n",
	      f);
	fputs(CLI_POLICY_HELP, f);
	fputs("\nOther options:\n"
	      "      --queue-per-run N  calls that may wait per concurrent run (1-64; 4)\n"
	      "  -q, --quiet            no per-call log lines on stderr\n"
	      "  -h, --help             show this help\n"
	      "\nSee brig-mcp(1) for the client configuration snippet.\n",
	      f);
}

int cmd_mcp(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_POLICY_LONGOPTS,
		{ "queue-per-run", required_argument, NULL, 'Q' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	cli_policy_opts po;
	memset(&po, 0, sizeof po);
	bool quiet = false;
	long queue_per_run = 0;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+qh", longopts, NULL)) != -1) {
		if (cli_policy_option(&po, opt, optarg))
			continue;
		switch (opt) {
		case 'q':
			quiet = true;
			break;
		case 'Q':
			if (!parse_long(optarg, 1, 64, &queue_per_run)) {
				cli_error("mcp: --queue-per-run: '%s' is not a number from 1 to 64",
					  optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_error("mcp: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
#ifdef __GLIBC__
	/* One malloc arena: a handful of threads, little contention, and the server's freed heap
	 * can all be handed back when it is idle (server.c trims), instead of ~80 KiB resident
	 * per thread arena (measured, issue 7). */
	mallopt(M_ARENA_MAX, 1);
#endif
	if (isatty(STDIN_FILENO))
		fputs("brig mcp: speaking MCP (JSON-RPC, one message per line) on stdin/stdout; "
		      "this is meant for an MCP client, see brig mcp --help\n",
		      stderr);

	brig_ctx *ctx = NULL;
	warm_state warm = { 0 };
	int r = make_contexts(&po, &ctx, &warm);
	if (r)
		return r;
	int sig[2] = { -1, -1 };
	if (install_signals(sig) < 0) {
		cli_error("mcp: cannot create the signal pipe: %s", strerror(errno));
		brig_ctx_free(ctx);
		brig_policy_free(warm.policy);
		return EXIT_SANDBOX;
	}
	mcp_options opts = { .shutdown_fd = sig[0],
			     .quiet = quiet,
			     .queue_per_run = (int)queue_per_run,
			     .warm_ctx = warm.policy ? warm_ctx : NULL,
			     .warm_arg = &warm };
	brig_error *err = NULL;
	r = mcp_serve(ctx, STDIN_FILENO, STDOUT_FILENO, &opts, &err);
	brig_ctx_free(warm.ctx); /* removes the warm pool's containers */
	brig_ctx_free(ctx);
	brig_policy_free(warm.policy);
	shutdown_pipe_w = -1;
	close(sig[0]);
	close(sig[1]);
	if (r < 0)
		return cli_report(err);
	return 0;
}
