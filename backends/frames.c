/* frames.c - Docker attach stream demultiplexer (see frames.h). */
#include "config.h"

#include <string.h>

#include "frames.h"

void frames_init(frames *f)
{
	memset(f->hdr, 0, sizeof f->hdr);
	f->hdr_len = 0;
	f->stream = 0;
	f->left = 0;
	f->status = FRAMES_OK;
	f->bad_stream = -1;
	sb_init(&f->syserr);
}

void frames_free(frames *f)
{
	sb_free(&f->syserr);
}

/* A complete header: validate the stream id and start its payload. */
static int frames_header_done(frames *f)
{
	int stream = f->hdr[0];
	if (stream < 1 || stream > 3) {
		f->bad_stream = stream;
		return f->status = FRAMES_BAD_STREAM;
	}
	f->stream = stream;
	f->left = (uint32_t)f->hdr[4] << 24 | (uint32_t)f->hdr[5] << 16 | (uint32_t)f->hdr[6] << 8 |
		  (uint32_t)f->hdr[7];
	f->hdr_len = 0;
	return FRAMES_OK;
}

static void frames_payload(frames *f, capture *c, const unsigned char *p, size_t n)
{
	if (f->stream == 3) {
		size_t room = FRAMES_SYSERR_MAX - f->syserr.len;
		sb_append(&f->syserr, p, n < room ? n : room);
	} else if (capture_add(c, f->stream, p, n)) {
		f->status = FRAMES_FULL;
	}
}

int frames_feed(frames *f, capture *c, const void *data, size_t n)
{
	const unsigned char *p = data;
	while (n > 0 && f->status != FRAMES_BAD_STREAM) {
		if (f->left == 0) {
			/* between frames (zero-length payloads end here at once) */
			size_t take = sizeof f->hdr - f->hdr_len;
			if (take > n)
				take = n;
			memcpy(f->hdr + f->hdr_len, p, take);
			f->hdr_len += take;
			p += take;
			n -= take;
			if (f->hdr_len == sizeof f->hdr && frames_header_done(f) < 0)
				break;
			continue;
		}
		size_t take = n < f->left ? n : f->left;
		frames_payload(f, c, p, take);
		f->left -= (uint32_t)take;
		p += take;
		n -= take;
	}
	return f->status;
}

bool frames_partial(const frames *f)
{
	return f->hdr_len > 0 || f->left > 0;
}
