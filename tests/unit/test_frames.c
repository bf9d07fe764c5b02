/* test_frames.c - the attach stream demultiplexer: frames and headers split across reads,
 * interleaved streams, zero-length frames, a stream ending mid-frame, bad stream ids, the cap. */
#include "config.h"

#include <string.h>

#include "cunit_main.h"
#include "frames.h"

/* Append one frame (stream, payload) to sb. */
static void put_frame(strbuf *sb, int stream, const char *payload, size_t n)
{
	unsigned char h[8] = { (unsigned char)stream,
			       0,
			       0,
			       0,
			       (unsigned char)(n >> 24),
			       (unsigned char)(n >> 16),
			       (unsigned char)(n >> 8),
			       (unsigned char)n };
	sb_append(sb, h, sizeof h);
	sb_append(sb, payload, n);
}

/* A stream with interleaved stdout/stderr and zero-length frames. */
static void sample_stream(strbuf *sb)
{
	sb_init(sb);
	put_frame(sb, 1, "hello ", 6);
	put_frame(sb, 2, "oops\n", 5);
	put_frame(sb, 1, "", 0);
	put_frame(sb, 1, "world\n", 6);
	put_frame(sb, 2, "", 0);
	put_frame(sb, 2, "again\n", 6);
}

static void check_sample(const capture *c)
{
	CU_ASSERT_EQUAL(c->out.len, 12);
	CU_ASSERT_NSTRING_EQUAL(c->out.data, "hello world\n", 12);
	CU_ASSERT_EQUAL(c->err.len, 11);
	CU_ASSERT_NSTRING_EQUAL(c->err.data, "oops\nagain\n", 11);
	CU_ASSERT_FALSE(c->truncated);
}

/* Feed `sb` in chunks of `chunk` bytes. */
static int feed_chunks(frames *f, capture *c, const strbuf *sb, size_t chunk)
{
	int st = FRAMES_OK;
	for (size_t off = 0; off < sb->len; off += chunk) {
		size_t n = sb->len - off < chunk ? sb->len - off : chunk;
		st = frames_feed(f, c, sb->data + off, n);
	}
	return st;
}

static void test_whole(void)
{
	strbuf sb;
	sample_stream(&sb);
	frames f;
	capture c;
	frames_init(&f);
	capture_init(&c, 1024);
	CU_ASSERT_EQUAL(frames_feed(&f, &c, sb.data, sb.len), FRAMES_OK);
	check_sample(&c);
	CU_ASSERT_FALSE(frames_partial(&f));
	frames_free(&f);
	capture_free(&c);
	sb_free(&sb);
}

/* Every chunk size, 1 byte (every header split) up to the whole stream. */
static void test_every_chunk_size(void)
{
	strbuf sb;
	sample_stream(&sb);
	for (size_t chunk = 1; chunk <= sb.len; chunk++) {
		frames f;
		capture c;
		frames_init(&f);
		capture_init(&c, 1024);
		CU_ASSERT_EQUAL(feed_chunks(&f, &c, &sb, chunk), FRAMES_OK);
		check_sample(&c);
		CU_ASSERT_FALSE(frames_partial(&f));
		frames_free(&f);
		capture_free(&c);
	}
	sb_free(&sb);
}

/* Every single split point into two reads. */
static void test_every_split_point(void)
{
	strbuf sb;
	sample_stream(&sb);
	for (size_t cut = 0; cut <= sb.len; cut++) {
		frames f;
		capture c;
		frames_init(&f);
		capture_init(&c, 1024);
		frames_feed(&f, &c, sb.data, cut);
		CU_ASSERT_EQUAL(frames_feed(&f, &c, sb.data + cut, sb.len - cut), FRAMES_OK);
		check_sample(&c);
		frames_free(&f);
		capture_free(&c);
	}
	sb_free(&sb);
}

static void test_ends_mid_frame(void)
{
	strbuf sb;
	sb_init(&sb);
	put_frame(&sb, 1, "abcdef", 6);
	/* inside the header, inside the payload, and exactly at the frame's end */
	size_t cuts[] = { 3, 8 + 2, 14 };
	bool partial[] = { true, true, false };
	for (size_t i = 0; i < 3; i++) {
		frames f;
		capture c;
		frames_init(&f);
		capture_init(&c, 1024);
		CU_ASSERT_EQUAL(frames_feed(&f, &c, sb.data, cuts[i]), FRAMES_OK);
		CU_ASSERT_EQUAL(frames_partial(&f), partial[i]);
		frames_free(&f);
		capture_free(&c);
	}
	sb_free(&sb);
}

