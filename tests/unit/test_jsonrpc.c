/* test_jsonrpc.c - the JSON-RPC layer of the MCP server: framing, every error code, ids of
 * every JSON type, oversized lines, invalid UTF-8, partial lines, CRLF, blank lines, and
 * whole-line writes from many threads. */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "mcp/jsonrpc.h"

/* ---- framing --------------------------------------------------------------------------- */

/* Collect every event of a lines reader into "L:<line>|" and "O|" tokens. */
static void drain(jsonrpc_lines *l, strbuf *out)
{
	const char *line;
	size_t len;
	jsonrpc_line_status st;
	while ((st = jsonrpc_lines_next(l, &line, &len)) != JSONRPC_LINE_NONE) {
		if (st == JSONRPC_LINE_OK) {
			CU_ASSERT_EQUAL(strlen(line), len); /* NUL-terminated at len */
			sb_puts(out, "L:");
			sb_append(out, line, len);
			sb_puts(out, "|");
		} else {
			sb_puts(out, "O|");
		}
	}
}

/* Feed `in` in chunks of `chunk` bytes (0: all at once), then EOF; return the event string. */
static char *frame(const char *in, size_t chunk, size_t max)
{
	jsonrpc_lines l;
	jsonrpc_lines_init(&l, max);
	strbuf out;
	sb_init(&out);
	size_t n = strlen(in);
	if (!chunk)
		chunk = n ? n : 1;
	for (size_t i = 0; i < n; i += chunk) {
		size_t k = n - i < chunk ? n - i : chunk;
		jsonrpc_lines_feed(&l, in + i, k);
		drain(&l, &out);
		/* the buffer never holds more than one line over the limit plus one chunk */
		CU_ASSERT(l.buf.len <= max + 2 + chunk);
	}
	jsonrpc_lines_finish(&l);
	drain(&l, &out);
	jsonrpc_lines_free(&l);
	return sb_steal(&out);
}

static void check_frame(const char *in, size_t max, const char *want)
{
	/* the result must not depend on how the input is split into reads */
	size_t chunks[] = { 0, 1, 2, 3, 7, 64 };
	for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
		cleanup_free char *got = frame(in, chunks[i], max);
		if (strcmp(got, want))
			fprintf(stderr, "\nframe(%zu): want [%s] got [%s]\n", chunks[i], want, got);
		CU_ASSERT_STRING_EQUAL(got, want);
	}
}

static void test_frame_basic(void)
{
	check_frame("", 100, "");
	check_frame("{}\n", 100, "L:{}|");
	check_frame("{\"a\":1}\n{\"b\":2}\n", 100, "L:{\"a\":1}|L:{\"b\":2}|");
	/* last line without newline at EOF */
	check_frame("{}\n[1]", 100, "L:{}|L:[1]|");
}

static void test_frame_crlf_blank(void)
{
	check_frame("{}\r\n[]\r\n", 100, "L:{}|L:[]|");
	/* blank lines (empty, spaces, tabs, lone CRs) are skipped silently */
	check_frame("\n\n \t \r\n\r\n{}\n\n", 100, "L:{}|");
	/* a CR in the middle stays (JSON whitespace; the parser decides) */
	check_frame("{}\r{}\n", 100, "L:{}\r{}|");
}

static void test_frame_oversized(void)
{
	/* exactly max is fine, max + 1 is not; CRLF does not count */
	check_frame("12345\n", 5, "L:12345|");
	check_frame("12345\r\n", 5, "L:12345|");
	check_frame("123456\n", 5, "O|");
	/* the stream survives: lines after an oversized one are read */
	check_frame("ok\n123456789012\nafter\n", 5, "L:ok|O|L:after|");
	check_frame("1234567890123456789012345678901234567890\nx\n", 5, "O|L:x|");
	/* an oversized line cut off by EOF */
	check_frame("ok\n1234567890", 5, "L:ok|O|");
	/* two oversized lines in a row are two events */
	check_frame("1234567\n1234567\ny\n", 5, "O|O|L:y|");
}

static void test_frame_discard_streaming(void)
{
	/* An endless line in many reads is reported once and never buffered whole. */
	jsonrpc_lines l;
	jsonrpc_lines_init(&l, 1024);
	strbuf out;
	sb_init(&out);
	char chunk[4096];
	memset(chunk, 'x', sizeof chunk);
	for (int i = 0; i < 1000; i++) { /* 4 MB */
		jsonrpc_lines_feed(&l, chunk, sizeof chunk);
		drain(&l, &out);
		CU_ASSERT(l.buf.len <= 1024 + 2 + sizeof chunk);
	}
	jsonrpc_lines_feed(&l, "xx\n{}\n", 6);
	drain(&l, &out);
	jsonrpc_lines_finish(&l);
	drain(&l, &out);
	CU_ASSERT_STRING_EQUAL(out.data, "O|L:{}|");
	sb_free(&out);
	jsonrpc_lines_free(&l);
}

