/* dock_run.c - one run over the Engine API:
 *   create -> attach (hijacked, before start so nothing is lost) -> start -> code on stdin +
 *   half-close -> poll(attach fd, cancel fd, deadline) -> kill at the deadline / on overflow /
 *   on cancel -> wait (bounded) -> inspect (exit code, OOMKilled) -> DELETE, always.
 * Any failure of the machinery becomes verdict sandbox_error with the reason in res->error;
 * every engine call has a timeout, so a hung or dead daemon cannot hang a run.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "dock_run.h"
#include "plugin_host.h"

#define CREATE_MS     30000L
#define ATTACH_MS     10000L
#define START_MS      60000L
#define KILL_MS       10000L
#define KILL_GRACE_MS 10000L /* the stream must end this long after a kill */
#define WAIT_SLICE_MS 1000L  /* wait is re-issued in slices so cancel and deadline stay live */
#define INSPECT_MS    10000L
#define DELETE_MS     30000L
#define OOM_POLL_MS   100L

enum kill_reason { KILL_TIMEOUT, KILL_OUTPUT, KILL_CANCEL, KILL_PROTOCOL };

void dock_state_init(run_state *st, const brig_spec *spec, const brig_run_control *ctl)
{
	memset(st, 0, sizeof *st);
	st->spec = spec;
	st->name = spec && spec->name ? xstrdup(spec->name) : NULL;
	st->cancel_fd = -1;
	if (ctl && ctl->struct_size >= offsetof(brig_run_control, cancel_fd) + sizeof(int))
		st->cancel_fd = ctl->cancel_fd;
	if (ctl && BRIG_HAS_FIELD(ctl, brig_run_control, before_start_arg)) {
		st->before_start = ctl->before_start;
		st->before_start_arg = ctl->before_start_arg;
	}
	st->fd = -1;
	st->kill_fd = -1;
	dock_head_init(&st->kill_head);
	sb_init(&st->early);
	capture_init(&st->cap, spec ? spec->max_output_bytes : 0);
	frames_init(&st->fr);
	st->oc.exit_code = -1;
	st->t[P_BEGIN] = now_ms();
}

void dock_state_free(run_state *st)
{
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
	if (st->kill_fd >= 0)
		close(st->kill_fd);
	st->kill_fd = -1;
	dock_head_free(&st->kill_head);
	dock_engine_free(&st->eng);
	free(st->base);
	free(st->name);
	sb_free(&st->early);
	free(st->egress_addr);
	free(st->egress_owner);
	free(st->egress_proxy);
	free(st->egress_mark);
	free(st->egress_log);
	free(st->egress_note);
	capture_free(&st->cap);
	frames_free(&st->fr);
}

static int check_spec(const brig_spec *s, brig_error **err)
{
	if (!s || s->struct_size < sizeof *s)
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "the host passed a container spec older than this plugin");
	for (brig_mount **m = s->mounts; m && *m; m++)
		if ((*m)->struct_size < sizeof **m || !(*m)->source || !(*m)->target)
			return plugin_fail(err, BRIG_E_SANDBOX, 0,
					   "the host passed an incomplete mount");
	if (!dock_valid_name(s->name) || !s->image || !s->argv || !s->argv[0] || !s->runtime ||
	    s->timeout_ms <= 0 || (s->stdin_len && !s->stdin_data))
		return plugin_fail(err, BRIG_E_SANDBOX, 0, "incomplete container spec");
	return 0;
}

/* POST/GET/DELETE base + suffix on the negotiated engine. */
static int container_request(run_state *st, const char *method, const char *suffix,
			     const char *json, long timeout_ms, dock_response *resp,
			     brig_error **err)
{
	cleanup_free char *path = xasprintf("%s%s", st->base, suffix);
	return dock_request(st->eng.socket, method, path, json, timeout_ms, resp, err);
}

static int http_fail(const char *what, const dock_response *resp, brig_error **err)
{
	cleanup_free char *txt = dock_error_text(resp);
	return plugin_fail(err, BRIG_E_SANDBOX, 0, "%s: dockerd answered HTTP %ld: %s", what,
			   resp->status, txt);
}

