/* test_http.c - HTTP to dockerd without dockerd: the hijack response parser fed in pieces, and
 * dock_hijack/dock_request against a scripted unix-socket server in a thread (headers split
 * across reads, stream bytes right after the header block, 101 vs 200, error statuses, a
 * malformed status line, a peer that closes or never answers). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cunit_main.h"
#include "dock_http.h"
#include "plugin_host.h"

/* ---- the parser ---- */

static int feed_all(dock_head *h, const char *s, size_t len, size_t chunk, size_t *consumed)
{
	*consumed = 0;
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk, used = 0;
		int r = dock_head_feed(h, s + off, n, &used);
		if (r != 0) {
			*consumed = off + used;
			return r;
		}
	}
	return 0;
}

static const char upgraded[] =
	"HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
	"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n";

static void test_head_split_everywhere(void)
{
	char msg[256];
	size_t hl = strlen(upgraded);
	memcpy(msg, upgraded, hl);
	memcpy(msg + hl, "\x01\0\0\0\0\0\0\x02hi", 10);
	for (size_t chunk = 1; chunk <= hl + 10; chunk++) {
		dock_head h;
		dock_head_init(&h);
		size_t consumed = 0;
		CU_ASSERT_EQUAL(feed_all(&h, msg, hl + 10, chunk, &consumed), 1);
		CU_ASSERT_EQUAL(consumed, hl); /* exactly up to \r\n\r\n, the rest is stream */
		CU_ASSERT_EQUAL(h.status, 101);
		CU_ASSERT_EQUAL(h.content_length, -1);
		dock_head_free(&h);
	}
}

