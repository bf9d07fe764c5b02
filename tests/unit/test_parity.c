/* test_parity.c - the docker CLI argv and the Engine API create body express the SAME spec,
 * field by field: both are rendered from one brig_spec and every control is checked in both. */
#include "config.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "cli_argv.h"
#include "cunit_main.h"
#include "dock.h"
#include "internal.h"
#include "policy.h"
#include "spec.h"
#include "util.h"

typedef struct rendered {
	brig_spec *spec;
	char **argv;
	json_object *body;
	json_object *hc;
} rendered;

#define WS_ID "0123456789abcdef0123456789abcdef"
static const char *render_workspace; /* the next render()'s box works in this workspace */

static void render_image(const char *policy_json, brig_language lang, int isolation,
			 const char *runtime, const brig_image_info *image, rendered *r)
{
	brig_policy *p = NULL;
	brig_error *err = NULL;
	if (policy_json) {
		CU_ASSERT_EQUAL_FATAL(brig_policy_load_string(policy_json, "t", &p, &err), 0);
	} else {
		p = brig_policy_new_default();
	}
	brig_request req = { .language = lang, .code = "print(1)", .code_len = 8 };
	char *notice = NULL;
	spec_target t = { .runtime = runtime,
			  .isolation = isolation,
			  .init = "/usr/lib/brig/brig-init",
			  .user = "2000000000:65534",
			  .image = image,
			  .workspace = render_workspace };
	CU_ASSERT_EQUAL_FATAL(spec_build(p, &req, BRIG_TIMEOUT_REFUSE, &t, &r->spec, &notice, &err),
			      0);
	free(notice);
	brig_policy_free(p);
	r->argv = cli_render_argv(r->spec, "/usr/bin/docker",
				  r->spec->seccomp_profile ? "/tmp/p.json" : NULL);
	r->body = dock_create_body(r->spec, true);
	CU_ASSERT_FATAL(json_object_object_get_ex(r->body, "HostConfig", &r->hc));
}

static void render(const char *policy_json, brig_language lang, int isolation, const char *runtime,
		   rendered *r)
{
	render_image(policy_json, lang, isolation, runtime, NULL, r);
}

static void release(rendered *r)
{
	strv_free(r->argv);
	json_object_put(r->body);
	spec_free(r->spec);
}

/* All values of `flag` in the argv, in order, NULL-terminated (borrowed strings). */
static size_t flag_values(char **argv, const char *flag, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; argv[i] && n < max; i++)
		if (strcmp(argv[i], flag) == 0 && argv[i + 1])
			out[n++] = argv[i + 1];
	return n;
}

static const char *flag1(char **argv, const char *flag)
{
	const char *v[4];
	return flag_values(argv, flag, v, 4) == 1 ? v[0] : NULL;
}

static bool has_flag(char **argv, const char *flag)
{
	for (size_t i = 0; argv[i]; i++)
		if (strcmp(argv[i], flag) == 0)
			return true;
	return false;
}

static const char *jstr(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : NULL;
}

static int64_t jint(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : -12345;
}

static bool jbool(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_get_boolean(v);
}

/* "256m" -> bytes, as docker's CLI parses it */
static int64_t cli_bytes(const char *s)
{
	char *end = NULL;
	long long v = strtoll(s, &end, 10);
	if (*end == 'm')
		return v * 1024 * 1024;
	if (*end == 'g')
		return v * 1024 * 1024 * 1024;
	return v;
}

