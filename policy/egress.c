/* egress.c - the egress allowlist: validation, and the network, proxy address and squid
 * configuration derived from it (egress.h).
 *
 * The proxy is squid from Debian (image brig/egress, scripts/build-images).  What the generated
 * configuration enforces, in order:
 *   - only the box network's own subnet may use the proxy;
 *   - the request's host:port must match an allowlist entry (dstdomain -n: an IP literal is
 *     never reverse-resolved into a name, so a raw IP is never "listed");
 *   - after resolution, no address of the destination may lie in loopback, RFC 1918,
 *     link-local, CGNAT, "this network", benchmarking, multicast or reserved space, nor be one
 *     of the host's own addresses (which include the Docker bridges' gateways) - whatever name
 *     pointed there (squid connects to the addresses it checked: one ipcache entry);
 *   - CONNECT: squid peeks at the TLS ClientHello and splices (no interception) only when its
 *     SNI matches the same allowlist entry as the CONNECT host; otherwise it terminates the
 *     connection (the CONNECT was already answered 200, so that refusal is a closed TLS
 *     connection, not a 403; a ClientHello without SNI is checked against the CONNECT host);
 *   - every HTTP refusal is a 403 carrying X-Brig-Egress-Refused: not-a-box |
 *     not-in-allowlist | destination-address, and the access log line says the same.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "audit.h"
#include "egress.h"
#include "util.h"

/* Destinations never connected to (IPv4: Docker networks carry no IPv6 here, and squid runs
 * without it). */
static const char *const blocked_ranges[] = {
	"0.0.0.0/8",      /* "this network" */
	"10.0.0.0/8",     /* RFC 1918 */
	"100.64.0.0/10",  /* CGNAT, RFC 6598 */
	"127.0.0.0/8",    /* loopback */
	"169.254.0.0/16", /* link-local (cloud metadata services) */
	"172.16.0.0/12",  /* RFC 1918 (Docker's default bridges) */
	"192.0.0.0/24",   /* IETF protocol assignments */
	"192.168.0.0/16", /* RFC 1918 */
	"198.18.0.0/15",  /* benchmarking */
	"224.0.0.0/4",    /* multicast */
	"240.0.0.0/4",    /* reserved, broadcast */
	"::/128",         /* IPv6 unspecified (Docker's networks here carry no IPv6: in case) */
	"::1/128",        /* IPv6 loopback */
	"::ffff:0:0/96",  /* IPv4-mapped */
	"fc00::/7",       /* ULA */
	"fe80::/10",      /* IPv6 link-local */
	"ff00::/8",       /* IPv6 multicast */
};

/* ---- validation ---------------------------------------------------------------------------- */

/* A DNS name in lowercase: labels of [a-z0-9-], 1..63 bytes, not starting or ending with '-',
 * at least two labels, the last not all digits (no IPv4 literal). */
static int check_name(const char *s, size_t n, char *why, size_t why_len)
{
	if (n == 0 || n > EGRESS_NAME_MAX) {
		snprintf(why, why_len, "the host name must have 1..%d characters", EGRESS_NAME_MAX);
		return -1;
	}
	/* .invalid (RFC 6761) names nothing, and the host's own requests to the proxy use one
	 * (BRIG_EGRESS_HEALTH_HOST): a list naming it would turn them into a way out */
	static const char inv[] = ".invalid";
	if ((n == sizeof inv - 2 && memcmp(s, inv + 1, n) == 0) ||
	    (n >= sizeof inv - 1 && memcmp(s + n - (sizeof inv - 1), inv, sizeof inv - 1) == 0)) {
		snprintf(why, why_len, "names under .invalid are reserved (RFC 6761)");
		return -1;
	}
	size_t labels = 0, start = 0;
	bool last_numeric = true;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			char c = s[i];
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
				snprintf(why, why_len,
					 "the host name may contain only a-z, 0-9, '-' and '.' "
					 "(lowercase; "
					 "found '%c' at %zu)",
					 c >= 0x20 && c < 0x7f ? c : '?', i + 1);
				return -1;
			}
			continue;
		}
		size_t len = i - start;
		if (len == 0 || len > 63 || s[start] == '-' || s[i - 1] == '-') {
			snprintf(why, why_len,
				 "label %zu of the host name is empty, longer than 63 characters, "
				 "or "
				 "starts or ends with '-'",
				 labels + 1);
			return -1;
		}
		last_numeric = strspn(s + start, "0123456789") >= len;
		labels++;
		start = i + 1;
	}
	if (labels < 2) {
		snprintf(why, why_len, "the host name needs at least two labels (a.b)");
		return -1;
	}
	if (last_numeric) {
		snprintf(why, why_len,
			 "an IP address is not allowed: name the host (the proxy resolves it and "
			 "checks the address)");
		return -1;
	}
	return 0;
}

