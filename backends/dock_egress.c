/* dock_egress.c - the egress proxies over the Engine API: the proxies' outer network, one
 * --internal network per allowlist, the squid container joined to both, its health check, and
 * the removal of idle ones (brig-backend.h: egress_ensure, egress_gc).
 *
 * The internal network is created with com.docker.network.bridge.inhibit_ipv4: the bridge gets
 * no address of the host's, so a box on it reaches nothing but the other containers on it -
 * the proxy.  The proxy runs as nobody with a read-only root, no capabilities, bounded memory
 * and processes; its access log goes to its json-file log (capped), which the host reads for
 * the audit.  The proxy carries the label brig.egress=<digest>, not "brig": the janitors of
 * boxes must not take it for a leftover box.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "dock.h"
#include "dock_http.h"
#include "frames.h"
#include "plugin_host.h"
#include "util.h"

#define EG_QUERY_MS   15000L
#define EG_CREATE_MS  30000L
#define EG_HEALTHY_MS 15000 /* a fresh squid answers in ~0.5 s */
/* the outer network's fixed subnet: a second concurrent creation fails (overlap) instead of
 * making a second network of the same name (the proxies refuse 10/8 destinations anyway) */
#define EG_OUTER_SUBNET "10.207.255.0/24"
#define EG_CONNECT_MS   1000
#define EG_LABEL        "brig.egress"
#define EG_LABEL_CONFIG "brig.egress.config"
#define EG_MEMORY       (128LL << 20)
#define EG_PIDS         64
#define EG_CONFIG_PATH  "/etc/brig-egress"
#define EG_OUTER        "brig-egress-out" /* policy/egress.h EGRESS_OUTER */

static json_object *parse_body(const dock_response *r)
{
	return json_tokener_parse(r->body.data ? r->body.data : "");
}

static int http_fail(brig_error **err, const char *what, const dock_response *r)
{
	cleanup_free char *txt = dock_error_text(r);
	return plugin_fail(err, BRIG_E_SANDBOX, 0, "%s: HTTP %ld: %s", what, r->status, txt);
}

static json_object *labels(const char *value)
{
	json_object *l = json_object_new_object();
	json_object_object_add(l, EG_LABEL, json_object_new_string(value));
	return l;
}

static json_object *proxy_labels(const brig_egress *e)
{
	json_object *l = labels(e->digest);
	json_object_object_add(l, EG_LABEL_CONFIG, json_object_new_string(e->config_digest));
	return l;
}

static int network_inspect(const char *name, int *users, brig_error **err);

/* POST /networks/create; "already exists" (a concurrent caller) is fine, and so is "overlaps"
 * once a network of that name is there: CheckDuplicate is best effort in the engine, so two
 * concurrent creators could make two networks of one name (every later lookup by name then
 * fails as ambiguous); a fixed subnet makes the second creation fail instead. */
static int network_create(const char *name, json_object *body, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = dock_engine_request("POST", EG_CREATE_MS, json_object_to_json_string(body), &resp,
				    err, "/networks/create");
	json_object_put(body);
	if (r < 0)
		return r;
	if (resp.status == 201)
		return 0;
	cleanup_free char *txt = dock_error_text(&resp);
	if (resp.status == 409 || strstr(txt, "already exists"))
		return 0;
	if (strstr(txt, "overlaps") && network_inspect(name, NULL, NULL) > 0)
		return 0;
	return plugin_fail(err, BRIG_E_SANDBOX, 0, "creating network %s: HTTP %ld: %s", name,
			   resp.status, txt);
}

/* GET /networks/NAME: 1 and its attached containers in *users (when not NULL), 0 when there is
 * no such network, < 0 on error. */
static int network_inspect(const char *name, int *users, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = dock_engine_request("GET", EG_QUERY_MS, NULL, &resp, err, "/networks/%s", name);
	if (r < 0)
		return r;
	if (resp.status == 404)
		return 0;
	if (resp.status != 200)
		return http_fail(err, "inspecting a network", &resp);
	if (users) {
		json_object *o = parse_body(&resp), *c;
		*users = json_object_object_get_ex(o, "Containers", &c) && c
				 ? json_object_object_length(c)
				 : 0;
		json_object_put(o);
	}
	return 1;
}

