/* brig-init - PID 1 of every box: the box's own deadline, so that it never outlives brig.
 *
 *   brig-init [--marker LINE] -- PROGRAM [ARG...]
 *
 * brig enforces each run's wall time itself, but only while it lives: a brig killed with
 * SIGKILL (the OOM killer, a client hard-killing its MCP server) used to leave a program running
 * forever.  brig-init is bind-mounted read-only into the box (static, no library of the image
 * needed) and runs the program as its child:
 *
 *   - the program's stdin is relayed from brig-init's own (the code, streamed by brig); the
 *     stream begins with one header line, "BRIG-DEADLINE <ms>\n", which brig-init keeps: from
 *     then on the box has `ms` milliseconds (the run's limit plus a grace; brig kills it at the
 *     limit itself), after which brig-init kills every process of the box and exits 137;
 *   - stdin ending before the header (brig went away while the box waited in the warm pool)
 *     ends the box at once;
 *   - when the program exits, every process it left behind is killed, and brig-init exits with
 *     the program's status (128 + the signal when it was killed by one);
 *   - with --marker, brig-init writes LINE on stderr when the program has ended (whatever its
 *     status), last, stderr made blocking again (the program shares it): under gVisor an
 *     exit 2 without it is gVisor's kernel crashing, another status without it the box's, not
 *     the program's (see policy/spec.c);
 *   - it reaps every orphan (PID 1's duty) and forwards SIGTERM, SIGINT and SIGHUP to the
 *     program; it installs no handler for anything else, so the program (the same uid) cannot
 *     make it die: the kernel protects a PID 1 from signals it does not handle;
 *   - with --changes TAG (a box in a workspace, started in it), brig-init notes the files of its
 *     working directory when the run begins (the header), and once the program and everything
 *     it left are gone writes one line on stderr, "TAG ...", naming the files the run created
 *     or changed (tree.h): nothing of the program can write after it, and brig takes the last
 *     such line out of the output.
 *
 * `brig-init --workspace-tool OP ...` is not PID 1 but the program of the boxes that move files
 * in and out of a workspace (files.c).
 *
 * Small on purpose: one poll loop, argv from brig, no allocation but the workspace's note.  It
 * is not a security boundary - the box is - only the box's clock and its witness.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "tree.h"

#define HEADER     "BRIG-DEADLINE "
#define HEADER_MAX 40
#define EXIT_USAGE 125 /* the box's machinery failed: brig reports it as sandbox_error */

#define SETTLE_MS 2000 /* how long the box's last processes may take to die before the report */

static const char *marker;
static const char *changes_tag;
static tree_snapshot *before; /* the workspace when the run began */
static pid_t child;

static void say(const char *what)
{
	char buf[256];
	int n = snprintf(buf, sizeof buf, "brig-init: %s\n", what);
	if (n > 0)
		(void)!write(STDERR_FILENO, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Everything in the box's pid namespace but us. */
static void kill_box(void)
{
	kill(-1, SIGKILL);
}

static int status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return EXIT_USAGE;
}

/* After kill_box: wait until every process of the box is gone, so that nothing writes to the
 * workspace or to stderr after the report.  False if some did not die in time. */
static bool settle(void)
{
	long long until = now_ms() + SETTLE_MS;
	for (;;) {
		pid_t p = waitpid(-1, NULL, WNOHANG);
		if (p < 0 && errno == ECHILD)
			return true;
		if (p > 0 || (p < 0 && errno == EINTR))
			continue;
		if (now_ms() >= until)
			return false;
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* The program shares our stderr (the same open file): it can make it non-blocking and fill
 * the pipe so that our last lines are lost - without the marker, an exit 2 reads as gVisor's
 * kernel crashing.  Blocking again before they are written. */
static void blocking_stderr(void)
{
	int fl = fcntl(STDERR_FILENO, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		(void)fcntl(STDERR_FILENO, F_SETFL, fl & ~O_NONBLOCK);
}

/* All of buf on stderr; an EAGAIN (a process not dead yet made it non-blocking again) waits
 * for room.  brig reads until the box ends, or kills it at its limits. */
static void put_stderr(const char *buf, size_t n)
{
	while (n > 0) {
		blocking_stderr();
		ssize_t w = write(STDERR_FILENO, buf, n);
		if (w > 0) {
			buf += w;
			n -= (size_t)w;
		} else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd p = { STDERR_FILENO, POLLOUT, 0 };
			(void)poll(&p, 1, 100);
		} else {
			return;
		}
	}
}

static void finish(int st)
{
	kill_box(); /* what the program left behind */
	int code = status_code(st);
	if (changes_tag) {
		bool settled = settle();
		blocking_stderr();
		tree_report(STDERR_FILENO, changes_tag, ".", settled ? before : NULL);
	}
	if (marker) {
		char line[512];
		int n = snprintf(line, sizeof line, "%s\n", marker);
		if (n > 0 && (size_t)n < sizeof line)
			put_stderr(line, (size_t)n);
	}
	_exit(code);
}

/* Reap what ended; when the program itself ended, finish. */
static void reap(void)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == child)
			finish(st);
}

static int spawn(char **argv, int in_fd, const sigset_t *old)
{
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		sigprocmask(SIG_SETMASK, old, NULL);
		if (dup2(in_fd, STDIN_FILENO) < 0)
			_exit(EXIT_USAGE);
		close(in_fd);
		execvp(argv[0], argv);
		int e = errno;
		say(e == ENOENT ? "the program was not found" : "the program could not be run");
		_exit(e == ENOENT ? 127 : 126);
	}
	return 0;
}