int egress_check_entry(const char *entry, char *why, size_t why_len)
{
	const char *colon = strrchr(entry, ':');
	if (!colon) {
		snprintf(why, why_len,
			 "expected host:port (e.g. pypi.org:443 or *.example.org:443)");
		return -1;
	}
	long port;
	const char *ps = colon + 1;
	if (*ps < '1' || *ps > '9' || strspn(ps, "0123456789") != strlen(ps) ||
	    !parse_long(ps, 1, 65535, &port)) {
		snprintf(why, why_len, "the port must be a number from 1 to 65535");
		return -1;
	}
	const char *host = entry;
	if (strncmp(host, "*.", 2) == 0)
		host += 2;
	if (memchr(host, '*', (size_t)(colon - host))) {
		snprintf(why, why_len,
			 "a wildcard is only allowed as the first label (*.example.org)");
		return -1;
	}
	return check_name(host, (size_t)(colon - host), why, why_len);
}

int egress_check_host(const char *entry, char *why, size_t why_len)
{
	const char *eq = strchr(entry, '=');
	if (!eq) {
		snprintf(why, why_len, "expected name=address");
		return -1;
	}
	if (check_name(entry, (size_t)(eq - entry), why, why_len) < 0)
		return -1;
	unsigned char buf[sizeof(struct in6_addr)];
	if (inet_pton(AF_INET, eq + 1, buf) != 1 && inet_pton(AF_INET6, eq + 1, buf) != 1) {
		snprintf(why, why_len, "the address must be an IPv4 or IPv6 address");
		return -1;
	}
	return 0;
}

