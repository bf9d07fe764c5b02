/* dock_http.h - HTTP/1.1 to dockerd over its unix socket.
 *
 * Ordinary requests go through libcurl (CURLOPT_UNIX_SOCKET_PATH), each with a bounded timeout so
 * a hung or dead daemon becomes an error in bounded time.  The attach request is different: the
 * engine hijacks the connection into a raw bidirectional stream, which libcurl does not model, so
 * dock_hijack() makes that one request on a plain AF_UNIX socket (see dock_http.c for why).
 * Errors are BRIG_E_SANDBOX (or BRIG_E_UNAVAILABLE for a DOCKER_HOST we cannot use) with a
 * message that says what to do.
 */
#ifndef BRIG_DOCK_HTTP_H
#define BRIG_DOCK_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brig.h"
#include "util.h"

#define DOCK_DEFAULT_SOCKET "/var/run/docker.sock"
#define DOCK_BODY_MAX       ((size_t)8 << 20) /* largest answer we accept (GET /info, lists) */
#define DOCK_HEAD_MAX       16384             /* largest hijack response header block */

/* The engine's unix socket: DOCKER_HOST=unix:///path, or the default.  Another scheme is an
 * error that says so.  Caller frees. */
int dock_socket_path(char **out, brig_error **err);

typedef struct dock_response {
	long status;          /* HTTP status, 0 if none arrived */
	strbuf body;          /* capped at DOCK_BODY_MAX */
	char api_version[16]; /* Api-Version header, "" when absent */
	char server[96];      /* Server header ("Docker/20.10.24+dfsg1 (linux)"), "" when absent */
	bool timed_out;       /* the request hit its timeout (the error says so too) */
} dock_response;

void dock_response_init(dock_response *r);
void dock_response_free(dock_response *r);
static inline void cleanup_responsep(dock_response *r)
{
	dock_response_free(r);
}
#define cleanup_response __attribute__((cleanup(cleanup_responsep)))

/* One request: `method` "GET"/"POST"/"DELETE", `path` already URL-encoded, `json` body or NULL.
 * Returns 0 when an HTTP answer arrived (any status: the caller judges it), < 0 on transport
 * failure, timeout or an oversized answer. */
int dock_request(const char *sock, const char *method, const char *path, const char *json,
		 long timeout_ms, dock_response *resp, brig_error **err);

/* "cannot connect to dockerd at SOCK: why (hint)", transient unless access was denied. */
int dock_connect_fail(const char *sock, int e, brig_error **err);

/* If the header line `line` (n bytes) is `name`, copy its trimmed value into out: true. */
bool dock_header_value(const char *line, size_t n, const char *name, char *out, size_t outsz);
/* A printable, single-line, capped copy of engine text for a message (malloc'ed). */
char *dock_sanitize(const char *s, size_t n);
/* The engine's error text from an answer body: its JSON "message", else the trimmed body. */
char *dock_error_text_of(const char *body, size_t len);

/* The engine's error text from an answer: the JSON "message", else the trimmed body (capped).
 * Caller frees. */
char *dock_error_text(const dock_response *resp);

/* ---- dock_raw.c: the hijacked attach and the kill (plain AF_UNIX, not libcurl) ---- */

/* Incremental parser of a response header block, exactly up to "\r\n\r\n". */
typedef struct dock_head {
	strbuf raw;
	int status;          /* valid once complete */
	long content_length; /* -1 when absent */
	bool complete;
	bool chunked;         /* Transfer-Encoding: chunked */
	char api_version[16]; /* Api-Version header, "" when absent */
} dock_head;

void dock_head_init(dock_head *h);
void dock_head_free(dock_head *h);
/* Feed a chunk.  Returns 1 when the block is complete (*used = bytes of THIS chunk that belonged
 * to it; the rest are already stream data), 0 when more is needed, -1 when malformed or larger
 * than DOCK_HEAD_MAX. */
int dock_head_feed(dock_head *h, const void *data, size_t n, size_t *used);

/* POST `path` with Connection: Upgrade on a fresh socket and wait (until the monotonic
 * `deadline_ms`) for 101 or 200.  On success *fd_out is the raw stream (non-blocking,
 * close-on-exec) and `early` holds the stream bytes that arrived with the header block. */
int dock_hijack(const char *sock, const char *path, int64_t deadline_ms, int *fd_out, strbuf *early,
		brig_error **err);

/* Write a body-less request on a fresh socket without waiting for the answer: the caller polls
 * *fd_out (non-blocking, close-on-exec) and reads the answer with dock_answer_read().  For kill,
 * which dockerd answers only once the container has stopped - and a container cannot stop
 * while nobody drains its output. */
int dock_send(const char *sock, const char *method, const char *path, int64_t deadline_ms,
	      int *fd_out, brig_error **err);
/* Read what has arrived of the answer: 1 when the header block is complete (h->status), 0 when
 * more is to come, < 0 when the peer closed early or sent garbage. */
int dock_answer_read(int fd, dock_head *h, const char *what, brig_error **err);

#endif