/* Parse a JSON object answer; NULL (and an error) for anything else. */
static json_object *json_answer(const char *what, const dock_response *resp, brig_error **err)
{
	json_object *o = json_tokener_parse(resp->body.data ? resp->body.data : "");
	if (json_object_is_type(o, json_type_object))
		return o;
	json_object_put(o);
	plugin_fail(err, BRIG_E_SANDBOX, 0,
		    "%s: dockerd sent an unreadable answer (not a JSON object)", what);
	return NULL;
}

static int64_t wall_now_ms(void)
{
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	return (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
}

/* ---- create, attach, start ---------------------------------------------------------------- */

static int create_refused(const run_state *st, const dock_response *resp, brig_error **err)
{
	cleanup_free char *txt = dock_error_text(resp);
	if (resp->status == 404 && strstr(txt, "No such image"))
		return plugin_fail(
			err, BRIG_E_SANDBOX, 0,
			"image %s is not present in the Docker engine, and brig never pulls: "
			"build it with scripts/setup-host (`brig doctor` lists missing images)",
			st->spec->image);
	return plugin_fail(err, BRIG_E_SANDBOX, 0,
			   "creating the container: dockerd answered HTTP %ld: %s", resp->status,
			   txt);
}

static int do_create(run_state *st, brig_error **err)
{
	json_object *body = dock_create_body(st->spec, true);
	cleanup_free char *path =
		xasprintf("/v%s/containers/create?name=%s", st->eng.api, st->spec->name);
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	st->may_exist = true; /* even a timed-out create may have happened */
	st->created = time(NULL);
	st->created_wall_ms = wall_now_ms();
	int r = dock_request(st->eng.socket, "POST", path,
			     json_object_to_json_string_ext(
				     body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
			     CREATE_MS, &resp, err);
	json_object_put(body);
	if (r < 0)
		return r;
	if (resp.status != 201) {
		st->may_exist = resp.status != 409; /* 409: the name belongs to someone else */
		return create_refused(st, &resp, err);
	}
	json_object *o = json_answer("creating the container", &resp, err);
	json_object *id = NULL;
	if (o && !json_object_object_get_ex(o, "Id", &id))
		plugin_fail(err, BRIG_E_SANDBOX, 0,
			    "creating the container: no Id in dockerd's answer");
	json_object_put(o);
	return id ? 0 : BRIG_E_SANDBOX;
}

static int do_attach(run_state *st, brig_error **err)
{
	cleanup_free char *path =
		xasprintf("%s/attach?stream=1&stdin=1&stdout=1&stderr=1", st->base);
	int r = dock_hijack(st->eng.socket, path, now_ms() + ATTACH_MS, &st->fd, &st->early, err);
	if (r < 0)
		brig_error_prefix(err, "attaching to the container");
	return r;
}

static int do_start(run_state *st, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	/* wall time counts from the start request */
	st->deadline = now_ms() + st->spec->timeout_ms;
	int r = container_request(st, "POST", "/start", NULL, START_MS, &resp, err);
	if (r < 0)
		return r;
	if (resp.status != 204 && resp.status != 304)
		return http_fail("starting the container", &resp, err);
	return 0;
}

/* The address of running container `name` on `network`, or NULL (*err says why when it can). */
static char *address_on(const char *name, const char *network, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	json_object *o = NULL, *ns, *nets, *net, *ip, *state, *running;
	char *addr = NULL;
	if (dock_engine_request("GET", INSPECT_MS, NULL, &resp, err, "/containers/%s/json", name) ==
		    0 &&
	    resp.status == 200)
		o = json_answer("inspecting the container", &resp, err);
	if (json_object_object_get_ex(o, "State", &state) &&
	    json_object_object_get_ex(state, "Running", &running) &&
	    json_object_get_boolean(running) &&
	    json_object_object_get_ex(o, "NetworkSettings", &ns) &&
	    json_object_object_get_ex(ns, "Networks", &nets) &&
	    json_object_object_get_ex(nets, network, &net) &&
	    json_object_object_get_ex(net, "IPAddress", &ip) && json_object_get_string_len(ip))
		addr = xstrdup(json_object_get_string(ip));
	json_object_put(o);
	return addr;
}

/* The container that has the box's network: in its network holder's namespace
 * (brig_spec.net_holder, network "container:" + its name) the holder, else the box. */
static const char *network_owner(const brig_spec *s, const char *box)
{
	static const char holder[] = "container:";
	return s->network && strncmp(s->network, holder, sizeof holder - 1) == 0
		       ? s->network + sizeof holder - 1
		       : box;
}

/* A box with egress: its address on the internal network, which the engine gives it at start,
 * so that the proxy's log lines can be told to be its own.  Without it the run goes on; its
 * decisions are then unknown (the outcome's egress_log stays NULL). */
static void egress_address(run_state *st)
{
	const brig_spec *s = st->spec;
	/* BRIG_HAS_FIELD(s, brig_spec, egress), spelt out: clang-tidy takes the macro's sizeof of
	 * a pointer to a struct for a mistake */
	if (s->struct_size < offsetof(brig_spec, egress) + sizeof(void *) || !s->egress)
		return;
	cleanup_error brig_error *e = NULL;
	const char *owner = network_owner(s, st->name);
	st->egress_addr = address_on(owner, s->egress->network, &e);
	if (st->egress_addr) {
		st->egress_owner = xstrdup(owner);
		/* the proxy the box talks to: the one at the end must be the same, its log must
		 * still hold the mark from before the box's first request */
		st->egress_since_ms = wall_now_ms();
		if (dock_egress_begin(s->egress, st->name, false, &st->egress_proxy,
				      &st->egress_mark) != 1)
			plugin_log(
				BRIG_LOG_WARN,
				"%s: its proxy %s could not be inspected or marked: a restart of "
				"it during the run would go unnoticed, and so would its log "
				"rotating past the box's start",
				st->name, s->egress->proxy_name);
	} else
		plugin_log(BRIG_LOG_WARN, "%s: no address on %s: its egress is not audited (%s)",
			   st->name, s->egress->network, e ? e->message : "not in the answer");
}

/* ---- the I/O loop ------------------------------------------------------------------------- */

/* POST kill once, remember why, and give the stream a grace period to end.  The answer is
 * read later (kill_answer): dockerd answers a SIGKILL only once the container has stopped, and
 * it cannot stop while its output is not drained - so the I/O loop keeps reading meanwhile. */
static int kill_for(run_state *st, enum kill_reason why, brig_error **err)
{
	if (st->killed)
		return 0;
	st->killed = true;
	st->oc.timed_out = why == KILL_TIMEOUT;
	st->oc.truncated = why == KILL_OUTPUT || st->cap.truncated;
	st->oc.cancelled = why == KILL_CANCEL;
	st->deadline = now_ms() + KILL_GRACE_MS;
	if (st->fd >= 0 && !st->in_done)
		shutdown(st->fd, SHUT_WR);
	st->in_done = true;
	cleanup_free char *path = xasprintf("%s/kill", st->base);
	return dock_send(st->eng.socket, "POST", path, now_ms() + KILL_MS, &st->kill_fd, err);
}

/* The kill answer's fd is readable: 204, or 409 (not running any more: it ended by itself
 * meanwhile) or 404 (already gone) are all fine. */
static int kill_answer(run_state *st, brig_error **err)
{
	int r = dock_answer_read(st->kill_fd, &st->kill_head, "killing the container", err);
	if (r == 0)
		return 0;
	close(st->kill_fd);
	st->kill_fd = -1;
	int s = st->kill_head.status;
	if (r > 0 && s != 204 && s != 409 && s != 404)
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "killing the container: dockerd answered HTTP %d", s);
	return r < 0 ? r : 0;
}

/* A kill answer still pending once the container has stopped: it is due now. */
static int kill_finish(run_state *st, brig_error **err)
{
	while (st->kill_fd >= 0) {
		int64_t left = st->deadline - now_ms();
		struct pollfd p = { .fd = st->kill_fd, .events = POLLIN };
		int r = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return plugin_fail(err, BRIG_E_SANDBOX, r < 0 ? errno : 0,
					   "dockerd did not answer the kill within %ld ms",
					   KILL_GRACE_MS);
		if ((r = kill_answer(st, err)) < 0)
			return r;
	}
	return 0;
}

static int feed(run_state *st, const char *data, size_t n, brig_error **err)
{
	if (n && !st->t[P_OUTPUT])
		st->t[P_OUTPUT] = now_ms();
	int fs = frames_feed(&st->fr, &st->cap, data, n);
	if (fs == FRAMES_BAD_STREAM) {
		cleanup_error brig_error *ignored = NULL;
		kill_for(st, KILL_PROTOCOL, &ignored);
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "dockerd's attach stream is garbled (frame for stream id %d)",
				   st->fr.bad_stream);
	}
	if (fs == FRAMES_FULL)
		return kill_for(st, KILL_OUTPUT, err);
	return 0;
}

