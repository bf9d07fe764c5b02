/* docker-cli.c - the Docker CLI backend: the spec rendered as one `docker run` argv.
 *
 * Measured pitfalls it is built around (hostlab FINDINGS): killing the docker client leaves the
 * container running, so every stop is `docker rm -f NAME`; the default log driver keeps writing a
 * flooding program's output to disk, so --log-driver none; exit 137 alone does not mean OOM, the
 * engine's State.OOMKilled does, so no --rm (the state must survive until brig has read it).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "brig-backend.h"
#include "capture.h"
#include "cli_argv.h"
#include "plugin_host.h"
#include "proc.h"

static pthread_once_t docker_once = PTHREAD_ONCE_INIT;
static char *docker_path; /* resolved once; lives for the process */

#define CLI_TIMEOUT_MS 15000 /* docker version / inspect / rm */
#define DRAIN_GRACE_MS 10000 /* after a kill, how long the client may take to notice */

static void find_docker(void)
{
	const char *env = getenv("BRIG_DOCKER");
	docker_path = env && env[0] == '/' ? xstrdup(env) : proc_find_in_path("docker");
}

static const char *docker(void)
{
	pthread_once(&docker_once, find_docker);
	return docker_path;
}

static void trim(strbuf *sb)
{
	while (sb->len && (sb->data[sb->len - 1] == '\n' || sb->data[sb->len - 1] == ' '))
		sb->data[--sb->len] = '\0';
}

/* ---- probe ----------------------------------------------------------------------------- */

static void explain_daemon_error(const char *msg, char *reason, size_t len)
{
	if (strstr(msg, "permission denied"))
		snprintf(reason, len,
			 "permission denied on the Docker socket (run as root or join the docker "
			 "group): %s",
			 msg);
	else if (strstr(msg, "Cannot connect") || strstr(msg, "Is the docker daemon running"))
		snprintf(reason, len,
			 "dockerd is not reachable (start it: sudo scripts/setup-host): %s", msg);
	else
		snprintf(reason, len, "docker version failed: %s", msg);
}

static int cli_probe(brig_probe_info *info, brig_error **err)
{
	snprintf(info->runtime, sizeof info->runtime, "runc");
	if (!docker()) {
		snprintf(info->reason, sizeof info->reason,
			 "docker CLI not found in PATH (install docker.io: sudo "
			 "scripts/setup-host)");
		return 0;
	}
	char *argv[] = { (char *)docker(), "version", "--format",
			 "{{.Server.Version}} (API {{.Server.APIVersion}})", NULL };
	strbuf out, er;
	sb_init(&out);
	sb_init(&er);
	int st = proc_run_capture(argv, CLI_TIMEOUT_MS, &out, &er);
	trim(&out);
	trim(&er);
	if (st == 0 && out.len) {
		info->available = true;
		snprintf(info->version, sizeof info->version, "%s", out.data);
	} else if (st < 0) {
		snprintf(info->reason, sizeof info->reason, "cannot run %s: %s", docker(),
			 strerror(-st));
	} else {
		explain_daemon_error(er.len ? er.data : "no output", info->reason,
				     sizeof info->reason);
	}
	sb_free(&out);
	sb_free(&er);
	(void)err;
	return 0;
}

/* ---- explain --------------------------------------------------------------------------- */

static int cli_explain(const brig_spec *spec, char **out, brig_error **err)
{
	const char *dk = docker() ? docker() : "docker";
	cleanup_strv char **argv =
		cli_render_argv(spec, dk, spec->seccomp_profile ? "PROFILE.json" : NULL);
	strbuf sb;
	sb_init(&sb);
	size_t n = strv_len(argv), i = 0;
	size_t image_at = n - strv_len(spec->argv) - 1;
	/* "docker run" on the first line, then one flag (with its value) per line. */
	sb_printf(&sb, "%s %s", argv[0], argv[1]);
	for (i = 2; i < image_at; i++) {
		cleanup_free char *q = cli_shell_quote(argv[i]);
		bool is_flag = argv[i][0] == '-';
		sb_printf(&sb, "%s%s", is_flag ? " \\\n  " : " ", q);
	}
	sb_puts(&sb, " \\\n ");
	for (i = image_at; i < n; i++) {
		cleanup_free char *q = cli_shell_quote(argv[i]);
		sb_printf(&sb, " %s", q);
	}
	sb_printf(&sb,
		  " < CODE\n# CODE: the program (%zu bytes) on stdin; wall time %" PRId64
		  " ms from the start, output capped at %zu bytes (stdout+stderr), then "
		  "`docker rm -f %s`\n",
		  spec->stdin_len, spec->timeout_ms, spec->max_output_bytes, spec->name);
	*out = sb_steal(&sb);
	(void)err;
	return 0;
}

