/* dock.c - engine negotiation and the small Engine API operations (see dock.h).  The run flow
 * is in dock_run.c, the create body and explain in dock_body.c. */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <curl/curl.h>

#include "dock.h"
#include "dock_http.h"
#include "plugin_host.h"

#define PING_MS   5000L
#define QUERY_MS  15000L
#define REMOVE_MS 30000L

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
	/* Nothing but HTTP on a unix socket: no TLS library initialisation. */
	curl_global_init(CURL_GLOBAL_NOTHING);
}

void dock_init(const brig_host_services *host)
{
	plugin_host_set(host);
	pthread_once(&curl_once, curl_init);
}

const brig_backend *dock_entry(uint32_t host_abi_major, const brig_host_services *host,
			       const brig_backend *table)
{
	if (host_abi_major != BRIG_BACKEND_ABI_MAJOR || !host ||
	    host->struct_size < offsetof(brig_host_services, log) + sizeof(host->log))
		return NULL;
	dock_init(host);
	return table;
}

bool dock_valid_name(const char *s)
{
	if (!s || !*s || strlen(s) > 128)
		return false;
	for (const char *p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-",
			    *p))
			return false;
	return s[0] != '.' && s[0] != '-' && s[0] != '_';
}

/* An image reference as it may appear in a path: [A-Za-z0-9._:/@-], no "..". */
static bool valid_image(const char *s)
{
	if (!s || !*s || strlen(s) > 512 || strstr(s, ".."))
		return false;
	for (const char *p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-:/@",
			    *p))
			return false;
	return true;
}

/* ---- negotiation, cached per socket ------------------------------------------------------- */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static dock_engine cache; /* cache.socket == NULL: nothing negotiated yet */

void dock_engine_free(dock_engine *e)
{
	free(e->socket);
	e->socket = NULL;
}

/* The host may dlclose the plugin: free the cache then, so nothing is orphaned. */
static void __attribute__((destructor)) cache_unload(void)
{
	dock_engine_free(&cache);
}

static void engine_copy(dock_engine *dst, const dock_engine *src)
{
	dst->socket = xstrdup(src->socket);
	memcpy(dst->api, src->api, sizeof dst->api);
	memcpy(dst->version, src->version, sizeof dst->version);
}

/* "1.41" -> 41; only API major 1 exists. */
static bool parse_api(const char *s, long *minor)
{
	return s && strncmp(s, "1.", 2) == 0 && parse_long(s + 2, 0, 9999, minor);
}

static const char *json_str(json_object *o, const char *key)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int check_versions(const char *sock, const char *api, const char *min_api,
			  const char *version, dock_engine *e, brig_error **err)
{
	long engine = 0, engine_min = 0;
	if (!parse_api(api, &engine))
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "dockerd at %s reports an unreadable API version \"%s\"", sock,
				   api ? api : "(none)");
	if (engine < DOCK_API_MIN_MINOR)
		return plugin_fail(err, BRIG_E_UNAVAILABLE, 0,
				   "the Docker engine at %s (%s) speaks API %s, but brig needs API "
				   "1.%d or newer: upgrade Docker",
				   sock, version, api, DOCK_API_MIN_MINOR);
	long use = engine < DOCK_API_CLIENT_MAX_MINOR ? engine : DOCK_API_CLIENT_MAX_MINOR;
	if (parse_api(min_api, &engine_min) && engine_min > use)
		return plugin_fail(
			err, BRIG_E_UNAVAILABLE, 0,
			"the Docker engine at %s (%s) requires API %s or newer, but brig "
			"speaks at most 1.%d",
			sock, version, min_api, DOCK_API_CLIENT_MAX_MINOR);
	snprintf(e->api, sizeof e->api, "1.%ld", use);
	snprintf(e->version, sizeof e->version, "%s", version);
	return 0;
}

