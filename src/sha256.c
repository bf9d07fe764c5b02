/* sha256.c - SHA-256 of the code, for results and audit lines, with nettle.
 *
 * Nettle is loaded for the hash and unloaded after it: linked, its pages stayed resident in
 * every brig process (~260 KiB of an idle `brig mcp`'s RSS, issue 7), for a hash that takes
 * microseconds once per run; the dlopen/dlclose round trip costs ~0.17 ms (measured) next to a
 * warm run's ~50 ms.
 * Only nettle's header is needed to build (the context's layout).
 */
#include "config.h"

#include <dlfcn.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit.h"

static const char *const nettle_names[] = { "libnettle.so.8", "libnettle.so" };

int sha256_nettle(const void *data, size_t len, unsigned char md[SHA256_DIGEST_SIZE])
{
	for (size_t i = 0; i < sizeof nettle_names / sizeof nettle_names[0]; i++) {
		void *h = dlopen(nettle_names[i], RTLD_NOW | RTLD_LOCAL);
		if (!h)
			continue;
		/* nettle's header maps sha256_init & co. to these names */
		void (*init)(struct sha256_ctx *);
		void (*update)(struct sha256_ctx *, size_t, const uint8_t *);
		void (*digest)(struct sha256_ctx *, size_t, uint8_t *);
		*(void **)&init = dlsym(h, "nettle_sha256_init");
		*(void **)&update = dlsym(h, "nettle_sha256_update");
		*(void **)&digest = dlsym(h, "nettle_sha256_digest");
		int r = -1;
		if (init && update && digest) {
			struct sha256_ctx c;
			init(&c);
			update(&c, len, data);
			digest(&c, SHA256_DIGEST_SIZE, md);
			r = 0;
		}
		dlclose(h);
		if (r == 0)
			return 0;
	}
	return -1;
}

void sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[SHA256_DIGEST_SIZE];
	if (sha256_nettle(data, len, md) < 0) {
		/* the package depends on nettle: only a broken installation gets here, and a wrong
		 * hash in a result or an audit line would be worse than stopping */
		fputs("brig: fatal: libnettle cannot be loaded for SHA-256\n", stderr);
		abort();
	}
	static const char hex[] = "0123456789abcdef";
	for (unsigned i = 0; i < SHA256_DIGEST_SIZE; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}