static bool strv_has(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

bool egress_subset(char *const *next, char *const *prev)
{
	for (; next && *next; next++)
		if (!strv_has(prev, *next))
			return false;
	return true;
}

/* ---- the derived network and proxy --------------------------------------------------------- */

static void ip4_text(uint32_t a, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

/* The squid ACL value for an entry's host: dstdomain / ssl::server_name take a name as it is;
 * a wildcard becomes a regex of one or more labels under it (not the name itself). */
static void add_host_acl(strbuf *sb, const char *acl, const char *kind_exact,
			 const char *kind_regex, const char *host, size_t n)
{
	if (strncmp(host, "*.", 2) != 0) {
		sb_printf(sb, "acl %s %s %.*s\n", acl, kind_exact, (int)n, host);
		return;
	}
	sb_printf(sb, "acl %s %s ^([a-z0-9-]+\\.)+", acl, kind_regex);
	for (size_t i = 2; i < n; i++) {
		if (host[i] == '.')
			sb_puts(sb, "\\.");
		else
			sb_append(sb, &host[i], 1);
	}
	sb_puts(sb, "$\n");
}

/* Is IPv4 "A.B.C.D[/32]" inside one of blocked_ranges?  Such a host address (a Docker
 * bridge's gateway, 172.16/12) adds nothing to the list, and leaving it out keeps the
 * configuration - and so the proxy - the same when Docker adds a bridge. */
static bool in_blocked_range(const char *addr)
{
	char a[INET_ADDRSTRLEN];
	snprintf(a, sizeof a, "%.*s", (int)strcspn(addr, "/"), addr);
	struct in_addr x;
	if (inet_pton(AF_INET, a, &x) != 1)
		return false;
	uint32_t v = ntohl(x.s_addr);
	for (size_t i = 0; i < sizeof blocked_ranges / sizeof *blocked_ranges; i++) {
		char net[INET_ADDRSTRLEN];
		const char *r = blocked_ranges[i];
		snprintf(net, sizeof net, "%.*s", (int)strcspn(r, "/"), r);
		struct in_addr n;
		if (strchr(r, ':') || inet_pton(AF_INET, net, &n) != 1)
			continue;
		long bits = strtol(strchr(r, '/') + 1, NULL, 10);
		uint32_t mask = bits == 0 ? 0 : ~0u << (32 - bits);
		if ((v & mask) == (ntohl(n.s_addr) & mask))
			return true;
	}
	return false;
}

static char *squid_config(const brig_egress *e, char *const *blocked)
{
	strbuf sb;
	sb_init(&sb);
	sb_printf(&sb,
		  "# brig egress proxy %s: generated from the policy's egress.allow; not to be "
		  "edited\n",
		  e->digest);
	for (char **a = e->allow; *a; a++)
		sb_printf(&sb, "#   allow %s\n", *a);
	/* Two ports.  The boxes' (front) never peeks at TLS, so a CONNECT it refuses is a plain
	 * 403 with the reason (on a port that peeks, squid 5 always bumps the client to deliver an
	 * error, which a verifying client sees as a certificate error).  The CONNECTs it allows go
	 * to squid's own loopback port (inner, cache_peer "tls"), which checks the list again,
	 * peeks at the ClientHello and splices or terminates.  The inner port logs the CONNECT with
	 * the box's address (from the front's X-Forwarded-For) and the SNI, and the spliced tunnel
	 * (upstream address, bytes) in a line of its own with client 127.0.0.1; both carry the
	 * front's port to it (%>p; %lp tells the ports apart), which joins them (keep_box_lines in
	 * the backend, egress_decisions).  The front's own line for a tunnel it handed over (status
	 * 200, upstream 127.0.0.1) is left out of the decisions. */
	sb_printf(&sb,
		  "http_port %d name=front\n"
		  "http_port 127.0.0.1:%d name=inner ssl-bump tls-cert=/etc/squid/splice.pem "
		  "generate-host-certificates=off\n"
		  "cache_peer 127.0.0.1 parent %d 0 no-query no-digest no-netdb-exchange "
		  "connect-fail-limit=1000000 name=tls\n"
		  "pinger_enable off\n"
		  "visible_hostname brig-egress\n"
		  "pid_filename none\n"
		  "coredump_dir none\n"
		  "cache deny all\n"
		  "cache_mem 0 MB\n"
		  "shutdown_lifetime 0 seconds\n"
		  "via off\n"
		  "httpd_suppress_version_string on\n"
		  "hosts_file /etc/brig-egress/hosts\n"
		  "logformat brig %%ts.%%03tu %%>a %%rm %%ru %%>Hs %%<a %%>st %%<st "
		  "%%{brig-refused}note %%#ssl::>sni %%>p %%lp\n"
		  "acl front myportname front\n"
		  "acl inner myportname inner\n"
		  "acl from_front src 127.0.0.1/32\n"
		  /* X-Forwarded-For only to the inner port, which takes the box from it and logs
		   * it as the client (every line of a tunnel it splices is the box's); a box's own
		   * X-Forwarded-For is left of the address the front appends: never looked at */
		  "forwarded_for on\n"
		  "follow_x_forwarded_for allow inner from_front\n"
		  "follow_x_forwarded_for deny all\n"
		  "acl_uses_indirect_client off\n"
		  "log_uses_indirect_client on\n"
		  "acl brig_connect method CONNECT\n"
		  "acl health dstdomain " BRIG_EGRESS_HEALTH_HOST "\n"
		  "acl health_port port 1\n"
		  "access_log stdio:/dev/stdout brig\n"
		  "cache_log stdio:/dev/stderr\n"
		  "cache_peer_access tls allow front brig_connect\n"
		  "cache_peer_access tls deny all\n"
		  "never_direct allow front brig_connect\n"
		  "request_header_access X-Forwarded-For deny !brig_connect\n"
		  "acl boxes src %s\n"
		  "acl blocked_dst dst",
		  e->proxy_port, e->proxy_port + 1, e->proxy_port + 1, e->subnet);
	for (size_t i = 0; i < sizeof blocked_ranges / sizeof *blocked_ranges; i++)
		sb_printf(&sb, " %s", blocked_ranges[i]);
	for (char *const *b = blocked; b && *b; b++)
		if (!strchr(*b, ':') && !in_blocked_range(*b))
			sb_printf(&sb, " %s", *b);
	sb_puts(&sb, "\n"
		     "acl step1 at_step SslBump1\n"
		     "acl r_box annotate_transaction brig-refused=not-a-box\n"
		     "acl r_list annotate_transaction brig-refused=not-in-allowlist\n"
		     "acl r_addr annotate_transaction brig-refused=destination-address\n"
		     "acl r_sni annotate_transaction brig-refused=sni-mismatch\n"
		     "acl refused note brig-refused\n"
		     "acl brig_http proto HTTP\n");
	size_t n = 0;
	for (char **a = e->allow; *a; a++, n++) {
		const char *colon = strrchr(*a, ':');
		size_t hl = (size_t)(colon - *a);
		char name[32];
		snprintf(name, sizeof name, "a%zu_host", n);
		add_host_acl(&sb, name, "dstdomain -n", "dstdom_regex -n", *a, hl);
		snprintf(name, sizeof name, "a%zu_sni", n);
		add_host_acl(&sb, name, "ssl::server_name", "ssl::server_name_regex", *a, hl);
		sb_printf(&sb, "acl a%zu_port port %s\n", n, colon + 1);
		sb_printf(&sb, "acl a%zu all-of a%zu_host a%zu_port\n", n, n, n);
		sb_printf(&sb, "acl a%zu_tls all-of a%zu_host a%zu_port a%zu_sni\n", n, n, n, n);
	}
	sb_puts(&sb, "acl listed any-of");
	for (size_t i = 0; i < n; i++)
		sb_printf(&sb, " a%zu", i);
	sb_puts(&sb, "\nacl sni_ok any-of");
	for (size_t i = 0; i < n; i++)
		sb_printf(&sb, " a%zu_tls", i);
	sb_printf(&sb,
		  "\n"
		  /* the host's health check: a CONNECT the front hands to the inner port, which
		   * refuses it (not listed): a 200 from the front says both ports work */
		  "http_access allow front !boxes brig_connect health health_port\n"
		  "http_access deny front !boxes r_box\n"
		  "http_access deny inner !from_front r_box\n"
		  "http_access deny !brig_connect !brig_http r_list\n"
		  "http_access deny !listed r_list\n"
		  "http_access deny blocked_dst r_addr\n"
		  "http_access allow listed\n"
		  "http_access deny all r_list\n"
		  "ssl_bump peek step1\n"
		  "ssl_bump splice sni_ok\n"
		  "ssl_bump terminate r_sni all\n"
		  "reply_header_add %s \"%%{brig-refused}note\" refused\n",
		  EGRESS_REASON_HDR);
	return sb_steal(&sb);
}

static char *hosts_text(char *const *hosts)
{
	strbuf sb;
	sb_init(&sb);
	sb_puts(&sb, "# brig egress proxy: the policy's egress.hosts\n");
	for (; hosts && *hosts; hosts++) {
		const char *eq = strchr(*hosts, '=');
		sb_printf(&sb, "%s %.*s\n", eq + 1, (int)(eq - *hosts), *hosts);
	}
	return sb_steal(&sb);
}

brig_egress *egress_build(char *const *allow, char *const *hosts, char *const *blocked)
{
	if (!allow || !allow[0])
		return NULL;
	/* the digest covers what the proxy enforces: the list and the names it was given */
	strbuf key;
	sb_init(&key);
	for (char *const *a = allow; *a; a++)
		sb_printf(&key, "allow %s\n", *a);
	for (char *const *h = hosts; h && *h; h++)
		sb_printf(&key, "host %s\n", *h);
	char hex[65];
	sha256_hex(key.data, key.len, hex);
	sb_free(&key);

	brig_egress *e = xcalloc(1, sizeof *e);
	e->struct_size = sizeof *e;
	e->digest = xstrndup(hex, 12);
	e->network = xasprintf("brig-egress-%s", e->digest);
	e->proxy_name = xasprintf("brig-egress-%s", e->digest);
	e->outer_network = xstrdup(EGRESS_OUTER);
	e->proxy_image = xstrdup(EGRESS_IMAGE);
	e->proxy_port = EGRESS_PROXY_PORT;
	unsigned slot = (unsigned)strtoul(e->digest + 9, NULL, 16) % EGRESS_POOL_SLOTS;
	uint32_t base = EGRESS_POOL_FIRST + slot * 1024u;
	char a[INET_ADDRSTRLEN];
	ip4_text(base, a, sizeof a);
	e->subnet = xasprintf("%s/22", a);
	ip4_text(base + 1, a, sizeof a);
	e->gateway = xstrdup(a);
	ip4_text(base + 2, a, sizeof a);
	e->proxy_address = xstrdup(a);
	e->allow = strv_copy((char **)allow);
	e->hosts = hosts && hosts[0] ? strv_copy((char **)hosts) : NULL;
	e->config = squid_config(e, blocked);
	e->hosts_file = hosts_text(hosts);
	cleanup_free char *both = xasprintf("%s\n%s", e->config, e->hosts_file);
	sha256_hex(both, strlen(both), hex);
	e->config_digest = xstrndup(hex, 16);
	return e;
}

void egress_free(brig_egress *e)
{
	if (!e)
		return;
	free(e->digest);
	free(e->network);
	free(e->subnet);
	free(e->gateway);
	free(e->outer_network);
	free(e->proxy_name);
	free(e->proxy_image);
	free(e->proxy_address);
	strv_free(e->allow);
	strv_free(e->hosts);
	free(e->config);
	free(e->hosts_file);
	free(e->config_dir);
	free(e->config_digest);
	free(e);
}

static bool opt_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

bool egress_same(const brig_egress *a, const brig_egress *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a->digest, b->digest) == 0 && strcmp(a->config, b->config) == 0 &&
	       opt_eq(a->config_dir, b->config_dir);
}

char **egress_host_addresses(void)
{
	struct ifaddrs *ifa = NULL;
	size_t n = 0, cap = 8;
	char **v = xcalloc(cap + 1, sizeof *v);
	if (getifaddrs(&ifa) < 0)
		return v;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		char buf[INET_ADDRSTRLEN];
		const struct sockaddr_in *sin =
			(const struct sockaddr_in *)(const void *)i->ifa_addr;
		if (!inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf))
			continue;
		cleanup_free char *s = xasprintf("%s/32", buf);
		if (strv_has(v, s))
			continue;
		if (n == cap) {
			cap *= 2;
			v = xrealloc(v, (cap + 1) * sizeof *v);
		}
		v[n++] = steal_pointer(&s);
		v[n] = NULL;
	}
	freeifaddrs(ifa);
	return v;
}