/* The proxy's json-file log holds at most 2 x EG_LOG_KIB (proxy_body): a read never reaches
 * EG_LOG_MAX.  $BRIG_EGRESS_LOG_KIB sets the size of a new proxy's (a very busy one wants more;
 * the tests, less). */
#define EG_LOG_KIB     4096L
#define EG_LOG_KIB_MIN 16L
#define EG_LOG_MAX     (16u << 20)

/* The internal network's dynamic range: the upper /23 of its /22, so that no box or holder
 * started while its proxy is down takes the proxy's fixed address (the third of the /22).
 * Malloc'ed; NULL when `subnet` is not an IPv4 /22. */
static char *dynamic_range(const char *subnet)
{
	char a[INET_ADDRSTRLEN];
	struct in_addr in;
	const char *slash = subnet ? strchr(subnet, '/') : NULL;
	if (!slash || strcmp(slash, "/22") != 0 || (size_t)(slash - subnet) >= sizeof a)
		return NULL;
	memcpy(a, subnet, (size_t)(slash - subnet));
	a[slash - subnet] = '\0';
	if (inet_pton(AF_INET, a, &in) != 1)
		return NULL;
	in.s_addr = htonl(ntohl(in.s_addr) + 512u);
	if (!inet_ntop(AF_INET, &in, a, sizeof a))
		return NULL;
	return xasprintf("%s/23", a);
}

/* A network of the box network's name that is there already must be the one brig makes:
 * internal, without an address of the host's, of the allowlist's subnet.  Another (left by
 * someone else) could give a box a route out: refused, never used. */
static int internal_network_ok(const brig_egress *e, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = dock_engine_request("GET", EG_QUERY_MS, NULL, &resp, err, "/networks/%s",
				    e->network);
	if (r < 0)
		return r;
	json_object *o = parse_body(&resp), *v, *opts, *ipam, *cfgs;
	bool internal = json_object_object_get_ex(o, "Internal", &v) && json_object_get_boolean(v);
	bool no_host =
		json_object_object_get_ex(o, "Options", &opts) &&
		json_object_object_get_ex(opts, "com.docker.network.bridge.inhibit_ipv4", &v) &&
		strcmp(json_object_get_string(v), "true") == 0;
	json_object *cfg = json_object_object_get_ex(o, "IPAM", &ipam) &&
					   json_object_object_get_ex(ipam, "Config", &cfgs) &&
					   json_object_array_length(cfgs) == 1
				   ? json_object_array_get_idx(cfgs, 0)
				   : NULL;
	bool subnet = json_object_object_get_ex(cfg, "Subnet", &v) &&
		      json_object_is_type(v, json_type_string) &&
		      strcmp(json_object_get_string(v), e->subnet) == 0;
	cleanup_free char *want = dynamic_range(e->subnet);
	bool range = want && json_object_object_get_ex(cfg, "IPRange", &v) &&
		     json_object_is_type(v, json_type_string) &&
		     strcmp(json_object_get_string(v), want) == 0;
	json_object_put(o);
	if (resp.status == 200 && internal && no_host && subnet && range)
		return 0;
	if (resp.status == 200 && internal && no_host && subnet)
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "network %s has no dynamic range %s apart from its proxy's "
				   "address (an older brig made it): refused; remove its proxy and "
				   "it (docker rm -f %s; docker network rm %s)",
				   e->network, want ? want : "?", e->proxy_name, e->network);
	return plugin_fail(err, BRIG_E_SANDBOX, 0,
			   "network %s exists but is not the one brig makes (internal, no address "
			   "of the host's, subnet %s): refused; remove it (docker network rm %s)",
			   e->network, e->subnet, e->network);
}