static void test_head_statuses(void)
{
	static const struct {
		const char *text;
		int ret, status;
		long clen;
	} cases[] = {
		{ "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n", 1,
		  200, -1 },
		{ "HTTP/1.0 404 Not Found\r\nContent-Length: 31\r\n\r\n", 1, 404, 31 },
		{ "HTTP/1.1 500 \r\ncontent-length:  7 \r\n\r\n", 1, 500, 7 },
		{ "HTTP/1.1 204\r\n\r\n", 1, 204, -1 },
		{ "HTTP/2 200 OK\r\n\r\n", -1, 0, 0 },
		{ "garbage garbage\r\n\r\n", -1, 0, 0 },
		{ "HTTP/1.1 20 OK\r\n\r\n", -1, 0, 0 },
		{ "HTTP/1.1 abc OK\r\n\r\n", -1, 0, 0 },
		{ "HTTP/1.1 099 Low\r\n\r\n", -1, 0, 0 },
		{ "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", -1, 0, 0 },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n", -1, 0, 0 },
		{ "\r\n\r\n", -1, 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		dock_head h;
		dock_head_init(&h);
		size_t consumed = 0;
		int r = feed_all(&h, cases[i].text, strlen(cases[i].text), 3, &consumed);
		CU_ASSERT_EQUAL(r, cases[i].ret);
		if (r == 1) {
			CU_ASSERT_EQUAL(h.status, cases[i].status);
			CU_ASSERT_EQUAL(h.content_length, cases[i].clen);
		}
		dock_head_free(&h);
	}
}

static void test_head_nul_and_oversize(void)
{
	dock_head h;
	dock_head_init(&h);
	size_t used = 0;
	CU_ASSERT_EQUAL(dock_head_feed(&h, "HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", 27, &used), -1);
	dock_head_free(&h);

	dock_head_init(&h);
	char junk[1000];
	memset(junk, 'a', sizeof junk);
	int r = 0;
	for (int i = 0; i < 40 && r == 0; i++)
		r = dock_head_feed(&h, junk, sizeof junk, &used);
	CU_ASSERT_EQUAL(r, -1); /* never waits forever for a header end */
	dock_head_free(&h);
}

static void test_head_incomplete(void)
{
	dock_head h;
	dock_head_init(&h);
	size_t used = 99;
	CU_ASSERT_EQUAL(dock_head_feed(&h, "HTTP/1.1 101 UPGRADED\r\n\r", 24, &used), 0);
	CU_ASSERT_EQUAL(used, 0);
	CU_ASSERT_EQUAL(dock_head_feed(&h, "\nXYZ", 4, &used), 1);
	CU_ASSERT_EQUAL(used, 1);
	dock_head_free(&h);
}

/* ---- a scripted server ---- */

typedef struct chunk {
	const char *data;
	size_t len; /* 0: strlen(data) */
	int delay_ms;
} chunk;

typedef struct server {
	char dir[64];
	char path[128];
	int lfd;
	const chunk *script;
	size_t n;
	int hold_ms; /* keep the connection open this long after the script (until the peer leaves)
		      */
	strbuf request;
	pthread_t th;
} server;

static void *serve(void *arg)
{
	server *s = arg;
	int c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return NULL;
	char buf[4096];
	while (!s->request.data || !strstr(s->request.data, "\r\n\r\n")) {
		ssize_t n = recv(c, buf, sizeof buf, 0);
		if (n <= 0)
			break;
		sb_append(&s->request, buf, (size_t)n);
	}
	for (size_t i = 0; i < s->n; i++) {
		usleep((useconds_t)s->script[i].delay_ms * 1000);
		size_t len = s->script[i].len ? s->script[i].len : strlen(s->script[i].data);
		if (send(c, s->script[i].data, len, MSG_NOSIGNAL) < 0)
			break;
	}
	struct pollfd p = { .fd = c, .events = POLLIN };
	if (s->hold_ms > 0)
		poll(&p, 1, s->hold_ms); /* returns early when the client hangs up */
	close(c);
	return NULL;
}

static void server_start(server *s, const chunk *script, size_t n, int hold_ms)
{
	memset(s, 0, sizeof *s);
	snprintf(s->dir, sizeof s->dir, "/tmp/brig-test-XXXXXX");
	CU_ASSERT_FATAL(mkdtemp(s->dir) != NULL);
	snprintf(s->path, sizeof s->path, "%s/d.sock", s->dir);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	CU_ASSERT_FATAL(bind(s->lfd, (struct sockaddr *)&sa, sizeof sa) == 0);
	CU_ASSERT_FATAL(listen(s->lfd, 4) == 0);
	s->script = script;
	s->n = n;
	s->hold_ms = hold_ms;
	sb_init(&s->request);
	pthread_create(&s->th, NULL, serve, s);
}

static void server_stop(server *s)
{
	pthread_join(s->th, NULL);
	close(s->lfd);
	unlink(s->path);
	rmdir(s->dir);
	sb_free(&s->request);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Run dock_hijack against a script; returns its result, fills fd/early/err. */
static int hijack(server *s, const chunk *script, size_t n, int hold_ms, int64_t budget_ms, int *fd,
		  strbuf *early, brig_error **err)
{
	server_start(s, script, n, hold_ms);
	*fd = -1;
	sb_init(early);
	return dock_hijack(s->path, "/v1.41/containers/x/attach?stream=1&stdin=1&stdout=1&stderr=1",
			   now_ms() + budget_ms, fd, early, err);
}

static void test_hijack_101_early_bytes(void)
{
	char first[256];
	int len = snprintf(first, sizeof first, "%s", upgraded);
	memcpy(first + len, "\x01\0\0\0\0\0\0\x02hi", 10);
	const chunk script[] = { { first, (size_t)len + 10, 0 }, { "more", 0, 50 } };
	server s;
	int fd;
	strbuf early;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(hijack(&s, script, N(script), 0, 2000, &fd, &early, &err), 0);
	CU_ASSERT_EQUAL(early.len, 10);
	CU_ASSERT_EQUAL(memcmp(early.data, "\x01\0\0\0\0\0\0\x02hi", 10), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.request.data, "POST /v1.41/containers/x/attach?stream=1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s.request.data, "Upgrade: tcp\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s.request.data, "Connection: Upgrade\r\n"));
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[16];
	CU_ASSERT_EQUAL(poll(&p, 1, 2000), 1);
	CU_ASSERT_EQUAL(recv(fd, buf, sizeof buf, 0), 4); /* later bytes come on the raw fd */
	CU_ASSERT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	sb_free(&early);
	server_stop(&s);
}

static void test_hijack_headers_split(void)
{
	chunk script[64];
	size_t n = 0, len = strlen(upgraded);
	for (size_t off = 0; off < len && n < N(script); off += 7, n++)
		script[n] = (chunk){ upgraded + off, len - off < 7 ? len - off : 7, 2 };
	server s;
	int fd;
	strbuf early;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(hijack(&s, script, n, 0, 3000, &fd, &early, &err), 0);
	CU_ASSERT_EQUAL(early.len, 0);
	CU_ASSERT_TRUE(fd >= 0);
	close(fd);
	sb_free(&early);
	server_stop(&s);
}

static void test_hijack_200(void)
{
	static const char answer[] = "HTTP/1.1 200 OK\r\n"
				     "Content-Type: application/vnd.docker.raw-stream\r\n\r\n"
				     "\x02\0\0\0\0\0\0\x01!";
	const chunk script[] = { { answer, sizeof answer - 1, 0 } };
	server s;
	int fd;
	strbuf early;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(hijack(&s, script, 1, 0, 2000, &fd, &early, &err), 0);
	CU_ASSERT_EQUAL(early.len, 9);
	close(fd);
	sb_free(&early);
	server_stop(&s);
}

/* A refusal, a non-HTTP answer, a hang-up and silence: errors, in bounded time. */
static void expect_hijack_error(const chunk *script, size_t n, int hold_ms, const char *needle)
{
	server s;
	int fd;
	strbuf early;
	brig_error *err = NULL;
	int64_t t0 = now_ms();
	CU_ASSERT_TRUE(hijack(&s, script, n, hold_ms, 400, &fd, &early, &err) < 0);
	CU_ASSERT_TRUE(now_ms() - t0 < 1500);
	CU_ASSERT_EQUAL(fd, -1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	if (!strstr(err->message, needle))
		fprintf(stderr, "\nunexpected message: %s\n", err->message);
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, needle));
	plugin_error_free(err);
	sb_free(&early);
	server_stop(&s);
}

