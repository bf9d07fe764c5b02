/* proc.c - spawning and reaping helpers for the docker CLI backend (see proc.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "proc.h"

extern char **environ;

static int spawn_attrs(posix_spawnattr_t *attr)
{
	sigset_t none, def;
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGHUP);
	posix_spawnattr_init(attr);
	posix_spawnattr_setsigmask(attr, &none);
	posix_spawnattr_setsigdefault(attr, &def);
	posix_spawnattr_setpgroup(attr, 0);
	return posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
						      POSIX_SPAWN_SETPGROUP);
}

static void close_pair(int fds[2])
{
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]), fds[i] = -1;
}

int proc_spawn(char *const argv[], int flags, proc *p)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 };
	bool with_stdin = flags & PROC_STDIN_SOCKET, discard = flags & PROC_DISCARD_OUTPUT;
	p->pid = -1;
	p->in_fd = p->out_fd = p->err_fd = -1;
	int r = 0;
	if (with_stdin && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0)
		return -errno;
	if (!discard && (pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0)) {
		r = -errno;
		goto fail;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (with_stdin)
		posix_spawn_file_actions_adddup2(&fa, in[1], STDIN_FILENO);
	else
		posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (discard) {
		posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	} else {
		posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
		posix_spawn_file_actions_adddup2(&fa, er[1], STDERR_FILENO);
	}
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP
	/* brig's own descriptors are all O_CLOEXEC, but an application embedding libbrig may
	 * hold others: the docker client gets exactly these three */
	posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
#endif
	posix_spawnattr_t attr;
	spawn_attrs(&attr);
	r = -posix_spawn(&p->pid, argv[0], &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (r < 0)
		goto fail;
	if (with_stdin) {
		close(in[1]);
		p->in_fd = in[0];
	}
	if (!discard) {
		close(out[1]);
		close(er[1]);
		p->out_fd = out[0];
		p->err_fd = er[0];
	}
	return 0;
fail:
	close_pair(in);
	close_pair(out);
	close_pair(er);
	p->pid = -1;
	return r;
}

static int decode_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

int proc_wait(proc *p, int64_t timeout_ms)
{
	if (p->pid <= 0)
		return -1;
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	for (;;) {
		int st;
		pid_t w = waitpid(p->pid, &st, deadline < 0 ? 0 : WNOHANG);
		if (w == p->pid) {
			p->pid = -1;
			return decode_status(st);
		}
		if (w < 0 && errno != EINTR) {
			p->pid = -1;
			return -1;
		}
		if (deadline >= 0 && now_ms() >= deadline) {
			kill(p->pid, SIGKILL);
			deadline = -1; /* now reap it, blocking */
			continue;
		}
		if (w == 0)
			poll(NULL, 0, 5);
	}
}

void proc_close_fds(proc *p)
{
	if (p->in_fd >= 0)
		close(p->in_fd);
	if (p->out_fd >= 0)
		close(p->out_fd);
	if (p->err_fd >= 0)
		close(p->err_fd);
	p->in_fd = p->out_fd = p->err_fd = -1;
}

#define CAPTURE_CAP (64 * 1024)

/* Read what is there; returns false at EOF/error (fd closed and set to -1). */
static bool drain(int *fd, strbuf *sb)
{
	char buf[4096];
	ssize_t n = read(*fd, buf, sizeof buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return false;
	}
	if (sb && sb->len < CAPTURE_CAP)
		sb_append(sb, buf,
			  (size_t)n < CAPTURE_CAP - sb->len ? (size_t)n : CAPTURE_CAP - sb->len);
	return true;
}

int proc_run_capture(char *const argv[], int64_t timeout_ms, strbuf *out, strbuf *err)
{
	proc p;
	int r = proc_spawn(argv, 0, &p);
	if (r < 0)
		return r;
	int64_t deadline = now_ms() + timeout_ms;
	while (p.out_fd >= 0 || p.err_fd >= 0) {
		struct pollfd pf[2] = { { p.out_fd, POLLIN, 0 }, { p.err_fd, POLLIN, 0 } };
		int64_t left = deadline - now_ms();
		if (left <= 0)
			break;
		int n = poll(pf, 2, (int)left);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (pf[0].revents)
			drain(&p.out_fd, out);
		if (pf[1].revents)
			drain(&p.err_fd, err);
	}
	proc_close_fds(&p);
	int64_t left = deadline - now_ms();
	return proc_wait(&p, left > 0 ? left : 0);
}

char *proc_find_in_path(const char *name)
{
	const char *path = secure_getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	cleanup_free char *copy = xstrdup(path);
	char *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] != '/')
			continue; /* a relative PATH entry would make the result depend on the cwd
				   */
		char *full = xasprintf("%s/%s", dir, name);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
			return full;
		free(full);
	}
	return NULL;
}