/* Write what the socket takes of the code; half-close when all is written. */
static void write_stdin(run_state *st)
{
	size_t left = st->spec->stdin_len - st->in_off;
	if (left > 0) {
		ssize_t w = send(st->fd, st->spec->stdin_data + st->in_off, left, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (w > 0)
			st->in_off += (size_t)w;
		/* w < 0 otherwise (EPIPE...): the box stopped reading; its output still matters */
		if (w > 0 && st->in_off < st->spec->stdin_len)
			return;
	}
	shutdown(st->fd, SHUT_WR); /* with StdinOnce, the program's stdin EOF */
	st->in_done = true;
	st->t[P_WRITTEN] = now_ms();
}

/* Time is up: kill at the run deadline, fail at the end of the grace period. */
static int on_deadline(run_state *st, brig_error **err)
{
	if (!st->killed)
		return kill_for(st, KILL_TIMEOUT, err);
	return plugin_fail(err, BRIG_E_SANDBOX, 0,
			   "the container did not stop within %ld ms of the kill (dockerd did not "
			   "report its end)",
			   KILL_GRACE_MS);
}

/* Read once; 1 at EOF. */
static int read_stream(run_state *st, brig_error **err)
{
	char buf[16384]; /* on the caller's stack: small, it stays resident in every worker */
	ssize_t n = recv(st->fd, buf, sizeof buf, 0);
	/* ECONNRESET: dockerd closed with our unread stdin still queued (the program exited
	 * without reading it all) - an end like EOF; a dead daemon shows up at wait. */
	if (n == 0 || (n < 0 && errno == ECONNRESET))
		return 1;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n < 0)
		return plugin_fail(err, BRIG_E_SANDBOX, errno,
				   "the attach stream from dockerd broke (did dockerd die?)");
	return feed(st, buf, (size_t)n, err);
}