static void test_hijack_errors(void)
{
	const chunk not_found[] = { { "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
				      "Content-Length: 37\r\n\r\n",
				      0, 0 },
				    { "{\"message\":\"No such container: x\"}\n", 0, 20 } };
	expect_hijack_error(not_found, N(not_found), 0, "HTTP 404: No such container: x");
	const chunk plain[] = {
		{ "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nboom", 0, 0 }
	};
	expect_hijack_error(plain, 1, 0, "HTTP 500: boom");
	const chunk ssh[] = { { "SSH-2.0-OpenSSH_9.2\r\n\r\n", 0, 0 } };
	expect_hijack_error(ssh, 1, 0, "malformed answer");
	const chunk cut[] = { { "HTTP/1.1 101 UPGR", 0, 0 } };
	expect_hijack_error(cut, 1, 0, "closed the connection");
	expect_hijack_error(NULL, 0, 0, "closed the connection");
	expect_hijack_error(NULL, 0, 3000, "did not answer");
}

static void test_hijack_no_socket(void)
{
	int fd = -1;
	strbuf early;
	sb_init(&early);
	brig_error *err = NULL;
	CU_ASSERT_TRUE(dock_hijack("/nonexistent/docker.sock", "/x", now_ms() + 500, &fd, &early,
				   &err) < 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "No such file or directory"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "scripts/setup-host"));
	plugin_error_free(err);
	sb_free(&early);
}

