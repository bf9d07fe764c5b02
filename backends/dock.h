/* dock.h - Docker Engine API operations and the whole run flow, shared by every plugin that
 * drives dockerd over its API (docker-api with runc, gvisor with runsc): the plugins differ only
 * in the runtime they probe for and run with (spec->runtime).
 */
#ifndef BRIG_DOCK_H
#define BRIG_DOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "brig-backend.h"
#include "util.h"

#define DOCK_API_CLIENT_MAX_MINOR 47 /* newest API version brig speaks: 1.47 */
#define DOCK_API_MIN_MINOR        40 /* oldest engine API brig accepts: 1.40 */
/* How long the engine's OOM event may trail the box's exit (measured under load, gVisor; 1 s
 * was once too short for a docker-cli hog beside other suites).  Only an exit 137 that brig did
 * not cause, with no OOM seen yet (State.OOMKilled for the Engine API, the events logged so far
 * for docker-cli), waits for it: the Engine API backends poll and stop at the event, docker-cli
 * waits all of it (a program that SIGKILLs itself pays 3 s). */
#define DOCK_OOM_EVENT_MS 3000L

/* What the libdock plugins honour of a spec (brig-backend.h). */
#define DOCK_FEATURES                                                                  \
	(BRIG_FEATURE_SECCOMP_PROFILE | BRIG_FEATURE_CANCEL | BRIG_FEATURE_MOUNTS |    \
	 BRIG_FEATURE_MASKED_PATHS | BRIG_FEATURE_IMAGE_ID | BRIG_FEATURE_WORKSPACES | \
	 BRIG_FEATURE_NETWORKS)

