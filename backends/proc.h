/* proc.h - child processes for the docker CLI backend: spawned from an argv (never a shell), in
 * their own process group (a terminal's ^C reaches brig, which then removes the container), with
 * only the descriptors we hand them.
 */
#ifndef BRIG_PROC_H
#define BRIG_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "util.h"

typedef struct proc {
	pid_t pid;
	int in_fd; /* our end of the child's stdin (a socket: send(MSG_NOSIGNAL), shutdown) or -1 */
	int out_fd; /* child's stdout, or -1 */
	int err_fd; /* child's stderr, or -1 */
} proc;

enum {
	PROC_STDIN_SOCKET = 1 << 0, /* the child's stdin is a socket we write to; else /dev/null */
	PROC_DISCARD_OUTPUT = 1 << 1, /* stdout and stderr go to /dev/null; else pipes to us */
};
/* Spawn argv[0] (an absolute path) with PROC_* flags.  Returns 0 or -errno. */
int proc_spawn(char *const argv[], int flags, proc *p);
/* Wait for exit with a deadline (ms from now, < 0: forever); SIGKILL + reap when it passes.
 * Returns the exit status (128+signal when killed), or -1. */
int proc_wait(proc *p, int64_t timeout_ms);
void proc_close_fds(proc *p);

/* Run a short command to completion, collecting stdout and stderr (each capped at 64 KiB), with
 * a deadline.  Returns the exit status or a negative errno. */
int proc_run_capture(char *const argv[], int64_t timeout_ms, strbuf *out, strbuf *err);

/* Absolute path of an executable found in $PATH, or NULL. */
char *proc_find_in_path(const char *name);

#endif