/* ---- remove / inspect ------------------------------------------------------------------ */

static int cli_remove(const char *name, brig_error **err)
{
	if (!docker())
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, "docker CLI not found");
	char *argv[] = { (char *)docker(), "rm", "-f", "-v", (char *)name, NULL };
	strbuf er;
	sb_init(&er);
	int st = proc_run_capture(argv, CLI_TIMEOUT_MS, NULL, &er);
	trim(&er);
	int r = 0;
	if (st != 0 && !strstr(er.data ? er.data : "", "No such container"))
		r = plugin_fail(err, BRIG_E_SANDBOX, 0, "docker rm -f %s failed (status %d): %s",
				name, st, er.len ? er.data : "no output");
	sb_free(&er);
	return r;
}

typedef struct engine_state {
	bool found;
	int exit_code;
	bool oom_killed;
	char error[512];
} engine_state;

static int cli_inspect(const char *name, engine_state *s, brig_error **err)
{
	memset(s, 0, sizeof *s);
	char *argv[] = { (char *)docker(), "inspect",         "--type",     "container",
			 "--format",       "{{json .State}}", (char *)name, NULL };
	strbuf out, er;
	sb_init(&out);
	sb_init(&er);
	int st = proc_run_capture(argv, CLI_TIMEOUT_MS, &out, &er);
	int r = 0;
	if (st == 0) {
		json_object *o = json_tokener_parse(out.data ? out.data : "");
		json_object *v;
		s->found = o != NULL;
		if (o && json_object_object_get_ex(o, "ExitCode", &v))
			s->exit_code = json_object_get_int(v);
		if (o && json_object_object_get_ex(o, "OOMKilled", &v))
			s->oom_killed = json_object_get_boolean(v);
		if (o && json_object_object_get_ex(o, "Error", &v) && json_object_get_string(v))
			snprintf(s->error, sizeof s->error, "%s", json_object_get_string(v));
		json_object_put(o);
	} else if (!strstr(er.data ? er.data : "", "No such")) {
		trim(&er);
		r = plugin_fail(err, BRIG_E_SANDBOX, 0, "docker inspect %s failed: %s", name,
				er.len ? er.data : "no output");
	}
	sb_free(&out);
	sb_free(&er);
	return r;
}

/* ---- run ------------------------------------------------------------------------------- */

typedef struct cli_run {
	const brig_spec *spec;
	proc p;  /* the `docker run` client */
	proc rm; /* `docker rm -f` once brig decided to stop the box */
	capture cap;
	size_t stdin_off;
	bool killed;
	run_outcome oc;
} cli_run;

/* Stop the box: `docker rm -f NAME`, the only reliable stop (see the file comment).  It runs
 * while the loop keeps draining the client: a client blocked on a full pipe blocks the engine's
 * attach copy, and with it the removal (measured: rm -f hung for its whole timeout). */
static void stop_container(cli_run *cr, bool *why)
{
	if (cr->killed)
		return;
	*why = true;
	cr->killed = true;
	char *argv[] = { (char *)docker(), "rm", "-f", "-v", cr->spec->name, NULL };
	int r = proc_spawn(argv, PROC_DISCARD_OUTPUT, &cr->rm);
	if (r < 0)
		plugin_log(BRIG_LOG_WARN, "cannot spawn docker rm: %s", strerror(-r));
}

static void feed_stdin(cli_run *cr)
{
	const brig_spec *s = cr->spec;
	while (cr->stdin_off < s->stdin_len) {
		ssize_t w = send(cr->p.in_fd, s->stdin_data + cr->stdin_off,
				 s->stdin_len - cr->stdin_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w < 0)
			break; /* the client went away; its exit status will tell */
		cr->stdin_off += (size_t)w;
	}
	shutdown(cr->p.in_fd, SHUT_WR);
	close(cr->p.in_fd);
	cr->p.in_fd = -1;
}

/* Read one chunk from stdout/stderr; after a kill the rest is the client's noise: dropped. */
static void read_stream(cli_run *cr, int *fd, int stream)
{
	char buf[16384];
	ssize_t n = read(*fd, buf, sizeof buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	if (!cr->killed && capture_add(&cr->cap, stream, buf, (size_t)n))
		stop_container(cr, &cr->oc.truncated);
}

static bool cancel_requested(int fd)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	return fd >= 0 && poll(&pf, 1, 0) > 0;
}

