/* dock_pool.c - prepared containers for the host's warm pool (brig-backend.h, ABI 1.1):
 *   prepare       create -> attach -> start, then stop: the interpreter waits on stdin
 *   run_prepared  (egress: the same proxy, marked again) code on stdin + half-close -> the
 *                 I/O loop of dock_run.c (cap, deadline from the hand-over, cancel) -> wait
 *                 -> inspect (egress: the proxy's log lines of the box)
 *   discard       DELETE ?force=1&v=1, used or not
 * The flow itself is dock_run.c's (dock_run.h); this file only holds it across the calls.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "dock_run.h"
#include "plugin_host.h"

int dock_prepare(const brig_spec *spec, void **handle, brig_error **err)
{
	*handle = NULL;
	run_state *st = xmalloc(sizeof *st);
	dock_state_init(st, spec, NULL);
	int r = dock_flow_start(st, err);
	if (r < 0) {
		dock_flow_delete(st);
		dock_state_free(st);
		free(st);
		return r;
	}
	st->spec = NULL; /* the host's spec is only borrowed for the call */
	*handle = st;
	return 0;
}

/* The program of an idle box has printed nothing and is blocked reading stdin: anything on
 * the stream (output, EOF, an error) means it is not the box that was prepared any more. */
static bool still_waiting(const run_state *st)
{
	struct pollfd p = { .fd = st->fd, .events = POLLIN | POLLRDHUP };
	int r;
	do
		r = poll(&p, 1, 0);
	while (r < 0 && errno == EINTR);
	return r == 0 && st->early.len == 0;
}

int dock_run_prepared(void *handle, const brig_spec *spec, const brig_run_control *ctl,
		      brig_outcome *out, brig_error **err)
{
	run_state *st = handle;
	if (!st || st->spec || st->t[P_HANDOVER] || st->fd < 0)
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "run_prepared: not a fresh prepared container");
	if (!spec || spec->struct_size < sizeof *spec || (spec->stdin_len && !spec->stdin_data) ||
	    spec->timeout_ms <= 0)
		return plugin_fail(err, BRIG_E_SANDBOX, 0, "run_prepared: incomplete spec");
	if (!still_waiting(st))
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0,
				   "prepared container %s is no longer waiting for its code",
				   st->name);
	/* BRIG_HAS_FIELD(spec, brig_spec, egress), spelt out as dock_run.c does */
	const brig_egress *eg = spec->struct_size >= offsetof(brig_spec, egress) + sizeof(void *)
					? spec->egress
					: NULL;
	if (eg && !dock_flow_egress_handover(st, eg))
		return plugin_fail(
			err, BRIG_E_UNAVAILABLE, 0,
			"prepared container %s: its egress proxy %s is not the one it "
			"started with or cannot be marked, or its network holder is gone "
			"or holds another address",
			st->name, eg->proxy_name);
	st->spec = spec;
	st->cancel_fd = -1;
	if (ctl && ctl->struct_size >= offsetof(brig_run_control, cancel_fd) + sizeof(int))
		st->cancel_fd = ctl->cancel_fd;
	capture_free(&st->cap);
	capture_init(&st->cap, spec->max_output_bytes);
	st->t[P_HANDOVER] = now_ms();
	st->deadline = st->t[P_HANDOVER] + spec->timeout_ms; /* the wall time starts now */
	cleanup_error brig_error *e = NULL;
	int r = dock_flow_collect(st, &e);
	if (eg) /* the box is removed later (discard): its address is still its own */
		dock_flow_egress_end(st, eg, &r, &e);
	dock_flow_outcome(st, r, e, out);
	st->spec = NULL;
	st->cancel_fd = -1;
	return 0; /* as run(): a failed sandbox is reported in the outcome */
}

void dock_discard(void *handle)
{
	run_state *st = handle;
	if (!st)
		return;
	int64_t t0 = now_ms();
	dock_flow_delete(st);
	if (st->t[P_HANDOVER]) {
		st->t[P_DELETE] = now_ms();
		dock_log_phases(st, "pooled run");
	} else {
		plugin_log(BRIG_LOG_DEBUG, "%s discarded unused after %lld ms, delete %lld ms",
			   st->name ? st->name : "?", (long long)(t0 - st->t[P_BEGIN]),
			   (long long)(now_ms() - t0));
	}
	dock_state_free(st);
	free(st);
}