static int ensure_networks(const brig_egress *e, brig_error **err)
{
	int r = network_inspect(e->outer_network, NULL, err);
	if (r == 0) {
		json_object *b = json_object_new_object();
		json_object_object_add(b, "Name", json_object_new_string(e->outer_network));
		json_object_object_add(b, "CheckDuplicate", json_object_new_boolean(true));
		json_object_object_add(b, "Labels", labels("outer"));
		json_object *cfg = json_object_new_object();
		json_object_object_add(cfg, "Subnet", json_object_new_string(EG_OUTER_SUBNET));
		json_object *cfgs = json_object_new_array();
		json_object_array_add(cfgs, cfg);
		json_object *ipam = json_object_new_object();
		json_object_object_add(ipam, "Config", cfgs);
		json_object_object_add(b, "IPAM", ipam);
		r = network_create(e->outer_network, b, err);
	}
	if (r < 0)
		return r;
	r = network_inspect(e->network, NULL, err);
	if (r > 0)
		return internal_network_ok(e, err);
	if (r < 0)
		return r;
	json_object *b = json_object_new_object();
	json_object_object_add(b, "Name", json_object_new_string(e->network));
	json_object_object_add(b, "CheckDuplicate", json_object_new_boolean(true));
	json_object_object_add(b, "Internal", json_object_new_boolean(true));
	json_object *cfg = json_object_new_object();
	json_object_object_add(cfg, "Subnet", json_object_new_string(e->subnet));
	json_object_object_add(cfg, "Gateway", json_object_new_string(e->gateway));
	cleanup_free char *range = dynamic_range(e->subnet);
	if (!range) {
		json_object_put(cfg);
		json_object_put(b);
		return plugin_fail(err, BRIG_E_SANDBOX, 0, "egress subnet %s is not an IPv4 /22",
				   e->subnet);
	}
	json_object_object_add(cfg, "IPRange", json_object_new_string(range));
	json_object *cfgs = json_object_new_array();
	json_object_array_add(cfgs, cfg);
	json_object *ipam = json_object_new_object();
	json_object_object_add(ipam, "Driver", json_object_new_string("default"));
	json_object_object_add(ipam, "Config", cfgs);
	json_object_object_add(b, "IPAM", ipam);
	json_object *opts = json_object_new_object();
	json_object_object_add(opts, "com.docker.network.bridge.inhibit_ipv4",
			       json_object_new_string("true"));
	json_object_object_add(b, "Options", opts);
	json_object_object_add(b, "Labels", labels(e->digest));
	return network_create(e->network, b, err);
}

static json_object *proxy_body(const brig_egress *e)
{
	json_object *b = json_object_new_object();
	json_object_object_add(b, "Image", json_object_new_string(e->proxy_image));
	json_object_object_add(b, "User", json_object_new_string("65534:65534"));
	json_object_object_add(b, "Labels", proxy_labels(e));
	json_object *hc = json_object_new_object();
	json_object_object_add(hc, "NetworkMode", json_object_new_string(e->outer_network));
	json_object_object_add(hc, "ReadonlyRootfs", json_object_new_boolean(true));
	json_object *tmpfs = json_object_new_object();
	json_object_object_add(tmpfs, "/tmp",
			       json_object_new_string("rw,noexec,nosuid,nodev,size=16m"));
	json_object_object_add(hc, "Tmpfs", tmpfs);
	json_object_object_add(hc, "Memory", json_object_new_int64(EG_MEMORY));
	json_object_object_add(hc, "MemorySwap", json_object_new_int64(EG_MEMORY));
	json_object_object_add(hc, "PidsLimit", json_object_new_int64(EG_PIDS));
	json_object *caps = json_object_new_array();
	json_object_array_add(caps, json_object_new_string("ALL"));
	json_object_object_add(hc, "CapDrop", caps);
	json_object *sec = json_object_new_array();
	json_object_array_add(sec, json_object_new_string("no-new-privileges"));
	json_object_object_add(hc, "SecurityOpt", sec);
	json_object *m = json_object_new_object();
	json_object_object_add(m, "Type", json_object_new_string("bind"));
	json_object_object_add(m, "Source", json_object_new_string(e->config_dir));
	json_object_object_add(m, "Target", json_object_new_string(EG_CONFIG_PATH));
	json_object_object_add(m, "ReadOnly", json_object_new_boolean(true));
	json_object *mounts = json_object_new_array();
	json_object_array_add(mounts, m);
	json_object_object_add(hc, "Mounts", mounts);
	json_object *lc = json_object_new_object(), *lco = json_object_new_object();
	json_object_object_add(lc, "Type", json_object_new_string("json-file"));
	long kib = EG_LOG_KIB;
	const char *v = secure_getenv("BRIG_EGRESS_LOG_KIB");
	if (v && !parse_long(v, EG_LOG_KIB_MIN, (long)(EG_LOG_MAX >> 11), &kib))
		kib = EG_LOG_KIB;
	cleanup_free char *size = xasprintf("%ldk", kib);
	json_object_object_add(lco, "max-size", json_object_new_string(size));
	json_object_object_add(lco, "max-file", json_object_new_string("2"));
	json_object_object_add(lc, "Config", lco);
	json_object_object_add(hc, "LogConfig", lc);
	json_object_object_add(b, "HostConfig", hc);
	return b;
}