/* The header line, "BRIG-DEADLINE <ms>\n", arrives first on stdin, in pieces or whole; it is
 * read byte by byte (it is short and comes once) so that nothing of the code is taken.  > 0
 * the deadline in ms, 0 not complete yet, -1 malformed, -2 stdin ended first. */
typedef struct header {
	char buf[HEADER_MAX + 1];
	size_t n;
} header;

static long long header_step(header *h)
{
	ssize_t r = read(STDIN_FILENO, h->buf + h->n, 1);
	if (r < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -2;
	if (r == 0)
		return -2;
	if (h->buf[h->n] != '\n')
		return ++h->n >= HEADER_MAX ? -1 : 0;
	h->buf[h->n] = '\0';
	if (strncmp(h->buf, HEADER, sizeof HEADER - 1) != 0)
		return -1;
	char *end;
	errno = 0;
	long long ms = strtoll(h->buf + sizeof HEADER - 1, &end, 10);
	if (errno || *end || ms <= 0 || ms > 24LL * 3600 * 1000)
		return -1;
	return ms;
}

/* Copy what stdin has into the program's pipe; at EOF close it (the program's stdin EOF). */
static void relay(int *in, int *out)
{
	char buf[65536];
	ssize_t r = read(*in, buf, sizeof buf);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	for (ssize_t off = 0; r > 0 && off < r;) {
		ssize_t w = write(*out, buf + off, (size_t)(r - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) { /* the program stopped reading: the rest goes nowhere */
			r = 0;
			break;
		}
		off += w;
	}
	if (r <= 0) {
		close(*in);
		close(*out);
		*in = *out = -1;
	}
}

static void forward(int sfd)
{
	struct signalfd_siginfo si;
	while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
		if (si.ssi_signo == SIGCHLD)
			reap();
		else if (child > 0)
			kill(child, (int)si.ssi_signo);
	}
}

int main(int argc, char **argv)
{
	int i = 1;
	if (argc > 1 && strcmp(argv[1], "--workspace-tool") == 0)
		return files_main(argc - 2, argv + 2);
	if (i + 1 < argc && strcmp(argv[i], "--marker") == 0) {
		marker = argv[i + 1];
		i += 2;
	}
	if (i + 1 < argc && strcmp(argv[i], "--changes") == 0) {
		changes_tag = argv[i + 1];
		i += 2;
	}
	if (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc) {
		say("usage: brig-init [--marker LINE] [--changes TAG] -- PROGRAM [ARG...]");
		return EXIT_USAGE;
	}
	char **prog = argv + i + 1;
	/* kill(-1) below means "every process of this box" only for the init of a pid namespace;
	 * anywhere else it would kill every process the caller may signal */
	if (getpid() != 1) {
		say("refusing to run: brig-init is PID 1 of a box, nothing else");
		return EXIT_USAGE;
	}
	/* the program runs as the same uid: it must not reach into our memory (/proc/1/mem) to
	 * stop the clock; the program itself becomes dumpable again at its execve */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	sigset_t mask, old;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &old);
	/* gVisor gives a PID 1 no protection from signals it does not handle (brig(1)): a write
	 * to the program's pipe after the program stopped reading (a file tool that hit a quota,
	 * a shell that exited before the end of its code) killed us with SIGPIPE, and the box
	 * ended 141 instead of with the program's status.  Blocked, the write fails with EPIPE,
	 * which relay() expects.  The program starts with `old`: SIGPIPE as it was. */
	sigset_t pipe_mask;
	sigemptyset(&pipe_mask);
	sigaddset(&pipe_mask, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		say("signalfd failed");
		return EXIT_USAGE;
	}
	/* The interpreter starts now and waits for its code (a warm box waits like this until a
	 * run takes it); the box's clock starts with the header. */
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0 || spawn(prog, pipefd[0], &old) < 0) {
		say("cannot start the program");
		return EXIT_USAGE;
	}
	close(pipefd[0]);
	int in = STDIN_FILENO, out = pipefd[1];
	header h = { .n = 0 };
	long long deadline = -1;
	for (;;) {
		long long left = deadline < 0 ? -1 : deadline - now_ms();
		if (deadline >= 0 && left <= 0) {
			say("the box's deadline passed: killing it (is brig gone?)");
			kill_box();
			_exit(137);
		}
		struct pollfd p[2] = { { sfd, POLLIN, 0 }, { in, POLLIN, 0 } };
		int r = poll(p, 2, left > INT_MAX ? INT_MAX : (int)left);
		if (r < 0 && errno != EINTR)
			_exit(EXIT_USAGE);
		if (r > 0 && p[0].revents)
			forward(sfd);
		if (r <= 0 || in < 0 || !p[1].revents)
			continue;
		if (deadline >= 0) {
			relay(&in, &out);
			continue;
		}
		long long ms = header_step(&h);
		if (ms < 0) { /* brig went away before the run began, or spoke nonsense */
			say(ms == -2 ? "stdin ended before the run began" : "malformed header");
			kill_box();
			_exit(ms == -2 ? 0 : EXIT_USAGE);
		}
		if (ms > 0 && changes_tag)
			before = tree_snapshot_take(".");
		if (ms > 0)
			deadline = now_ms() + ms;
	}
}
