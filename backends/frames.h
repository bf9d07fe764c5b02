/* frames.h - demultiplexer for Docker's attach stream with Tty=false.
 *
 * Each frame is an 8-byte header [stream, 0, 0, 0, size as uint32 big-endian] followed by `size`
 * payload bytes; stream 1 is stdout, 2 stderr, 3 an engine error message.  Bytes arrive in
 * arbitrary chunks, so this is a pure state machine: feed whatever recv() returned, the payload
 * goes straight into a capture (which enforces the output cap while reading).
 */
#ifndef BRIG_FRAMES_H
#define BRIG_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"

enum frames_status {
	FRAMES_OK = 0,
	FRAMES_FULL = 1,        /* the output cap was exceeded: stop the container */
	FRAMES_BAD_STREAM = -1, /* an unknown stream id: not a Docker attach stream */
};

#define FRAMES_SYSERR_MAX 1024

typedef struct frames {
	unsigned char hdr[8];
	size_t hdr_len; /* header bytes collected so far */
	int stream;     /* of the payload being read */
	uint32_t left;  /* payload bytes of the current frame still to come */
	int status;     /* sticky: a bad stream stays bad */
	int bad_stream; /* the offending id, for the error message */
	strbuf syserr;  /* stream 3 payload (engine error), capped at FRAMES_SYSERR_MAX */
} frames;

void frames_init(frames *f);
void frames_free(frames *f);
/* Consume `n` bytes.  Returns the (sticky) frames_status. */
int frames_feed(frames *f, capture *c, const void *data, size_t n);
/* At EOF: true when the stream ended inside a header or a payload. */
bool frames_partial(const frames *f);

#endif