/* GET /version: {ApiVersion, MinAPIVersion, Version}.  Returns the parsed object or NULL. */
static json_object *get_version(const char *sock, brig_error **err)
{
	cleanup_response dock_response ver;
	dock_response_init(&ver);
	if (dock_request(sock, "GET", "/version", NULL, PING_MS, &ver, err) < 0)
		return NULL;
	json_object *v = json_tokener_parse(ver.body.data ? ver.body.data : "");
	if (ver.status == 200 && json_object_is_type(v, json_type_object))
		return v;
	json_object_put(v);
	cleanup_free char *txt = dock_error_text(&ver);
	plugin_fail(err, BRIG_E_SANDBOX, 0, "dockerd at %s answered GET /version with HTTP %ld: %s",
		    sock, ver.status, txt);
	return NULL;
}

/* The Api-Version header of GET /_ping is enough when it is recent; GET /version (slow:
 * dockerd asks containerd and runc for their versions) only when it is absent or too old. */
static int negotiate(const char *sock, dock_engine *e, brig_error **err)
{
	cleanup_response dock_response ping;
	dock_response_init(&ping);
	int r = dock_request(sock, "GET", "/_ping", NULL, PING_MS, &ping, err);
	if (r < 0)
		return r;
	if (ping.status != 200) {
		cleanup_free char *txt = dock_error_text(&ping);
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "dockerd at %s answered GET /_ping with HTTP %ld: %s", sock,
				   ping.status, txt);
	}
	long minor = 0;
	if (parse_api(ping.api_version, &minor) && minor >= DOCK_API_MIN_MINOR) {
		/* "Server: Docker/20.10.24+dfsg1 (linux)" names the engine's version too */
		char version[96] = "";
		if (strncmp(ping.server, "Docker/", 7) == 0)
			snprintf(version, sizeof version, "%.*s",
				 (int)strcspn(ping.server + 7, " "), ping.server + 7);
		return check_versions(sock, ping.api_version, NULL, version, e, err);
	}
	json_object *v = get_version(sock, err);
	if (!v)
		return BRIG_E_SANDBOX;
	const char *api = ping.api_version[0] ? ping.api_version : json_str(v, "ApiVersion");
	const char *version = json_str(v, "Version");
	r = check_versions(sock, api, json_str(v, "MinAPIVersion"), version ? version : "unknown",
			   e, err);
	json_object_put(v);
	return r;
}

int dock_engine_get(dock_engine *out, brig_error **err)
{
	cleanup_free char *sock = NULL;
	int r = dock_socket_path(&sock, err);
	if (r < 0)
		return r;
	pthread_mutex_lock(&cache_lock);
	bool hit = cache.socket && strcmp(cache.socket, sock) == 0;
	if (hit)
		engine_copy(out, &cache);
	pthread_mutex_unlock(&cache_lock);
	if (hit)
		return 0;

	/* Negotiate outside the lock; a failure is not cached (dockerd may come up later). */
	dock_engine e = { .socket = NULL };
	r = negotiate(sock, &e, err);
	if (r < 0)
		return r;
	e.socket = steal_pointer(&sock);
	pthread_mutex_lock(&cache_lock);
	dock_engine_free(&cache);
	engine_copy(&cache, &e);
	pthread_mutex_unlock(&cache_lock);
	*out = e;
	return 0;
}

void dock_engine_version(dock_engine *e)
{
	if (e->version[0])
		return;
	cleanup_error brig_error *ignored = NULL;
	json_object *v = get_version(e->socket, &ignored);
	const char *version = json_str(v, "Version");
	snprintf(e->version, sizeof e->version, "%s", version ? version : "unknown");
	json_object_put(v);
	if (!version)
		return; /* not cached: ask again next time */
	pthread_mutex_lock(&cache_lock);
	if (cache.socket && strcmp(cache.socket, e->socket) == 0)
		memcpy(cache.version, e->version, sizeof cache.version);
	pthread_mutex_unlock(&cache_lock);
}

/* ---- small operations -------------------------------------------------------------------- */