/* ---- parsing --------------------------------------------------------------------------- */

/* Parse `line` and return the serialized error response it gets (or "OK:<kind>:<id>"). */
static char *answer(const char *line, size_t len)
{
	jsonrpc_msg m;
	int rc = jsonrpc_parse(line, len, &m);
	char *s;
	if (rc) {
		CU_ASSERT_EQUAL(rc, m.error_code);
		CU_ASSERT_EQUAL(m.kind, JSONRPC_KIND_INVALID);
		json_object *e = jsonrpc_error(m.id, rc, m.error_message, NULL);
		s = xstrdup(jsonrpc_to_string(e, NULL));
		json_object_put(e);
	} else {
		const char *kinds[] = { "invalid", "request", "notification", "response" };
		s = xasprintf("OK:%s:%s:%s", kinds[m.kind], m.method ? m.method : "-",
			      m.id ? jsonrpc_to_string(m.id, NULL) : "-");
	}
	jsonrpc_msg_clear(&m);
	return s;
}

static void expect(const char *line, const char *prefix)
{
	cleanup_free char *got = answer(line, strlen(line));
	if (strncmp(got, prefix, strlen(prefix)))
		fprintf(stderr, "\n%s\n  want prefix %s\n  got         %s\n", line, prefix, got);
	CU_ASSERT_NSTRING_EQUAL(got, prefix, strlen(prefix));
}

#define PARSE_ERR    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
#define INVALID_NULL "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"

static void test_parse_errors(void)
{
	expect("{", PARSE_ERR);
	expect("nul", PARSE_ERR);
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1", PARSE_ERR);
	expect("{'a':1}", PARSE_ERR);
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":NaN}", PARSE_ERR);
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":-Infinity}", PARSE_ERR);
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":tru}", PARSE_ERR);
	expect("{} {}", PARSE_ERR);
	expect("{}x", PARSE_ERR);
	expect("{\"a\":01}", PARSE_ERR);
	expect("garbage", PARSE_ERR);
	/* raw control characters inside a string (json-c would take them) */
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"a\tb\",\"id\":1}", PARSE_ERR);
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"a\x01"
	       "b\",\"id\":1}",
	       PARSE_ERR);
	/* an embedded NUL byte */
	static const char nul[] = "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\0{}";
	cleanup_free char *got = answer(nul, sizeof nul - 1);
	CU_ASSERT_NSTRING_EQUAL(got, PARSE_ERR, strlen(PARSE_ERR));
	/* too deep */
	strbuf deep;
	sb_init(&deep);
	for (int i = 0; i < 100; i++)
		sb_puts(&deep, "[");
	for (int i = 0; i < 100; i++)
		sb_puts(&deep, "]");
	expect(deep.data, PARSE_ERR);
	sb_free(&deep);
}

static void test_parse_utf8(void)
{
	/* every flavour of invalid UTF-8 is a parse error, inside or outside strings */
	const char *bad[] = {
		"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\",\"id\":1}",     /* invalid byte */
		"{\"jsonrpc\":\"2.0\",\"method\":\"\x80\",\"id\":1}",     /* lone continuation */
		"{\"jsonrpc\":\"2.0\",\"method\":\"\xc0\x80\",\"id\":1}", /* overlong NUL */
		"{\"jsonrpc\":\"2.0\",\"method\":\"\xe0\x80\xaf\",\"id\":1}",     /* overlong '/' */
		"{\"jsonrpc\":\"2.0\",\"method\":\"\xed\xa0\x80\",\"id\":1}",     /* surrogate */
		"{\"jsonrpc\":\"2.0\",\"method\":\"\xf4\x90\x80\x80\",\"id\":1}", /* > U+10FFFF */
		"{\"jsonrpc\":\"2.0\",\"method\":\"\xe2\x82\",\"id\":1}",         /* truncated */
		"\xef\xbb\xbf{}", /* BOM: not JSON */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		expect(bad[i], "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32");
	for (size_t i = 0; i < 7; i++)
		expect(bad[i], PARSE_ERR);
	/* valid multi-byte text is fine */
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"id\":"
	       "1}",
	       "OK:request:h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80:1");

	size_t at = 99;
	CU_ASSERT_FALSE(utf8_valid("ab\xc3", 3, &at));
	CU_ASSERT_EQUAL(at, 2);
	CU_ASSERT_TRUE(utf8_valid("", 0, NULL));
}