static void check_same(rendered *r)
{
	const brig_spec *s = r->spec;
	char **a = r->argv;
	json_object *hc = r->hc;
	/* image and command: the words after the last flag */
	size_t n = strv_len(a), nargv = strv_len(s->argv);
	CU_ASSERT_STRING_EQUAL(a[n - nargv - 1], jstr(r->body, "Image"));
	CU_ASSERT_STRING_EQUAL(jstr(r->body, "Image"), s->image_id ? s->image_id : s->image);
	json_object *cmd;
	CU_ASSERT_FATAL(json_object_object_get_ex(r->body, "Cmd", &cmd));
	CU_ASSERT_EQUAL(json_object_array_length(cmd), nargv);
	for (size_t i = 0; i < nargv; i++)
		CU_ASSERT_STRING_EQUAL(a[n - nargv + i],
				       json_object_get_string(json_object_array_get_idx(cmd, i)));
	/* environment, in order */
	const char *env[32];
	size_t ne = flag_values(a, "--env", env, 32);
	json_object *jenv;
	CU_ASSERT_FATAL(json_object_object_get_ex(r->body, "Env", &jenv));
	CU_ASSERT_EQUAL(ne, json_object_array_length(jenv));
	for (size_t i = 0; i < ne && i < json_object_array_length(jenv); i++)
		CU_ASSERT_STRING_EQUAL(env[i],
				       json_object_get_string(json_object_array_get_idx(jenv, i)));
	/* labels: "k=v" flags against the Labels object */
	const char *labels[16];
	size_t nl = flag_values(a, "--label", labels, 16);
	json_object *jl;
	CU_ASSERT_FATAL(json_object_object_get_ex(r->body, "Labels", &jl));
	CU_ASSERT_EQUAL(nl, (size_t)json_object_object_length(jl));
	for (size_t i = 0; i < nl; i++) {
		const char *eq = strchr(labels[i], '=');
		CU_ASSERT_PTR_NOT_NULL_FATAL(eq);
		char key[128];
		snprintf(key, sizeof key, "%.*s", (int)(eq - labels[i]), labels[i]);
		CU_ASSERT_STRING_EQUAL(jstr(jl, key), eq + 1);
	}
	CU_ASSERT_STRING_EQUAL(flag1(a, "--user"), jstr(r->body, "User"));
	CU_ASSERT_STRING_EQUAL(flag1(a, "--workdir"), jstr(r->body, "WorkingDir"));
	/* no hostname in a holder's network namespace (the engine refuses one there) */
	CU_ASSERT_EQUAL(has_flag(a, "--hostname"), s->hostname != NULL);
	CU_ASSERT_EQUAL(json_object_object_get_ex(r->body, "Hostname", NULL), s->hostname != NULL);
	if (s->hostname)
		CU_ASSERT_STRING_EQUAL(flag1(a, "--hostname"), jstr(r->body, "Hostname"));
	CU_ASSERT_STRING_EQUAL(flag1(a, "--network"), jstr(hc, "NetworkMode"));
	CU_ASSERT_EQUAL(strcmp(s->network, "none") == 0, jbool(r->body, "NetworkDisabled"));
	CU_ASSERT_STRING_EQUAL(flag1(a, "--runtime"), jstr(hc, "Runtime"));
	CU_ASSERT_EQUAL(has_flag(a, "--read-only"), jbool(hc, "ReadonlyRootfs"));
	CU_ASSERT(jbool(hc, "ReadonlyRootfs"));
	/* tmpfs: "PATH:OPTS" against {"PATH": "OPTS"} */
	const char *tmpfs = flag1(a, "--tmpfs");
	json_object *jt;
	CU_ASSERT_FATAL(tmpfs && json_object_object_get_ex(hc, "Tmpfs", &jt));
	const char *colon = strchr(tmpfs, ':');
	CU_ASSERT_FATAL(colon != NULL);
	char path[64];
	snprintf(path, sizeof path, "%.*s", (int)(colon - tmpfs), tmpfs);
	CU_ASSERT_STRING_EQUAL(jstr(jt, path), colon + 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(colon + 1, "noexec"));
	CU_ASSERT_EQUAL(cli_bytes(flag1(a, "--shm-size")), jint(hc, "ShmSize"));
	/* mounts: each --mount CSV against HostConfig.Mounts, in order (brig-init at least) */
	const char *mv[8];
	size_t nm = flag_values(a, "--mount", mv, 8);
	json_object *jm = NULL;
	/* a network holder has none (no brig-init: sleep is its whole program) */
	bool any = s->mounts && s->mounts[0];
	CU_ASSERT_EQUAL(json_object_object_get_ex(hc, "Mounts", &jm), any);
	CU_ASSERT_EQUAL_FATAL(nm, any ? json_object_array_length(jm) : 0);
	CU_ASSERT(any || strcmp(s->argv[0], "sleep") == 0); /* brig-init in every other box */
	for (size_t i = 0; i < nm; i++) {
		json_object *m = json_object_array_get_idx(jm, i), *vo = NULL, *nc = NULL;
		bool nocopy = json_object_object_get_ex(m, "VolumeOptions", &vo) &&
			      json_object_object_get_ex(vo, "NoCopy", &nc) &&
			      json_object_get_boolean(nc);
		char want[512];
		snprintf(want, sizeof want, "type=%s,source=%s,target=%s%s%s", jstr(m, "Type"),
			 jstr(m, "Source"), jstr(m, "Target"),
			 jbool(m, "ReadOnly") ? ",readonly" : "", nocopy ? ",volume-nocopy" : "");
		CU_ASSERT_STRING_EQUAL(mv[i], want);
	}
	CU_ASSERT_EQUAL(cli_bytes(flag1(a, "--memory")), jint(hc, "Memory"));
	CU_ASSERT_EQUAL(cli_bytes(flag1(a, "--memory-swap")), jint(hc, "MemorySwap"));
	CU_ASSERT_EQUAL(jint(hc, "Memory"), jint(hc, "MemorySwap")); /* no swap */
	CU_ASSERT_EQUAL(llround(strtod(flag1(a, "--cpus"), NULL) * 1e9), jint(hc, "NanoCpus"));
	CU_ASSERT_EQUAL(strtoll(flag1(a, "--pids-limit"), NULL, 10), jint(hc, "PidsLimit"));
	/* each --ulimit NAME=N:N against [{"Name":NAME,"Soft":N,"Hard":N}, ...], in order: nofile
	 * always, nproc when the spec sets it (gVisor) */
	json_object *uls;
	const char *ulv[4];
	size_t n_ul = flag_values(a, "--ulimit", ulv, 4);
	CU_ASSERT_FATAL(json_object_object_get_ex(hc, "Ulimits", &uls) &&
			json_object_array_length(uls) == n_ul);
	CU_ASSERT_EQUAL(n_ul, r->spec->nproc > 0 ? 3 : 2); /* nofile, [nproc,] core */
	for (size_t i = 0; i < n_ul; i++) {
		json_object *ul = json_object_array_get_idx(uls, i);
		char want[64];
		snprintf(want, sizeof want, "%s=%" PRId64 ":%" PRId64, jstr(ul, "Name"),
			 jint(ul, "Soft"), jint(ul, "Hard"));
		CU_ASSERT_STRING_EQUAL(ulv[i], want);
	}
	CU_ASSERT_STRING_EQUAL(jstr(json_object_array_get_idx(uls, 0), "Name"), "nofile");
	CU_ASSERT_STRING_EQUAL(ulv[n_ul - 1], "core=0:0");
	/* the box's own cgroup namespace, in both */
	CU_ASSERT_EQUAL(s->cgroupns_private, flag1(a, "--cgroupns") != NULL);
	CU_ASSERT_STRING_EQUAL(flag1(a, "--cgroupns"), jstr(hc, "CgroupnsMode"));
	/* masked paths: the API body has them all; the docker CLI cannot express them, and
	 * docker-cli does not claim BRIG_FEATURE_MASKED_PATHS, so the host never hands it such a
	 * spec (test_loader: a backend lacking a feature is refused) */
	json_object *mp = NULL;
	CU_ASSERT_EQUAL(json_object_object_get_ex(hc, "MaskedPaths", &mp), s->masked_paths != NULL);
	CU_ASSERT_EQUAL(mp ? json_object_array_length(mp) : 0, strv_len(s->masked_paths));
	for (size_t i = 0; mp && i < json_object_array_length(mp); i++)
		CU_ASSERT_STRING_EQUAL(json_object_get_string(json_object_array_get_idx(mp, i)),
				       s->masked_paths[i]);
	/* capabilities and security options */
	json_object *caps;
	CU_ASSERT_FATAL(json_object_object_get_ex(hc, "CapDrop", &caps));
	CU_ASSERT_EQUAL(json_object_array_length(caps), 1);
	CU_ASSERT_STRING_EQUAL(flag1(a, "--cap-drop"),
			       json_object_get_string(json_object_array_get_idx(caps, 0)));
	const char *sec[4];
	size_t ns = flag_values(a, "--security-opt", sec, 4);
	json_object *jsec;
	CU_ASSERT_FATAL(json_object_object_get_ex(hc, "SecurityOpt", &jsec));
	CU_ASSERT_EQUAL(ns, json_object_array_length(jsec));
	CU_ASSERT_STRING_EQUAL(sec[0], "no-new-privileges");
	CU_ASSERT_STRING_EQUAL(json_object_get_string(json_object_array_get_idx(jsec, 0)),
			       "no-new-privileges");
	if (s->seccomp_profile) {
		/* the CLI names the file it wrote the profile to; the API carries the text itself
		 */
		CU_ASSERT_STRING_EQUAL(sec[1], "seccomp=/tmp/p.json");
		const char *api = json_object_get_string(json_object_array_get_idx(jsec, 1));
		CU_ASSERT(strncmp(api, "seccomp=", 8) == 0 &&
			  strcmp(api + 8, s->seccomp_profile) == 0);
	}
	json_object *log;
	CU_ASSERT_FATAL(json_object_object_get_ex(hc, "LogConfig", &log));
	CU_ASSERT_STRING_EQUAL(flag1(a, "--log-driver"), jstr(log, "Type"));
	/* the resolver */
	json_object *dns = NULL;
	bool api_dns = json_object_object_get_ex(hc, "Dns", &dns);
	CU_ASSERT_EQUAL(has_flag(a, "--dns"), api_dns);
	if (api_dns)
		CU_ASSERT_STRING_EQUAL(flag1(a, "--dns"),
				       json_object_get_string(json_object_array_get_idx(dns, 0)));
	/* never pulls: the CLI says so, the API's create never pulls */
	CU_ASSERT_STRING_EQUAL(flag1(a, "--pull"), "never");
	CU_ASSERT_STRING_EQUAL(flag1(a, "--name"), s->name);
}

