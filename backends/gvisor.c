/* gvisor.c - the gVisor backend: libdock's Engine API flow (the same code as docker-api) with
 * every box run by gVisor's runsc as registered in dockerd - the runtime the host asks for, the
 * policy's gvisor_runtime (default runsc-seccomp: runsc --network=none --oci-seccomp; without
 * --oci-seccomp runsc ignores the box's seccomp profile).
 *
 * Nothing gVisor-specific is decided here: the spec arrives final (the exit-status wrapper, the
 * translated pids limit, the environment: policy/spec.c), and the host proves the isolation
 * claim with a smoke box before it uses this backend (src/probe.c).  The probe reports what the
 * runtime is (its registration and binary) so that a passed proof can be remembered.
 */
#include "config.h"

#include "brig-backend.h"
#include "dock.h"

static int gv_explain(const brig_spec *spec, char **out, brig_error **err)
{
	return dock_explain("gvisor", spec, out, err);
}

static int gv_explain_detached(const brig_spec *spec, char **out, brig_error **err)
{
	return dock_explain_detached("gvisor", spec, out, err);
}

static const brig_backend gvisor_backend = {
	.abi_major = BRIG_BACKEND_ABI_MAJOR,
	.abi_minor = BRIG_BACKEND_ABI_MINOR,
	.struct_size = sizeof(brig_backend),
	.name = "gvisor",
	.description = "Docker Engine API with gVisor (runsc --oci-seccomp): a user-space kernel "
		       "between the program and the host",
	.isolation = BRIG_ISOLATION_GVISOR,
	.speed_rank = 10,
	.features = DOCK_FEATURES,
	.default_runtime = "runsc-seccomp",
	.probe = dock_probe,
	.explain = gv_explain,
	.explain_detached = gv_explain_detached,
	.run = dock_run,
	.remove = dock_remove,
	.image_id = dock_image_id,
	.list_labelled = dock_list_labelled,
	.prepare = dock_prepare,
	.run_prepared = dock_run_prepared,
	.discard = dock_discard,
	.image_inspect = dock_image_inspect,
	.volume_create = dock_volume_create,
	.volume_remove = dock_volume_remove,
	.start_detached = dock_start_detached,
	.container_state = dock_container_state,
	.claim_spare = dock_claim_spare,
	.egress_ensure = dock_egress_ensure,
	.egress_gc = dock_egress_gc,
};

__attribute__((visibility("default"))) const brig_backend *
brig_backend_entry(uint32_t host_abi_major, const brig_host_services *host);

const brig_backend *brig_backend_entry(uint32_t host_abi_major, const brig_host_services *host)
{
	return dock_entry(host_abi_major, host, &gvisor_backend);
}