int dock_engine_request(const char *method, long timeout_ms, const char *json, dock_response *resp,
			brig_error **err, const char *fmt, ...)
{
	dock_engine e = { .socket = NULL };
	int r = dock_engine_get(&e, err);
	if (r < 0)
		return r;
	va_list ap;
	va_start(ap, fmt);
	cleanup_free char *rest = xvasprintf(fmt, ap);
	va_end(ap);
	cleanup_free char *path = xasprintf("/v%s%s", e.api, rest);
	r = dock_request(e.socket, method, path, json, timeout_ms, resp, err);
	dock_engine_free(&e);
	return r;
}

static int inspect_json(const char *kind, const char *name, dock_response *resp, json_object **out,
			brig_error **err);

/* Whether `name` is a container the engine removes itself when it exits (HostConfig.AutoRemove):
 * 1, 0 (not, or no such container), < 0 when the engine cannot tell. */
static int auto_removed(const char *name, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	json_object *o = NULL, *hc = NULL, *ar = NULL;
	int r = inspect_json("containers", name, &resp, &o, err);
	if (r > 0)
		r = o && json_object_object_get_ex(o, "HostConfig", &hc) &&
		    json_object_object_get_ex(hc, "AutoRemove", &ar) && json_object_get_boolean(ar);
	json_object_put(o);
	return r;
}

/* A self-removing container: killed, then its removal by the engine waited for.  A forced DELETE
 * racing that removal left dockerd 20.10 with a stale endpoint on the container's network (one
 * nobody could remove until dockerd restarted).  0 once gone; 1 when it is still there. */
static int kill_and_wait(const char *name, brig_error **err)
{
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	/* its answer does not matter (409: it is not running, its removal may be under way) */
	int r = dock_engine_request("POST", QUERY_MS, NULL, &resp, err, "/containers/%s/kill",
				    name);
	if (r < 0)
		return r;
	for (int64_t until = now_ms() + REMOVE_MS; now_ms() < until;) {
		int state = 0;
		if ((r = dock_container_state(name, &state, err)) < 0 || state == 0)
			return r;
		if (state == 3) /* never started: the engine's removal will not come */
			return 1;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return 1;
}

int dock_remove(const char *name, brig_error **err)
{
	if (!dock_valid_name(name))
		return plugin_fail(err, BRIG_E_USAGE, 0, "not a container name: \"%s\"",
				   name ? name : "");
	int r = auto_removed(name, err);
	if (r > 0 && (r = kill_and_wait(name, err)) <= 0) /* 1: still there, removed below */
		return r;
	if (r < 0)
		return r;
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	r = dock_engine_request("DELETE", REMOVE_MS, NULL, &resp, err, "/containers/%s?force=1&v=1",
				name);
	if (r < 0)
		return r;
	/* 404: already gone; 409: a removal is already in progress */
	if (resp.status == 204 || resp.status == 200 || resp.status == 404 || resp.status == 409)
		return 0;
	cleanup_free char *txt = dock_error_text(&resp);
	return plugin_fail(err, BRIG_E_SANDBOX, 0, "removing container %s: HTTP %ld: %s", name,
			   resp.status, txt);
}

/* The strings of a JSON array ("RepoTags", "RepoDigests"), NULL when absent or empty. */
static char **json_strv(json_object *o, const char *key)
{
	json_object *a = NULL;
	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) == 0)
		return NULL;
	size_t n = json_object_array_length(a), k = 0;
	char **v = xcalloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		if (json_object_is_type(e, json_type_string))
			v[k++] = xstrdup(json_object_get_string(e));
	}
	return v;
}

/* Config.Labels as "KEY=VALUE" strings, NULL when there are none. */
static char **labels_strv(json_object *o)
{
	json_object *cfg = NULL, *labels = NULL;
	if (!json_object_object_get_ex(o, "Config", &cfg) ||
	    !json_object_object_get_ex(cfg, "Labels", &labels) ||
	    !json_object_is_type(labels, json_type_object) ||
	    json_object_object_length(labels) == 0)
		return NULL;
	char **v = xcalloc((size_t)json_object_object_length(labels) + 1, sizeof *v);
	size_t k = 0;
	json_object_object_foreach(labels, key, val)
	{
		if (json_object_is_type(val, json_type_string))
			v[k++] = xasprintf("%s=%s", key, json_object_get_string(val));
	}
	return v;
}