static void test_default_python(void)
{
	rendered r;
	render(NULL, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER, "runc", &r);
	check_same(&r);
	release(&r);
}

static void test_every_language(void)
{
	for (int l = 0; l < BRIG_LANG_COUNT; l++) {
		rendered r;
		render(NULL, (brig_language)l, BRIG_ISOLATION_CONTAINER, "runc", &r);
		check_same(&r);
		release(&r);
	}
}

static void test_custom_limits_and_network(void)
{
	rendered r;
	render("{\"memory_mb\": 1000, \"cpus\": 0.25, \"pids_limit\": 100, \"nofile\": 128, "
	       "\"tmpfs_mb\": 8, \"network\": true, \"user\": \"1000:1000\"}",
	       BRIG_LANG_SHELL, BRIG_ISOLATION_CONTAINER, "runc", &r);
	check_same(&r);
	CU_ASSERT_STRING_EQUAL(flag1(r.argv, "--cpus"), "0.25");
	CU_ASSERT_STRING_EQUAL(flag1(r.argv, "--network"), "bridge");
	release(&r);
}

static void test_gvisor_runtime(void)
{
	rendered r;
	render(NULL, BRIG_LANG_NODE, BRIG_ISOLATION_GVISOR, "runsc-seccomp", &r);
	check_same(&r);
	CU_ASSERT_STRING_EQUAL(jstr(r.hc, "Runtime"), "runsc-seccomp");
	/* the program's budget + brig-init, enforced inside gVisor; the box that runs starts
	 * with brig-init and its marker, in both renderings, and brig-init is a read-only bind */
	CU_ASSERT_EQUAL(r.spec->nproc, r.spec->pids_guest + 1);
	json_object *cmd = NULL, *mounts = NULL;
	CU_ASSERT_FATAL(json_object_object_get_ex(r.body, "Cmd", &cmd));
	CU_ASSERT_STRING_EQUAL(json_object_get_string(json_object_array_get_idx(cmd, 0)),
			       "/.brig-init");
	CU_ASSERT_STRING_EQUAL(json_object_get_string(json_object_array_get_idx(cmd, 2)),
			       r.spec->exit_marker);
	size_t n = strv_len(r.argv);
	CU_ASSERT_STRING_EQUAL(r.argv[n - 6], "/.brig-init");
	CU_ASSERT_STRING_EQUAL(r.argv[n - 4], r.spec->exit_marker);
	CU_ASSERT_STRING_EQUAL(r.argv[n - 2], "node");
	CU_ASSERT_FATAL(json_object_object_get_ex(r.hc, "Mounts", &mounts));
	json_object *m = json_object_array_get_idx(mounts, 0);
	CU_ASSERT_STRING_EQUAL(jstr(m, "Type"), "bind");
	CU_ASSERT_STRING_EQUAL(jstr(m, "Target"), "/.brig-init");
	CU_ASSERT_STRING_EQUAL(
		flag1(r.argv, "--mount"),
		"type=bind,source=/usr/lib/brig/brig-init,target=/.brig-init,readonly");
	release(&r);
}