static void io_loop(cli_run *cr, int cancel_fd, int64_t deadline)
{
	int64_t grace_end = -1;
	while (cr->p.out_fd >= 0 || cr->p.err_fd >= 0) {
		struct pollfd pf[4] = {
			{ cr->p.out_fd, POLLIN, 0 },
			{ cr->p.err_fd, POLLIN, 0 },
			{ cr->p.in_fd, POLLOUT, 0 },
			{ cr->killed ? -1 : cancel_fd, POLLIN, 0 },
		};
		int64_t now = now_ms();
		int64_t until = cr->killed ? grace_end : deadline;
		if (now >= until) {
			if (cr->killed)
				break; /* the client ignores its container's end: give up on it */
			stop_container(cr, &cr->oc.timed_out);
			grace_end = now_ms() + DRAIN_GRACE_MS;
			continue;
		}
		int n = poll(pf, 4, (int)(until - now));
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (pf[2].revents)
			feed_stdin(cr);
		if (pf[0].revents)
			read_stream(cr, &cr->p.out_fd, 1);
		if (pf[1].revents)
			read_stream(cr, &cr->p.err_fd, 2);
		if (pf[3].revents && cancel_requested(cancel_fd))
			stop_container(cr, &cr->oc.cancelled);
		if (cr->killed && grace_end < 0)
			grace_end = now_ms() + DRAIN_GRACE_MS;
	}
}

static char *write_profile(const brig_spec *spec, brig_error **err)
{
	const char *dir = getenv("TMPDIR");
	char *path = xasprintf("%s/brig-seccomp-XXXXXX", dir && dir[0] == '/' ? dir : "/tmp");
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0 || write_all(fd, spec->seccomp_profile, strlen(spec->seccomp_profile)) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd), unlink(path);
		free(path);
		plugin_fail(err, BRIG_E_SYSTEM, e, "cannot write the seccomp profile for docker");
		return NULL;
	}
	close(fd);
	return path;
}

/* The client is gone; work out how the container ended from the engine's own state. */
static int settle(cli_run *cr, int client_status, brig_error **err)
{
	run_outcome *oc = &cr->oc;
	if (cr->killed) {
		oc->exit_code = 137;
		return 0;
	}
	oc->exit_code = client_status;
	/* 125-127 are also the client's own failures; 137 may be an OOM kill. */
	if (client_status < 125 || (client_status > 127 && client_status != 137))
		return 0;
	engine_state st;
	int r = cli_inspect(cr->spec->name, &st, err);
	if (r < 0)
		return r;
	if (!st.found) {
		trim(&cr->cap.err);
		return plugin_fail(err, BRIG_E_SANDBOX, 0, "the container did not start: %s",
				   cr->cap.err.len ? cr->cap.err.data
						   : "docker run failed without a message");
	}
	if (st.error[0])
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "the engine could not run the container: %s", st.error);
	oc->exit_code = st.exit_code;
	oc->oom_killed = st.oom_killed;
	return 0;
}

static int cli_run_spec(const brig_spec *spec, const brig_run_control *ctl, brig_result *res,
			brig_error **err)
{
	if (!docker())
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, "docker CLI not found in PATH");
	cleanup_free char *profile = NULL;
	if (spec->seccomp_profile && !(profile = write_profile(spec, err)))
		return BRIG_E_SYSTEM;
	cleanup_strv char **argv = cli_render_argv(spec, docker(), profile);
	cli_run cr = { .spec = spec, .rm = { .pid = -1 }, .oc = { .exit_code = -1 } };
	capture_init(&cr.cap, spec->max_output_bytes);
	int64_t deadline = now_ms() + spec->timeout_ms;
	int r = proc_spawn(argv, PROC_STDIN_SOCKET, &cr.p);
	if (r < 0) {
		capture_free(&cr.cap);
		if (profile)
			unlink(profile);
		return plugin_fail(err, BRIG_E_SANDBOX, -r, "cannot start %s", docker());
	}
	set_nonblock(cr.p.out_fd, true);
	set_nonblock(cr.p.err_fd, true);
	io_loop(&cr, ctl && ctl->cancel_fd >= 0 ? ctl->cancel_fd : -1, deadline);
	proc_close_fds(&cr.p);
	int status = proc_wait(&cr.p, DRAIN_GRACE_MS);
	if (profile)
		unlink(profile);
	r = settle(&cr, status, err);
	/* The container is gone once the stop's `rm -f` succeeded; otherwise remove it now. */
	bool removed = cr.killed && proc_wait(&cr.rm, CLI_TIMEOUT_MS) == 0;
	cleanup_error brig_error *rm_err = NULL;
	int rr = removed ? 0 : cli_remove(spec->name, &rm_err);
	if (r == 0 && rr < 0) {
		*err = steal_pointer(&rm_err);
		r = rr;
	}
	if (r == 0) {
		capture_to_result(&cr.cap, res);
		outcome_to_result(&cr.oc, res);
	}
	capture_free(&cr.cap);
	return r;
}