/* dock_send + dock_answer_read: the kill path, whose answer arrives later. */
static int answer_after_send(const chunk *script, size_t n, dock_head *h, brig_error **err)
{
	server s;
	server_start(&s, script, n, 0);
	int fd = -1,
	    r = dock_send(s.path, "POST", "/v1.41/containers/x/kill", now_ms() + 1000, &fd, err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT_EQUAL(dock_answer_read(fd, h, "kill", err), 0); /* nothing yet: no blocking */
	while (r == 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		CU_ASSERT_EQUAL_FATAL(poll(&p, 1, 2000), 1);
		r = dock_answer_read(fd, h, "kill", err);
	}
	CU_ASSERT_PTR_NOT_NULL(
		strstr(s.request.data, "POST /v1.41/containers/x/kill HTTP/1.1\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s.request.data, "Connection: close\r\n"));
	close(fd);
	server_stop(&s);
	return r;
}

static void test_send_then_answer(void)
{
	const chunk ok[] = { { "HTTP/1.1 204 No", 0, 100 },
			     { " Content\r\nServer: x\r\n\r\n", 0, 20 } };
	dock_head h;
	dock_head_init(&h);
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(answer_after_send(ok, N(ok), &h, &err), 1);
	CU_ASSERT_EQUAL(h.status, 204);
	dock_head_free(&h);

	const chunk cut[] = { { "HTTP/1.1 20", 0, 50 } };
	dock_head_init(&h);
	CU_ASSERT_TRUE(answer_after_send(cut, N(cut), &h, &err) < 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "closed the connection before answering"));
	plugin_error_free(err);
	dock_head_free(&h);
}

/* ---- ordinary requests ---- */

static int request(server *s, const chunk *script, size_t n, int hold_ms, long timeout_ms,
		   dock_response *resp, brig_error **err)
{
	server_start(s, script, n, hold_ms);
	dock_response_init(resp);
	return dock_request(s->path, "GET", "/_ping", NULL, timeout_ms, resp, err);
}

static void test_request_ok(void)
{
	const chunk script[] = {
		{ "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Type: application/json\r\n"
		  "Content-Length: 9\r\n\r\n{\"a\":\"b\"}",
		  0, 0 }
	};
	server s;
	dock_response resp;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(request(&s, script, 1, 0, 2000, &resp, &err), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_STRING_EQUAL(resp.api_version, "1.41");
	CU_ASSERT_STRING_EQUAL(resp.body.data, "{\"a\":\"b\"}");
	CU_ASSERT_PTR_NOT_NULL(strstr(s.request.data, "GET /_ping HTTP/1.1\r\n"));
	dock_response_free(&resp);
	server_stop(&s);
}

static void test_request_error_status(void)
{
	const chunk script[] = {
		{ "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
		  "Content-Length: 41\r\n\r\n{\"message\":\"No such image: nope/nope:1\"}\n",
		  0, 0 }
	};
	server s;
	dock_response resp;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(request(&s, script, 1, 0, 2000, &resp, &err), 0); /* the caller judges */
	CU_ASSERT_EQUAL(resp.status, 404);
	cleanup_free char *txt = dock_error_text(&resp);
	CU_ASSERT_STRING_EQUAL(txt, "No such image: nope/nope:1");
	dock_response_free(&resp);
	server_stop(&s);
}

static void test_request_garbage(void)
{
	const chunk script[] = { { "garbage garbage\r\n\r\n", 0, 0 } };
	server s;
	dock_response resp;
	brig_error *err = NULL;
	CU_ASSERT_TRUE(request(&s, script, 1, 0, 2000, &resp, &err) < 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "does not answer like dockerd"));
	plugin_error_free(err);
	dock_response_free(&resp);
	server_stop(&s);
}

static void test_request_hang(void)
{
	server s;
	dock_response resp;
	brig_error *err = NULL;
	int64_t t0 = now_ms();
	CU_ASSERT_TRUE(request(&s, NULL, 0, 5000, 300, &resp, &err) < 0);
	CU_ASSERT_TRUE(now_ms() - t0 < 1500);
	CU_ASSERT_TRUE(resp.timed_out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "did not answer GET /_ping within 300 ms"));
	plugin_error_free(err);
	dock_response_free(&resp);
	server_stop(&s);
}

/* The answer of a script to GET /_ping: 0 and resp filled, or < 0 and the error's message. */
static int answer(const chunk *script, size_t n, dock_response *resp, char **msg)
{
	server s;
	brig_error *err = NULL;
	int r = request(&s, script, n, 0, 2000, resp, &err);
	*msg = err ? xstrdup(err->message) : NULL;
	plugin_error_free(err);
	server_stop(&s);
	return r;
}

static void test_request_chunked(void)
{
	const chunk script[] = {
		{ "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
		  0 },
		{ "7\r\n{\"Sta", 0, 20 },
		{ "tu\r\n", 0, 20 },
		{ "a;ext=1\r\nsCode\":13}\r", 0, 20 },
		{ "\n0\r\n", 0, 20 },
		{ "\r\n", 0, 20 },
	};
	dock_response resp;
	char *msg = NULL;
	CU_ASSERT_EQUAL(answer(script, N(script), &resp, &msg), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_STRING_EQUAL(resp.api_version, "1.41");
	CU_ASSERT_STRING_EQUAL(resp.body.data, "{\"StatusCode\":13}");
	dock_response_free(&resp);
	free(msg);

	/* trailers after the last chunk; the whole answer in one piece */
	const chunk trailers[] = { { "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n"
				     "3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n",
				     0, 0 } };
	CU_ASSERT_EQUAL(answer(trailers, 1, &resp, &msg), 0);
	CU_ASSERT_STRING_EQUAL(resp.body.data, "abc");
	dock_response_free(&resp);
	free(msg);
}

static void test_request_bodies(void)
{
	dock_response resp;
	char *msg = NULL;
	/* Content-Length split across reads; bytes beyond it are not body */
	const chunk cl[] = { { "HTTP/1.1 201 Created\r\nContent-Length: 10\r\n\r\n01234", 0, 0 },
			     { "56789tail", 0, 30 } };
	CU_ASSERT_EQUAL(answer(cl, N(cl), &resp, &msg), 0);
	CU_ASSERT_EQUAL(resp.status, 201);
	CU_ASSERT_STRING_EQUAL(resp.body.data, "0123456789");
	dock_response_free(&resp);
	/* neither length nor chunks: the body ends when dockerd closes */
	const chunk eof[] = { { "HTTP/1.1 200 OK\r\n\r\nuntil", 0, 0 }, { " the end", 0, 30 } };
	CU_ASSERT_EQUAL(answer(eof, N(eof), &resp, &msg), 0);
	CU_ASSERT_STRING_EQUAL(resp.body.data, "until the end");
	dock_response_free(&resp);
	/* 204: no body, complete at the header block even if dockerd keeps the connection */
	const chunk none[] = { { "HTTP/1.1 204 No Content\r\n\r\n", 0, 0 } };
	server s;
	brig_error *err = NULL;
	int64_t t0 = now_ms();
	CU_ASSERT_EQUAL(request(&s, none, 1, 3000, 2000, &resp, &err), 0);
	CU_ASSERT_TRUE(now_ms() - t0 < 1000);
	CU_ASSERT_EQUAL(resp.status, 204);
	CU_ASSERT_EQUAL(resp.body.len, 0);
	dock_response_free(&resp);
	server_stop(&s);
}

static void test_request_broken_bodies(void)
{
	dock_response resp;
	char *msg = NULL;
	const chunk cut[] = { { "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123", 0, 0 } };
	CU_ASSERT_TRUE(answer(cut, 1, &resp, &msg) < 0);
	CU_ASSERT_PTR_NOT_NULL(msg && strstr(msg, "GET /_ping"));
	dock_response_free(&resp);
	free(msg);
	const chunk bad[] = { { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0,
				0 } };
	CU_ASSERT_TRUE(answer(bad, 1, &resp, &msg) < 0);
	CU_ASSERT_PTR_NOT_NULL(msg && strstr(msg, "GET /_ping"));
	dock_response_free(&resp);
	free(msg);
	const chunk nocrlf[] = { { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				   "3\r\nabcX\r\n0\r\n\r\n",
				   0, 0 } };
	CU_ASSERT_TRUE(answer(nocrlf, 1, &resp, &msg) < 0);
	CU_ASSERT_PTR_NOT_NULL(msg && strstr(msg, "GET /_ping"));
	dock_response_free(&resp);
	free(msg);
	const chunk huge[] = { { "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\nx", 0,
				 0 } };
	CU_ASSERT_TRUE(answer(huge, 1, &resp, &msg) < 0);
	CU_ASSERT_PTR_NOT_NULL(msg && strstr(msg, "GET /_ping"));
	dock_response_free(&resp);
	free(msg);
	const chunk hugechunk[] = { { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				      "FFFFFFF\r\nx",
				      0, 0 } };
	CU_ASSERT_TRUE(answer(hugechunk, 1, &resp, &msg) < 0);
	CU_ASSERT_PTR_NOT_NULL(msg && strstr(msg, "GET /_ping"));
	dock_response_free(&resp);
	free(msg);
}

/* A POST carries its JSON with a length and a content type. */
static void test_request_post(void)
{
	const chunk script[] = { { "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}", 0, 50 } };
	server s;
	server_start(&s, script, 1, 0);
	dock_response resp;
	dock_response_init(&resp);
	brig_error *err = NULL;
	CU_ASSERT_EQUAL(dock_request(s.path, "POST", "/v1.41/containers/create?name=x",
				     "{\"Image\":\"i\"}", 2000, &resp, &err),
			0);
	pthread_join(s.th, NULL); /* the request is complete in s.request */
	CU_ASSERT_EQUAL(resp.status, 201);
	const char *rq = s.request.data ? s.request.data : "";
	CU_ASSERT_PTR_NOT_NULL(strstr(rq, "POST /v1.41/containers/create?name=x HTTP/1.1\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(rq, "Content-Length: 13\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(rq, "Content-Type: application/json\r\n"));
	dock_response_free(&resp);
	close(s.lfd);
	unlink(s.path);
	rmdir(s.dir);
	sb_free(&s.request);
}

static void test_request_no_daemon(void)
{
	dock_response resp;
	dock_response_init(&resp);
	brig_error *err = NULL;
	CU_ASSERT_TRUE(dock_request("/nonexistent/docker.sock", "GET", "/_ping", NULL, 1000, &resp,
				    &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "cannot connect to dockerd at "
							   "/nonexistent/docker.sock"));
	plugin_error_free(err);
	dock_response_free(&resp);
}

static void test_error_text(void)
{
	dock_response r;
	dock_response_init(&r);
	cleanup_free char *empty = dock_error_text(&r);
	CU_ASSERT_STRING_EQUAL(empty, "(empty answer)");
	sb_puts(&r.body, "client version 1.11 is too old\n\x01");
	cleanup_free char *plain = dock_error_text(&r);
	CU_ASSERT_STRING_EQUAL(plain, "client version 1.11 is too old  ");
	dock_response_free(&r);
}

static void test_socket_path(void)
{
	char *p = NULL;
	brig_error *err = NULL;
	unsetenv("DOCKER_HOST");
	CU_ASSERT_EQUAL(dock_socket_path(&p, &err), 0);
	CU_ASSERT_STRING_EQUAL(p, "/var/run/docker.sock");
	free(p);
	setenv("DOCKER_HOST", "unix:///run/user/1000/docker.sock", 1);
	CU_ASSERT_EQUAL(dock_socket_path(&p, &err), 0);
	CU_ASSERT_STRING_EQUAL(p, "/run/user/1000/docker.sock");
	free(p);
	const char *bad[] = { "tcp://127.0.0.1:2375", "ssh://me@host", "unix://relative.sock",
			      "npipe:////./pipe/x" };
	for (size_t i = 0; i < N(bad); i++) {
		setenv("DOCKER_HOST", bad[i], 1);
		CU_ASSERT_EQUAL(dock_socket_path(&p, &err), BRIG_E_UNAVAILABLE);
		CU_ASSERT_PTR_NOT_NULL_FATAL(err);
		CU_ASSERT_PTR_NOT_NULL(strstr(err->message, bad[i]));
		plugin_error_free(err);
		err = NULL;
	}
	unsetenv("DOCKER_HOST");
}

static CU_TestInfo tests[] = {
	{ "head split everywhere", test_head_split_everywhere },
	{ "head statuses", test_head_statuses },
	{ "head NUL and oversize", test_head_nul_and_oversize },
	{ "head incomplete", test_head_incomplete },
	{ "hijack 101 + early stream bytes", test_hijack_101_early_bytes },
	{ "hijack headers split across reads", test_hijack_headers_split },
	{ "hijack 200", test_hijack_200 },
	{ "hijack errors", test_hijack_errors },
	{ "hijack without a daemon", test_hijack_no_socket },
	{ "send now, answer later", test_send_then_answer },
	{ "request ok", test_request_ok },
	{ "request error status", test_request_error_status },
	{ "request garbage", test_request_garbage },
	{ "request hang", test_request_hang },
	{ "request chunked", test_request_chunked },
	{ "request bodies: length, EOF, 204", test_request_bodies },
	{ "request broken bodies", test_request_broken_bodies },
	{ "request POST", test_request_post },
	{ "request without a daemon", test_request_no_daemon },
	{ "error text", test_error_text },
	{ "socket path", test_socket_path },
	CU_TEST_INFO_NULL,
};

BRIG_CUNIT_MAIN("http", tests)