/* gVisor here has no network (runsc --network=none): a box asking for it is refused with the
 * reason, never built to run without. */
static void test_gvisor_network_refused(void)
{
	brig_policy *p = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(brig_policy_load_string("{\"network\": true}", "t", &p, &err), 0);
	brig_request req = { .language = BRIG_LANG_SHELL, .code = "true", .code_len = 4 };
	spec_target t = { .runtime = "runsc-seccomp",
			  .isolation = BRIG_ISOLATION_GVISOR,
			  .init = "/usr/lib/brig/brig-init",
			  .user = "2000000000:65534" };
	brig_spec *s = NULL;
	CU_ASSERT_EQUAL(spec_build(p, &req, BRIG_TIMEOUT_REFUSE, &t, &s, NULL, &err),
			BRIG_E_UNAVAILABLE);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "cannot be honoured under gVisor"));
	brig_error_free(err);
	brig_policy_free(p);
}

/* A looked-up image: both start the box from its ID, never from the tag that named it. */
static void test_image_id(void)
{
	static const char id[] =
		"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	brig_image_info found = { .struct_size = sizeof found };
	memcpy(found.id, id, sizeof id);
	rendered r;
	render_image("{\"images\": {\"shell\": \"brig/shell:bookworm@sha256:"
		     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}}",
		     BRIG_LANG_SHELL, BRIG_ISOLATION_CONTAINER, "runc", &found, &r);
	check_same(&r);
	CU_ASSERT_STRING_EQUAL(jstr(r.body, "Image"), id);
	release(&r);
	render_image(NULL, BRIG_LANG_PYTHON, BRIG_ISOLATION_GVISOR, "runsc-seccomp", &found, &r);
	check_same(&r);
	CU_ASSERT_STRING_EQUAL(jstr(r.body, "Image"), id);
	release(&r);
}