/* Create, join to the internal network at its fixed address, start.  0, or 1 when another
 * caller created it first (then only wait for it). */
static int proxy_start(const brig_egress *e, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	json_object *b = proxy_body(e);
	int r = dock_engine_request("POST", EG_CREATE_MS, json_object_to_json_string(b), &resp, err,
				    "/containers/create?name=%s", e->proxy_name);
	json_object_put(b);
	if (r < 0)
		return r;
	if (resp.status == 409)
		return 1;
	if (resp.status != 201)
		return http_fail(err, "creating the proxy container", &resp);
	json_object *c = json_object_new_object(), *ep = json_object_new_object(),
		    *ipam = json_object_new_object();
	json_object_object_add(ipam, "IPv4Address", json_object_new_string(e->proxy_address));
	json_object_object_add(ep, "IPAMConfig", ipam);
	json_object_object_add(c, "Container", json_object_new_string(e->proxy_name));
	json_object_object_add(c, "EndpointConfig", ep);
	dock_response_free(&resp);
	dock_response_init(&resp);
	r = dock_engine_request("POST", EG_CREATE_MS, json_object_to_json_string(c), &resp, err,
				"/networks/%s/connect", e->network);
	json_object_put(c);
	if (r == 0 && resp.status != 200)
		r = http_fail(err, "joining the proxy to its internal network", &resp);
	if (r < 0)
		return r;
	dock_response_free(&resp);
	dock_response_init(&resp);
	r = dock_engine_request("POST", EG_CREATE_MS, "", &resp, err, "/containers/%s/start",
				e->proxy_name);
	if (r == 0 && resp.status != 204 && resp.status != 304)
		r = http_fail(err, "starting the proxy", &resp);
	return r;
}

/* The proxy's state: 1 running (its address on the outer network in addr), 0 exists but not
 * running, -2 absent, < 0 (other) error. */
static int proxy_state_of(const brig_egress *e, char *addr, size_t addr_len, char **instance,
			  brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = dock_engine_request("GET", EG_QUERY_MS, NULL, &resp, err, "/containers/%s/json",
				    e->proxy_name);
	if (r < 0)
		return r;
	if (resp.status == 404)
		return -2;
	if (resp.status != 200)
		return http_fail(err, "inspecting the proxy", &resp);
	json_object *o = parse_body(&resp), *st, *run, *ns, *nets, *net, *ip, *cfg, *lab, *dig;
	bool running = json_object_object_get_ex(o, "State", &st) &&
		       json_object_object_get_ex(st, "Running", &run) &&
		       json_object_get_boolean(run);
	/* configured from other text (the host's addresses changed): not the proxy we want */
	bool current = json_object_object_get_ex(o, "Config", &cfg) &&
		       json_object_object_get_ex(cfg, "Labels", &lab) &&
		       json_object_object_get_ex(lab, EG_LABEL_CONFIG, &dig) &&
		       strcmp(json_object_get_string(dig), e->config_digest) == 0;
	running = running && current;
	json_object *id, *started;
	if (instance && running && json_object_object_get_ex(o, "Id", &id) &&
	    json_object_object_get_ex(st, "StartedAt", &started))
		*instance = xasprintf("%s@%s", json_object_get_string(id),
				      json_object_get_string(started));
	addr[0] = '\0';
	if (json_object_object_get_ex(o, "NetworkSettings", &ns) &&
	    json_object_object_get_ex(ns, "Networks", &nets) &&
	    json_object_object_get_ex(nets, e->outer_network, &net) &&
	    json_object_object_get_ex(net, "IPAddress", &ip))
		snprintf(addr, addr_len, "%s", json_object_get_string(ip));
	json_object_put(o);
	return running ? 1 : 0;
}

