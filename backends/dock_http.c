/* dock_http.c - HTTP/1.1 to dockerd over its unix socket (see dock_http.h).
 *
 * Ordinary requests go through libcurl (CURLOPT_UNIX_SOCKET_PATH): a well-kept HTTP client
 * rather than a hand-written one, each request with a bounded timeout.  Two exchanges do not fit
 * libcurl and are made on a plain AF_UNIX socket here: the hijacked attach (after the 101 the
 * connection is a raw stream, and stdin EOF needs shutdown(SHUT_WR), which libcurl lacks) and
 * the kill whose answer is read while the output stream is still drained (dock_send /
 * dock_answer_read).  libcurl's cost in memory (its dependency chain mapped into brig mcp,
 * ~6 MiB RSS measured in issue 7) is accepted: HTTP via libcurl is the project's rule.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "dock_http.h"
#include "plugin_host.h"

#define CONNECT_TIMEOUT_MS 3000L
#define ERROR_TEXT_MAX     400

static const char *errstr(int e, char *buf, size_t n)
{
	return strerror_r(e, buf, n); /* GNU variant: returns the text */
}

int dock_socket_path(char **out, brig_error **err)
{
#ifdef HAVE_SECURE_GETENV
	const char *h = secure_getenv("DOCKER_HOST");
#else
	const char *h = getenv("DOCKER_HOST");
#endif
	if (!h || !*h) {
		*out = xstrdup(DOCK_DEFAULT_SOCKET);
		return 0;
	}
	if (strncmp(h, "unix://", 7) != 0)
		return plugin_fail(
			err, BRIG_E_UNAVAILABLE, 0,
			"DOCKER_HOST=%s is not supported by the docker-api backend: only "
			"unix:///path/to/docker.sock is (unset DOCKER_HOST for %s)",
			h, DOCK_DEFAULT_SOCKET);
	const char *p = h + 7;
	if (*p != '/' || strlen(p) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return plugin_fail(
			err, BRIG_E_UNAVAILABLE, 0,
			"DOCKER_HOST=%s: the socket path must be absolute and shorter than "
			"108 bytes",
			h);
	*out = xstrdup(p);
	return 0;
}

/* "cannot connect" with the likely cause and the fix. */
static int connect_fail(const char *sock, int e, brig_error **err)
{
	char buf[128];
	const char *hint = "is dockerd running? start it with scripts/setup-host";
	if (e == EACCES || e == EPERM)
		hint = "run brig as root or as a member of the docker group";
	return plugin_fail(err, BRIG_E_SANDBOX, 0, "cannot connect to dockerd at %s: %s (%s)", sock,
			   errstr(e, buf, sizeof buf), hint);
}

void dock_response_init(dock_response *r)
{
	r->status = 0;
	sb_init(&r->body);
	r->api_version[0] = '\0';
	r->timed_out = false;
}

void dock_response_free(dock_response *r)
{
	sb_free(&r->body);
}

/* Printable, single-line, capped copy of engine text for an error message. */
static char *sanitize(const char *s, size_t n)
{
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n > ERROR_TEXT_MAX)
		n = ERROR_TEXT_MAX;
	char *out = xstrndup(s, n);
	for (char *p = out; *p; p++)
		if (!isprint((unsigned char)*p))
			*p = ' ';
	return out;
}

static char *error_text_from(const char *body, size_t len)
{
	if (!body || len == 0)
		return xstrdup("(empty answer)");
	json_tokener *tok = json_tokener_new();
	json_object *o =
		tok ? json_tokener_parse_ex(tok, body, (int)(len < INT32_MAX ? len : 0)) : NULL;
	json_object *msg = NULL;
	char *text = NULL;
	if (o && json_object_object_get_ex(o, "message", &msg) &&
	    json_object_is_type(msg, json_type_string))
		text = sanitize(json_object_get_string(msg),
				(size_t)json_object_get_string_len(msg));
	json_object_put(o);
	if (tok)
		json_tokener_free(tok);
	return text ? text : sanitize(body, len);
}

char *dock_error_text(const dock_response *resp)
{
	return error_text_from(resp->body.data, resp->body.len);
}

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