/* The workspace's mount, label and working directory, the same in both renderings, under runc
 * and gVisor; the spec names the workspace; the volume is mounted without the engine's copy. */
static void check_workspace(rendered *r)
{
	check_same(r);
	CU_ASSERT_STRING_EQUAL(r->spec->workspace, WS_ID);
	CU_ASSERT_STRING_EQUAL(r->spec->workdir, "/workspace");
	CU_ASSERT_STRING_EQUAL(flag1(r->argv, "--workdir"), "/workspace");
	const char *mv[8];
	CU_ASSERT_EQUAL_FATAL(flag_values(r->argv, "--mount", mv, 8), 2);
	CU_ASSERT_STRING_EQUAL(mv[1], "type=volume,source=brig-ws-" WS_ID
				      ",target=/workspace,volume-nocopy");
	json_object *mounts = NULL, *vo = NULL, *nc = NULL, *labels = NULL, *l = NULL;
	CU_ASSERT_FATAL(json_object_object_get_ex(r->hc, "Mounts", &mounts));
	json_object *m = json_object_array_get_idx(mounts, 1);
	CU_ASSERT_STRING_EQUAL(jstr(m, "Type"), "volume");
	CU_ASSERT_STRING_EQUAL(jstr(m, "Source"), "brig-ws-" WS_ID);
	CU_ASSERT_FALSE(jbool(m, "ReadOnly"));
	CU_ASSERT_FATAL(json_object_object_get_ex(m, "VolumeOptions", &vo) &&
			json_object_object_get_ex(vo, "NoCopy", &nc));
	CU_ASSERT_TRUE(json_object_get_boolean(nc));
	CU_ASSERT_FATAL(json_object_object_get_ex(r->body, "Labels", &labels));
	CU_ASSERT_FATAL(json_object_object_get_ex(labels, "brig.workspace", &l));
	CU_ASSERT_STRING_EQUAL(json_object_get_string(l), WS_ID);
	json_object *j = spec_to_json(r->spec), *w = NULL;
	CU_ASSERT(json_object_object_get_ex(j, "workspace", &w) &&
		  strcmp(json_object_get_string(w), WS_ID) == 0);
	json_object_put(j);
}

static void test_workspace(void)
{
	rendered r;
	render_workspace = WS_ID;
	render(NULL, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER, "runc", &r);
	check_workspace(&r);
	release(&r);
	render(NULL, BRIG_LANG_SHELL, BRIG_ISOLATION_GVISOR, "runsc-seccomp", &r);
	check_workspace(&r);
	release(&r);
	render_workspace = NULL;
	/* no workspace: no volume, no label, /tmp */
	render(NULL, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER, "runc", &r);
	CU_ASSERT_PTR_NULL(r.spec->workspace);
	CU_ASSERT_STRING_EQUAL(flag1(r.argv, "--workdir"), "/tmp");
	release(&r);
}

