/* sha256.c - SHA-256 of the code, for results and audit lines, with nettle. */
#include "config.h"

#include <nettle/sha2.h>

#include "audit.h"

void sha256_hex(const void *data, size_t len, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	struct sha256_ctx c;
	unsigned char md[SHA256_DIGEST_SIZE];
	sha256_init(&c);
	sha256_update(&c, len, data);
	sha256_digest(&c, sizeof md, md);
	for (unsigned i = 0; i < SHA256_DIGEST_SIZE; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}