static void test_parse_invalid_request(void)
{
	expect("[]", INVALID_NULL);
	expect("[{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}]", INVALID_NULL);
	expect("\"ping\"", INVALID_NULL);
	expect("42", INVALID_NULL);
	expect("null", INVALID_NULL);
	expect("{}", INVALID_NULL);
	/* jsonrpc member missing / wrong; the valid id is echoed */
	expect("{\"method\":\"ping\",\"id\":7}",
	       "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32600,");
	expect("{\"jsonrpc\":\"1.0\",\"method\":\"ping\",\"id\":\"x\"}",
	       "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32600,");
	expect("{\"jsonrpc\":2.0,\"method\":\"ping\",\"id\":1}",
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,");
	/* method of the wrong type, or missing */
	expect("{\"jsonrpc\":\"2.0\",\"method\":1,\"id\":1}",
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,");
	expect("{\"jsonrpc\":\"2.0\",\"id\":1}",
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,");
	expect("{\"jsonrpc\":\"2.0\",\"method\":null}", INVALID_NULL);
	/* params must be structured */
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"params\":\"x\"}",
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"params\":3}",
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"params\":null}",
	       "OK:request:ping:1");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"params\":[]}",
	       "OK:request:ping:1");
}

static void test_parse_ids(void)
{
	/* ids are echoed byte for byte */
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":0}", "OK:request:m:0");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":-1}", "OK:request:m:-1");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":-0}", "OK:request:m:-0");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":9007199254740993}",
	       "OK:request:m:9007199254740993");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":12345678901234567890}",
	       "OK:request:m:12345678901234567890");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":123456789012345678901234567890}",
	       "OK:request:m:123456789012345678901234567890");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":-9223372036854775809}",
	       "OK:request:m:-9223372036854775809");
	/* integral numbers in another spelling are integers (as in JSON Schema and the SDKs) */
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1e3}", "OK:request:m:1e3");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":2.0}", "OK:request:m:2.0");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\" : 5 }", "OK:request:m:5");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":\"\"}", "OK:request:m:\"\"");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":\"a\\\"b\\\\c\\/"
	       "d\\u00e9\\n\\ud83d\\ude00\"}",
	       "OK:request:m:\"a\\\"b\\\\c\\/d\\u00e9\\n\\ud83d\\ude00\"");
	/* a lone surrogate escape survives the echo untouched */
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":\"\\ud800\"}",
	       "OK:request:m:\"\\ud800\"");
	/* duplicate keys: the last one wins, as json-c keeps it */
	expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"id\":2}", "OK:request:m:2");
	/* an escaped key is still the id */
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"\\u0069d\":33}", "OK:request:m:33");
	/* nested "id" members are not the id */
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"id\":5}}",
	       "OK:notification:m:-");
	expect("{\"jsonrpc\":\"2.0\",\"params\":{\"id\":[1,{\"id\":2}]},\"method\":\"m\",\"id\":"
	       "\"r\"}",
	       "OK:request:m:\"r\"");

	/* ids of the wrong type: -32600 with id null (the id cannot be used) */
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":null}", INVALID_NULL);
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1.5}", INVALID_NULL);
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":true}", INVALID_NULL);
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":{\"a\":1}}", INVALID_NULL);
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":[1]}", INVALID_NULL);
}

static void test_parse_kinds(void)
{
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	       "OK:notification:notifications/initialized:-");
	expect(" {\"id\":1, \"method\":\"ping\", \"jsonrpc\":\"2.0\", \"extra\":[1,2]} ",
	       "OK:request:ping:1");
	/* responses are recognised and never answered, even malformed ones */
	expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "OK:response:-:-");
	expect("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}",
	       "OK:response:-:-");
	expect("{\"result\":1}", "OK:response:-:-");
}

