/* docker-cli.c - the Docker CLI backend: the spec rendered as one `docker run` argv.
 *
 * Measured pitfalls it is built around: killing the docker client leaves the
 * container running, so every stop is `docker rm -f NAME`; the default log driver keeps writing a
 * flooding program's output to disk, so --log-driver none; exit 137 alone does not mean OOM.
 *
 * The box runs with --rm, like a plain `docker run --rm`, so removal costs no extra client
 * process: when brig stopped the box itself it knows why; an exit of 137 it did not cause is an
 * OOM kill only if the engine reported an "oom" event for the container (`docker events`,
 * which outlives the container); 125-127 with a "docker: " error from the client mean the box
 * never ran.
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
#include <time.h>

#include "brig-backend.h"
#include "capture.h"
#include "cli_argv.h"
#include "dock.h"
#include "plugin_host.h"
#include "proc.h"

static pthread_once_t docker_once = PTHREAD_ONCE_INIT;
static char docker_path[4096]; /* resolved once; static storage: nothing to free at unload */

#define CLI_TIMEOUT_MS 15000 /* docker version / inspect / rm */
#define DRAIN_GRACE_MS 10000 /* after a kill, how long the client may take to notice */

static void find_docker(void)
{
	const char *env = secure_getenv("BRIG_DOCKER");
	cleanup_free char *found =
		env && env[0] == '/' ? xstrdup(env) : proc_find_in_path("docker");
	if (found && strlen(found) < sizeof docker_path)
		memcpy(docker_path, found, strlen(found) + 1);
}

static const char *docker(void)
{
	pthread_once(&docker_once, find_docker);
	return docker_path[0] ? docker_path : NULL;
}

static void trim(strbuf *sb)
{
	while (sb->len && (sb->data[sb->len - 1] == '\n' || sb->data[sb->len - 1] == ' '))
		sb->data[--sb->len] = '\0';
}

/* ---- probe ----------------------------------------------------------------------------- */

/* The docker CLI is there and its engine answers (libdock's GET /_ping: one transport for
 * every plugin).  The CLI runs boxes with the engine's default runtime, runc. */
static int cli_probe(const brig_probe_request *req, brig_probe_info *info, brig_error **err)
{
	(void)err;
	size_t size = info->struct_size;
	memset(info, 0, size);
	info->struct_size = size;
	snprintf(info->runtime, sizeof info->runtime, "%s",
		 req && req->runtime ? req->runtime : "runc");
	if (!docker()) {
		snprintf(info->reason, sizeof info->reason,
			 "docker CLI not found in PATH (install docker.io: scripts/setup-host)");
		return 0;
	}
	dock_engine eng = { .socket = NULL };
	info->available = dock_probe_engine(info, &eng) == 0;
	dock_engine_free(&eng);
	return 0;
}

/* ---- explain --------------------------------------------------------------------------- */

/* "docker run" on the first line, then one flag (with its value) per line, then the image
 * and the program's argv. */
static void explain_argv(strbuf *sb, char **argv, const brig_spec *spec)
{
	size_t n = strv_len(argv), i = 0;
	size_t image_at = n - strv_len(spec->argv) - 1;
	sb_printf(sb, "%s %s", argv[0], argv[1]);
	for (i = 2; i < image_at; i++) {
		cleanup_free char *q = cli_shell_quote(argv[i]);
		bool is_flag = argv[i][0] == '-';
		sb_printf(sb, "%s%s", is_flag ? " \\\n  " : " ", q);
	}
	sb_puts(sb, " \\\n ");
	for (i = image_at; i < n; i++) {
		cleanup_free char *q = cli_shell_quote(argv[i]);
		sb_printf(sb, " %s", q);
	}
}

static void explain_profile_note(strbuf *sb, const brig_spec *spec)
{
	if (spec->seccomp_profile)
		sb_puts(sb, "# brig-seccomp.json: the profile in force; write it first with\n"
			    "#   brig policy --seccomp-profile [the same --policy/--isolation] > "
			    "brig-seccomp.json\n");
}

static int cli_explain(const brig_spec *spec, char **out, brig_error **err)
{
	const char *dk = docker() ? docker() : "docker";
	cleanup_strv char **argv =
		cli_render_argv(spec, dk, spec->seccomp_profile ? "brig-seccomp.json" : NULL);
	strbuf sb;
	sb_init(&sb);
	explain_argv(&sb, argv, spec);
	sb_printf(&sb,
		  " < CODE\n# CODE: %zu bytes on stdin (brig-init's header line, then the "
		  "program); wall time %" PRId64
		  " ms from the start, output capped at %zu bytes (stdout+stderr), then "
		  "`docker rm -f -v %s`\n",
		  spec->stdin_len, spec->timeout_ms, spec->max_output_bytes, spec->name);
	explain_profile_note(&sb, spec);
	*out = sb_steal(&sb);
	(void)err;
	return 0;
}