/* The holder and the file tool's box are specs like any other: the same in both renderings. */
static void test_workspace_holder_and_tool(void)
{
	brig_policy *p = brig_policy_new_default();
	brig_error *err = NULL;
	spec_target t = { .runtime = "runsc-seccomp",
			  .isolation = BRIG_ISOLATION_GVISOR,
			  .init = "/usr/lib/brig/brig-init",
			  .user = "2000000000:65534",
			  .install = "00112233aabbccdd",
			  .workspace = WS_ID };
	rendered r = { 0 };
	CU_ASSERT_EQUAL_FATAL(spec_build_holder(p, &t, WS_ID, 600, &r.spec, &err), 0);
	r.argv = cli_render_argv(r.spec, "/usr/bin/docker", "/tmp/p.json");
	r.body = dock_create_body(r.spec, true);
	CU_ASSERT_FATAL(json_object_object_get_ex(r.body, "HostConfig", &r.hc));
	check_same(&r);
	CU_ASSERT_STRING_EQUAL(r.spec->name, "brig-wsh-" WS_ID);
	CU_ASSERT_STRING_EQUAL(r.spec->runtime, "runc"); /* runs nothing of the agent's */
	CU_ASSERT_STRING_EQUAL(r.spec->argv[0], "sleep");
	CU_ASSERT_STRING_EQUAL(r.spec->argv[1], "600");
	CU_ASSERT_EQUAL(r.spec->memory_bytes, 16 * 1024 * 1024);
	CU_ASSERT_STRING_EQUAL(flag1(r.argv, "--mount"),
			       "type=volume,source=brig-ws-" WS_ID ",target=/workspace,readonly,"
			       "volume-nocopy");
	for (char **l = r.spec->labels; *l; l++) /* outlives its brig: no owner */
		CU_ASSERT(strncmp(*l, "brig.owner=", 11) != 0);
	release(&r);
	static const char *const tool[] = { "get", "a.txt", "100", NULL };
	CU_ASSERT_EQUAL_FATAL(spec_build_tool(p, &t, tool, "", 0, &r.spec, &err), 0);
	r.argv = cli_render_argv(r.spec, "/usr/bin/docker", "/tmp/p.json");
	r.body = dock_create_body(r.spec, true);
	CU_ASSERT_FATAL(json_object_object_get_ex(r.body, "HostConfig", &r.hc));
	check_workspace(&r);
	size_t n = strv_len(r.spec->argv);
	CU_ASSERT_STRING_EQUAL(r.spec->argv[n - 4], "--workspace-tool");
	CU_ASSERT_STRING_EQUAL(r.spec->argv[n - 5], "/.brig-init");
	CU_ASSERT_STRING_EQUAL(r.spec->argv[n - 1], "100");
	CU_ASSERT(r.spec->output_limit >= (size_t)p->ws.max_transfer_bytes);
	release(&r);
	brig_policy_free(p);
	/* under an egress allowlist neither the holder nor a tool box reaches anything: no
	 * network, no network holder of their own */
	char dir[] = "/tmp/brig-test-parity.XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	setenv("BRIG_CACHE_DIR", dir, 1);
	CU_ASSERT_EQUAL_FATAL(
		brig_policy_load_string("{\"egress\": {\"allow\": [\"ok.test:443\"]}}", "t", &p,
					&err),
		0);
	brig_spec *h = NULL;
	CU_ASSERT_EQUAL_FATAL(spec_build_holder(p, &t, WS_ID, 600, &h, &err), 0);
	CU_ASSERT_STRING_EQUAL(h->network, "none");
	CU_ASSERT_PTR_NULL(h->egress);
	CU_ASSERT_PTR_NULL(h->net_holder);
	spec_free(h);
	CU_ASSERT_EQUAL_FATAL(spec_build_tool(p, &t, tool, "", 0, &h, &err), 0);
	CU_ASSERT_STRING_EQUAL(h->network, "none");
	CU_ASSERT_PTR_NULL(h->egress);
	CU_ASSERT_PTR_NULL(h->net_holder);
	spec_free(h);
	brig_policy_free(p);
	unsetenv("BRIG_CACHE_DIR");
	rmdir(dir);
}

/* The egress network is one field of the final spec: both renderings put the box on the
 * allowlist's internal network with the neutral nameserver and the proxy variables;
 * spec_to_json (brig explain --json) and the audit line carry the same network, list and proxy;
 * a backend without the networks feature is refused such a spec. */
static const char egress_policy[] =
	"{\"egress\": {\"allow\": [\"ok.test:8080\", \"*.w.test:443\"]}}";

/* The box's network holder, rendered by both backends as its own container. */
static void check_holder(const brig_spec *box)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(box->net_holder);
	rendered h = { .spec = box->net_holder };
	/* as start_detached starts it: no stdin, nothing attached, removed by the host */
	h.argv = cli_render_detached_argv(h.spec, "/usr/bin/docker",
					  h.spec->seccomp_profile ? "/tmp/p.json" : NULL);
	h.body = dock_detached_body(h.spec, true);
	CU_ASSERT_FATAL(json_object_object_get_ex(h.body, "HostConfig", &h.hc));
	check_same(&h);
	CU_ASSERT_TRUE(has_flag(h.argv, "-d"));
	CU_ASSERT_FALSE(has_flag(h.argv, "-i"));
	/* it removes itself when its sleep ends (a spare nobody claimed, a killed brig's) */
	CU_ASSERT_TRUE(has_flag(h.argv, "--rm"));
	CU_ASSERT_TRUE(jbool(h.hc, "AutoRemove"));
	/* nobody: any box of the configuration may take it as a spare */
	CU_ASSERT_STRING_EQUAL(flag1(h.argv, "--user"), SPEC_HOLDER_USER);
	CU_ASSERT_STRING_EQUAL(jstr(h.body, "User"), SPEC_HOLDER_USER);
	static const char *const off[] = { "AttachStdin", "AttachStdout", "AttachStderr",
					   "OpenStdin", "StdinOnce" };
	for (size_t i = 0; i < sizeof off / sizeof *off; i++) {
		json_object *v = NULL;
		CU_ASSERT_FATAL(json_object_object_get_ex(h.body, off[i], &v));
		CU_ASSERT_FALSE(json_object_get_boolean(v));
	}
	CU_ASSERT_STRING_EQUAL(jstr(h.hc, "NetworkMode"), box->egress->network);
	CU_ASSERT_STRING_EQUAL(flag1(h.argv, "--dns"), BRIG_NEUTRAL_DNS);
	CU_ASSERT_STRING_EQUAL(jstr(h.body, "Hostname"), "sandbox");
	CU_ASSERT_STRING_EQUAL(jstr(h.hc, "Runtime"), "runc");
	h.spec = NULL;
	release(&h);
}

