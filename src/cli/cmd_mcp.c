/* cmd_mcp.c - `brig mcp`: serve the Model Context Protocol on stdin/stdout.
 *
 * Only the operator's command line and policy shape the sandbox; the MCP client (and the
 * model behind it) chooses nothing but language, code and a timeout within the policy.
 * Signals only write a byte to a self-pipe; mcp_serve() sees it in its poll loop and shuts
 * down in order (queued calls dropped, running containers removed by brig_run).
 *
 * MCP clients stop a stdio server by closing its stdin, then SIGTERM after a grace, then
 * SIGKILL (the TypeScript SDKs: 2 s each).  Removing boxes cannot always be done by then: a
 * box the engine is still starting cannot be removed before its start ends (seconds for gVisor
 * on a busy host).  So a reaper, a child forked before any thread, waits for the server to
 * exit; unless the server ended through its own shutdown (which removes its boxes; one whose
 * removal failed there is left to the next brig), it removes every box whose brig is gone
 * (brig_reap) at once, instead of leaving them for the next brig to start.
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
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
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

/* ---- the reaper ------------------------------------------------------------------------ */

#define REAPER_CLEAN        'c'  /* the server's own shutdown removed its boxes */
#define REAPER_PASS_MS      1000 /* a box whose create was in flight may appear a moment later */
#define REAPER_PASSES       10
#define REAPER_QUIET_PASSES 3 /* done after this many passes in a row removed nothing */

static _Noreturn void reaper_main(brig_ctx *ctx, int fd)
{
	/* only the server's end ends it: a signal to the whole group (^C, kill 0) stops the
	 * server, whose exit then starts the clean-up */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	shutdown_pipe_w = -1;
	(void)prctl(PR_SET_NAME, "brig-reaper", 0, 0, 0);
	/* the client's pipes must see EOF when the server exits: hold none of them.  The pipe
	 * first goes above 2 (it may be one of 0-2 if brig was started with them closed). */
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0 || null < 0)
		_exit(1);
	(void)dup2(null, STDIN_FILENO);
	(void)dup2(null, STDOUT_FILENO);
	if (!getenv("BRIG_DEBUG"))
		(void)dup2(null, STDERR_FILENO);
	if (dup2(fd, 3) < 0) /* (null may have been 3: it is not needed any more) */
		_exit(1);
#ifdef HAVE_CLOSE_RANGE
	if (close_range(4, ~0U, 0) < 0)
#endif
	{
		struct rlimit rl;
		int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536
				  ? (int)rl.rlim_cur
				  : 65536;
		for (int i = 4; i < max; i++)
			(void)close(i);
	}
	char c = 0;
	ssize_t n;
	do
		n = read(3, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && c == REAPER_CLEAN)
		_exit(0);
	/* The server died first.  Its in-flight engine calls still complete: a pass every second
	 * until three in a row find nothing. */
	for (int pass = 0, quiet = 0; pass < REAPER_PASSES && quiet < REAPER_QUIET_PASSES; pass++) {
		if (pass)
			usleep(REAPER_PASS_MS * 1000);
		int removed = 0;
		brig_error *e = NULL;
		if (brig_reap(ctx, &removed, &e) < 0)
			cli_error("mcp reaper: %s", e && e->message ? e->message : "reap failed");
		else if (removed)
			cli_error("mcp reaper: removed %d box(es) the server left", removed);
		brig_error_free(e);
		quiet = removed ? 0 : quiet + 1;
	}
	_exit(0);
}

/* Fork the reaper (before any thread exists); the write end of its pipe, or -1 (logged: the
 * next brig start still reaps). */
static int start_reaper(brig_ctx *ctx, pid_t *pid_out)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		cli_error("mcp: warning: no reaper (pipe: %m): a killed server's boxes wait for "
			  "the next brig");
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		reaper_main(ctx, p[0]);
	}
	close(p[0]);
	if (pid < 0) {
		cli_error("mcp: warning: no reaper (fork: %m): a killed server's boxes wait for "
			  "the next brig");
		close(p[1]);
		return -1;
	}
	*pid_out = pid;
	return p[1];
}

/* The server removed its boxes: the reaper ends at once (waited for, not left a zombie). */
static void stop_reaper(int fd, pid_t pid)
{
	if (fd < 0)
		return;
	(void)!write(fd, (char[]){ REAPER_CLEAN }, 1);
	close(fd);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
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
	pid_t reaper_pid = -1;
	int reaper = start_reaper(ctx, &reaper_pid);
	mcp_options opts = { .shutdown_fd = sig[0],
			     .quiet = quiet,
			     .queue_per_run = (int)queue_per_run,
			     .warm_pool = true };
	brig_error *err = NULL;
	r = mcp_serve(ctx, STDIN_FILENO, STDOUT_FILENO, &opts, &err);
	brig_ctx_free(ctx); /* removes the warm pool's containers */
	stop_reaper(reaper, reaper_pid);
	shutdown_pipe_w = -1;
	close(sig[0]);
	close(sig[1]);
	if (r < 0)
		return cli_report(err);
	return 0;
}