static int proxy_state(const brig_egress *e, char *addr, size_t addr_len, brig_error **err)
{
	return proxy_state_of(e, addr, addr_len, NULL, err);
}

/* Does squid answer at addr:port?  With a mark, a GET naming it (refused: the host is not a
 * box; the refusal is logged, which dock_egress_log waits for): any HTTP status line will do.
 * Without one, the health check of both ports: a CONNECT to BRIG_EGRESS_HEALTH_HOST, which the
 * boxes' port hands to the TLS port (the inner port refuses it; it connects nowhere): a 200
 * says the boxes' HTTPS path works, a 5xx that the front cannot reach its inner port. */
static bool proxy_answers(const char *addr, int port, const char *mark)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return false;
	cleanup_close int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS)
		return false;
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	if (poll(&p, 1, EG_CONNECT_MS) != 1)
		return false;
	cleanup_free char *req =
		mark ? xasprintf("GET http://" BRIG_EGRESS_HEALTH_HOST "/%s HTTP/1.0\r\n\r\n", mark)
		     : xstrdup("CONNECT " BRIG_EGRESS_HEALTH_HOST
			       ":1 HTTP/1.1\r\nHost: " BRIG_EGRESS_HEALTH_HOST ":1\r\n\r\n");
	size_t len = strlen(req);
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len)
		return false;
	const char *want = mark ? "HTTP/1." : "HTTP/1.1 200 ";
	size_t want_len = strlen(want);
	char buf[16] = "";
	size_t got = 0;
	while (got < want_len) {
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&p, 1, EG_CONNECT_MS) != 1)
			return false;
		ssize_t n = recv(fd, buf + got, sizeof buf - got, 0);
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return memcmp(buf, want, want_len) == 0;
}

int dock_egress_ensure(const brig_egress *e, brig_error **err)
{
	if (!e || !BRIG_HAS_FIELD(e, brig_egress, config_digest) || !e->config_dir ||
	    !e->config_digest || !dock_valid_name(e->proxy_name) || !dock_valid_name(e->network) ||
	    !dock_valid_name(e->outer_network))
		return plugin_fail(err, BRIG_E_USAGE, 0,
				   "egress_ensure: not an egress description");
	char addr[64] = "";
	int st = proxy_state(e, addr, sizeof addr, err);
	if (st == 1 && addr[0] && proxy_answers(addr, e->proxy_port, NULL))
		return 0;
	if (st < 0 && st != -2)
		return st;
	if (st >= 0) { /* there but stopped or not answering: start afresh */
		int r = dock_remove(e->proxy_name, err);
		if (r < 0)
			return r;
	}
	int r = ensure_networks(e, err);
	if (r == 0)
		r = proxy_start(e, err);
	if (r < 0) {
		(void)dock_remove(e->proxy_name, NULL);
		return r;
	}
	int64_t end = now_ms() + EG_HEALTHY_MS;
	do {
		st = proxy_state(e, addr, sizeof addr, err);
		if (st == 1 && addr[0] && proxy_answers(addr, e->proxy_port, NULL))
			return 0;
		if (st < 0 && st != -2)
			return st;
		if (st == 0 && now_ms() > end - EG_HEALTHY_MS + 2000)
			return plugin_fail(err, BRIG_E_SANDBOX, 0,
					   "the proxy exited at start (docker logs %s says why)",
					   e->proxy_name);
		usleep(50000);
	} while (now_ms() < end);
	return plugin_fail(
		err, BRIG_E_SANDBOX, 0,
		"the proxy did not answer on %s:%d within %d s (docker logs %s says why)",
		addr[0] ? addr : "its outer network", e->proxy_port, EG_HEALTHY_MS / 1000,
		e->proxy_name);
}

