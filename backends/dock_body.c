/* dock_body.c - the container spec rendered as an Engine API create body, and `brig explain`
 * for the API backends: the same function builds what is sent and what is shown. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "dock.h"
#include "dock_http.h"
#include "plugin_host.h"

#define JSON_OUT_FLAGS (JSON_C_TO_STRING_NOSLASHESCAPE | JSON_C_TO_STRING_SPACED)

static json_object *str_array(char *const *v)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; v && v[i]; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

/* "k=v" strings -> {"k": "v"} ("k" alone -> "k": ""). */
static json_object *labels_object(char *const *v)
{
	json_object *o = json_object_new_object();
	for (size_t i = 0; v && v[i]; i++) {
		const char *eq = strchr(v[i], '=');
		size_t klen = eq ? (size_t)(eq - v[i]) : strlen(v[i]);
		cleanup_free char *key = xstrndup(v[i], klen);
		json_object_object_add(o, key, json_object_new_string(eq ? eq + 1 : ""));
	}
	return o;
}

static void add_str(json_object *o, const char *key, const char *val)
{
	if (val)
		json_object_object_add(o, key, json_object_new_string(val));
}

static void add_bool(json_object *o, const char *key, bool val)
{
	json_object_object_add(o, key, json_object_new_boolean(val));
}

static void add_int(json_object *o, const char *key, int64_t val)
{
	json_object_object_add(o, key, json_object_new_int64(val));
}

static json_object *security_opts(const brig_spec *s, bool full_seccomp)
{
	json_object *a = json_object_new_array();
	if (s->no_new_privileges)
		json_object_array_add(a, json_object_new_string("no-new-privileges"));
	if (s->seccomp_profile) {
		/* The API wants the profile's JSON text, not a path (a path fails only at start).
		 */
		cleanup_free char *opt =
			full_seccomp ? xasprintf("seccomp=%s", s->seccomp_profile)
				     : xasprintf("seccomp=<profile \"%s\": %zu bytes of JSON, sent "
						 "in full>",
						 s->seccomp_name ? s->seccomp_name : "custom",
						 strlen(s->seccomp_profile));
		json_object_array_add(a, json_object_new_string(opt));
	}
	return a;
}

static void resource_limits(const brig_spec *s, json_object *hc)
{
	if (s->shm_bytes > 0)
		add_int(hc, "ShmSize", s->shm_bytes);
	add_int(hc, "Memory", s->memory_bytes);
	add_int(hc, "MemorySwap", s->memory_swap_bytes);
	add_int(hc, "NanoCpus", s->nano_cpus);
	add_int(hc, "PidsLimit", s->pids_limit);
	json_object *ul = json_object_new_object();
	add_str(ul, "Name", "nofile");
	add_int(ul, "Soft", s->nofile);
	add_int(ul, "Hard", s->nofile);
	json_object *uls = json_object_new_array();
	json_object_array_add(uls, ul);
	if (s->nproc > 0) {
		ul = json_object_new_object();
		add_str(ul, "Name", "nproc");
		add_int(ul, "Soft", s->nproc);
		add_int(ul, "Hard", s->nproc);
		json_object_array_add(uls, ul);
	}
	ul = json_object_new_object();
	add_str(ul, "Name", "core");
	add_int(ul, "Soft", s->core);
	add_int(ul, "Hard", s->core);
	json_object_array_add(uls, ul);
	json_object_object_add(hc, "Ulimits", uls);
}

