/* docker-api.c - the Docker Engine API backend: dockerd over its unix socket, no docker CLI
 * process, runc.  All the work is in libdock (dock*.c), shared with the gvisor plugin; this file
 * is the plugin table. */
#include "config.h"

#include "brig-backend.h"
#include "dock.h"

static int api_explain(const brig_spec *spec, char **out, brig_error **err)
{
	return dock_explain("docker-api", spec, out, err);
}

static int api_explain_detached(const brig_spec *spec, char **out, brig_error **err)
{
	return dock_explain_detached("docker-api", spec, out, err);
}

static const brig_backend docker_api_backend = {
	.abi_major = BRIG_BACKEND_ABI_MAJOR,
	.abi_minor = BRIG_BACKEND_ABI_MINOR,
	.struct_size = sizeof(brig_backend),
	.name = "docker-api",
	.description = "Docker Engine API over the unix socket, runc",
	.isolation = BRIG_ISOLATION_CONTAINER,
	.speed_rank = 10,
	.features = DOCK_FEATURES,
	.default_runtime = "runc",
	.probe = dock_probe,
	.explain = api_explain,
	.explain_detached = api_explain_detached,
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
	return dock_entry(host_abi_major, host, &docker_api_backend);
}
