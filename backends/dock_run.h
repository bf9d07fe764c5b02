/* dock_run.h - the run flow of dock_run.c in pieces, private to libdock: dock_run() goes through
 * all of them at once; the prepared containers of dock_pool.c (the host's warm pool) stop after
 * the start and go on, later, with the collection.  One implementation of create / attach /
 * start / I/O with cap, deadline and cancel / wait / inspect / delete for both.
 */
#ifndef BRIG_DOCK_RUN_H
#define BRIG_DOCK_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "capture.h"
#include "dock.h"
#include "dock_http.h"
#include "frames.h"

enum dock_phase {
	P_BEGIN,
	P_CREATE,
	P_ATTACH,
	P_START,
	P_HANDOVER, /* prepared containers: the code handed over (the wall time starts) */
	P_WRITTEN,  /* the code written and stdin half-closed */
	P_OUTPUT,   /* the first output arrived (0 if none) */
	P_IO,       /* the attach stream ended (the engine has seen the program exit) */
	P_WAIT,
	P_INSPECT,
	P_DELETE,
	P_N
};

typedef struct run_state {
	const brig_spec *spec; /* only during a hook call: a prepared container keeps none */
	char *name;            /* the container's name */
	int cancel_fd;
	/* brig_run_control.before_start and its argument: called between the attach and the
	 * start (NULL: nothing) */
	int (*before_start)(void *arg, brig_error **err);
	void *before_start_arg;
	dock_engine eng;
	char *base;     /* "/v1.41/containers/NAME" */
	time_t created; /* wall clock at create: where its engine events begin */
	bool may_exist; /* create was sent and not refused for a name clash: DELETE is owed */
	int fd;         /* the attach stream */
	strbuf early;   /* stream bytes that came with the attach answer */
	capture cap;
	frames fr;
	run_outcome oc;
	bool killed;
	int kill_fd;         /* the kill request, while its answer is pending */
	dock_head kill_head; /* that answer */
	int64_t deadline;    /* the run's deadline; after a kill, the end of the grace period */
	size_t in_off;       /* code bytes written */
	bool in_done;        /* stdin half-closed (or the box stopped reading) */
	int64_t t[P_N];
	int64_t created_wall_ms; /* wall clock at create, ms */
	int64_t egress_since_ms; /* wall clock, ms, before the proxy's begin mark: the box's lines
				  * are logged after it */
	char *egress_addr;       /* with egress: the box's address on its internal network */
	char *egress_owner;      /* ...the container that holds it (the box's network holder) */
	char *egress_proxy;      /* with egress: its proxy once the box ran (dock_egress_begin) */
	char *egress_mark;       /* with egress: the host's begin mark in that proxy's log */
	char *egress_log;        /* with egress: the proxy's log lines of the box (outcome) */
	char *egress_note;       /* with egress: why they are unknown (outcome) */
} run_state;

void dock_state_init(run_state *st, const brig_spec *spec, const brig_run_control *ctl);
void dock_state_free(run_state *st);
/* check the spec, negotiate, create, attach, start */
int dock_flow_start(run_state *st, brig_error **err);
/* I/O until the stream ends (cap, deadline, cancel), wait, inspect */
int dock_flow_collect(run_state *st, brig_error **err);
/* DELETE ?force=1&v=1 if the container may exist; a failure is logged */
void dock_flow_delete(run_state *st);
/* With egress, the box not deleted yet: its proxy's state and log lines (st->egress_log, or
 * st->egress_note), and r set to a sandbox failure (in *e) when the proxy stopped or was
 * replaced since the box's begin mark (r < 0 already: left as it is). */
void dock_flow_egress_end(run_state *st, const brig_egress *eg, int *r, brig_error **e);
/* Before a prepared box gets its code: the same proxy as at its start, marked again (the
 * idle time may have rotated the first mark away); false: it must not run (cold instead). */
bool dock_flow_egress_handover(run_state *st, const brig_egress *eg);
/* Output, observations and, when r < 0, the sandbox's failure (e's message) into out. */
void dock_flow_outcome(run_state *st, int r, const brig_error *e, brig_outcome *out);
/* BRIG_DEBUG: "NAME <what> phases (ms): create 12 attach 1 ..." */
void dock_log_phases(const run_state *st, const char *what);

#endif