static int io_step(run_state *st, brig_error **err)
{
	int64_t left = st->deadline - now_ms();
	if (left <= 0)
		return on_deadline(st, err);
	enum { ATTACH, CANCEL, KILL };
	struct pollfd p[3] = {
		[ATTACH] = { .fd = st->fd,
			     .events = (short)(POLLIN | (st->in_done ? 0 : POLLOUT)) },
		[CANCEL] = { .fd = st->killed ? -1 : st->cancel_fd, .events = POLLIN },
		[KILL] = { .fd = st->kill_fd, .events = POLLIN }, /* negative fds are skipped */
	};
	int r = poll(p, 3, left > INT_MAX ? INT_MAX : (int)left);
	if (r < 0)
		return errno == EINTR ? 0 : plugin_fail(err, BRIG_E_SYSTEM, errno, "poll");
	if (p[CANCEL].revents)
		return kill_for(st, KILL_CANCEL, err);
	if (p[KILL].revents && (r = kill_answer(st, err)) < 0)
		return r;
	if (p[ATTACH].revents & POLLOUT)
		write_stdin(st);
	if (p[ATTACH].revents & (POLLIN | POLLHUP | POLLERR))
		return read_stream(st, err);
	return 0;
}

static int io_loop(run_state *st, brig_error **err)
{
	int r = feed(st, st->early.data, st->early.len, err);
	if (r == 0 && st->spec->stdin_len == 0)
		write_stdin(st);
	while (r == 0)
		r = io_step(st, err);
	if (r < 0)
		return r;
	if (frames_partial(&st->fr) && !st->killed)
		return plugin_fail(
			err, BRIG_E_SANDBOX, 0,
			"the attach stream ended in the middle of a frame (did dockerd die?)");
	if (st->fr.syserr.len)
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "dockerd reported on the attach stream: %s", st->fr.syserr.data);
	return 0;
}