static int cli_explain_detached(const brig_spec *spec, char **out, brig_error **err)
{
	const char *dk = docker() ? docker() : "docker";
	cleanup_strv char **argv = cli_render_detached_argv(
		spec, dk, spec->seccomp_profile ? "brig-seccomp.json" : NULL);
	strbuf sb;
	sb_init(&sb);
	explain_argv(&sb, argv, spec);
	sb_printf(&sb,
		  "\n# detached: no stdin, nothing attached; removed with `docker rm -f -v %s`\n",
		  spec->name);
	explain_profile_note(&sb, spec);
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

/* Did the engine report an OOM kill for this container between `since` (unix seconds) and
 * wait_ms from now?  The events log outlives the container that --rm removed; `docker events`
 * with an --until still ahead streams until then. */
static int cli_oom_event(const char *name, time_t since, long wait_ms, bool *oom, brig_error **err)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	long long until_ns =
		(long long)now.tv_sec * 1000000000LL + now.tv_nsec + wait_ms * 1000000LL;
	char since_s[32], until_s[48];
	snprintf(since_s, sizeof since_s, "%lld", (long long)since - 1);
	snprintf(until_s, sizeof until_s, "%lld.%09lld", until_ns / 1000000000LL,
		 until_ns % 1000000000LL);
	cleanup_free char *filter = xasprintf("container=%s", name);
	char *argv[] = { (char *)docker(), "events",      "--since", since_s,    "--until",
			 until_s,          "--filter",    filter,    "--filter", "event=oom",
			 "--format",       "{{.Status}}", NULL };
	strbuf out, er;
	sb_init(&out);
	sb_init(&er);
	int st = proc_run_capture(argv, CLI_TIMEOUT_MS, &out, &er);
	*oom = st == 0 && out.data && strstr(out.data, "oom");
	int r = 0;
	if (st != 0) {
		trim(&er);
		r = plugin_fail(err, BRIG_E_SANDBOX, 0, "docker events failed: %s",
				er.len ? er.data : "no output");
	}
	sb_free(&out);
	sb_free(&er);
	return r;
}

/* The docker client's own failure (the box never ran) leaves a "docker: ..." line on stderr. */
static const char *client_error(strbuf *err)
{
	trim(err);
	if (!err->data)
		return NULL;
	const char *p = err->data;
	const char *last = NULL;
	for (const char *l = p; l; l = strchr(l, '\n')) {
		if (*l == '\n')
			l++;
		if (strncmp(l, "docker: ", 8) == 0)
			last = l;
		if (!*l)
			break;
	}
	return last;
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

/* The client is gone; work out how the box ended. */
static int settle(cli_run *cr, int client_status, time_t started, brig_error **err)
{
	run_outcome *oc = &cr->oc;
	oc->exit_code = client_status;
	if (cr->killed) {
		oc->exit_code = 137;
		return 0;
	}
	if (client_status >= 125 && client_status <= 127) {
		const char *msg = client_error(&cr->cap.err);
		if (msg)
			return plugin_fail(err, BRIG_E_SANDBOX, 0, "the container did not run: %s",
					   msg + 8);
	}
	/* Only a failed run can have been ended by the memory limit (capture.c); the events query
	 * costs a client process, so a successful run does not pay for it.  The events logged so
	 * far come at once; under load the OOM event can trail the exit (dock_run.c measured it
	 * for the Engine API), so a SIGKILL brig did not send is looked up again over the next
	 * DOCK_OOM_EVENT_MS (`docker events` streams until --until: that query takes all of it). */
	if (client_status == 0)
		return 0;
	int r = cli_oom_event(cr->spec->name, started, 0, &oc->oom_killed, err);
	if (r == 0 && !oc->oom_killed && client_status == 137)
		r = cli_oom_event(cr->spec->name, started, DOCK_OOM_EVENT_MS, &oc->oom_killed, err);
	return r;
}

static int cli_run_spec(const brig_spec *spec, const brig_run_control *ctl, brig_outcome *out,
			brig_error **err)
{
	if (!docker())
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, "docker CLI not found in PATH");
	cleanup_free char *profile = NULL;
	if (spec->seccomp_profile && !(profile = write_profile(spec, err)))
		return BRIG_E_SYSTEM;
	cleanup_strv char **argv = cli_render_argv(spec, docker(), profile);
	cli_run cr = { .spec = spec, .rm = { .pid = -1 }, .oc = { .exit_code = -1 } };
	int64_t deadline = now_ms() + spec->timeout_ms;
	time_t started = time(NULL);
	int r = proc_spawn(argv, PROC_STDIN_SOCKET, &cr.p);
	if (r < 0) { /* no client, no container: nothing was attempted */
		if (profile)
			unlink(profile);
		return plugin_fail(err, BRIG_E_SANDBOX, -r, "cannot start %s", docker());
	}
	capture_init(&cr.cap, spec->max_output_bytes);
	set_nonblock(cr.p.out_fd, true);
	set_nonblock(cr.p.err_fd, true);
	io_loop(&cr, ctl && ctl->cancel_fd >= 0 ? ctl->cancel_fd : -1, deadline);
	proc_close_fds(&cr.p);
	int status = proc_wait(&cr.p, DRAIN_GRACE_MS);
	if (profile)
		unlink(profile);
	cleanup_error brig_error *e = NULL;
	settle(&cr, status, started, &e);
	/* --rm removed the box when it exited normally, and a stop's `rm -f` when brig stopped it;
	 * anything else (the client failed or died) gets an explicit removal. */
	bool removed = cr.killed ? proc_wait(&cr.rm, CLI_TIMEOUT_MS) == 0
				 : (status >= 0 && status < 125) || status == 137;
	cleanup_error brig_error *rm_err = NULL;
	if (!removed && cli_remove(spec->name, &rm_err) < 0 && !e)
		e = steal_pointer(&rm_err);
	/* the output captured so far goes to the host with the failure, if any */
	capture_to_outcome(&cr.cap, &cr.oc, e ? e->message : NULL, e && e->transient, out);
	capture_free(&cr.cap);
	return 0;
}