int dock_image_parse(json_object *o, brig_image_info *info)
{
	const char *id = json_str(o, "Id");
	if (!id || strncmp(id, "sha256:", 7) != 0 || strlen(id) >= sizeof info->id)
		return -1;
	snprintf(info->id, sizeof info->id, "%s", id);
	json_object *size = NULL;
	if (BRIG_HAS_FIELD(info, brig_image_info, size))
		info->size = json_object_object_get_ex(o, "Size", &size) &&
					     json_object_is_type(size, json_type_int)
				     ? json_object_get_int64(size)
				     : -1;
	const char *created = json_str(o, "Created");
	if (BRIG_HAS_FIELD(info, brig_image_info, created))
		snprintf(info->created, sizeof info->created, "%s", created ? created : "");
	if (BRIG_HAS_FIELD(info, brig_image_info, repo_tags))
		info->repo_tags = json_strv(o, "RepoTags");
	if (BRIG_HAS_FIELD(info, brig_image_info, repo_digests))
		info->repo_digests = json_strv(o, "RepoDigests");
	if (BRIG_HAS_FIELD(info, brig_image_info, labels))
		info->labels = labels_strv(o);
	return 0;
}

/* GET /KIND/NAME/json: 1 and *out (a 200's body parsed, else NULL; resp keeps the answer for
 * an error's text), 0 when the engine does not know NAME (404), or < 0 with *err. */
static int inspect_json(const char *kind, const char *name, dock_response *resp, json_object **out,
			brig_error **err)
{
	*out = NULL;
	int r = dock_engine_request("GET", QUERY_MS, NULL, resp, err, "/%s/%s/json", kind, name);
	if (r < 0)
		return r;
	if (resp->status == 404)
		return 0;
	if (resp->status == 200)
		*out = json_tokener_parse(resp->body.data ? resp->body.data : "");
	return 1;
}

int dock_image_inspect(const char *image, brig_image_info *info, brig_error **err)
{
	if (!valid_image(image))
		return plugin_fail(err, BRIG_E_USAGE, 0, "not an image reference: \"%s\"",
				   image ? image : "");
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	json_object *o;
	int r = inspect_json("images", image, &resp, &o, err);
	if (r <= 0)
		return r;
	r = o ? dock_image_parse(o, info) : -1;
	json_object_put(o);
	if (r == 0)
		return 1;
	cleanup_free char *txt = dock_error_text(&resp);
	return plugin_fail(err, BRIG_E_SANDBOX, 0, "looking up image %s: HTTP %ld: %s", image,
			   resp.status, resp.status == 200 ? "no image ID in the answer" : txt);
}

int dock_image_id_via(dock_inspect_fn inspect, const char *image, char *id, size_t id_len,
		      brig_error **err)
{
	/* only the ID: the struct ends there for the parser */
	brig_image_info info = { .struct_size = offsetof(brig_image_info, size) };
	if (id_len)
		id[0] = '\0';
	int r = inspect(image, &info, err);
	if (r == 1)
		snprintf(id, id_len, "%s", info.id);
	return r;
}

int dock_image_id(const char *image, char *id, size_t id_len, brig_error **err)
{
	return dock_image_id_via(dock_image_inspect, image, id, id_len, err);
}

/* RFC 3986 percent-encoding of everything but the unreserved characters. */
static char *url_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	strbuf sb;
	sb_init(&sb);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || strchr("-._~", *p)) {
			sb_append(&sb, p, 1);
		} else {
			char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };
			sb_append(&sb, e, 3);
		}
	}
	return sb_steal(&sb);
}

char *dock_filters(const char *const *kv)
{
	json_object *f = json_object_new_object();
	for (; kv[0] && kv[1]; kv += 2) {
		json_object *arr = json_object_new_array();
		json_object_array_add(arr, json_object_new_string(kv[1]));
		json_object_object_add(f, kv[0], arr);
	}
	char *out = url_escape(json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN));
	json_object_put(f);
	return out;
}

