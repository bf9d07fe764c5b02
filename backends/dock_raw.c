/* dock_raw.c - the two exchanges with dockerd that libcurl cannot make, on a plain AF_UNIX
 * socket: the hijacked attach (after the 101 the connection is a raw bidirectional stream, and
 * the program's stdin EOF needs shutdown(SHUT_WR), which libcurl lacks) and the kill whose
 * answer is read while the output stream is still being drained (dock_send /
 * dock_answer_read: dockerd answers a kill only once the box stopped, and it cannot stop while
 * its output is not read).  Nothing else speaks HTTP by hand.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "dock_http.h"
#include "plugin_host.h"

/* ---- answer header blocks ----------------------------------------------------------------- */

void dock_head_init(dock_head *h)
{
	sb_init(&h->raw);
	h->status = 0;
	h->content_length = -1;
	h->complete = false;
	h->chunked = false;
	h->api_version[0] = '\0';
}

void dock_head_free(dock_head *h)
{
	sb_free(&h->raw);
}

/* "HTTP/1.x NNN reason" - anything else is not an HTTP answer. */
static int parse_status_line(const char *s, int *status)
{
	if (strncmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ')
		return -1;
	for (int i = 9; i < 12; i++)
		if (!isdigit((unsigned char)s[i]))
			return -1;
	if (s[12] != ' ' && s[12] != '\r')
		return -1;
	*status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
	return *status >= 100 ? 0 : -1;
}

static int parse_head(dock_head *h)
{
	const char *s = h->raw.data, *end = s + h->raw.len;
	if (memchr(s, '\0', h->raw.len) || parse_status_line(s, &h->status) < 0)
		return -1;
	for (const char *line = strstr(s, "\r\n") + 2; line < end;) {
		const char *eol = strstr(line, "\r\n");
		char val[32];
		size_t n = (size_t)(eol - line);
		if (dock_header_value(line, n, "Content-Length", val, sizeof val) &&
		    !parse_long(val, 0, LONG_MAX, &h->content_length))
			return -1;
		if (dock_header_value(line, n, "Transfer-Encoding", val, sizeof val))
			h->chunked = strcasecmp(val, "chunked") == 0;
		dock_header_value(line, n, "Api-Version", h->api_version, sizeof h->api_version);
		line = eol + 2;
	}
	return 0;
}

int dock_head_feed(dock_head *h, const void *data, size_t n, size_t *used)
{
	*used = 0;
	if (h->complete)
		return 1;
	size_t old = h->raw.len;
	sb_append(&h->raw, data, n < DOCK_HEAD_MAX - old ? n : DOCK_HEAD_MAX - old);
	size_t from = old > 3 ? old - 3 : 0; /* "\r\n\r\n" may straddle two chunks */
	const char *end = memmem(h->raw.data + from, h->raw.len - from, "\r\n\r\n", 4);
	if (!end)
		return h->raw.len >= DOCK_HEAD_MAX ? -1 : 0;
	size_t hlen = (size_t)(end - h->raw.data) + 4;
	*used = hlen - old;
	h->raw.len = hlen;
	h->raw.data[hlen] = '\0';
	h->complete = true;
	return parse_head(h) < 0 ? -1 : 1;
}

/* ---- connections ------------------------------------------------------------------------- */

/* poll one fd until the monotonic deadline: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -1 : r;
	}
}

/* Blocking connect bounded by SO_SNDTIMEO (a unix connect only blocks on a full backlog), then
 * non-blocking for the rest. */
static int hijack_connect(const char *sock, int64_t deadline, int *out, brig_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(sock);
	if (n >= sizeof sa.sun_path)
		return plugin_fail(err, BRIG_E_SANDBOX, 0, "socket path too long: %s", sock);
	memcpy(sa.sun_path, sock, n);
	cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return plugin_fail(err, BRIG_E_SYSTEM, errno, "socket(AF_UNIX)");
	int64_t left = deadline - now_ms();
	if (left < 1)
		left = 1;
	struct timeval tv = { .tv_sec = left / 1000, .tv_usec = (left % 1000) * 1000 };
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return dock_connect_fail(sock, errno, err);
	if (set_nonblock(fd, true) < 0)
		return plugin_fail(err, BRIG_E_SYSTEM, errno, "fcntl(O_NONBLOCK)");
	*out = steal_fd(&fd);
	return 0;
}

/* Write all of buf on a non-blocking socket: 0, -ETIMEDOUT or -errno. */
static int send_all(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w >= 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		int r = wait_fd(fd, POLLOUT, deadline);
		if (r <= 0)
			return r == 0 ? -ETIMEDOUT : -errno;
	}
	return 0;
}