/* HostConfig.Mounts: binds read-only as asked, volumes without the engine's copy-up. */
static json_object *mounts_array(const brig_spec *s)
{
	json_object *a = json_object_new_array();
	for (brig_mount **m = s->mounts; m && *m; m++) {
		json_object *o = json_object_new_object();
		add_str(o, "Type", (*m)->type == BRIG_MOUNT_VOLUME ? "volume" : "bind");
		add_str(o, "Source", (*m)->source);
		add_str(o, "Target", (*m)->target);
		add_bool(o, "ReadOnly", (*m)->read_only);
		if ((*m)->type == BRIG_MOUNT_VOLUME) {
			json_object *vo = json_object_new_object();
			add_bool(vo, "NoCopy", (*m)->no_copy);
			json_object_object_add(o, "VolumeOptions", vo);
		}
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *host_config(const brig_spec *s, bool full_seccomp)
{
	json_object *hc = json_object_new_object();
	add_str(hc, "NetworkMode", s->network);
	if (s->dns) {
		json_object *dns = json_object_new_array();
		json_object_array_add(dns, json_object_new_string(s->dns));
		json_object_object_add(hc, "Dns", dns);
	}
	add_str(hc, "Runtime", s->runtime);
	add_bool(hc, "ReadonlyRootfs", s->read_only_rootfs);
	if (s->tmpfs_path) {
		json_object *t = json_object_new_object();
		add_str(t, s->tmpfs_path, s->tmpfs_options ? s->tmpfs_options : "");
		json_object_object_add(hc, "Tmpfs", t);
	}
	if (s->mounts && s->mounts[0])
		json_object_object_add(hc, "Mounts", mounts_array(s));
	if (s->masked_paths)
		json_object_object_add(hc, "MaskedPaths", str_array(s->masked_paths));
	if (s->cgroupns_private)
		add_str(hc, "CgroupnsMode", "private");
	resource_limits(s, hc);
	json_object *caps = json_object_new_array();
	if (s->cap_drop_all)
		json_object_array_add(caps, json_object_new_string("ALL"));
	json_object_object_add(hc, "CapDrop", caps);
	json_object_object_add(hc, "SecurityOpt", security_opts(s, full_seccomp));
	/* a box: inspect after exit needs the container; a holder may remove itself */
	add_bool(hc, "AutoRemove", s->auto_remove);
	json_object *log = json_object_new_object();
	add_str(log, "Type", s->log_driver ? s->log_driver : "none");
	json_object_object_add(log, "Config", json_object_new_object());
	json_object_object_add(hc, "LogConfig", log);
	return hc;
}

json_object *dock_create_body(const brig_spec *s, bool full_seccomp)
{
	json_object *b = json_object_new_object();
	add_str(b, "Image", brig_spec_image(s));
	json_object_object_add(b, "Cmd", str_array(s->argv));
	json_object_object_add(b, "Env", str_array(s->env));
	json_object_object_add(b, "Labels", labels_object(s->labels));
	add_str(b, "User", s->user);
	add_str(b, "WorkingDir", s->workdir);
	add_str(b, "Hostname", s->hostname);
	add_bool(b, "AttachStdin", true);
	add_bool(b, "AttachStdout", true);
	add_bool(b, "AttachStderr", true);
	add_bool(b, "OpenStdin", true);
	add_bool(b, "StdinOnce", true); /* our half-close becomes the program's stdin EOF */
	add_bool(b, "Tty", false);      /* keeps stdout and stderr apart (framed) */
	if (s->network && strcmp(s->network, "none") == 0)
		add_bool(b, "NetworkDisabled", true);
	json_object_object_add(b, "HostConfig", host_config(s, full_seccomp));
	return b;
}

json_object *dock_detached_body(const brig_spec *spec, bool full_seccomp)
{
	json_object *b = dock_create_body(spec, full_seccomp);
	/* nothing attached, no stdin: the program's output goes nowhere (log driver none) */
	static const char *const off[] = { "AttachStdin", "AttachStdout", "AttachStderr",
					   "OpenStdin", "StdinOnce" };
	for (size_t i = 0; i < sizeof off / sizeof *off; i++)
		json_object_object_add(b, off[i], json_object_new_boolean(false));
	return b;
}

/* The engine line of explain; without a reachable engine the newest API brig speaks is shown. */
static void explain_engine(strbuf *sb, const char *backend, char *api, size_t apisz)
{
	cleanup_error brig_error *e = NULL;
	dock_engine eng = { .socket = NULL };
	if (dock_engine_get(&eng, &e) == 0) {
		dock_engine_version(&eng);
		sb_printf(sb, "# %s: Docker Engine API over unix://%s, engine %s, API %s\n",
			  backend, eng.socket, eng.version, eng.api);
		snprintf(api, apisz, "%s", eng.api);
	} else {
		sb_printf(sb, "# %s: Docker Engine API (engine not reachable now: %s)\n", backend,
			  e->message);
		sb_printf(sb, "# paths show API 1.%d; the real version is negotiated at run time\n",
			  DOCK_API_CLIENT_MAX_MINOR);
		snprintf(api, apisz, "1.%d", DOCK_API_CLIENT_MAX_MINOR);
	}
	dock_engine_free(&eng);
	sb_puts(sb, "# once per process: GET /_ping (its Api-Version header; GET /version if "
		    "absent)\n\n");
}

/* The engine line and the create request of explain, its body taken (the run's or the
 * detached one).  The API version the paths show is left in api. */
static void explain_create(strbuf *sb, const char *backend, const brig_spec *s, json_object *body,
			   char *api, size_t apisz)
{
	explain_engine(sb, backend, api, apisz);
	sb_printf(sb, "POST /v%s/containers/create?name=%s\n%s\n\n", api, s->name,
		  json_object_to_json_string_ext(body, JSON_C_TO_STRING_PRETTY | JSON_OUT_FLAGS));
	json_object_put(body);
}

int dock_explain(const char *backend, const brig_spec *s, char **out, brig_error **err)
{
	if (!s || !s->name || !s->image)
		return plugin_fail(err, BRIG_E_USAGE, 0, "explain: incomplete container spec");
	char api[16];
	strbuf sb;
	sb_init(&sb);
	explain_create(&sb, backend, s, dock_create_body(s, false), api, sizeof api);
	const char *c = s->name;
	sb_printf(
		&sb,
		"POST /v%s/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1\n"
		"    Connection: Upgrade, Upgrade: tcp (before start, so no output is lost)\n"
		"POST /v%s/containers/%s/start\n"
		"    then %zu bytes on the attach stream (brig-init's header line, then the\n"
		"    code) and a half-close (stdin EOF);\n"
		"    stdout/stderr demultiplexed, at most %zu bytes kept (combined)\n"
		"POST /v%s/containers/%s/kill\n"
		"    only at the deadline (%lld ms after start), on output overflow or on cancel\n"
		"POST /v%s/containers/%s/wait?condition=not-running\n"
		"GET /v%s/containers/%s/json\n"
		"    State.ExitCode, State.OOMKilled\n"
		"DELETE /v%s/containers/%s?force=1&v=1\n"
		"    always, whatever happened\n",
		api, c, api, c, s->stdin_len, s->max_output_bytes, api, c, (long long)s->timeout_ms,
		api, c, api, c, api, c);
	*out = sb_steal(&sb);
	return 0;
}

int dock_explain_detached(const char *backend, const brig_spec *s, char **out, brig_error **err)
{
	if (!s || !s->name || !s->image)
		return plugin_fail(err, BRIG_E_USAGE, 0, "explain: incomplete container spec");
	char api[16];
	strbuf sb;
	sb_init(&sb);
	explain_create(&sb, backend, s, dock_detached_body(s, false), api, sizeof api);
	sb_printf(&sb,
		  "POST /v%s/containers/%s/start\n"
		  "    detached: no stdin, nothing attached\n"
		  "DELETE /v%s/containers/%s?force=1&v=1\n"
		  "    when the host removes it\n",
		  api, s->name, api, s->name);
	*out = sb_steal(&sb);
	return 0;
}