static void test_bad_stream_id(void)
{
	int ids[] = { 0, 4, 'H', 255 };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		strbuf sb;
		sb_init(&sb);
		put_frame(&sb, 1, "ok", 2);
		put_frame(&sb, ids[i], "bad", 3);
		put_frame(&sb, 1, "after", 5);
		frames f;
		capture c;
		frames_init(&f);
		capture_init(&c, 1024);
		CU_ASSERT_EQUAL(frames_feed(&f, &c, sb.data, sb.len), FRAMES_BAD_STREAM);
		CU_ASSERT_EQUAL(f.bad_stream, ids[i]);
		CU_ASSERT_EQUAL(c.out.len, 2); /* nothing after the bad header is taken */
		/* sticky */
		CU_ASSERT_EQUAL(frames_feed(&f, &c, "\x01\0\0\0\0\0\0\x01x", 9), FRAMES_BAD_STREAM);
		frames_free(&f);
		capture_free(&c);
		sb_free(&sb);
	}
}

/* A plain HTTP answer where frames were expected is a protocol error, not output. */
static void test_http_text_is_bad(void)
{
	frames f;
	capture c;
	frames_init(&f);
	capture_init(&c, 1024);
	const char *txt = "HTTP/1.1 500 Internal Server Error\r\n";
	CU_ASSERT_EQUAL(frames_feed(&f, &c, txt, strlen(txt)), FRAMES_BAD_STREAM);
	CU_ASSERT_EQUAL(c.out.len + c.err.len, 0);
	frames_free(&f);
	capture_free(&c);
}

/* The cap is combined over stdout + stderr and enforced while feeding. */
static void test_cap(void)
{
	strbuf sb;
	sb_init(&sb);
	put_frame(&sb, 1, "0123456789", 10);
	put_frame(&sb, 2, "abcdefghij", 10);
	put_frame(&sb, 1, "KLMNOPQRST", 10);
	frames f;
	capture c;
	frames_init(&f);
	capture_init(&c, 15);
	int st = FRAMES_OK;
	for (size_t i = 0; i < sb.len; i++) { /* byte by byte: the cap hits mid-frame */
		st = frames_feed(&f, &c, sb.data + i, 1);
		if (i < 8 + 10 + 8 + 5)
			CU_ASSERT_EQUAL(st, FRAMES_OK);
	}
	CU_ASSERT_EQUAL(st, FRAMES_FULL);
	CU_ASSERT_EQUAL(c.out.len + c.err.len, 15);
	CU_ASSERT_NSTRING_EQUAL(c.out.data, "0123456789", 10);
	CU_ASSERT_NSTRING_EQUAL(c.err.data, "abcde", 5);
	CU_ASSERT_TRUE(c.truncated);
	CU_ASSERT_FALSE(frames_partial(&f)); /* still framed correctly after the cap */
	frames_free(&f);
	capture_free(&c);
	sb_free(&sb);
}

/* Output of exactly the cap is not an overflow. */
static void test_exactly_cap(void)
{
	strbuf sb;
	sb_init(&sb);
	put_frame(&sb, 1, "12345", 5);
	put_frame(&sb, 2, "678", 3);
	frames f;
	capture c;
	frames_init(&f);
	capture_init(&c, 8);
	CU_ASSERT_EQUAL(frames_feed(&f, &c, sb.data, sb.len), FRAMES_OK);
	CU_ASSERT_FALSE(c.truncated);
	frames_free(&f);
	capture_free(&c);
	sb_free(&sb);
}

/* Stream 3 carries the engine's own error: kept aside, capped, not program output. */
static void test_syserr(void)
{
	strbuf sb;
	sb_init(&sb);
	put_frame(&sb, 1, "out", 3);
	put_frame(&sb, 3, "engine failed", 13);
	frames f;
	capture c;
	frames_init(&f);
	capture_init(&c, 1024);
	CU_ASSERT_EQUAL(frames_feed(&f, &c, sb.data, sb.len), FRAMES_OK);
	CU_ASSERT_EQUAL(c.out.len, 3);
	CU_ASSERT_EQUAL(c.err.len, 0);
	CU_ASSERT_STRING_EQUAL(f.syserr.data, "engine failed");
	frames_free(&f);
	capture_free(&c);
	sb_free(&sb);
}

/* A huge announced size is streamed, never allocated. */
static void test_huge_frame(void)
{
	frames f;
	capture c;
	frames_init(&f);
	capture_init(&c, 4);
	const unsigned char h[8] = { 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	CU_ASSERT_EQUAL(frames_feed(&f, &c, h, 8), FRAMES_OK);
	CU_ASSERT_EQUAL(frames_feed(&f, &c, "abcdef", 6), FRAMES_FULL);
	CU_ASSERT_EQUAL(f.left, 0xffffffffu - 6);
	CU_ASSERT_TRUE(frames_partial(&f));
	frames_free(&f);
	capture_free(&c);
}

static CU_TestInfo tests[] = {
	{ "whole stream", test_whole },
	{ "every chunk size", test_every_chunk_size },
	{ "every split point", test_every_split_point },
	{ "ends mid-frame", test_ends_mid_frame },
	{ "bad stream id", test_bad_stream_id },
	{ "http text is not frames", test_http_text_is_bad },
	{ "cap while reading", test_cap },
	{ "exactly the cap", test_exactly_cap },
	{ "stream 3 engine error", test_syserr },
	{ "huge frame", test_huge_frame },
	CU_TEST_INFO_NULL,
};

BRIG_CUNIT_MAIN("frames", tests)