/* One recv() bounded by the deadline: bytes, 0 at EOF, -ETIMEDOUT or -errno. */
static ssize_t recv_some(int fd, char *buf, size_t n, int64_t deadline)
{
	for (;;) {
		int r = wait_fd(fd, POLLIN, deadline);
		if (r <= 0)
			return r == 0 ? -ETIMEDOUT : -errno;
		ssize_t got = recv(fd, buf, n, 0);
		if (got >= 0)
			return got;
		if (errno != EINTR && errno != EAGAIN)
			return -errno;
	}
}

static int hijack_io_fail(const char *path, ssize_t r, brig_error **err)
{
	if (r == -ETIMEDOUT)
		return plugin_fail(err, BRIG_E_SANDBOX, 0, "dockerd did not answer POST %s in time",
				   path);
	if (r == 0)
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "dockerd closed the connection before answering POST %s", path);
	return plugin_fail(err, BRIG_E_SANDBOX, (int)-r, "POST %s", path);
}

/* Read the response header block; what follows it goes into `rest`. */
static int read_head(int fd, const char *path, int64_t deadline, dock_head *h, strbuf *rest,
		     brig_error **err)
{
	char buf[4096];
	for (;;) {
		ssize_t n = recv_some(fd, buf, sizeof buf, deadline);
		if (n <= 0)
			return hijack_io_fail(path, n, err);
		size_t used = 0;
		int st = dock_head_feed(h, buf, (size_t)n, &used);
		if (st < 0) {
			cleanup_free char *txt =
				dock_sanitize(h->raw.data, strcspn(h->raw.data, "\r\n"));
			return plugin_fail(err, BRIG_E_SANDBOX, 0,
					   "dockerd sent a malformed answer to POST %s: \"%s\"",
					   path, txt);
		}
		if (st == 1) {
			sb_append(rest, buf + used, (size_t)n - used);
			return 0;
		}
	}
}

/* A refused attach: collect the (short) error body for the message. */
static int hijack_refused(int fd, const char *path, const dock_head *h, strbuf *body,
			  int64_t deadline, brig_error **err)
{
	char buf[1024];
	int64_t until = now_ms() + 1000 < deadline ? now_ms() + 1000 : deadline;
	while (body->len < 4096 &&
	       (h->content_length < 0 || body->len < (size_t)h->content_length)) {
		ssize_t n = recv_some(fd, buf, sizeof buf, until);
		if (n <= 0)
			break;
		sb_append(body, buf, (size_t)n);
	}
	cleanup_free char *txt = dock_error_text_of(body->data, body->len);
	return plugin_fail(err, BRIG_E_SANDBOX, 0, "POST %s: HTTP %d: %s", path, h->status, txt);
}

/* Connect and write a body-less request; *fd_out is then non-blocking and close-on-exec. */
static int send_request(const char *sock, const char *method, const char *path, const char *headers,
			int64_t deadline_ms, int *fd_out, brig_error **err)
{
	cleanup_close int fd = -1;
	int r = hijack_connect(sock, deadline_ms, &fd, err);
	if (r < 0)
		return r;
	cleanup_free char *req = xasprintf("%s %s HTTP/1.1\r\nHost: docker\r\n"
					   "Content-Length: 0\r\n%s\r\n",
					   method, path, headers);
	ssize_t w = send_all(fd, req, strlen(req), deadline_ms);
	if (w < 0)
		return hijack_io_fail(path, w, err);
	*fd_out = steal_fd(&fd);
	return 0;
}

int dock_hijack(const char *sock, const char *path, int64_t deadline_ms, int *fd_out, strbuf *early,
		brig_error **err)
{
	cleanup_close int fd = -1;
	int r = send_request(sock, "POST", path,
			     "Content-Type: text/plain\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n",
			     deadline_ms, &fd, err);
	if (r < 0)
		return r;
	dock_head h;
	dock_head_init(&h);
	strbuf rest;
	sb_init(&rest);
	r = read_head(fd, path, deadline_ms, &h, &rest, err);
	if (r == 0 && h.status != 101 && h.status != 200)
		r = hijack_refused(fd, path, &h, &rest, deadline_ms, err);
	if (r == 0) {
		sb_append(early, rest.data, rest.len);
		*fd_out = steal_fd(&fd);
	}
	dock_head_free(&h);
	sb_free(&rest);
	return r;
}

int dock_send(const char *sock, const char *method, const char *path, int64_t deadline_ms,
	      int *fd_out, brig_error **err)
{
	return send_request(sock, method, path, "Connection: close\r\n", deadline_ms, fd_out, err);
}

int dock_answer_read(int fd, dock_head *h, const char *what, brig_error **err)
{
	char buf[1024];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return plugin_fail(err, BRIG_E_SANDBOX, n < 0 ? errno : 0,
					   "%s: dockerd closed the connection before answering",
					   what);
		size_t used = 0;
		int r = dock_head_feed(h, buf, (size_t)n, &used);
		if (r < 0)
			return plugin_fail(err, BRIG_E_SANDBOX, 0,
					   "%s: dockerd sent a malformed answer", what);
		if (r == 1)
			return 1; /* the body, if any, does not matter */
	}
}