/* Name (without the leading '/') and brig.owner label of one GET /containers/json entry. */
static void container_entry(json_object *c, char **name, char **owner)
{
	json_object *names = NULL, *labels = NULL;
	*name = NULL;
	if (json_object_object_get_ex(c, "Names", &names) &&
	    json_object_is_type(names, json_type_array) && json_object_array_length(names) > 0) {
		const char *n = json_object_get_string(json_object_array_get_idx(names, 0));
		if (n)
			*name = xstrdup(n[0] == '/' ? n + 1 : n);
	}
	const char *o = NULL;
	if (json_object_object_get_ex(c, "Labels", &labels))
		o = json_str(labels, "brig.owner");
	*owner = xstrdup(o ? o : "");
}

/* GET /containers/json with these filters (dock_filters' pairs), all=1 or running only: the
 * JSON array, or NULL with *err (`what` names the list in it). */
static json_object *container_list(const char *const *filters, bool all, const char *what,
				   brig_error **err)
{
	cleanup_free char *filter = dock_filters(filters);
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	if (dock_engine_request("GET", QUERY_MS, NULL, &resp, err, "/containers/json?%sfilters=%s",
				all ? "all=1&" : "", filter) < 0)
		return NULL;
	json_object *list = resp.status == 200
				    ? json_tokener_parse(resp.body.data ? resp.body.data : "")
				    : NULL;
	if (!json_object_is_type(list, json_type_array)) {
		json_object_put(list);
		cleanup_free char *txt = dock_error_text(&resp);
		plugin_fail(err, BRIG_E_SANDBOX, 0, "listing %s: HTTP %ld: %s", what, resp.status,
			    txt);
		return NULL;
	}
	return list;
}

static int parse_container_list(json_object *list, char ***names, char ***owners)
{
	size_t n = json_object_array_length(list), k = 0;
	char **nv = xcalloc(n + 1, sizeof *nv), **ov = xcalloc(n + 1, sizeof *ov);
	for (size_t i = 0; i < n; i++) {
		char *name = NULL, *owner = NULL;
		container_entry(json_object_array_get_idx(list, i), &name, &owner);
		if (!name) {
			free(owner);
			continue;
		}
		nv[k] = name;
		ov[k++] = owner;
	}
	*names = nv;
	if (owners)
		*owners = ov;
	else
		strv_free(ov);
	return 0;
}

int dock_list_labelled(const char *label, char ***names, char ***owners, brig_error **err)
{
	*names = NULL;
	if (owners)
		*owners = NULL;
	if (!label || !*label)
		return plugin_fail(err, BRIG_E_USAGE, 0, "list_labelled: empty label");
	cleanup_free char *what = xasprintf("containers labelled %s", label);
	json_object *list =
		container_list((const char *const[]){ "label", label, NULL }, true, what, err);
	if (!list)
		return BRIG_E_SANDBOX;
	int r = parse_container_list(list, names, owners);
	json_object_put(list);
	return r;
}

/* ---- spare network holders ---------------------------------------------------------------- */

/* The running containers labelled `label` whose brig.spare-until is after `now`. */
static int spares_usable(const char *label, long long now, char ***out, brig_error **err)
{
	*out = NULL;
	json_object *list =
		container_list((const char *const[]){ "label", label, "status", "running", NULL },
			       false, "spare holders", err);
	if (!list)
		return BRIG_E_SANDBOX;
	size_t n = json_object_array_length(list), k = 0;
	char **v = xcalloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(list, i), *labels = NULL;
		char *name = NULL, *owner = NULL;
		container_entry(c, &name, &owner);
		free(owner);
		const char *until = json_object_object_get_ex(c, "Labels", &labels)
					    ? json_str(labels, DOCK_LABEL_SPARE_UNTIL)
					    : NULL;
		char *end = NULL;
		long long u = until ? strtoll(until, &end, 10) : 0;
		/* a claimed one keeps its labels: only its "-spare" name tells it is still free */
		size_t nl = name ? strlen(name) : 0, sl = strlen(BRIG_SPARE_SUFFIX);
		if (name && dock_valid_name(name) && nl > sl &&
		    strcmp(name + nl - sl, BRIG_SPARE_SUFFIX) == 0 && until && end && !*end &&
		    u > now)
			v[k++] = name;
		else
			free(name);
	}
	json_object_put(list);
	*out = v;
	return 0;
}

