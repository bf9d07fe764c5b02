/* dock_http.c - HTTP/1.1 to dockerd over its unix socket: every ordinary request goes through
 * the distribution's libcurl (CURLOPT_UNIX_SOCKET_PATH), each with a bounded timeout, HTTP
 * only, never a proxy from the environment.  The two exchanges libcurl cannot make are in
 * dock_raw.c; both share the socket path, the error texts and the answer struct here.
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
int dock_connect_fail(const char *sock, int e, brig_error **err)
{
	char buf[128];
	const char *hint = "is dockerd running? start it with scripts/setup-host";
	bool denied = e == EACCES || e == EPERM;
	if (denied)
		hint = "run brig as root or as a member of the docker group";
	int r = plugin_fail(err, BRIG_E_SANDBOX, 0, "cannot connect to dockerd at %s: %s (%s)",
			    sock, errstr(e, buf, sizeof buf), hint);
	return denied ? r : plugin_transient(err, r); /* dockerd may come up later */
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
char *dock_sanitize(const char *s, size_t n)
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

char *dock_error_text_of(const char *body, size_t len)
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
		text = dock_sanitize(json_object_get_string(msg),
				     (size_t)json_object_get_string_len(msg));
	json_object_put(o);
	if (tok)
		json_tokener_free(tok);
	return text ? text : dock_sanitize(body, len);
}

char *dock_error_text(const dock_response *resp)
{
	return dock_error_text_of(resp->body.data, resp->body.len);
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

/* Copy the trimmed value of header `name` from one raw header line, if it is that header. */
bool dock_header_value(const char *line, size_t n, const char *name, char *out, size_t outsz)
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

static size_t on_header(char *data, size_t size, size_t nmemb, void *user)
{
	dock_response *r = user;
	size_t n = size * nmemb;
	dock_header_value(data, n, "Api-Version", r->api_version, sizeof r->api_version);
	dock_header_value(data, n, "Server", r->server, sizeof r->server);
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
	/* HTTP on the engine's socket and nothing else: no other protocol even if a URL or a
	 * redirect asked for one, never a proxy from the environment */
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
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
		return dock_connect_fail(sock, (int)os_errno, err);
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		resp->timed_out = true;
		return plugin_transient(
			err, plugin_fail(err, BRIG_E_SANDBOX, 0,
					 "dockerd at %s did not answer %s %s within %ld ms", sock,
					 method, path, timeout_ms));
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