/* ---- the decisions of one box ---------------------------------------------------------------- */

/* "-" is squid's "none" */
static json_object *field_or_null(const char *f)
{
	return strcmp(f, "-") == 0 ? NULL : json_object_new_string(f);
}

static json_object *count_or_null(const char *f)
{
	long v;
	return parse_long(f, 0, 1L << 40, &v) ? json_object_new_int64(v) : NULL;
}

/* host and port of squid's %ru: "host:port" for CONNECT, an absolute URI for the others */
static void url_host_port(const char *method, const char *url, char *host, size_t host_len,
			  long *port)
{
	*port = 0;
	const char *h = url;
	if (strcmp(method, "CONNECT") != 0) {
		const char *sep = strstr(url, "://");
		h = sep ? sep + 3 : url;
		*port = strncmp(url, "https:", 6) == 0 ? 443 : 80;
	}
	size_t n = strcspn(h, "/?#");
	const char *colon = memchr(h, ':', n);
	size_t hn = colon ? (size_t)(colon - h) : n;
	snprintf(host, host_len, "%.*s", (int)hn, h);
	if (colon) {
		cleanup_free char *p = xstrndup(colon + 1, n - hn - 1);
		if (!parse_long(p, 0, 65535, port))
			*port = 0;
	}
}

static bool known_reason(const char *r)
{
	static const char *const known[] = { "-", "not-a-box", "not-in-allowlist",
					     "destination-address", "sni-mismatch" };
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (strcmp(r, known[i]) == 0)
			return true;
	return false;
}

