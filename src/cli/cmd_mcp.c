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
	 * per thread arena (measured). */
	mallopt(M_ARENA_MAX, 1);
#endif
	if (isatty(STDIN_FILENO))
		fputs("brig mcp: speaking MCP (JSON-RPC, one message per line) on stdin/stdout; "
		      "this is meant for an MCP client, see brig mcp --help\n",
		      stderr);

	/* Signals first: from here on anything that creates containers can be stopped cleanly. */
	int sig[2] = { -1, -1 };
	if (install_signals(sig) < 0) {
		cli_error("mcp: cannot create the signal pipe: %m");
		return EXIT_SANDBOX;
	}
	/* The policy, the plugins and the audit log are checked before serving; the warm pool
	 * starts once a client has opened a session (mcp_options.warm_pool). */
	brig_ctx *ctx = NULL;
	int r = cli_make_ctx(&po, &ctx);
	if (r) {
		close(sig[0]);
		close(sig[1]);
		return r;
	}
	mcp_options opts = { .shutdown_fd = sig[0],
			     .quiet = quiet,
			     .queue_per_run = (int)queue_per_run,
			     .warm_pool = true };
	brig_error *err = NULL;
	r = mcp_serve(ctx, STDIN_FILENO, STDOUT_FILENO, &opts, &err);
	brig_ctx_free(ctx); /* removes the warm pool's containers */
	shutdown_pipe_w = -1;
	close(sig[0]);
	close(sig[1]);
	if (r < 0)
		return cli_report(err);
	return 0;
}