/* ---- wait, inspect, delete ---------------------------------------------------------------- */

static int wait_answer(run_state *st, const dock_response *resp, brig_error **err)
{
	if (resp->status != 200)
		return http_fail("waiting for the container", resp, err);
	json_object *o = json_answer("waiting for the container", resp, err), *code = NULL,
		    *e = NULL;
	if (!o)
		return BRIG_E_SANDBOX;
	int r = 0;
	if (json_object_object_get_ex(o, "Error", &e) && json_object_is_type(e, json_type_object))
		r = plugin_fail(err, BRIG_E_SANDBOX, 0, "waiting for the container: %s",
				json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN));
	else if (json_object_object_get_ex(o, "StatusCode", &code) &&
		 json_object_is_type(code, json_type_int))
		st->oc.exit_code = json_object_get_int(code);
	else
		r = plugin_fail(err, BRIG_E_SANDBOX, 0, "waiting for the container: no StatusCode");
	json_object_put(o);
	return r;
}

/* The stream has ended, but the process may outlive its stdout: wait in slices so that the
 * deadline and the cancel fd still apply. */
static int wait_exit(run_state *st, brig_error **err)
{
	for (;;) {
		int64_t left = st->deadline - now_ms();
		struct pollfd c = { .fd = st->cancel_fd, .events = POLLIN };
		int r = 0;
		if (left <= 0)
			r = on_deadline(st, err);
		else if (st->cancel_fd >= 0 && !st->killed && poll(&c, 1, 0) > 0)
			r = kill_for(st, KILL_CANCEL, err);
		if (r < 0)
			return r;
		left = st->deadline - now_ms();
		cleanup_response dock_response resp;
		dock_response_init(&resp);
		r = container_request(st, "POST", "/wait?condition=not-running", NULL,
				      left < WAIT_SLICE_MS ? (left > 1 ? left : 1) : WAIT_SLICE_MS,
				      &resp, err);
		if (r == 0) {
			r = wait_answer(st, &resp, err);
			return r < 0 ? r : kill_finish(st, err);
		}
		if (!resp.timed_out)
			return r;
		plugin_error_free(*err); /* a slice ended: check deadline and cancel, then again */
		*err = NULL;
	}
}

/* Has the engine logged an "oom" event for this container up to now?  1 yes, 0 no, < 0 the
 * query failed. */
static int oom_event_logged(run_state *st, brig_error **err)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	cleanup_free char *filters =
		dock_filters((const char *const[]){ "container", st->name, "event", "oom", NULL });
	/* an `until` not in the future: the engine answers with its log at once, no waiting */
	cleanup_free char *path =
		xasprintf("/v%s/events?since=%lld&until=%lld.%09ld&filters=%s", st->eng.api,
			  (long long)st->created - 1, (long long)now.tv_sec, now.tv_nsec, filters);
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = dock_request(st->eng.socket, "GET", path, NULL, INSPECT_MS, &resp, err);
	if (r < 0)
		return r;
	if (resp.status != 200)
		return http_fail("reading the engine's events", &resp, err);
	return resp.body.data && strstr(resp.body.data, "\"oom\"") ? 1 : 0;
}

/* dockerd 20.10 sets State.OOMKilled only when the OOM event reaches it before the exit; under
 * load it can trail the exit (measured with gVisor, whose whole sandbox the host's OOM killer
 * ends: 4 of 24 concurrent sandboxes, the event 18-88 ms after the exit), and the state then
 * says false for good.  The event is in the engine's log all the same, as the docker-cli backend
 * reads it: a SIGKILL that brig did not send is looked up there, for up to DOCK_OOM_EVENT_MS. */
static void late_oom_event(run_state *st)
{
	int64_t end = now_ms() + DOCK_OOM_EVENT_MS;
	int r;
	for (;;) {
		cleanup_error brig_error *e = NULL;
		r = oom_event_logged(st, &e);
		if (r < 0)
			plugin_log(BRIG_LOG_WARN, "container %s: %s", st->name, e->message);
		if (r != 0 || now_ms() >= end)
			break;
		poll(NULL, 0, (int)OOM_POLL_MS);
	}
	st->oc.oom_killed = r > 0;
	plugin_log(BRIG_LOG_DEBUG, "container %s: exit 137, State.OOMKilled false, OOM event %s",
		   st->name, r > 0 ? "found: an OOM kill" : "not found");
}