/* proxy_state_of's answer as dock_egress_begin's: 1 running (with its instance), 0 gone or
 * stopped, -1 the engine cannot tell. */
static int proxy_running(const brig_egress *e, char *addr, size_t addr_len, char **instance)
{
	*instance = NULL;
	int st = proxy_state_of(e, addr, addr_len, instance, NULL);
	return st == 1 && *instance ? 1 : st == 0 || st == -2 ? 0 : -1;
}

/* NAME.WHAT.<16 random hex digits>: a mark in the proxy's log that only the host can write
 * (the box knows its name, not the digits); NULL if the kernel gives no random bytes. */
static char *new_mark(const char *name, const char *what)
{
	uint8_t r[8];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return NULL;
	return xasprintf("%s.%s.%02x%02x%02x%02x%02x%02x%02x%02x", name, what, r[0], r[1], r[2],
			 r[3], r[4], r[5], r[6], r[7]);
}

int dock_egress_begin(const brig_egress *e, const char *name, bool health, char **instance,
		      char **mark)
{
	char outer[64] = "";
	*mark = NULL;
	int running = proxy_running(e, outer, sizeof outer, instance);
	if (running != 1)
		return running;
	*mark = new_mark(name, "begin");
	if (!*mark || !outer[0] || (health && !proxy_answers(outer, e->proxy_port, NULL)) ||
	    !proxy_answers(outer, e->proxy_port, *mark)) {
		free(*instance); /* no mark: dock_egress_log cannot tell a rotated log */
		*instance = NULL;
		free(*mark);
		*mark = NULL;
		return -1;
	}
	return 1;
}

/* ---- the audit: a box's decisions --------------------------------------------------------- */

#define EG_LOG_WAIT_MS 2000 /* for the mark to reach the log */
#define EG_LOG_POLL_US 10000

/* The n-th space-separated field of the line [p, eol) (0 is the first), or NULL. */
static const char *nth_field(const char *p, const char *eol, int n, size_t *len)
{
	for (; n > 0; n--) {
		const char *sp = memchr(p, ' ', (size_t)(eol - p));
		if (!sp)
			return NULL;
		p = sp + 1;
	}
	const char *sp = memchr(p, ' ', (size_t)(eol - p));
	*len = (size_t)((sp ? sp : eol) - p);
	return p;
}

static bool field_is(const char *f, size_t len, const char *want)
{
	return f && len == strlen(want) && memcmp(f, want, len) == 0;
}

/* A port number field, or -1. */
static long port_field(const char *f, size_t len)
{
	char buf[8];
	long v;
	if (!f || len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, f, len);
	buf[len] = '\0';
	return parse_long(buf, 0, 65535, &v) ? v : -1;
}

/* Append the lines of text[0..len) that are the box's at addr: those whose second field
 * (squid's %>a, the client) is addr, and the lines of the tunnels its CONNECTs were spliced
 * into.  The proxy's TLS port (inner_port, the last field %lp) logs a spliced tunnel with
 * client 127.0.0.1 after the CONNECT it logged with the box's address; both carry the
 * proxy's own port to it (%>p, the 11th field), which no other connection holds meanwhile:
 * the latest CONNECT line of that port is the tunnel's. */
