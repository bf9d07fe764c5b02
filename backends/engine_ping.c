/* engine_ping.c - GET /_ping on the engine's unix socket (see engine_ping.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine_ping.h"
#include "util.h"

const char *engine_socket_path(const char **why)
{
	const char *h = getenv("DOCKER_HOST");
	*why = NULL;
	if (!h || !*h)
		return "/var/run/docker.sock";
	if (strncmp(h, "unix://", 7) == 0 && h[7] == '/')
		return h + 7;
	*why = "DOCKER_HOST is not a unix:// socket path";
	return NULL;
}

static int connect_unix(const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path)
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* Value of header `name` in the response head, copied into out. */
static void header_value(const char *head, const char *name, char *out, size_t len)
{
	size_t n = strlen(name);
	out[0] = '\0';
	for (const char *l = strstr(head, "\r\n"); l; l = strstr(l + 2, "\r\n")) {
		const char *h = l + 2;
		if (strncasecmp(h, name, n) == 0 && h[n] == ':') {
			h += n + 1;
			while (*h == ' ')
				h++;
			size_t v = strcspn(h, "\r\n");
			snprintf(out, len, "%.*s", (int)v, h);
			return;
		}
	}
}

int engine_ping(const char *sock, int timeout_ms, char *version, size_t vlen, char *reason,
		size_t rlen)
{
	int fd = connect_unix(sock, timeout_ms);
	if (fd < 0) {
		if (fd == -EACCES || fd == -EPERM)
			snprintf(reason, rlen,
				 "permission denied on %s (run as root or join the docker group)",
				 sock);
		else
			snprintf(reason, rlen,
				 "dockerd is not reachable at %s: %s (start it: "
				 "scripts/setup-host)",
				 sock, strerror(-fd));
		return fd;
	}
	static const char req[] =
		"GET /_ping HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n";
	char buf[2048];
	size_t got = 0;
	int r = write_all(fd, req, sizeof req - 1) < 0 ? -errno : 0;
	while (r == 0 && got < sizeof buf - 1) {
		ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	if (r == 0 && strncmp(buf, "HTTP/1.1 200", 12) != 0 &&
	    strncmp(buf, "HTTP/1.0 200", 12) != 0)
		r = -EPROTO;
	if (r < 0) {
		snprintf(reason, rlen, "dockerd at %s did not answer /_ping: %s", sock,
			 r == -EPROTO ? "unexpected response" : strerror(-r));
		return r;
	}
	char server[128], api[32];
	header_value(buf, "Server", server, sizeof server);
	header_value(buf, "Api-Version", api, sizeof api);
	/* "Server: Docker/20.10.24+dfsg1 (linux)" -> "20.10.24+dfsg1", as the API backend says it
	 */
	const char *v = strncmp(server, "Docker/", 7) == 0 ? server + 7 : server;
	size_t vl = strcspn(v, " ");
	snprintf(version, vlen, "%.*s (API %s)", (int)vl, vl ? v : "?", api[0] ? api : "?");
	return 0;
}