struct dock_response;
/* One request on the negotiated engine: path is "/v<api>" + the formatted rest. */
int dock_engine_request(const char *method, long timeout_ms, const char *json,
			struct dock_response *resp, brig_error **err, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Once per plugin, from its entry point: remember the host, initialise libcurl. */
void dock_init(const brig_host_services *host);
/* The whole entry point of a libdock plugin: check the host's ABI, dock_init, hand out table. */
const brig_backend *dock_entry(uint32_t host_abi_major, const brig_host_services *host,
			       const brig_backend *table);

/* The engine as negotiated (cached per socket, thread-safe). */
typedef struct dock_engine {
	char *socket;
	char api[16];     /* the version used in paths, "1.41" */
	char version[96]; /* the engine's version string; "" until dock_engine_version() */
} dock_engine;

void dock_engine_free(dock_engine *e);
/* Negotiate (GET /_ping; GET /version only when needed) or copy the cached result. */
int dock_engine_get(dock_engine *out, brig_error **err);
/* Fill e->version (GET /version, once per process; "unknown" if it fails). */
void dock_engine_version(dock_engine *e);

/* What GET /info says of one OCI runtime. */
typedef struct dock_runtime {
	bool present;    /* registered with the engine */
	strbuf names;    /* every registered runtime: "runc, runsc, ..." */
	strbuf identity; /* when present: the engine's ID and the runtime's entry as JSON (path,
			  * runtimeArgs), what a cached probe of it is keyed on */
	char *path;      /* when present: the binary its entry names, NULL if none */
} dock_runtime;

/* GET /info .Runtimes: fills *rt (free it with dock_runtime_free, whatever the result). */
int dock_runtime_lookup(const char *runtime, dock_runtime *rt, brig_error **err);
void dock_runtime_free(dock_runtime *rt);

/* The engine part of every probe: reachable, API negotiated, version written into info.
 * 0, or -1 with info->reason (and info->transient) set: the engine is not usable now. */
int dock_probe_engine(brig_probe_info *info, dock_engine *eng);

/* Hooks, parametrised by the OCI runtime a plugin stands for. */
int dock_probe(const brig_probe_request *req, brig_probe_info *info, brig_error **err);
int dock_explain(const char *backend, const brig_spec *spec, char **out, brig_error **err);
/* What dock_start_detached does with the spec, for humans. */
int dock_explain_detached(const char *backend, const brig_spec *spec, char **out, brig_error **err);
int dock_run(const brig_spec *spec, const brig_run_control *ctl, brig_outcome *out,
	     brig_error **err);
int dock_remove(const char *name, brig_error **err);
int dock_image_id(const char *image, char *id, size_t id_len, brig_error **err);
int dock_image_inspect(const char *image, brig_image_info *info, brig_error **err);
/* The image_id hook of a plugin, answered by its image_inspect hook. */
typedef int (*dock_inspect_fn)(const char *image, brig_image_info *info, brig_error **err);
int dock_image_id_via(dock_inspect_fn inspect, const char *image, char *id, size_t id_len,
		      brig_error **err);
/* One image as GET /images/{name}/json and `docker image inspect` describe it, into *info (as
 * far as its struct_size reaches): 0, or -1 when it has no image ID. */
int dock_image_parse(json_object *o, brig_image_info *info);
int dock_list_labelled(const char *label, char ***names, char ***owners, brig_error **err);
/* Prepared containers for the host's warm pool (dock_pool.c). */
int dock_prepare(const brig_spec *spec, void **handle, brig_error **err);
int dock_run_prepared(void *handle, const brig_spec *spec, const brig_run_control *ctl,
		      brig_outcome *out, brig_error **err);
void dock_discard(void *handle);
/* Workspaces: volumes and detached holders (dock.c). */
int dock_volume_create(const char *name, char *const *driver_opts, char *const *labels,
		       brig_error **err);
int dock_volume_remove(const char *name, brig_error **err);
int dock_start_detached(const brig_spec *spec, brig_error **err);
int dock_container_state(const char *name, int *state, brig_error **err);
/* claim_spare (dock.c): spares carry DOCK_LABEL_SPARE_UNTIL (s since the epoch). */
#define DOCK_LABEL_SPARE_UNTIL "brig.spare-until"
int dock_claim_spare(const char *label, long long now, const char *name, int *count,
		     brig_error **err);
/* container_state's answer (1, 2 or 3) from the engine's State.Status and Created (RFC 3339):
 * 3 while a container created less than DOCK_STARTING_S ago was never started. */
#define DOCK_STARTING_S 60
int dock_state_of(const char *status, const char *created, bool running);
/* The egress proxies (dock_egress.c). */
int dock_egress_ensure(const brig_egress *e, brig_error **err);
int dock_egress_gc(int idle_seconds, int *removed, brig_error **err);
/* At a box's start, before its program has a byte of code: is the proxy of `e` running (1:
 * *instance is "ID@StartedAt", malloc'ed; another value at the end means it was restarted or
 * replaced in between), gone or stopped (0), or cannot the engine tell (-1)?  When running, a
 * request of the host's goes into its log first, naming *mark (malloc'ed): the box's name and
 * random digits the box never sees, so that no request of the box's can pass for it.  With
 * `health` (a warm box's hand-over: nothing checked the proxy for this call), first the health
 * check dock_egress_ensure makes (a CONNECT through both of its ports).  1 only when all are
 * done. */
int dock_egress_begin(const brig_egress *e, const char *name, bool health, char **instance,
		      char **mark);
/* At the box's end: the proxy's access log lines whose client is `addr`, logged since
 * since_wall_ms (ms since the epoch), after the begin `mark` and before an end mark of the
 * host's, "\n"-terminated ("" when none).  NULL when there was no begin mark, when the log
 * cannot be read to the end mark, or when it no longer holds the begin mark (it rotated past
 * the box's start: lines of the box's may be lost); then *why (malloc'ed) says why.  *running
 * and *instance as dock_egress_begin's, from the same look at the proxy. */
char *dock_egress_log(const brig_egress *e, const char *addr, int64_t since_wall_ms,
		      const char *name, const char *mark, int *running, char **instance,
		      char **why);

/* A Docker container name ([A-Za-z0-9][A-Za-z0-9_.-]*): safe in a URL path as it is. */
bool dock_valid_name(const char *s);
/* The `filters` query value of the list and events endpoints, URL-encoded: kv holds key, value
 * pairs up to a NULL key, each becomes {"key":["value"]}.  Caller frees. */
char *dock_filters(const char *const *kv);

/* The create body for a spec (for run, explain and the CLI/API parity test).  `full_seccomp`
 * false abbreviates the seccomp profile text for humans. */
json_object *dock_create_body(const brig_spec *spec, bool full_seccomp);
/* The same for start_detached: nothing attached, no stdin. */
json_object *dock_detached_body(const brig_spec *spec, bool full_seccomp);

#endif
