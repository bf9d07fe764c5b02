/* docker-api.c - the Docker Engine API backend: dockerd over its unix socket, no docker CLI
 * process.  All the work is in dock*.c, shared with the gvisor plugin; this file is
 * the plugin table and the runc flavour of probe. */
#include "config.h"

#include "brig-backend.h"
#include "dock.h"

static int api_probe(brig_probe_info *info, brig_error **err)
{
	return dock_probe("runc", info, err);
}

static int api_explain(const brig_spec *spec, char **out, brig_error **err)
{
	return dock_explain("docker-api", spec, out, err);
}

static const brig_backend docker_api_backend = {
	.abi_major = BRIG_BACKEND_ABI_MAJOR,
	.abi_minor = BRIG_BACKEND_ABI_MINOR,
	.struct_size = sizeof(brig_backend),
	.name = "docker-api",
	.description = "Docker Engine API over the unix socket, runc",
	.isolation = BRIG_ISOLATION_CONTAINER,
	.speed_rank = 10,
	.features = BRIG_FEATURE_SECCOMP_PROFILE | BRIG_FEATURE_CANCEL,
	.probe = api_probe,
	.explain = api_explain,
	.run = dock_run,
	.remove = dock_remove,
	.image_exists = dock_image_exists,
	.list_labelled = dock_list_labelled,
	.prepare = dock_prepare,
	.run_prepared = dock_run_prepared,
	.discard = dock_discard,
};

__attribute__((visibility("default"))) const brig_backend *
brig_backend_entry(uint32_t host_abi_major, const brig_host_services *host);

const brig_backend *brig_backend_entry(uint32_t host_abi_major, const brig_host_services *host)
{
	return dock_entry(host_abi_major, host, &docker_api_backend);
}