static void keep_box_lines(strbuf *out, const char *text, size_t len, const char *addr,
			   int inner_port)
{
	static const size_t words = 65536 / 64;
	cleanup_free uint64_t *mine = xcalloc(words, sizeof *mine);
	char lp[8];
	snprintf(lp, sizeof lp, "%d", inner_port);
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		size_t cl = 0, pl = 0, ll = 0;
		const char *client = nth_field(p, eol, 1, &cl);
		const char *port = nth_field(p, eol, 10, &pl);
		const char *local = nth_field(p, eol, 11, &ll);
		size_t ml = 0;
		const char *method = nth_field(p, eol, 2, &ml);
		long pn = field_is(local, ll, lp) ? port_field(port, pl) : -1;
		bool keep = field_is(client, cl, addr);
		if (pn >= 0 && field_is(client, cl, "127.0.0.1")) {
			/* only a tunnel's line, and only once: any other line of the front's (a
			 * request it could not parse) is nobody's */
			keep = field_is(method, ml, "CONNECT") &&
			       ((mine[pn / 64] >> (pn % 64)) & 1u);
			mine[pn / 64] &= ~(UINT64_C(1) << (pn % 64));
		} else if (pn >= 0 && keep)
			mine[pn / 64] |= UINT64_C(1) << (pn % 64);
		else if (pn >= 0)
			mine[pn / 64] &= ~(UINT64_C(1) << (pn % 64));
		if (keep) {
			sb_append(out, p, (size_t)(eol - p));
			sb_puts(out, "\n");
		}
		p = eol + 1;
	}
}

/* The proxy's stdout (its access log) since since_wall_ms, demultiplexed into c->out. */
static bool read_log(const brig_egress *e, int64_t since_wall_ms, capture *c)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	if (dock_engine_request("GET", EG_QUERY_MS, NULL, &resp, NULL,
				"/containers/%s/logs?stdout=1&stderr=0&since=%lld.%03lld000000",
				e->proxy_name, (long long)(since_wall_ms / 1000),
				(long long)(since_wall_ms % 1000)) < 0 ||
	    resp.status != 200)
		return false;
	frames f;
	frames_init(&f);
	bool ok = frames_feed(&f, c, resp.body.data ? resp.body.data : "", resp.body.len) ==
			  FRAMES_OK &&
		  !frames_partial(&f);
	frames_free(&f);
	return ok;
}

/* squid logs a transaction when it ends: the box's connections closed as it exited, before
 * this.  The host then sends the proxy a request of its own naming `mark` (refused and logged,
 * after the box's), and reads the log until that line is there: the box's lines are all in. */
char *dock_egress_log(const brig_egress *e, const char *addr, int64_t since_wall_ms,
		      const char *name, const char *mark, int *running, char **instance,
		      char **why_out)
{
	char outer[64] = "";
	cleanup_free char *end_mark = new_mark(name, "end");
	cleanup_free char *needle =
		xasprintf(BRIG_EGRESS_HEALTH_HOST "/%s ", end_mark ? end_mark : "");
	cleanup_free char *begin = xasprintf(BRIG_EGRESS_HEALTH_HOST "/%s ", mark ? mark : "");
	const char *why = "the proxy did not answer the host's mark";
	*running = proxy_running(e, outer, sizeof outer, instance);
	if (!mark)
		why = "the host could not mark it at the box's start";
	else if (*running == 1 && outer[0] && end_mark &&
		 proxy_answers(outer, e->proxy_port, end_mark)) {
		why = "the host's mark did not reach it";
		for (int64_t end = now_ms() + EG_LOG_WAIT_MS; now_ms() < end;) {
			capture c;
			capture_init(&c, EG_LOG_MAX);
			bool ok = read_log(e, since_wall_ms, &c);
			if (ok && c.out.data &&
			    memmem(c.out.data, c.out.len, needle, strlen(needle)) &&
			    !memmem(c.out.data, c.out.len, begin, strlen(begin))) {
				/* json-file dropped its older file since the box started */
				why = "it rotated past the box's start (the box's lines may be "
				      "lost; "
				      "$BRIG_EGRESS_LOG_KIB makes a new proxy's log larger)";
				capture_free(&c);
				break;
			}
			if (ok && c.out.data &&
			    memmem(c.out.data, c.out.len, needle, strlen(needle))) {
				strbuf out;
				sb_init(&out);
				keep_box_lines(&out, c.out.data, c.out.len, addr,
					       e->proxy_port + 1);
				capture_free(&c);
				return sb_steal(&out);
			}
			capture_free(&c);
			if (!ok) {
				why = "it could not be read";
				break;
			}
			usleep(EG_LOG_POLL_US);
		}
	}
	*why_out = xasprintf("the egress decisions are unknown: the log of proxy %s: %s",
			     e->proxy_name, why);
	plugin_log(BRIG_LOG_WARN, "%s: the decisions of the box at %s are not audited", *why_out,
		   addr);
	return NULL;
}