/* ---- images / gc ----------------------------------------------------------------------- */

/* `docker image inspect IMAGE`: the same JSON as the Engine API's, in an array of one. */
static int cli_image_inspect(const char *image, brig_image_info *info, brig_error **err)
{
	if (!docker())
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, "docker CLI not found");
	if (!image || !*image || image[0] == '-')
		return plugin_fail(err, BRIG_E_USAGE, 0, "not an image reference: \"%s\"",
				   image ? image : "");
	char *argv[] = { (char *)docker(), "image", "inspect", "--", (char *)image, NULL };
	strbuf out, er;
	sb_init(&out);
	sb_init(&er);
	int st = proc_run_capture(argv, CLI_TIMEOUT_MS, &out, &er);
	trim(&er);
	int r = 0;
	json_object *arr = st == 0 ? json_tokener_parse(out.data ? out.data : "") : NULL;
	json_object *o =
		json_object_is_type(arr, json_type_array) && json_object_array_length(arr) == 1
			? json_object_array_get_idx(arr, 0)
			: NULL;
	if (o && dock_image_parse(o, info) == 0)
		r = 1;
	else if (st == 0)
		r = plugin_fail(err, BRIG_E_SANDBOX, 0,
				"docker image inspect %s: no image ID in its answer", image);
	else if (!strstr(er.data ? er.data : "", "No such image"))
		r = plugin_fail(err, BRIG_E_SANDBOX, 0, "docker image inspect %s: %s", image,
				er.len ? er.data : "failed");
	json_object_put(arr);
	sb_free(&out);
	sb_free(&er);
	return r;
}

static int cli_image_id(const char *image, char *id, size_t id_len, brig_error **err)
{
	return dock_image_id_via(cli_image_inspect, image, id, id_len, err);
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

/* ---- workspaces ------------------------------------------------------------------------ */

/* Run a short docker command; 0, or the status with its stderr in *why (trimmed). */
static int cli_short(char **argv, strbuf *out, strbuf *why)
{
	int st = proc_run_capture(argv, CLI_TIMEOUT_MS, out, why);
	trim(why);
	if (out)
		trim(out);
	return st;
}

static int cli_volume_create(const char *name, char *const *driver_opts, char *const *labels,
			     brig_error **err)
{
	if (!docker())
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, "docker CLI not found");
	size_t n = 0, cap = 8 + 2 * (strv_len(driver_opts) + strv_len(labels));
	char **argv = xcalloc(cap, sizeof *argv);
	argv[n++] = (char *)docker();
	argv[n++] = "volume";
	argv[n++] = "create";
	argv[n++] = "--driver";
	argv[n++] = "local";
	for (char *const *o = driver_opts; o && *o; o++) {
		argv[n++] = "--opt";
		argv[n++] = *o;
	}
	for (char *const *l = labels; l && *l; l++) {
		argv[n++] = "--label";
		argv[n++] = *l;
	}
	argv[n++] = (char *)name;
	strbuf why;
	sb_init(&why);
	int st = cli_short(argv, NULL, &why);
	free(argv);
	int r = st == 0 ? 0
			: plugin_fail(err, BRIG_E_SANDBOX, 0, "docker volume create %s: %s", name,
				      why.len ? why.data : "failed");
	sb_free(&why);
	return r;
}