/* A spare holder (src/spare.c): the holder but for its name, labels (no owner, no box: its
 * key, domain and claim deadline) and how long it sleeps; the same in both renderings. */
static void check_spare(brig_spec *box, int max_timeout)
{
	brig_spec *h = box->net_holder;
	spec_holder_to_spare(h, "brig-0123456789abcdef-spare", "KEY", "DOMAIN", 1234, max_timeout);
	rendered r = { .spec = h };
	r.argv = cli_render_detached_argv(h, "/usr/bin/docker",
					  h->seccomp_profile ? "/tmp/p.json" : NULL);
	r.body = dock_detached_body(h, true);
	CU_ASSERT_FATAL(json_object_object_get_ex(r.body, "HostConfig", &r.hc));
	check_same(&r);
	CU_ASSERT_STRING_EQUAL(flag1(r.argv, "--name"), "brig-0123456789abcdef-spare");
	json_object *jl = NULL;
	CU_ASSERT_FATAL(json_object_object_get_ex(r.body, "Labels", &jl));
	CU_ASSERT_STRING_EQUAL(jstr(jl, "brig"), "1");
	CU_ASSERT_STRING_EQUAL(jstr(jl, "brig.role"), "net-spare");
	CU_ASSERT_STRING_EQUAL(jstr(jl, SPEC_SPARE_LABEL), "KEY");
	CU_ASSERT_STRING_EQUAL(jstr(jl, "brig.spare-domain"), "DOMAIN");
	CU_ASSERT_STRING_EQUAL(jstr(jl, "brig.spare-until"), "1234");
	CU_ASSERT_FALSE(json_object_object_get_ex(jl, "brig.owner", NULL));
	CU_ASSERT_FALSE(json_object_object_get_ex(jl, "brig.box", NULL));
	/* and its installation's label when the box had one (the reaper lists by it) */
	CU_ASSERT_EQUAL(json_object_object_length(jl), 5 + (jstr(jl, "brig.install") != NULL));
	/* claimable for SPEC_SPARE_CLAIM_S, then up for the longest run and its grace */
	CU_ASSERT_STRING_EQUAL(h->argv[0], "sleep");
	CU_ASSERT_EQUAL(strtol(h->argv[1], NULL, 10), max_timeout + SPEC_BOX_GRACE_MS / 1000 +
							      SPEC_NET_HOLDER_SLACK_S +
							      SPEC_SPARE_CLAIM_S);
	CU_ASSERT_TRUE(has_flag(r.argv, "--rm"));
	CU_ASSERT_TRUE(jbool(r.hc, "AutoRemove"));
	r.spec = NULL;
	release(&r);
}