int dock_claim_spare(const char *label, long long now, const char *name, int *count,
		     brig_error **err)
{
	if (count)
		*count = 0;
	if (!label || !strchr(label, '=') || (name && !dock_valid_name(name)))
		return plugin_fail(err, BRIG_E_USAGE, 0, "claim_spare: bad label or name");
	char **spares = NULL;
	int r = spares_usable(label, now, &spares, err);
	if (r < 0 || !spares)
		return r < 0 ? r : 0;
	size_t n = strv_len(spares);
	if (count)
		*count = (int)n;
	for (size_t i = 0; name && r == 0 && i < n; i++) {
		cleanup_response dock_response resp;
		dock_response_init(&resp);
		/* valid names are safe in a URL as they are */
		r = dock_engine_request("POST", QUERY_MS, NULL, &resp, err,
					"/containers/%s/rename?name=%s", spares[i], name);
		if (r < 0)
			break;
		if (resp.status != 204) { /* 404: claimed or ended since the list; 409: ending */
			cleanup_free char *txt = dock_error_text(&resp);
			plugin_log(BRIG_LOG_DEBUG, "spare %s not renamed to %s: HTTP %ld: %s",
				   spares[i], name, resp.status, txt);
			continue;
		}
		int state = 0;
		if (dock_container_state(name, &state, NULL) == 0 && state == 2) {
			r = 1;
			break;
		}
		/* it ended between the list and the rename, or cannot be told: not a holder to
		 * join, and its name is the box's holder's */
		if ((r = dock_remove(name, err)) < 0)
			break;
	}
	strv_free(spares);
	return r;
}

/* ---- workspaces: volumes and detached holders --------------------------------------------- */

/* {"k": "v", ...} from "k=v" strings. */
static json_object *kv_object(char *const *kv)
{
	json_object *o = json_object_new_object();
	for (; kv && *kv; kv++) {
		const char *eq = strchr(*kv, '=');
		cleanup_free char *k = eq ? xstrndup(*kv, (size_t)(eq - *kv)) : xstrdup(*kv);
		json_object_object_add(o, k, json_object_new_string(eq ? eq + 1 : ""));
	}
	return o;
}

int dock_volume_create(const char *name, char *const *driver_opts, char *const *labels,
		       brig_error **err)
{
	if (!dock_valid_name(name))
		return plugin_fail(err, BRIG_E_USAGE, 0, "not a volume name: \"%s\"",
				   name ? name : "");
	json_object *b = json_object_new_object();
	json_object_object_add(b, "Name", json_object_new_string(name));
	json_object_object_add(b, "Driver", json_object_new_string("local"));
	json_object_object_add(b, "DriverOpts", kv_object(driver_opts));
	json_object_object_add(b, "Labels", kv_object(labels));
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = dock_engine_request(
		"POST", QUERY_MS,
		json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE),
		&resp, err, "/volumes/create");
	json_object_put(b);
	if (r < 0)
		return r;
	if (resp.status == 201 || resp.status == 200)
		return 0;
	cleanup_free char *txt = dock_error_text(&resp);
	return plugin_fail(err, BRIG_E_SANDBOX, 0, "creating volume %s: HTTP %ld: %s", name,
			   resp.status, txt);
}

int dock_volume_remove(const char *name, brig_error **err)
{
	if (!dock_valid_name(name))
		return plugin_fail(err, BRIG_E_USAGE, 0, "not a volume name: \"%s\"",
				   name ? name : "");
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = dock_engine_request("DELETE", REMOVE_MS, NULL, &resp, err, "/volumes/%s", name);
	if (r < 0)
		return r;
	if (resp.status == 204 || resp.status == 200 || resp.status == 404)
		return 0;
	cleanup_free char *txt = dock_error_text(&resp);
	return plugin_fail(err, resp.status == 409 ? BRIG_E_BUSY : BRIG_E_SANDBOX, 0,
			   "removing volume %s: HTTP %ld: %s", name, resp.status, txt);
}

