/* engine_ping.h - is the Docker engine answering?  One raw HTTP GET /_ping over its unix
 * socket: ~1 ms, where spawning `docker version` costs ~30 ms on every run. */
#ifndef BRIG_ENGINE_PING_H
#define BRIG_ENGINE_PING_H

#include <stddef.h>

/* The engine socket: DOCKER_HOST (unix://PATH) or /var/run/docker.sock.  NULL with *why set
 * when DOCKER_HOST names a scheme this probe cannot use. */
const char *engine_socket_path(const char **why);
/* 0 and "Docker/20.10.24 (API 1.41)" in version, or -errno with a reason (and how to fix it). */
int engine_ping(const char *sock, int timeout_ms, char *version, size_t vlen, char *reason,
		size_t rlen);

#endif