/* The decision a tunnel line completes: the latest CONNECT of the inner port's client port,
 * once (its port is forgotten: a later line of that port is another connection's). */
static json_object *tunnel_decision(json_object *a, long *ports, size_t n, long port)
{
	if (port < 0)
		return NULL;
	for (size_t i = n; i-- > 0;)
		if (ports[i] == port) {
			ports[i] = -1;
			return json_object_array_get_idx(a, i);
		}
	return NULL;
}

char *egress_decisions(const char *log)
{
	json_object *a = json_object_new_array();
	cleanup_free char *copy = xstrdup(log ? log : "");
	/* per decision: the inner port's client port (%>p) of its CONNECT, or -1 */
	size_t cap = 16, n_ports = 0;
	cleanup_free long *ports = xcalloc(cap, sizeof *ports);
	char *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* %ts.%03tu %>a %rm %ru %>Hs %<a %>st %<st %{brig-refused}note %ssl::>sni %>p %lp
		 */
		char *f[12];
		size_t n = 0;
		char *fs = NULL;
		for (char *t = strtok_r(line, " ", &fs); t && n < 12; t = strtok_r(NULL, " ", &fs))
			f[n++] = t;
		/* squid escapes %ru and (with %#) the SNI, so a line is one transaction; a field
		 * that is not what its code prints is a line of something else: skipped */
		if (n < 10 || strspn(f[0], "0123456789.") != strlen(f[0]) ||
		    strspn(f[2], "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(f[2]) ||
		    strspn(f[4], "0123456789") != strlen(f[4]) || !known_reason(f[8]))
			continue;
		char host[256];
		long port, status, cport = -1, lport = -1;
		url_host_port(f[2], f[3], host, sizeof host, &port);
		if (!parse_long(f[4], 0, 999, &status))
			status = 0;
		if (n == 12 &&
		    (!parse_long(f[10], 0, 65535, &cport) || !parse_long(f[11], 0, 65535, &lport)))
			cport = lport = -1;
		bool connect = strcmp(f[2], "CONNECT") == 0;
		bool inner = lport == EGRESS_PROXY_PORT + 1;
		/* the front port's line for a CONNECT it handed to the inner (TLS) port: the inner
		 * port's lines are the decision (squid_config); no upstream is ever 127.0.0.1 */
		if (connect && !inner && status == 200 && strcmp(f[5], "127.0.0.1") == 0)
			continue;
		/* the inner port's line of a spliced tunnel: the upstream's address and the bytes
		 * of the CONNECT it logged before (squid logs a spliced tunnel with status 500) */
		if (inner && strcmp(f[1], "127.0.0.1") == 0) {
			if (!connect) /* the front's own request it could not parse: nobody's */
				continue;
			json_object *d = tunnel_decision(a, ports, n_ports, cport);
			if (d) {
				json_object_object_add(d, "address", field_or_null(f[5]));
				json_object_object_add(d, "bytes_out", count_or_null(f[6]));
				json_object_object_add(d, "bytes_in", count_or_null(f[7]));
			}
			continue;
		}
		bool refused = strcmp(f[8], "-") != 0;
		json_object *d = json_object_new_object();
		json_object_object_add(d, "time", json_object_new_double(strtod(f[0], NULL)));
		json_object_object_add(d, "method", json_object_new_string(f[2]));
		json_object_object_add(d, "host", json_object_new_string(host));
		json_object_object_add(d, "port", json_object_new_int((int)port));
		json_object_object_add(d, "status", json_object_new_int((int)status));
		json_object_object_add(d, "address", field_or_null(f[5]));
		json_object_object_add(d, "bytes_out", count_or_null(f[6]));
		json_object_object_add(d, "bytes_in", count_or_null(f[7]));
		json_object_object_add(d, "allowed", json_object_new_boolean(!refused));
		json_object_object_add(d, "reason", refused ? json_object_new_string(f[8]) : NULL);
		json_object_object_add(d, "sni", field_or_null(f[9]));
		json_object_array_add(a, d);
		if (n_ports == cap) {
			cap *= 2;
			ports = xrealloc(ports, cap * sizeof *ports);
		}
		ports[n_ports++] = connect && inner ? cport : -1;
	}
	char *text = xstrdup(json_object_to_json_string_ext(
		a, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(a);
	return text;
}
