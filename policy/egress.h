/* egress.h - the egress allowlist (policy key "egress"): its validation, and everything derived
 * from it for the final spec: the box's internal network, the proxy's address and the squid
 * configuration that enforces the list.  Host-only; backends see brig_egress (brig-spec.h).
 */
#ifndef BRIG_POLICY_EGRESS_H
#define BRIG_POLICY_EGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "brig-spec.h"

#define EGRESS_ALLOW_MAX  64   /* entries of egress.allow */
#define EGRESS_HOSTS_MAX  64   /* entries of egress.hosts */
#define EGRESS_NAME_MAX   253  /* a DNS name */
#define EGRESS_PROXY_PORT 3128 /* the boxes'; its TLS port is the next, on its loopback */
/* Every egress network is a /22 of 10.208.0.0/12, chosen by the allowlist's digest: the
 * proxy's address is then known before it starts (the spec is final, `brig explain` shows
 * it).  .1 is the gateway Docker reserves (the host gets no address on it), .2 the proxy. */
#define EGRESS_POOL_FIRST 0x0ad00000u /* 10.208.0.0 */
#define EGRESS_POOL_SLOTS 1024u
#define EGRESS_OUTER      "brig-egress-out" /* the proxies' network with a route out */
#define EGRESS_IMAGE      "brig/egress:bookworm"
#define EGRESS_NO_PROXY   "localhost,127.0.0.1,::1"
#define EGRESS_REASON_HDR "X-Brig-Egress-Refused"

/* in the node image (scripts/build-images): routes fetch() through HTTPS_PROXY */
#define EGRESS_NODE_PRELOAD "/usr/lib/brig/egress-fetch.js"

/* One allowlist entry: "host:port", host a DNS name in lowercase or "*." + one (any name
 * below it, not the name itself); no IP literals.  On failure returns -1 and says why. */
int egress_check_entry(const char *entry, char *why, size_t why_len);
/* One hosts-map entry "name=address": a DNS name (no wildcard) and an IPv4 or IPv6 literal. */
int egress_check_host(const char *entry, char *why, size_t why_len);

/* Is every entry of `next` also in `prev` (the change allows nothing new)? */
bool egress_subset(char *const *next, char *const *prev);

/* The egress part of the final spec for this allowlist and hosts map (validated already), or
 * NULL when `allow` is empty.  `blocked` lists more addresses the proxy must never connect to
 * (the host's own, the bridges' gateways), NULL-terminated or NULL. */
brig_egress *egress_build(char *const *allow, char *const *hosts, char *const *blocked);
void egress_free(brig_egress *e);
bool egress_same(const brig_egress *a, const brig_egress *b);

/* The decisions in a box's proxy log lines (brig_outcome.egress_log), as JSON text: an array
 * of {"time", "method", "host", "port", "status", "address" (the upstream's, null when none
 * was connected), "bytes_out", "bytes_in", "allowed", "reason" (null, or why it was
 * refused: not-in-allowlist, destination-address, not-a-box, sni-mismatch), "sni"}.  Paths
 * and queries of URLs are not kept (they may carry secrets). */
char *egress_decisions(const char *log);

/* The host's own addresses (every interface's, which includes the Docker bridges' gateways),
 * as "ADDR/32" or "ADDR/128" strings, NULL-terminated (malloc'ed). */
char **egress_host_addresses(void);

#endif