int dock_start_detached(const brig_spec *spec, brig_error **err)
{
	if (!spec || !dock_valid_name(spec->name))
		return plugin_fail(err, BRIG_E_USAGE, 0, "start_detached: no container name");
	json_object *b = dock_detached_body(spec, true);
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = dock_engine_request(
		"POST", QUERY_MS,
		json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE),
		&resp, err, "/containers/create?name=%s", spec->name);
	json_object_put(b);
	if (r < 0)
		return r;
	if (resp.status != 201) {
		cleanup_free char *txt = dock_error_text(&resp);
		return plugin_fail(err, BRIG_E_SANDBOX, 0, "creating container %s: HTTP %ld: %s",
				   spec->name, resp.status, txt);
	}
	dock_response_free(&resp);
	dock_response_init(&resp);
	r = dock_engine_request("POST", QUERY_MS, NULL, &resp, err, "/containers/%s/start",
				spec->name);
	if (r == 0 && resp.status != 204 && resp.status != 304) {
		cleanup_free char *txt = dock_error_text(&resp);
		r = plugin_fail(err, BRIG_E_SANDBOX, 0, "starting container %s: HTTP %ld: %s",
				spec->name, resp.status, txt);
	}
	if (r < 0) {
		cleanup_error brig_error *e = NULL;
		dock_remove(spec->name, &e);
	}
	return r;
}

int dock_container_state(const char *name, int *state, brig_error **err)
{
	*state = 0;
	if (!dock_valid_name(name))
		return plugin_fail(err, BRIG_E_USAGE, 0, "not a container name: \"%s\"",
				   name ? name : "");
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	json_object *o, *st = NULL, *running = NULL;
	int r = inspect_json("containers", name, &resp, &o, err);
	if (r <= 0)
		return r;
	if (!o || !json_object_object_get_ex(o, "State", &st) ||
	    !json_object_object_get_ex(st, "Running", &running)) {
		json_object_put(o);
		cleanup_free char *txt = dock_error_text(&resp);
		return plugin_fail(err, BRIG_E_SANDBOX, 0, "inspecting container %s: HTTP %ld: %s",
				   name, resp.status, txt);
	}
	json_object *status = NULL;
	json_object_object_get_ex(st, "Status", &status);
	*state = dock_state_of(status ? json_object_get_string(status) : NULL,
			       json_str(o, "Created"), json_object_get_boolean(running));
	json_object_put(o);
	return 0;
}

int dock_state_of(const char *status, const char *created, bool running)
{
	if (running)
		return 2;
	struct tm tm = { 0 };
	/* "2026-12-03T11:49:55.123456789Z": the engine's clock, UTC */
	if (!status || strcmp(status, "created") != 0 || !created ||
	    !strptime(created, "%Y-%m-%dT%H:%M:%S", &tm))
		return 1;
	time_t t = timegm(&tm), now = time(NULL);
	return t != (time_t)-1 && now - t < DOCK_STARTING_S && t - now < DOCK_STARTING_S ? 3 : 1;
}

/* ---- probe ------------------------------------------------------------------------------- */

int dock_runtime_lookup(const char *runtime, dock_runtime *rt, brig_error **err)
{
	memset(rt, 0, sizeof *rt);
	sb_init(&rt->names);
	sb_init(&rt->identity);
	cleanup_response dock_response resp;
	dock_response_init(&resp);
	int r = dock_engine_request("GET", QUERY_MS, NULL, &resp, err, "/info");
	if (r < 0)
		return r;
	json_object *info = json_tokener_parse(resp.body.data ? resp.body.data : "");
	json_object *rts = NULL, *entry = NULL, *id = NULL, *path = NULL;
	if (resp.status != 200 || !json_object_object_get_ex(info, "Runtimes", &rts) ||
	    !json_object_is_type(rts, json_type_object)) {
		json_object_put(info);
		return plugin_fail(err, BRIG_E_SANDBOX, 0,
				   "dockerd answered GET /info with HTTP %ld and no Runtimes",
				   resp.status);
	}
	rt->present = json_object_object_get_ex(rts, runtime, &entry);
	json_object_object_foreach(rts, key, val)
	{
		(void)val;
		sb_printf(&rt->names, "%s%s", rt->names.len ? ", " : "", key);
	}
	if (rt->present) {
		json_object_object_get_ex(info, "ID", &id);
		sb_printf(&rt->identity, "engine %s\nruntime %s %s\n",
			  id ? json_object_get_string(id) : "?", runtime,
			  json_object_to_json_string_ext(entry, JSON_C_TO_STRING_PLAIN));
		if (json_object_object_get_ex(entry, "path", &path) &&
		    json_object_is_type(path, json_type_string))
			rt->path = xstrdup(json_object_get_string(path));
	}
	json_object_put(info);
	return 0;
}