static int do_inspect(run_state *st, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = container_request(st, "GET", "/json", NULL, INSPECT_MS, &resp, err);
	if (r < 0)
		return r;
	if (resp.status != 200)
		return http_fail("inspecting the container", &resp, err);
	json_object *o = json_answer("inspecting the container", &resp, err), *state = NULL,
		    *v = NULL;
	if (!o)
		return BRIG_E_SANDBOX;
	if (!json_object_object_get_ex(o, "State", &state)) {
		json_object_put(o);
		return plugin_fail(err, BRIG_E_SANDBOX, 0, "inspecting the container: no State");
	}
	if (json_object_object_get_ex(state, "OOMKilled", &v))
		st->oc.oom_killed = json_object_get_boolean(v);
	if (st->oc.exit_code < 0 && json_object_object_get_ex(state, "ExitCode", &v))
		st->oc.exit_code = json_object_get_int(v);
	json_object_put(o);
	if (st->oc.exit_code == 137 && !st->oc.oom_killed && !st->killed)
		late_oom_event(st);
	return 0;
}

/* DELETE ?force=1&v=1 on every path; 404 means already gone.  A failure is logged, not made
 * the run's verdict: the program's result stands and `brig gc` finds the label later. */
void dock_flow_delete(run_state *st)
{
	if (!st->may_exist)
		return;
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
	cleanup_error brig_error *e = NULL;
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = container_request(st, "DELETE", "?force=1&v=1", NULL, DELETE_MS, &resp, &e);
	if (r == 0 && resp.status != 204 && resp.status != 200 && resp.status != 404 &&
	    resp.status != 409)
		http_fail("removing the container", &resp, &e);
	if (e)
		plugin_log(BRIG_LOG_WARN, "container %s was not removed: %s", st->name, e->message);
}

/* ---- the whole run ------------------------------------------------------------------------ */

int dock_flow_start(run_state *st, brig_error **err)
{
	int r = check_spec(st->spec, err);
	if (r == 0)
		r = dock_engine_get(&st->eng, err);
	if (r < 0)
		return r;
	st->base = xasprintf("/v%s/containers/%s", st->eng.api, st->name);
	static int (*const steps[])(run_state *, brig_error **) = {
		[P_CREATE] = do_create,
		[P_ATTACH] = do_attach,
		[P_START] = do_start,
	};
	for (int p = P_CREATE; p <= P_START; p++) {
		/* the box exists: its network holder now (brig_run_control.before_start) */
		if (p == P_START && st->before_start &&
		    (r = st->before_start(st->before_start_arg, err)) < 0)
			return r;
		r = steps[p](st, err);
		st->t[p] = now_ms();
		if (r < 0)
			return r;
	}
	egress_address(st);
	return 0;
}

int dock_flow_collect(run_state *st, brig_error **err)
{
	static int (*const steps[])(run_state *, brig_error **) = {
		[P_IO] = io_loop,
		[P_WAIT] = wait_exit,
		[P_INSPECT] = do_inspect,
	};
	for (int p = P_IO; p <= P_INSPECT; p++) {
		int r = steps[p](st, err);
		st->t[p] = now_ms();
		if (r < 0)
			return r;
	}
	return 0;
}

void dock_log_phases(const run_state *st, const char *what)
{
	static const char *const names[P_N] = {
		[P_CREATE] = "create", [P_ATTACH] = "attach", [P_START] = "start",
		[P_HANDOVER] = "idle", [P_WRITTEN] = "write", [P_OUTPUT] = "output",
		[P_IO] = "io",         [P_WAIT] = "wait",     [P_INSPECT] = "inspect",
		[P_DELETE] = "delete",
	};
	strbuf sb;
	sb_init(&sb);
	int64_t prev = st->t[P_BEGIN];
	for (int p = P_CREATE; p < P_N; p++) {
		if (!st->t[p])
			continue;
		sb_printf(&sb, " %s %lld", names[p], (long long)(st->t[p] - prev));
		prev = st->t[p];
	}
	plugin_log(BRIG_LOG_DEBUG, "%s %s phases (ms):%s, total %lld", st->name ? st->name : "?",
		   what, sb.data ? sb.data : "", (long long)(prev - st->t[P_BEGIN]));
	sb_free(&sb);
}