/* ---- gc ------------------------------------------------------------------------------------ */

/* Containers attached to network `name` (< 0 on error; 0 when it is gone). */
static int network_users(const char *name)
{
	int users = 0;
	int r = network_inspect(name, &users, NULL);
	return r < 0 ? r : users;
}

static void network_remove(const char *name)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	(void)dock_engine_request("DELETE", EG_QUERY_MS, NULL, &resp, NULL, "/networks/%s", name);
}

/* Internal networks whose proxy is gone and that nothing uses (a proxy that failed to start
 * after its network was made, a run killed between the two). */
static void gc_orphan_networks(void)
{
	cleanup_free char *filter = dock_filters((const char *const[]){ "label", EG_LABEL, NULL });
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	if (dock_engine_request("GET", EG_QUERY_MS, NULL, &resp, NULL, "/networks?filters=%s",
				filter) < 0 ||
	    resp.status != 200)
		return;
	json_object *list = parse_body(&resp), *nm;
	size_t n = json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
	for (size_t i = 0; i < n; i++) {
		if (!json_object_object_get_ex(json_object_array_get_idx(list, i), "Name", &nm))
			continue;
		const char *name = json_object_get_string(nm);
		int state = -1;
		/* the proxy of network brig-egress-D is the container brig-egress-D */
		if (strcmp(name, EG_OUTER) == 0 || !dock_valid_name(name) ||
		    dock_container_state(name, &state, NULL) < 0 || state != 0 ||
		    network_users(name) != 0)
			continue;
		network_remove(name);
	}
	json_object_put(list);
}

int dock_egress_gc(int idle_seconds, int *removed, brig_error **err)
{
	*removed = 0;
	cleanup_free char *filter = dock_filters((const char *const[]){ "label", EG_LABEL, NULL });
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = dock_engine_request("GET", EG_QUERY_MS, NULL, &resp, err,
				    "/containers/json?all=1&filters=%s", filter);
	if (r < 0)
		return r;
	if (resp.status != 200)
		return http_fail(err, "listing the egress proxies", &resp);
	json_object *list = parse_body(&resp);
	size_t n = json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
	int64_t now = (int64_t)time(NULL);
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(list, i), *names, *created, *lab, *dig;
		if (!json_object_object_get_ex(c, "Names", &names) ||
		    !json_object_object_get_ex(c, "Created", &created) ||
		    !json_object_object_get_ex(c, "Labels", &lab) ||
		    !json_object_object_get_ex(lab, EG_LABEL, &dig))
			continue;
		const char *name = json_object_get_string(json_object_array_get_idx(names, 0));
		if (!name || now - json_object_get_int64(created) < idle_seconds)
			continue;
		name += name[0] == '/';
		cleanup_free char *net = xasprintf("brig-egress-%s", json_object_get_string(dig));
		if (!dock_valid_name(name) || !dock_valid_name(net))
			continue;
		int users = network_users(net);
		if (users > 1 || users < 0) /* a box besides the proxy: in use */
			continue;
		if (dock_remove(name, NULL) == 0) {
			network_remove(net);
			(*removed)++;
		}
	}
	json_object_put(list);
	gc_orphan_networks();
	/* the outer network once no proxy is left on it */
	if (network_users(EG_OUTER) == 0)
		network_remove(EG_OUTER);
	return 0;
}