static void test_id_key(void)
{
	const char *cases[][2] = {
		{ "1", "i:1" },      { "-5", "i:-5" },
		{ "1e3", "i:1000" }, { "12345678901234567890", "i:12345678901234567890" },
		{ "\"1\"", "s:1" },  { "\"a b\"", "s:a b" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_object *o = json_tokener_parse(cases[i][0]);
		cleanup_free char *k = jsonrpc_id_key(o);
		CU_ASSERT_PTR_NOT_NULL_FATAL(k);
		CU_ASSERT_STRING_EQUAL(k, cases[i][1]);
		json_object_put(o);
	}
	json_object *b = json_object_new_boolean(1);
	CU_ASSERT_PTR_NULL(jsonrpc_id_key(b));
	CU_ASSERT_PTR_NULL(jsonrpc_id_key(NULL));
	json_object_put(b);
}

static void test_sanitize(void)
{
	size_t n = 0;
	cleanup_free char *a = utf8_sanitize("ok\xc3\xa9", 4, &n);
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_STRING_EQUAL(a, "ok\xc3\xa9");
	cleanup_free char *b = utf8_sanitize("a\xff"
					     "b\xed\xa0\x80"
					     "c\xe2\x82",
					     9, &n);
	CU_ASSERT_STRING_EQUAL(b, "a\xef\xbf\xbd"
				  "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				  "c\xef\xbf\xbd\xef\xbf\xbd");
	CU_ASSERT_TRUE(utf8_valid(b, n, NULL));
	cleanup_free char *c = utf8_sanitize("x\0y", 3, &n);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(memcmp(c, "x\0y", 3), 0);
}

/* Program output as text: every control character but LF and TAB visible, nothing lost after
 * a NUL, invalid bytes replaced. */
static void test_visible(void)
{
	static const char in[] = "a\0b\x1b[31mc\r\n\td\x7f"
				 "e\xc2\x9b"
				 "2Jf\xff"
				 "g\xc3\xa9\x01";
	size_t n = 0;
	cleanup_free char *v = utf8_visible(in, sizeof in - 1, &n);
	static const char want[] = "a\xe2\x90\x80"          /* NUL -> U+2400 */
				   "b\xe2\x90\x9b[31mc"     /* ESC -> U+241B */
				   "\xe2\x90\x8d\n\td"      /* CR -> U+240D; LF, TAB kept */
				   "\xe2\x90\xa1"           /* DEL -> U+2421 */
				   "e\xe2\x90\x9b[2Jf"      /* C1 CSI -> U+241B '[' */
				   "\xef\xbf\xbd"           /* invalid -> U+FFFD */
				   "g\xc3\xa9\xe2\x90\x81"; /* U+00E9 kept, SOH -> U+2401 */
	CU_ASSERT_EQUAL(n, sizeof want - 1);
	CU_ASSERT_EQUAL(strlen(v), n); /* no NUL left inside */
	CU_ASSERT_EQUAL(memcmp(v, want, sizeof want - 1), 0);
	CU_ASSERT_TRUE(utf8_valid(v, n, NULL));
	/* the sanitizer used for structuredContent keeps them raw */
	cleanup_free char *raw = utf8_sanitize(in, sizeof in - 1, &n);
	CU_ASSERT_EQUAL(memcmp(raw, "a\0b\x1b[31m", 8), 0);
}

/* ---- building and writing -------------------------------------------------------------- */

static void test_build(void)
{
	json_object *id = json_object_new_string("q");
	json_object *r = jsonrpc_result(id, NULL);
	CU_ASSERT_STRING_EQUAL(jsonrpc_to_string(r, NULL),
			       "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"result\":{}}");
	json_object_put(r);
	json_object *e = jsonrpc_error(id, JSONRPC_METHOD_NOT_FOUND, "Method not found: x/y",
				       json_object_new_string("a\nb"));
	CU_ASSERT_STRING_EQUAL(jsonrpc_to_string(e, NULL),
			       "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"error\":{\"code\":-32601,"
			       "\"message\":\"Method not found: x/y\",\"data\":\"a\\nb\"}}");
	json_object_put(e);
	json_object_put(id);
	json_object *n = jsonrpc_notification("notifications/progress", NULL);
	CU_ASSERT_STRING_EQUAL(jsonrpc_to_string(n, NULL),
			       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}");
	json_object_put(n);
}

#define WRITERS    8
#define PER_WRITER 200

struct writer_arg {
	jsonrpc_writer *w;
	int n;
};

static void *writer_thread(void *p)
{
	struct writer_arg *a = p;
	for (int i = 0; i < PER_WRITER; i++) {
		/* sizes from tiny to well past PIPE_BUF, with newlines inside the strings */
		size_t sz = (size_t)((i * 977 + a->n * 131) % 20000);
		char *text = xmalloc(sz + 1);
		for (size_t k = 0; k < sz; k++)
			text[k] = k % 50 == 49 ? '\n' : (char)('a' + (k + (size_t)a->n) % 26);
		text[sz] = '\0';
		json_object *params = json_object_new_object();
		json_object_object_add(params, "writer", json_object_new_int(a->n));
		json_object_object_add(params, "seq", json_object_new_int(i));
		json_object_object_add(params, "text", json_object_new_string(text));
		json_object *m = jsonrpc_notification("t", params);
		CU_ASSERT_EQUAL(jsonrpc_write(a->w, m), 0);
		json_object_put(m);
		free(text);
	}
	return NULL;
}

struct reader_arg {
	int fd;
	strbuf all;
};

static void *reader_thread(void *p)
{
	struct reader_arg *r = p;
	char buf[65536];
	ssize_t n;
	while ((n = read(r->fd, buf, sizeof buf)) > 0)
		sb_append(&r->all, buf, (size_t)n);
	return NULL;
}

static void test_concurrent_writes(void)
{
	int fds[2];
	CU_ASSERT_FATAL(pipe2(fds, O_CLOEXEC) == 0);
	jsonrpc_writer w;
	jsonrpc_writer_init(&w, fds[1]);
	struct reader_arg ra = { .fd = fds[0] };
	sb_init(&ra.all);
	pthread_t rt, wt[WRITERS];
	struct writer_arg wa[WRITERS];
	pthread_create(&rt, NULL, reader_thread, &ra);
	for (int i = 0; i < WRITERS; i++) {
		wa[i] = (struct writer_arg){ .w = &w, .n = i };
		pthread_create(&wt[i], NULL, writer_thread, &wa[i]);
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(wt[i], NULL);
	close(fds[1]);
	pthread_join(rt, NULL);
	close(fds[0]);

	/* every line is one whole message; every message arrived in order per writer */
	int next[WRITERS] = { 0 };
	int lines = 0;
	char *save = ra.all.data;
	for (char *nl; save && (nl = strchr(save, '\n')); save = nl + 1) {
		*nl = '\0';
		json_object *o = json_tokener_parse(save);
		CU_ASSERT_PTR_NOT_NULL_FATAL(o);
		json_object *params = json_object_object_get(o, "params");
		int wr = json_object_get_int(json_object_object_get(params, "writer"));
		int seq = json_object_get_int(json_object_object_get(params, "seq"));
		CU_ASSERT(wr >= 0 && wr < WRITERS);
		if (wr >= 0 && wr < WRITERS) {
			CU_ASSERT_EQUAL(seq, next[wr]);
			next[wr] = seq + 1;
		}
		json_object_put(o);
		lines++;
	}
	CU_ASSERT_EQUAL(lines, WRITERS * PER_WRITER);
	sb_free(&ra.all);
	jsonrpc_writer_destroy(&w);
}

static void test_write_broken(void)
{
	int fds[2];
	CU_ASSERT_FATAL(pipe2(fds, O_CLOEXEC) == 0);
	close(fds[0]);
	jsonrpc_writer w;
	jsonrpc_writer_init(&w, fds[1]);
	json_object *m = jsonrpc_notification("x", NULL);
	CU_ASSERT_EQUAL(jsonrpc_write(&w, m), -1); /* EPIPE (SIGPIPE ignored in main) */
	CU_ASSERT_TRUE(jsonrpc_writer_broken(&w));
	CU_ASSERT_EQUAL(jsonrpc_write(&w, m), -1);
	json_object_put(m);
	jsonrpc_writer_destroy(&w);
	close(fds[1]);
}

static CU_TestInfo tests[] = {
	{ "framing: basic", test_frame_basic },
	{ "framing: CRLF and blank lines", test_frame_crlf_blank },
	{ "framing: oversized lines", test_frame_oversized },
	{ "framing: endless line is discarded, not buffered", test_frame_discard_streaming },
	{ "parse: -32700 parse errors", test_parse_errors },
	{ "parse: invalid UTF-8", test_parse_utf8 },
	{ "parse: -32600 invalid requests", test_parse_invalid_request },
	{ "parse: ids of every type", test_parse_ids },
	{ "parse: requests, notifications, responses", test_parse_kinds },
	{ "id keys", test_id_key },
	{ "UTF-8 sanitizing", test_sanitize },
	{ "UTF-8 with visible control characters", test_visible },
	{ "building messages", test_build },
	{ "concurrent writes stay whole lines", test_concurrent_writes },
	{ "broken output stream", test_write_broken },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return brig_cunit_run("jsonrpc", tests);
}