/* Copy the trimmed value of header `name` from one raw header line, if it is that header. */
static bool header_value(const char *line, size_t n, const char *name, char *out, size_t outsz)
{
	size_t nl = strlen(name);
	if (n <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return false;
	const char *v = line + nl + 1, *end = line + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && isspace((unsigned char)end[-1]))
		end--;
	size_t len = (size_t)(end - v) < outsz - 1 ? (size_t)(end - v) : outsz - 1;
	memcpy(out, v, len);
	out[len] = '\0';
	return true;
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
		if (header_value(line, n, "Content-Length", val, sizeof val) &&
		    !parse_long(val, 0, LONG_MAX, &h->content_length))
			return -1;
		if (header_value(line, n, "Transfer-Encoding", val, sizeof val))
			h->chunked = strcasecmp(val, "chunked") == 0;
		header_value(line, n, "Api-Version", h->api_version, sizeof h->api_version);
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
		return connect_fail(sock, errno, err);
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
				sanitize(h->raw.data, strcspn(h->raw.data, "\r\n"));
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
	cleanup_free char *txt = error_text_from(body->data, body->len);
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

/* ---- ordinary requests (libcurl) ---------------------------------------------------------- */

static inline void cleanup_curlp(CURL **h)
{
	if (*h)
		curl_easy_cleanup(*h);
}
#define cleanup_curl __attribute__((cleanup(cleanup_curlp)))
static inline void cleanup_slistp(struct curl_slist **l)
{
	curl_slist_free_all(*l);
}
#define cleanup_slist __attribute__((cleanup(cleanup_slistp)))

/* libcurl does not set close-on-exec on its sockets; other threads may fork+exec. */
static curl_socket_t open_cloexec(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
	(void)clientp;
	(void)purpose;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

typedef struct body_sink {
	strbuf *sb;
	bool too_large;
} body_sink;

static size_t on_body(char *data, size_t size, size_t nmemb, void *user)
{
	body_sink *s = user;
	size_t n = size * nmemb;
	if (s->sb->len + n > DOCK_BODY_MAX) {
		s->too_large = true;
		return 0; /* aborts the transfer */
	}
	sb_append(s->sb, data, n);
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *user)
{
	dock_response *r = user;
	size_t n = size * nmemb;
	header_value(data, n, "Api-Version", r->api_version, sizeof r->api_version);
	header_value(data, n, "Server", r->server, sizeof r->server);
	return n;
}

static void set_method(CURL *h, const char *method, const char *json)
{
	if (strcmp(method, "GET") == 0) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
		return;
	}
	if (strcmp(method, "POST") != 0)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (json || strcmp(method, "POST") == 0) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, json ? json : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(json ? strlen(json) : 0));
	}
}

/* A configured easy handle; NULL only if libcurl cannot allocate one. */
static CURL *request_handle(const char *sock, const char *url, long timeout_ms,
			    struct curl_slist *hdrs, char *errbuf)
{
	CURL *h = curl_easy_init();
	if (!h)
		return NULL;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock);
	curl_easy_setopt(h, CURLOPT_PROXY, "");    /* never a proxy from the environment */
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM */
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
			 timeout_ms < CONNECT_TIMEOUT_MS ? timeout_ms : CONNECT_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_cloexec);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	/* The engine's answers and brig's bodies are small: libcurl's smallest buffers (16 KiB,
	 * not the 64 KiB upload default) keep several requests in flight off the heap's peak. */
	curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
	curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 16384L);
	return h;
}

/* Turn a failed transfer into an error that says which request and why. */
static int transfer_fail(CURL *h, CURLcode rc, const char *sock, const char *method,
			 const char *path, long timeout_ms, const body_sink *sink,
			 const char *detail, dock_response *resp, brig_error **err)
{
	long os_errno = 0;
	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
	if (rc == CURLE_COULDNT_CONNECT && os_errno)
		return connect_fail(sock, (int)os_errno, err);
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		resp->timed_out = true;
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "dockerd at %s did not answer %s %s within %ld ms", sock, method,
				   path, timeout_ms);
	}
	if (sink->too_large)
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "dockerd's answer to %s %s is larger than %zu bytes", method,
				   path, DOCK_BODY_MAX);
	if (!*detail)
		detail = curl_easy_strerror(rc);
	if (rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_WEIRD_SERVER_REPLY)
		return plugin_fail(
			err, BRIG_E_SANDBOX, 0,
			"%s does not answer like dockerd: malformed answer to %s %s (%s)", sock,
			method, path, detail);
	return plugin_fail(err, BRIG_E_SANDBOX, 0, "%s %s via %s failed: %s", method, path, sock,
			   detail);
}

int dock_request(const char *sock, const char *method, const char *path, const char *json,
		 long timeout_ms, dock_response *resp, brig_error **err)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	cleanup_free char *url = xasprintf("http://docker%s", path);
	cleanup_slist struct curl_slist *hdrs = NULL;
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "Expect:"); /* no 100-continue round trip for big bodies */
	cleanup_curl CURL *h = hdrs ? request_handle(sock, url, timeout_ms, hdrs, errbuf) : NULL;
	if (!h)
		return plugin_fail(err, BRIG_E_SYSTEM, 0, "libcurl: cannot create a handle");

	body_sink sink = { &resp->body, false };
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, resp);
	set_method(h, method, json);

	CURLcode rc = curl_easy_perform(h);
	if (rc != CURLE_OK)
		return transfer_fail(h, rc, sock, method, path, timeout_ms, &sink, errbuf, resp,
				     err);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
	return 0;
}