/* ---- images / gc ----------------------------------------------------------------------- */

static int cli_image_exists(const char *image, brig_error **err)
{
	if (!docker())
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, "docker CLI not found");
	char *argv[] = { (char *)docker(), "image",       "inspect", "--format",
			 "{{.Id}}",        (char *)image, NULL };
	strbuf er;
	sb_init(&er);
	int st = proc_run_capture(argv, CLI_TIMEOUT_MS, NULL, &er);
	int r = st == 0 ? 1 : 0;
	if (st != 0 && !strstr(er.data ? er.data : "", "No such image")) {
		trim(&er);
		r = plugin_fail(err, BRIG_E_SANDBOX, 0, "docker image inspect %s: %s", image,
				er.len ? er.data : "failed");
	}
	sb_free(&er);
	return r;
}

static int cli_list_labelled(const char *label, char ***names, char ***owners, brig_error **err)
{
	if (!docker())
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, "docker CLI not found");
	cleanup_free char *filter = xasprintf("label=%s", label);
	char *argv[] = { (char *)docker(),
			 "ps",
			 "-a",
			 "--filter",
			 filter,
			 "--format",
			 "{{.Names}}\t{{.Label \"brig.owner\"}}",
			 NULL };
	strbuf out, er;
	sb_init(&out);
	sb_init(&er);
	int st = proc_run_capture(argv, CLI_TIMEOUT_MS, &out, &er);
	if (st != 0) {
		trim(&er);
		int r = plugin_fail(err, BRIG_E_SANDBOX, 0, "docker ps: %s",
				    er.len ? er.data : "failed");
		sb_free(&out);
		sb_free(&er);
		return r;
	}
	size_t n = 0;
	char **nv = xcalloc(1, sizeof *nv), **ov = xcalloc(1, sizeof *ov);
	char *save = NULL;
	for (char *line = strtok_r(out.data ? out.data : (char *)"", "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		nv = xrealloc(nv, (n + 2) * sizeof *nv);
		ov = xrealloc(ov, (n + 2) * sizeof *ov);
		nv[n] = tab ? xstrndup(line, (size_t)(tab - line)) : xstrdup(line);
		ov[n] = xstrdup(tab ? tab + 1 : "");
		nv[++n] = NULL;
		ov[n] = NULL;
	}
	*names = nv;
	*owners = ov;
	sb_free(&out);
	sb_free(&er);
	return 0;
}

static const brig_backend cli_backend = {
	.abi_major = BRIG_BACKEND_ABI_MAJOR,
	.abi_minor = BRIG_BACKEND_ABI_MINOR,
	.struct_size = sizeof(brig_backend),
	.name = "docker-cli",
	.description = "Docker CLI: one `docker run` process per run (runc)",
	.isolation = BRIG_ISOLATION_CONTAINER,
	.speed_rank = 20,
	.features = BRIG_FEATURE_SECCOMP_PROFILE | BRIG_FEATURE_CANCEL,
	.probe = cli_probe,
	.explain = cli_explain,
	.run = cli_run_spec,
	.remove = cli_remove,
	.image_exists = cli_image_exists,
	.list_labelled = cli_list_labelled,
};

__attribute__((visibility("default"))) const brig_backend *
brig_backend_entry(uint32_t host_abi_major, const brig_host_services *services);

__attribute__((visibility("default"))) const brig_backend *
brig_backend_entry(uint32_t host_abi_major, const brig_host_services *services)
{
	if (host_abi_major != BRIG_BACKEND_ABI_MAJOR || !services ||
	    services->struct_size < sizeof(brig_host_services))
		return NULL;
	plugin_host_set(services);
	return &cli_backend;
}