void dock_flow_egress_end(run_state *st, const brig_egress *eg, int *r, brig_error **e)
{
	int running = -1;
	cleanup_free char *proxy = NULL;
	st->egress_log = dock_egress_log(eg, st->egress_addr, st->egress_since_ms, st->name,
					 st->egress_mark, &running, &proxy, &st->egress_note);
	/* the box's only way out went away under it: the sandbox failed, not the program.  A
	 * proxy restarted or replaced meanwhile (another run found it gone and started one) is
	 * that too: the box's connections through the old one were cut, and its log lines are
	 * gone with it, so the run's decisions would be incomplete. */
	if (*r < 0)
		return;
	if (running == 0)
		*r = plugin_fail(e, BRIG_E_SANDBOX, 0,
				 "the egress proxy %s stopped during the run: the program's "
				 "requests after that failed (the next run starts it again)",
				 eg->proxy_name);
	else if (running == 1 && st->egress_proxy && strcmp(proxy, st->egress_proxy) != 0)
		*r = plugin_fail(e, BRIG_E_SANDBOX, 0,
				 "the egress proxy %s was restarted during the run: the "
				 "program's connections through it were cut and its decisions "
				 "before that are lost",
				 eg->proxy_name);
}

bool dock_flow_egress_handover(run_state *st, const brig_egress *eg)
{
	if (!st->egress_addr || !st->egress_proxy || !st->egress_owner)
		return false;
	/* the box's network is still the one it started with: its holder runs and holds the
	 * address the proxy's lines are joined on (gone, another container could have it) */
	cleanup_error brig_error *e = NULL;
	cleanup_free char *now = address_on(st->egress_owner, eg->network, &e);
	if (!now || strcmp(now, st->egress_addr) != 0)
		return false;
	cleanup_free char *proxy = NULL;
	char *mark = NULL;
	int64_t since = wall_now_ms();
	if (dock_egress_begin(eg, st->name, true, &proxy, &mark) != 1 ||
	    strcmp(proxy, st->egress_proxy) != 0) {
		free(mark);
		return false;
	}
	free(st->egress_mark);
	st->egress_mark = mark;
	st->egress_since_ms = since;
	return true;
}

void dock_flow_outcome(run_state *st, int r, const brig_error *e, brig_outcome *out)
{
	capture_to_outcome(&st->cap, &st->oc,
			   r < 0 ? (e && e->message ? e->message : "the sandbox failed") : NULL,
			   r < 0 && e && e->transient, out);
	if (BRIG_HAS_FIELD(out, brig_outcome, egress_log))
		out->egress_log = steal_pointer(&st->egress_log);
	if (BRIG_HAS_FIELD(out, brig_outcome, egress_note))
		out->egress_note = steal_pointer(&st->egress_note);
}

int dock_run(const brig_spec *spec, const brig_run_control *ctl, brig_outcome *out,
	     brig_error **err)
{
	run_state st;
	dock_state_init(&st, spec, ctl);
	cleanup_error brig_error *e = NULL;
	int r = dock_flow_start(&st, &e);
	if (r < 0 && !st.may_exist) {
		/* nothing was attempted (a bad spec, no engine): the host reports it */
		dock_state_free(&st);
		if (err) {
			plugin_error_free(*err);
			*err = steal_pointer(&e);
		}
		return r;
	}
	if (r == 0)
		r = dock_flow_collect(&st, &e);
	if (st.egress_addr) /* before the delete frees its address for another box */
		dock_flow_egress_end(&st, spec->egress, &r, &e);
	dock_flow_delete(&st);
	st.t[P_DELETE] = st.may_exist ? now_ms() : 0;
	if (st.t[P_CREATE])
		dock_log_phases(&st, "run");
	dock_flow_outcome(&st, r, e, out);
	dock_state_free(&st);
	return 0;
}
