/* spec.h - the one stage that turns policy + request + runtime traits into the final box
 * (brig-spec.h), and turns what a backend observed back into a result.  Host-only. */
#ifndef BRIG_POLICY_SPEC_H
#define BRIG_POLICY_SPEC_H

#include <json-c/json.h>
#include <stdbool.h>

#include "brig-backend.h"
#include "policy.h"

/* What a box is built for: the OCI runtime that will run it and the isolation it provides.
 * Every runtime-specific decision is derived from these two here and nowhere else. */
typedef struct spec_target {
	const char *runtime; /* as registered in the engine: "runc", "runsc-seccomp" */
	int isolation;       /* brig_isolation */
	const char *init;    /* brig-init on the host (bind-mounted read-only as the box's PID 1) */
	const char *install; /* this installation's id (label brig.install): gc's scope, or NULL */
	const char *user;    /* the box's "UID:GID" leased for it (policy user "auto"), or NULL:
			      * the policy's fixed user */
	/* What the engine said of the box's image when the host looked the policy's reference up
	 * for this box (src/images.c), or NULL: not looked up, the box starts from the reference
	 * as it is (the engine resolves a pinned one by its content address) */
	const brig_image_info *image;
	const char *workspace; /* the box works in this workspace (its id), or NULL */
	/* The same for the policy's shell image, the image of a box's network holder (egress):
	 * its pin is checked and the holder starts from the ID; NULL: not looked up */
	const brig_image_info *holder_image;
} spec_target;

/* A workspace as the boxes see it: its volume (named from its id) at /workspace. */
#define SPEC_WS_VOLUME_PREFIX "brig-ws-"
#define SPEC_WS_HOLDER_PREFIX "brig-wsh-"
/* A box's network holder (egress) is named after it: the box's name + this */
#define SPEC_NET_HOLDER_SUFFIX "-net"
/* ...and ends by itself this long after its box's own deadline (brig removes it earlier) */
#define SPEC_NET_HOLDER_SLACK_S 60
/* Spare network holders (src/spare.c): claimable for SPEC_SPARE_CLAIM_S after their start, by
 * their SPEC_SPARE_LABEL=<key>; then still up for the policy's longest run. */
#define SPEC_SPARE_CLAIM_S 120
#define SPEC_SPARE_LABEL   "brig.spare"
#define SPEC_SPARE_SUFFIX  BRIG_SPARE_SUFFIX
#define SPEC_HOLDER_USER   "65534:65534"
#define SPEC_WS_PATH       "/workspace"
#define SPEC_WS_ID_HEX     32 /* 128 random bits */

/* Is `id` a workspace id as brig makes them (32 lowercase hex digits)? */
bool spec_ws_id_valid(const char *id);

/* Where brig-init appears in every box, and how much longer than the run's own limit the box
 * gives itself before brig-init ends it (brig kills it at the limit; the box's own clock only
 * matters when brig is gone). */
#define SPEC_INIT_PATH     "/.brig-init"
#define SPEC_BOX_GRACE_MS  3000
#define SPEC_HEADER_FORMAT "BRIG-DEADLINE %lld\n"

/* gVisor here runs with --network=none (scripts/setup-host registers runsc so): a box that
 * asks for the network cannot be honoured under it, and is refused rather than run without. */
#define SPEC_GVISOR_NO_NETWORK                                                                    \
	"network: true cannot be honoured under gVisor: runsc is registered with --network=none " \
	"here (scripts/setup-host), so the box would have no network; use isolation "             \
	"\"container\" (backend docker-api or docker-cli) for a networked box"

/* Build the final spec for one request.  Refuses (BRIG_E_REFUSED) input over max_input_bytes,
 * in REFUSE mode a timeout above max_timeout_seconds, and an image that no longer is the one the
 * policy pins (target->image, both IDs in the message); in CLAMP mode writes a notice into
 * *notice (malloc'ed) when it clamped. */