static void test_egress_network(void)
{
	char dir[] = "/tmp/brig-test-parity.XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	setenv("BRIG_CACHE_DIR", dir, 1);
	rendered r;
	render(egress_policy, BRIG_LANG_PYTHON, BRIG_ISOLATION_CONTAINER, "runc", &r);
	check_same(&r);
	const brig_egress *e = r.spec->egress;
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	/* the box in its holder's network namespace; the holder on the internal network */
	cleanup_free char *mode = xasprintf("container:%s", r.spec->net_holder->name);
	CU_ASSERT_STRING_EQUAL(flag1(r.argv, "--network"), mode);
	CU_ASSERT_STRING_EQUAL(jstr(r.hc, "NetworkMode"), mode);
	CU_ASSERT_FALSE(json_object_object_get_ex(r.body, "NetworkDisabled", NULL));
	CU_ASSERT_FALSE(has_flag(r.argv, "--dns"));
	CU_ASSERT_FALSE(json_object_object_get_ex(r.hc, "Dns", NULL));
	check_holder(r.spec);
	cleanup_free char *proxy =
		xasprintf("HTTPS_PROXY=http://%s:%d", e->proxy_address, e->proxy_port);
	const char *env[32];
	size_t ne = flag_values(r.argv, "--env", env, 32);
	bool found = false;
	for (size_t i = 0; i < ne; i++)
		found = found || strcmp(env[i], proxy) == 0;
	CU_ASSERT_TRUE(found);
	/* explain --json */
	json_object *sj = spec_to_json(r.spec), *ej = NULL;
	CU_ASSERT_FATAL(json_object_object_get_ex(sj, "egress", &ej));
	CU_ASSERT_STRING_EQUAL(jstr(ej, "network"), e->network);
	CU_ASSERT_STRING_EQUAL(jstr(ej, "proxy_address"), e->proxy_address);
	CU_ASSERT_STRING_EQUAL(jstr(sj, "network"), mode);
	json_object *hj = NULL;
	CU_ASSERT_FATAL(json_object_object_get_ex(sj, "net_holder", &hj));
	CU_ASSERT_STRING_EQUAL(jstr(hj, "network"), e->network);
	CU_ASSERT_STRING_EQUAL(jstr(hj, "name"), r.spec->net_holder->name);
	json_object_put(sj);
	/* the audit line */
	cleanup_free char *file = xasprintf("%s/audit.jsonl", dir);
	audit_log *a = NULL;
	brig_error *err = NULL;
	CU_ASSERT_FATAL(audit_open(file, &a, &err) == 0);
	brig_policy *p = NULL;
	CU_ASSERT_FATAL(brig_policy_load_string(egress_policy, "t", &p, &err) == 0);
	brig_result res = { .struct_size = sizeof res, .verdict = BRIG_VERDICT_SUCCESS };
	audit_entry ae = { .front_door = "lib",
			   .language = BRIG_LANG_PYTHON,
			   .code_sha256 = "0",
			   .policy = p,
			   .spec = r.spec,
			   .result = &res };
	CU_ASSERT(audit_append(a, &ae, &err) == 0);
	audit_close(a);
	FILE *f = fopen(file, "re");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	char line[16384];
	CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
	fclose(f);
	json_object *o = json_tokener_parse(line), *l = NULL, *eg = NULL, *allow = NULL;
	CU_ASSERT_FATAL(json_object_object_get_ex(o, "limits", &l));
	CU_ASSERT_STRING_EQUAL(jstr(l, "network"), mode);
	CU_ASSERT_FATAL(json_object_object_get_ex(l, "egress", &eg));
	CU_ASSERT_STRING_EQUAL(jstr(eg, "proxy_address"), e->proxy_address);
	CU_ASSERT_STRING_EQUAL(jstr(eg, "network"), e->network);
	CU_ASSERT_STRING_EQUAL(jstr(eg, "net_holder"), r.spec->net_holder->name);
	CU_ASSERT_FATAL(json_object_object_get_ex(eg, "allow", &allow));
	CU_ASSERT_EQUAL(json_object_array_length(allow), 2);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(json_object_array_get_idx(allow, 1)),
			       "*.w.test:443");
	json_object_put(o);
	brig_policy_free(p);
	unlink(file);
	/* a backend that cannot make networks is refused the box; one that can is not */
	brig_backend be = { .struct_size = sizeof be,
			    .name = "fake",
			    .abi_minor = BRIG_BACKEND_ABI_MINOR,
			    .features = BRIG_FEATURE_SECCOMP_PROFILE | BRIG_FEATURE_MOUNTS |
					BRIG_FEATURE_MASKED_PATHS };
	loaded_backend lb = { .be = &be };
	CU_ASSERT_EQUAL(dispatch_missing_features(&lb, r.spec, false), BRIG_FEATURE_NETWORKS);
	be.features |= BRIG_FEATURE_NETWORKS;
	CU_ASSERT_EQUAL(dispatch_missing_features(&lb, r.spec, false), 0);
	/* ...but not one older than ABI 2.4: it would not read the address from the holder */
	be.abi_minor = 3;
	CU_ASSERT_EQUAL(dispatch_missing_features(&lb, r.spec, false), BRIG_FEATURE_NETWORKS);
	check_spare(r.spec, 300); /* last: it makes the holder a spare */
	release(&r);
	/* gVisor boxes with egress run under the runtime registered for them */
	render(egress_policy, BRIG_LANG_PYTHON, BRIG_ISOLATION_GVISOR, "runsc-seccomp", &r);
	check_same(&r);
	CU_ASSERT_STRING_EQUAL(jstr(r.hc, "Runtime"), "runsc-egress");
	CU_ASSERT_STRING_EQUAL(flag1(r.argv, "--runtime"), "runsc-egress");
	check_holder(r.spec);
	release(&r);
	unsetenv("BRIG_CACHE_DIR");
	rmdir(dir);
}

static CU_TestInfo tests[] = {
	{ "workspace box: mount, label, workdir", test_workspace },
	{ "workspace holder and file tool boxes", test_workspace_holder_and_tool },
	{ "default python spec: CLI argv == API body", test_default_python },
	{ "every language", test_every_language },
	{ "custom limits, network on", test_custom_limits_and_network },
	{ "gvisor runtime", test_gvisor_runtime },
	{ "gvisor refuses network: true", test_gvisor_network_refused },
	{ "image ID", test_image_id },
	{ "egress network: renderings, explain, audit, features", test_egress_network },
	CU_TEST_INFO_NULL,
};

BRIG_CUNIT_MAIN("parity", tests)