static int cli_volume_remove(const char *name, brig_error **err)
{
	if (!docker())
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, "docker CLI not found");
	char *argv[] = { (char *)docker(), "volume", "rm", (char *)name, NULL };
	strbuf why;
	sb_init(&why);
	int st = cli_short(argv, NULL, &why);
	const char *w = why.data ? why.data : "";
	int r = 0;
	if (st != 0 && !strstr(w, "no such volume") && !strstr(w, "No such volume"))
		r = plugin_fail(err, strstr(w, "in use") ? BRIG_E_BUSY : BRIG_E_SANDBOX, 0,
				"docker volume rm %s: %s", name, why.len ? w : "failed");
	sb_free(&why);
	return r;
}

/* `docker run -d` of the spec: the run's argv with -i and --rm taken out. */
static int cli_start_detached(const brig_spec *spec, brig_error **err)
{
	if (!docker())
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, "docker CLI not found");
	cleanup_free char *profile = NULL;
	if (spec->seccomp_profile && !(profile = write_profile(spec, err)))
		return BRIG_E_SYSTEM;
	cleanup_strv char **argv = cli_render_detached_argv(spec, docker(), profile);
	strbuf out, why;
	sb_init(&out);
	sb_init(&why);
	int st = cli_short(argv, &out, &why);
	if (profile)
		unlink(profile);
	int r = 0;
	if (st != 0) {
		r = plugin_fail(err, BRIG_E_SANDBOX, 0, "docker run -d %s: %s", spec->name,
				why.len ? why.data : "failed");
		cleanup_error brig_error *e = NULL;
		cli_remove(spec->name, &e);
	}
	sb_free(&out);
	sb_free(&why);
	return r;
}

static int cli_container_state(const char *name, int *state, brig_error **err)
{
	*state = 0;
	if (!docker())
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0, "docker CLI not found");
	char *argv[] = { (char *)docker(), "inspect",
			 "--type",         "container",
			 "--format",       "{{.State.Running}} {{.State.Status}} {{.Created}}",
			 (char *)name,     NULL };
	strbuf out, why;
	sb_init(&out);
	sb_init(&why);
	int st = cli_short(argv, &out, &why);
	int r = 0;
	if (st == 0) {
		char running[8] = "", status[16] = "", created[48] = "";
		sscanf(out.data ? out.data : "", "%7s %15s %47s", running, status, created);
		*state = dock_state_of(status, created, strcmp(running, "true") == 0);
	} else if (!strstr(why.data ? why.data : "", "No such"))
		r = plugin_fail(err, BRIG_E_SANDBOX, 0, "docker inspect %s: %s", name,
				why.len ? why.data : "failed");
	sb_free(&out);
	sb_free(&why);
	return r;
}

static const brig_backend cli_backend = {
	.abi_major = BRIG_BACKEND_ABI_MAJOR,
	.abi_minor = BRIG_BACKEND_ABI_MINOR,
	.struct_size = sizeof(brig_backend),
	.name = "docker-cli",
	.description = "Docker CLI: one `docker run` process per run (runc)",
	.isolation = BRIG_ISOLATION_CONTAINER,
	.speed_rank = 20,
	.features = BRIG_FEATURE_SECCOMP_PROFILE | BRIG_FEATURE_CANCEL | BRIG_FEATURE_MOUNTS |
		    BRIG_FEATURE_IMAGE_ID | BRIG_FEATURE_WORKSPACES,
	.default_runtime = "runc",
	.probe = cli_probe,
	.explain = cli_explain,
	.explain_detached = cli_explain_detached,
	.run = cli_run_spec,
	.remove = cli_remove,
	.image_id = cli_image_id,
	.list_labelled = cli_list_labelled,
	.image_inspect = cli_image_inspect,
	.volume_create = cli_volume_create,
	.volume_remove = cli_volume_remove,
	.start_detached = cli_start_detached,
	.container_state = cli_container_state,
};

__attribute__((visibility("default"))) const brig_backend *
brig_backend_entry(uint32_t host_abi_major, const brig_host_services *services);

__attribute__((visibility("default"))) const brig_backend *
brig_backend_entry(uint32_t host_abi_major, const brig_host_services *services)
{
	const brig_backend *be = dock_entry(host_abi_major, services, &cli_backend);
	if (be) /* this plugin's own helpers (capture, proc) report through the host too */
		plugin_host_set(services);
	return be;
}