int spec_build(const brig_policy *p, const brig_request *req, brig_timeout_mode mode,
	       const spec_target *target, brig_spec **out, char **notice, brig_error **err);
void spec_free(brig_spec *spec);

/* The request-only refusals of spec_build (language, code size, timeout), so a front end can
 * refuse before probing any backend. */
int spec_check_request(const brig_policy *p, const brig_request *req, brig_timeout_mode mode,
		       brig_error **err);

/* Would a and b start the same container?  Everything but the box's name (and the wrapper's
 * marker, which is made from it), the code and the timeout.  The warm pool hands a run only a
 * container started with the same box. */
bool spec_same_box(const brig_spec *a, const brig_spec *b);

/* The engine's pids limit for a guest budget of `guest` processes: under gVisor the engine's
 * pids cgroup also counts the sandbox's own host threads (see spec.c). */
int64_t spec_engine_pids_limit(const brig_policy *p, int64_t guest, int isolation);

/* What a backend observed becomes the result: output (taken over from *o), flags, exit code
 * and the verdict, decided here for every backend; brig-init's line taken out and the
 * program held to its own output cap; an exit 2 under gVisor without brig-init's line
 * reported as the sandbox's failure.  Returns a static note for the result's notice (another
 * failure under gVisor without the line: the status is the box's), else NULL.  Identity
 * fields are the caller's. */
const char *spec_finish_outcome(const brig_spec *spec, brig_outcome *o, brig_result *res);
void outcome_clear(brig_outcome *o);

/* The smoke test that verifies a runtime really isolates (brig_probe_verify): the spec of a
 * small shell box built from an explicit probe policy derived from `p` (its shell image and
 * seccomp choice, small limits), whose program prints the kernel it runs on and its own
 * seccomp mode. */
int spec_build_probe(const brig_policy *p, const spec_target *target, brig_spec **out,
		     brig_error **err);

/* The spec as a JSON object, every field under its C name (the seccomp profile as its SHA-256
 * and size): `brig explain --json`, and the parity tests that compare it with the engine's view
 * of the running box and with the audit line. */
json_object *spec_to_json(const brig_spec *s);
/* A box's network holder made a spare one: named `name`, labelled brig=1, its installation,
 * brig.role=net-spare, SPEC_SPARE_LABEL=key, brig.spare-domain=domain and brig.spare-until=until
 * (no owner, no box), sleeping long enough for a run of the policy's longest timeout claimed
 * until then. */
void spec_holder_to_spare(brig_spec *h, const char *name, const char *key, const char *domain,
			  long long until, int max_timeout_s);

/* For `brig explain`: what the runtime traits changed in this box, as "# ..." lines ("" when
 * nothing).  Caller frees. */
char *spec_describe_traits(const brig_spec *s);

/* The box that holds a workspace's volume mounted (src/workspace.c): the policy's shell image,
 * `sleep` for the workspace's lifetime as its only process, the volume read-only, no network,
 * no capabilities, 16 MiB, under runc (it runs nothing of the agent's: see spec.c).  `user` is
 * the workspace's "UID:GID". */
int spec_build_holder(const brig_policy *p, const spec_target *target, const char *id,
		      int lifetime_seconds, brig_spec **out, brig_error **err);

/* A box of the workspace whose program is brig-init's file tool (src/init/files.c), argv
 * `tool` (NULL-terminated, after --workspace-tool) with `data` as its stdin: the workspace's
 * own box (target->workspace), its limits those of the policy, input and output sized for one
 * transfer of max_transfer_bytes. */
int spec_build_tool(const brig_policy *p, const spec_target *target, const char *const *tool,
		    const char *data, size_t data_len, brig_spec **out, brig_error **err);

/* Fresh "brig-" + 16 lowercase hex digits from getrandom(2). */
int spec_random_name(char *buf, size_t len);

#endif