void dock_runtime_free(dock_runtime *rt)
{
	sb_free(&rt->names);
	sb_free(&rt->identity);
	free(rt->path);
	rt->path = NULL;
}

int dock_probe_engine(brig_probe_info *info, dock_engine *eng)
{
	cleanup_error brig_error *e = NULL;
	if (dock_engine_get(eng, &e) < 0) {
		snprintf(info->reason, sizeof info->reason, "%s", e->message);
		info->transient = e->transient;
		return -1;
	}
	dock_engine_version(eng);
	snprintf(info->version, sizeof info->version, "%s (API %s)", eng->version, eng->api);
	return 0;
}

/* What the runtime is, for the host's cached verification: the engine (socket, version, ID),
 * the runtime's registration and the binary it names (device, inode, size, mtime, ctime:
 * userspace cannot set a ctime back).  "" when the registration names no binary of its own. */
static void runtime_identity(const dock_engine *eng, const dock_runtime *rt, brig_probe_info *info)
{
	struct stat st;
	info->identity[0] = '\0';
	if (!rt->path || stat(rt->path, &st) < 0)
		return;
	snprintf(info->identity, sizeof info->identity,
		 "socket %s\nengine-version %s\n%sbinary %s %llu:%llu:%lld:%lld.%09ld:%lld.%09ld",
		 eng->socket, eng->version, rt->identity.data ? rt->identity.data : "", rt->path,
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		 (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

int dock_probe(const brig_probe_request *req, brig_probe_info *info, brig_error **err)
{
	(void)err; /* every failure here is an answer: "not available, because ..." */
	size_t size = info->struct_size;
	memset(info, 0, size);
	info->struct_size = size;
	const char *runtime = req && req->runtime ? req->runtime : "runc";
	if (!dock_valid_name(runtime)) {
		snprintf(info->reason, sizeof info->reason, "\"%.64s\" is not a runtime name",
			 runtime);
		return 0;
	}
	snprintf(info->runtime, sizeof info->runtime, "%s", runtime);
	cleanup_error brig_error *e = NULL;
	dock_engine eng = { .socket = NULL };
	if (dock_probe_engine(info, &eng) < 0)
		return 0;
	/* runc is the engine's own default runtime: always registered, so no GET /info (~15 ms,
	 * on every one-shot run) to prove it; the host verifies no runc box anyway. */
	dock_runtime rt = { .present = strcmp(runtime, "runc") == 0 };
	int lr = rt.present ? 0 : dock_runtime_lookup(runtime, &rt, &e);
	if (lr < 0) {
		snprintf(info->reason, sizeof info->reason, "%s", e->message);
		info->transient = e->transient;
	} else if (!rt.present) {
		snprintf(info->reason, sizeof info->reason,
			 "the OCI runtime \"%s\" is not registered in dockerd at %s (it has: %s): "
			 "add it to \"runtimes\" in /etc/docker/daemon.json and reload dockerd, or "
			 "run scripts/setup-host",
			 runtime, eng.socket, rt.names.data ? rt.names.data : "none");
	} else {
		info->available = true;
		runtime_identity(&eng, &rt, info);
	}
	dock_runtime_free(&rt);
	dock_engine_free(&eng);
	return 0;
}
