/* workspace.c - workspaces: files that live across runs, while every run stays a fresh box.
 *
 * A workspace is a volume of the engine's local driver backed by tmpfs, its size and file quotas
 * in the mount options (the kernel enforces them: ENOSPC), owned by one uid of uid_range for the
 * workspace's whole life (uids.c: uid_reserve_workspace) and mounted noexec,nosuid,nodev,0700.
 * The local driver unmounts a tmpfs volume - losing its files - when no container uses it, so a
 * holder container (spec_build_holder: `sleep` for the lifetime, under runc, 16 MiB, the volume
 * read-only) keeps it mounted; its own `sleep` bounds the lifetime even when no brig runs.
 * Each run mounts the volume at /workspace without the engine's copy-up and starts there.
 *
 * brig never touches the volume from the host: put, get and list are programs of hardened boxes
 * in the workspace (brig-init --workspace-tool, src/init/files.c), which follow no symlink.
 *
 * What lives on the host is a state file per workspace in brig's state directory
 * (cache_dir()/workspaces/ID.json: its uid, limits, creation and end), whose mtime is the last
 * use and whose flock serialises the calls in the workspace; "ID.ended" remembers for a day why
 * a workspace ended, so that a late call hears "expired" rather than "unknown".  Workspaces
 * outlive the process that made them; every brig process (reap_at_start, once a minute) and
 * `brig gc` end the expired ones.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "images.h"
#include "init/tree.h"
#include "loader.h"
#include "pool.h"
#include "probe.h"
#include "reap.h"
#include "uids.h"
#include "workspace.h"

#define WS_STATE_MAX    4096
#define WS_TOMBSTONE_S  86400 /* how long "ended" is remembered */
#define WS_HOLDER_GRACE 60    /* the holder's sleep outlasts the lifetime by this much */
#define WS_LIST_MAX     1000  /* entries a listing returns */
#define WS_PATH_MAX     1024
#define WS_GID          65534

typedef struct ws_state {
	char id[SPEC_WS_ID_HEX + 1];
	long long uid, gid;
	long long created, expires, idle_ttl;
	long long size_mb, max_files, max_transfer;
	long long last_used; /* the state file's mtime */
} ws_state;

/* ---- the state directory ------------------------------------------------------------------ */

static char *ws_dir(brig_error **err)
{
	cleanup_free char *state = cache_dir();
	if (!state) {
		brig_fail(
			err, BRIG_E_SYSTEM, 0,
			"workspaces: no state directory (set $BRIG_CACHE_DIR, or $XDG_RUNTIME_DIR "
			"for a non-root user)");
		return NULL;
	}
	char *dir = xasprintf("%s/workspaces", state);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		brig_fail(err, BRIG_E_SYSTEM, errno, "cannot create %s", dir);
		free(dir);
		return NULL;
	}
	return dir;
}

static char *state_path(const char *dir, const char *id, const char *ext)
{
	return xasprintf("%s/%s.%s", dir, id, ext);
}

static long long jint(json_object *o, const char *k)
{
	json_object *v = NULL;
	return json_object_object_get_ex(o, k, &v) ? (long long)json_object_get_int64(v) : 0;
}

static int state_read(int fd, ws_state *st)
{
	char buf[WS_STATE_MAX];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	json_object *o = json_tokener_parse(buf), *id = NULL;
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "id", &id) ||
	    !spec_ws_id_valid(json_object_get_string(id))) {
		json_object_put(o);
		return -1;
	}
	memset(st, 0, sizeof *st);
	snprintf(st->id, sizeof st->id, "%s", json_object_get_string(id));
	st->uid = jint(o, "uid");
	st->gid = jint(o, "gid");
	st->created = jint(o, "created");
	st->expires = jint(o, "expires");
	st->idle_ttl = jint(o, "idle_ttl_seconds");
	st->size_mb = jint(o, "size_mb");
	st->max_files = jint(o, "max_files");
	st->max_transfer = jint(o, "max_transfer_bytes");
	json_object_put(o);
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return -1;
	st->last_used = (long long)sb.st_mtime;
	return 0;
}

static json_object *state_json(const ws_state *st, bool with_use)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(st->id));
	json_object_object_add(o, "uid", json_object_new_int64(st->uid));
	json_object_object_add(o, "gid", json_object_new_int64(st->gid));
	json_object_object_add(o, "created", json_object_new_int64(st->created));
	json_object_object_add(o, "expires", json_object_new_int64(st->expires));
	json_object_object_add(o, "idle_ttl_seconds", json_object_new_int64(st->idle_ttl));
	json_object_object_add(o, "size_mb", json_object_new_int64(st->size_mb));
	json_object_object_add(o, "max_files", json_object_new_int64(st->max_files));
	json_object_object_add(o, "max_transfer_bytes", json_object_new_int64(st->max_transfer));
	if (with_use) {
		json_object_object_add(o, "last_used", json_object_new_int64(st->last_used));
		long long idle_end = st->last_used + st->idle_ttl;
		json_object_object_add(
			o, "idle_expires",
			json_object_new_int64(idle_end < st->expires ? idle_end : st->expires));
	}
	return o;
}

/* Why it ended, for a later call: "ID.ended" holds the reason. */
static void tombstone_write(const char *dir, const char *id, const char *why)
{
	cleanup_free char *p = state_path(dir, id, "ended");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		(void)write_all(fd, why, strlen(why));
		close(fd);
	}
}

static char *tombstone_read(const char *dir, const char *id)
{
	cleanup_free char *p = state_path(dir, id, "ended");
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char buf[512];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	return n > 0 ? xstrndup(buf, (size_t)n) : NULL;
}

/* ---- the engine's side ---------------------------------------------------------------------- */

static int need_hooks(const loaded_backend *lb, brig_error **err)
{
	if (!lb) {
		brig_fail(err, BRIG_E_UNAVAILABLE, 0, "workspaces: no backend");
		return BRIG_E_UNAVAILABLE;
	}
	const brig_backend *be = lb->be;
	if (!(be->features & BRIG_FEATURE_WORKSPACES) || !BE_HOOK(be, volume_create) ||
	    !BE_HOOK(be, volume_remove) || !BE_HOOK(be, start_detached) ||
	    !BE_HOOK(be, container_state) || !BE_HOOK(be, remove))
		return brig_fail(err, BRIG_E_UNAVAILABLE, 0,
				 "backend %s cannot keep workspaces (it lacks the workspace hooks)",
				 be->name);
	return 0;
}

/* Every box labelled with the workspace but its holder: a warm pool's idle box for it, of this
 * brig process or another one (`brig workspace rm` while `brig mcp` holds one), and what a
 * killed brig left.  None runs a call: the caller holds the workspace's lock, which every call
 * and every pool start in it holds while its box lives. */
static void remove_boxes(const loaded_backend *lb, const char *id, const char *holder)
{
	if (!BE_HOOK(lb->be, list_labelled))
		return;
	char **names = NULL, **owners = NULL;
	cleanup_free char *label = xasprintf("brig.workspace=%s", id);
	brig_error *e = NULL;
	if (lb->be->list_labelled(label, &names, &owners, &e) == 0) {
		for (size_t i = 0; names && names[i]; i++) {
			if (strcmp(names[i], holder) == 0)
				continue;
			if (lb->be->remove(names[i], &e) < 0)
				core_debug("workspace %s: removing %s: %s", id, names[i],
					   e && e->message ? e->message : "failed");
			else
				core_debug("workspace %s: removed its box %s", id, names[i]);
			brig_error_free(e);
			e = NULL;
		}
	}
	brig_error_free(e);
	strv_free(names);
	strv_free(owners);
}

/* The workspace's other boxes, the holder, then the volume (which the engine refuses to
 * remove while a container - a run box being removed - still uses it: a few tries). */
static int engine_end(const loaded_backend *lb, const char *id, brig_error **err)
{
	cleanup_free char *holder = xasprintf(SPEC_WS_HOLDER_PREFIX "%s", id);
	cleanup_free char *volume = xasprintf(SPEC_WS_VOLUME_PREFIX "%s", id);
	remove_boxes(lb, id, holder);
	int r = lb->be->remove(holder, err);
	if (r != 0)
		return r;
	for (int i = 0; i < 20; i++) {
		brig_error *e = NULL;
		r = lb->be->volume_remove(volume, &e);
		if (r != BRIG_E_BUSY || i == 19) {
			if (r < 0 && err) {
				brig_error_free(*err);
				*err = e;
			} else {
				brig_error_free(e);
			}
			return r;
		}
		brig_error_free(e);
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return r;
}

/* End a workspace whose state file is locked (fd): the engine's side, the uid, the state file,
 * and a tombstone saying why. */
static int ws_end(brig_ctx *ctx, const loaded_backend *lb, const char *dir, const ws_state *st,
		  const char *why, brig_error **err)
{
	pool_drop_workspace(ctx->pool, st->id); /* this process's idle box for it: not handed out */
	int r = engine_end(lb, st->id, err);
	if (r != 0)
		return r;
	cleanup_free char *p = state_path(dir, st->id, "json");
	unlink(p);
	if (st->uid >= POLICY_UID_RANGE_MIN)
		uid_unreserve_workspace((unsigned long long)st->uid);
	tombstone_write(dir, st->id, why);
	core_debug("workspace %s ended: %s", st->id, why);
	return 0;
}

/* Why this workspace must end now, or NULL (malloc'ed). */
static char *ended_why(const loaded_backend *lb, const ws_state *st, bool *lost)
{
	long long now = (long long)time(NULL);
	*lost = false;
	if (!lb)
		return NULL;
	if (now >= st->expires)
		return xasprintf("its lifetime of %lld s ended", st->expires - st->created);
	if (now - st->last_used >= st->idle_ttl)
		return xasprintf("it was idle for more than its idle TTL of %lld s", st->idle_ttl);
	cleanup_free char *holder = xasprintf(SPEC_WS_HOLDER_PREFIX "%s", st->id);
	int state = 0;
	brig_error *e = NULL;
	int r = lb->be->container_state(holder, &state, &e);
	brig_error_free(e);
	if (r == 0 && state != 2 && state != 3) {
		*lost = true;
		return xstrdup("its holder container is gone or stopped (dockerd restarted, or "
			       "someone removed it), and its files with it");
	}
	return NULL;
}

/* ---- acquire / release ------------------------------------------------------------------- */

static int check_enabled(const brig_ctx *ctx, brig_error **err)
{
	if (ctx->policy->ws.enabled)
		return 0;
	return brig_fail(err, BRIG_E_REFUSED, 0,
			 "workspaces are off in the policy (workspaces.enabled is false)");
}

static int unknown(const char *dir, const char *id, brig_error **err)
{
	cleanup_free char *why = tombstone_read(dir, id);
	if (why)
		return brig_fail(err, BRIG_E_NOT_FOUND, 0, "workspace %s has ended: %s", id, why);
	return brig_fail(err, BRIG_E_NOT_FOUND, 0,
			 "unknown workspace %s (never made here, or ended more than a day ago)",
			 id);
}

int ws_acquire(brig_ctx *ctx, const loaded_backend *lb, const char *id, int wait_ms, ws_handle *out,
	       brig_error **err)
{
	out->lock_fd = -1;
	out->user = NULL;
	int r = check_enabled(ctx, err);
	if (r != 0)
		return r;
	if (!spec_ws_id_valid(id))
		return brig_fail(err, BRIG_E_NOT_FOUND, 0,
				 "not a workspace id (ids are 32 lowercase hex digits)");
	if ((r = need_hooks(lb, err)) < 0)
		return r;
	cleanup_free char *dir = ws_dir(err);
	if (!dir)
		return BRIG_E_SYSTEM;
	cleanup_free char *path = state_path(dir, id, "json");
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return unknown(dir, id, err);
	if (flock_wait(fd, wait_ms) < 0) {
		close(fd);
		return brig_fail(
			err, BRIG_E_BUSY, 0,
			"workspace %s is busy: another call in it did not end within %d ms", id,
			wait_ms);
	}
	struct stat sb;
	ws_state st;
	if (fstat(fd, &sb) < 0 || sb.st_nlink == 0 || state_read(fd, &st) < 0 ||
	    strcmp(st.id, id) != 0) { /* ended while we waited */
		close(fd);
		return unknown(dir, id, err);
	}
	bool lost;
	cleanup_free char *why = ended_why(lb, &st, &lost);
	if (why) {
		brig_error *e = NULL;
		if (ws_end(ctx, lb, dir, &st, why, &e) < 0)
			core_debug("workspace %s: %s", id, e ? e->message : "not ended");
		brig_error_free(e);
		close(fd);
		return brig_fail(err, BRIG_E_NOT_FOUND, 0, "workspace %s %s: %s", id,
				 lost ? "is lost" : "has expired", why);
	}
	memcpy(out->id, id, sizeof out->id);
	out->user = xasprintf("%lld:%lld", st.uid, st.gid);
	out->lock_fd = fd;
	out->size_mb = st.size_mb;
	out->max_files = st.max_files;
	out->idle_ttl = st.idle_ttl;
	return 0;
}

void ws_unlock(ws_handle *h)
{
	if (h->lock_fd >= 0)
		close(h->lock_fd);
	h->lock_fd = -1;
	free(h->user);
	h->user = NULL;
}

void ws_release(ws_handle *h)
{
	if (h->lock_fd >= 0)
		futimens(h->lock_fd, NULL); /* the last use: the idle TTL starts again */
	ws_unlock(h);
}

/* ---- expiry ------------------------------------------------------------------------------- */

/* Holders of this installation with no state file here that stopped: what a killed brig or a
 * lifetime that ended with no brig running left behind (a running one may be another user's). */
static int orphans(brig_ctx *ctx, loaded_backend *lb, const char *dir, int *ended)
{
	char **names = NULL, **owners = NULL;
	cleanup_free char *label = xasprintf("brig.install=%s", ctx->install);
	brig_error *e = NULL;
	if (lb->be->list_labelled(label, &names, &owners, &e) < 0) {
		brig_error_free(e);
		return -1;
	}
	size_t pre = strlen(SPEC_WS_HOLDER_PREFIX);
	for (size_t i = 0; names && names[i]; i++) {
		const char *id = names[i] + pre;
		if (strncmp(names[i], SPEC_WS_HOLDER_PREFIX, pre) != 0 || !spec_ws_id_valid(id))
			continue;
		cleanup_free char *path = state_path(dir, id, "json");
		int state = 2;
		/* a holder being started (3) may be another cache directory's creation under way:
		 * its own directory's sweep ends it if that creation died */
		if (access(path, F_OK) == 0 || lb->be->container_state(names[i], &state, &e) < 0 ||
		    state == 2 || state == 3) {
			brig_error_free(e);
			e = NULL;
			continue;
		}
		if (engine_end(lb, id, &e) == 0)
			(*ended)++;
		brig_error_free(e);
		e = NULL;
	}
	strv_free(names);
	strv_free(owners);
	return 0;
}

int ws_expire_all(brig_ctx *ctx, loaded_backend *lb, int *ended, brig_error **err)
{
	*ended = 0;
	if (need_hooks(lb, NULL) < 0)
		return 0;
	cleanup_free char *dir = ws_dir(err);
	if (!dir)
		return BRIG_E_SYSTEM;
	DIR *d = opendir(dir);
	if (!d)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot read %s", dir);
	long long now = (long long)time(NULL);
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		if (n == SPEC_WS_ID_HEX + 6 && strcmp(de->d_name + SPEC_WS_ID_HEX, ".ended") == 0) {
			struct stat sb;
			if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
			    now - (long long)sb.st_mtime > WS_TOMBSTONE_S)
				unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (n != SPEC_WS_ID_HEX + 5 || strcmp(de->d_name + SPEC_WS_ID_HEX, ".json") != 0)
			continue;
		int fd = openat(dirfd(d), de->d_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		ws_state st;
		/* one in use is not idle; its own call ends it if its lifetime is over */
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || state_read(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		bool lost;
		cleanup_free char *why = ended_why(lb, &st, &lost);
		brig_error *e = NULL;
		if (why && ws_end(ctx, lb, dir, &st, why, &e) == 0)
			(*ended)++;
		brig_error_free(e);
		close(fd);
	}
	closedir(d);
	orphans(ctx, lb, dir, ended);
	return 0;
}

/* ---- create / remove / list ------------------------------------------------------------------ */

static int random_id(char out[SPEC_WS_ID_HEX + 1])
{
	unsigned char rnd[SPEC_WS_ID_HEX / 2];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return -1;
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < sizeof rnd; i++) {
		out[2 * i] = hex[rnd[i] >> 4];
		out[2 * i + 1] = hex[rnd[i] & 15];
	}
	out[SPEC_WS_ID_HEX] = '\0';
	return 0;
}

/* The backend for workspace calls: the policy's, probed, with the hooks. */
static int select_backend(brig_ctx *ctx, loaded_backend **lb, brig_error **err)
{
	*lb = NULL;
	if (!ctx->init) {
		brig_fail(err, BRIG_E_UNAVAILABLE, 0, "%s", ctx->init_error);
		return BRIG_E_UNAVAILABLE;
	}
	int r = dispatch_select(ctx, lb, NULL, err);
	if (r != 0)
		return r;
	if (!*lb) {
		brig_fail(err, BRIG_E_UNAVAILABLE, 0, "no backend");
		return BRIG_E_UNAVAILABLE;
	}
	reap_at_start(ctx, *lb);
	return need_hooks(*lb, err);
}

static void audit_op(brig_ctx *ctx, loaded_backend *lb, const char *front_door, const char *id,
		     const char *op, const char *path, const void *data, size_t len,
		     const char *error)
{
	char sha[65] = "";
	if (data)
		sha256_hex(data, len, sha);
	pthread_mutex_lock(&ctx->lock);
	if (ctx->audit) {
		audit_entry e = { .front_door = front_door ? front_door : "lib",
				  .language = BRIG_LANG_SHELL,
				  .code_sha256 = data ? sha : NULL,
				  .policy = NULL,
				  .refusal = error,
				  .backend = lb ? lb->be->name : NULL,
				  .runtime = lb ? lb->runtime : NULL,
				  .workspace = id,
				  .transfer_op = op,
				  .transfer_path = path,
				  .transfer_bytes = (long long)len,
				  .transfer_sha256 = data ? sha : NULL };
		brig_error *ae = NULL;
		if (audit_append(ctx->audit, &e, &ae) < 0)
			core_debug("audit: %s", ae ? ae->message : "failed");
		brig_error_free(ae);
	}
	pthread_mutex_unlock(&ctx->lock);
}

/* The workspace's uid: its own of uid_range under user "auto", else the policy's user. */
static int ws_uid(const brig_policy *p, const char *id, ws_state *st, brig_error **err)
{
	if (strcmp(p->user, "auto") == 0) {
		unsigned long long uid = 0;
		int r = uid_reserve_workspace(p, id, &uid, err);
		st->uid = (long long)uid;
		st->gid = WS_GID;
		return r;
	}
	char *end = NULL, *end2 = NULL;
	errno = 0;
	unsigned long long u = strtoull(p->user, &end, 10);
	unsigned long long g = end && *end == ':' ? strtoull(end + 1, &end2, 10) : 0;
	if (errno || !end2 || *end2 || end2 == end + 1)
		return brig_fail(err, BRIG_E_POLICY, 0, "user: not UID:GID");
	st->uid = (long long)u;
	st->gid = (long long)g;
	return 0;
}

static int count_alive(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		n += l == SPEC_WS_ID_HEX + 5 && strcmp(de->d_name + SPEC_WS_ID_HEX, ".json") == 0;
	}
	if (d)
		closedir(d);
	return n;
}

/* The new state file, written and locked in *fd: a sweep (ws_expire_all) leaves it alone while
 * its volume and holder are being made. */
static int state_create(const char *dir, const ws_state *st, int *locked, brig_error **err)
{
	cleanup_free char *path = state_path(dir, st->id, "json");
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	*locked = -1;
	if (fd < 0)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot create %s", path);
	if (flock(fd, LOCK_EX) < 0) {
		int e = errno;
		close(fd);
		unlink(path);
		return brig_fail(err, BRIG_E_SYSTEM, e, "cannot lock %s", path);
	}
	json_object *o = state_json(st, false);
	const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	int r = write_all(fd, t, strlen(t)) < 0
			? brig_fail(err, BRIG_E_SYSTEM, errno, "cannot write %s", path)
			: 0;
	json_object_put(o);
	if (r < 0) {
		unlink(path);
		close(fd);
	} else {
		*locked = fd;
	}
	return r;
}

/* The volume and its holder for st; undone on failure. */
static int engine_start(brig_ctx *ctx, loaded_backend *lb, const ws_state *st, brig_error **err)
{
	const brig_policy *p = ctx->policy;
	cleanup_free char *volume = xasprintf(SPEC_WS_VOLUME_PREFIX "%s", st->id);
	cleanup_free char *o = xasprintf("o=size=%lldm,nr_inodes=%lld,uid=%lld,gid=%lld,mode=0700,"
					 "noexec,nosuid,nodev",
					 st->size_mb, st->max_files, st->uid, st->gid);
	char *opts[] = { "type=tmpfs", "device=tmpfs", o, NULL };
	cleanup_free char *l_install = xasprintf("brig.install=%s", ctx->install);
	cleanup_free char *l_ws = xasprintf("brig.workspace=%s", st->id);
	char *labels[] = { "brig=1", l_install, l_ws, NULL };
	cleanup_free char *user = xasprintf("%lld:%lld", st->uid, st->gid);
	spec_target t = dispatch_target(ctx, lb);
	t.user = user;
	/* the shell image's verified ID, as for every box (images.c): a pinned NAME:TAG@sha256:ID
	 * is no reference the engine can start from */
	brig_image_info image = { .struct_size = sizeof image };
	image_target(ctx, lb, BRIG_LANG_SHELL, &image, &t);
	brig_spec *holder = NULL;
	int r = spec_build_holder(p, &t, st->id, (int)(st->expires - st->created) + WS_HOLDER_GRACE,
				  &holder, err);
	image_info_clear(&image);
	cleanup_free char *refused =
		r == 0 ? dispatch_refusal(lb, holder, false, "start a workspace's holder") : NULL;
	if (refused)
		r = brig_fail(err, BRIG_E_UNAVAILABLE, 0, "%s", refused);
	if (r == 0)
		r = lb->be->volume_create(volume, opts, labels, err);
	if (r == 0 && (r = lb->be->start_detached(holder, err)) < 0) {
		brig_error *e = NULL;
		engine_end(lb, st->id, &e);
		brig_error_free(e);
	}
	spec_free(holder);
	return r;
}

int brig_workspace_create(brig_ctx *ctx, const char *front_door, json_object **info,
			  brig_error **err)
{
	*info = NULL;
	const brig_policy *p = ctx->policy;
	loaded_backend *lb = NULL;
	int r = check_enabled(ctx, err);
	if (r == 0)
		r = select_backend(ctx, &lb, err);
	if (r != 0)
		return r;
	if (ctx->audit && (r = audit_ready(ctx->audit, err)) < 0)
		return r;
	int ended = 0;
	brig_error *e = NULL;
	ws_expire_all(ctx, lb, &ended, &e); /* the ended ones do not count */
	brig_error_free(e);
	cleanup_free char *dir = ws_dir(err);
	if (!dir)
		return BRIG_E_SYSTEM;
	/* the count and the new state file under one lock: two creations cannot both pass */
	cleanup_free char *lockp = xasprintf("%s/.lock", dir);
	cleanup_close int lk = open(lockp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lk < 0 || flock(lk, LOCK_EX) < 0)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot lock %s", lockp);
	int alive = count_alive(dir);
	if (alive >= p->ws.max_count)
		return brig_fail(
			err, BRIG_E_REFUSED, 0,
			"too many workspaces: %d are alive, the policy's "
			"workspaces.max_count is %d (remove one, or wait for one to expire)",
			alive, p->ws.max_count);
	ws_state st = { .size_mb = p->ws.size_mb,
			.max_files = p->ws.max_files,
			.idle_ttl = p->ws.idle_ttl_seconds,
			.max_transfer = p->ws.max_transfer_bytes };
	if (random_id(st.id) < 0)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "getrandom");
	st.created = (long long)time(NULL);
	st.expires = st.created + p->ws.max_lifetime_seconds;
	st.last_used = st.created;
	if ((r = ws_uid(p, st.id, &st, err)) < 0)
		return r;
	cleanup_close int locked = -1;
	r = state_create(dir, &st, &locked, err);
	if (r == 0 && (r = engine_start(ctx, lb, &st, err)) < 0) {
		cleanup_free char *path = state_path(dir, st.id, "json");
		unlink(path);
	}
	if (r < 0) {
		if (st.uid >= POLICY_UID_RANGE_MIN && strcmp(p->user, "auto") == 0)
			uid_unreserve_workspace((unsigned long long)st.uid);
		return r;
	}
	audit_op(ctx, lb, front_door, st.id, "create", NULL, NULL, 0, NULL);
	*info = state_json(&st, true);
	return 0;
}

int brig_workspace_remove(brig_ctx *ctx, const char *id, const char *front_door, brig_error **err)
{
	loaded_backend *lb = NULL;
	ws_handle h = WS_HANDLE_INIT;
	int r = select_backend(ctx, &lb, err);
	if (r == 0)
		r = ws_acquire(ctx, lb, id, ctx->policy->max_timeout_seconds * 1000, &h, err);
	if (r != 0)
		return r;
	cleanup_free char *dir = ws_dir(err);
	ws_state st;
	r = dir && state_read(h.lock_fd, &st) == 0
		    ? ws_end(ctx, lb, dir, &st,
			     "it was removed (brig workspace rm / delete_workspace)", err)
		    : brig_fail(err, BRIG_E_SYSTEM, 0, "workspace %s: unreadable state", id);
	ws_release(&h);
	if (r == 0)
		audit_op(ctx, lb, front_door, id, "remove", NULL, NULL, 0, NULL);
	return r;
}

int brig_workspace_list(brig_ctx *ctx, json_object **out, brig_error **err)
{
	*out = NULL;
	loaded_backend *lb = NULL;
	int r = check_enabled(ctx, err);
	if (r == 0)
		r = select_backend(ctx, &lb, err);
	if (r != 0)
		return r;
	int ended = 0;
	brig_error *e = NULL;
	ws_expire_all(ctx, lb, &ended, &e);
	brig_error_free(e);
	cleanup_free char *dir = ws_dir(err);
	if (!dir)
		return BRIG_E_SYSTEM;
	json_object *a = json_object_new_array();
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l != SPEC_WS_ID_HEX + 5 || strcmp(de->d_name + SPEC_WS_ID_HEX, ".json") != 0)
			continue;
		int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		ws_state st;
		if (fd >= 0 && state_read(fd, &st) == 0)
			json_object_array_add(a, state_json(&st, true));
		if (fd >= 0)
			close(fd);
	}
	if (d)
		closedir(d);
	*out = a;
	return 0;
}

/* ---- file operations: boxes of brig-init's file tool ---------------------------------------- */

/* A path the workspace can have: relative, plain components, no NUL or newline, bounded. */
static int check_path(const char *path, brig_error **err)
{
	size_t n = path ? strlen(path) : 0;
	bool bad = n == 0 || n > WS_PATH_MAX || path[0] == '/' || path[n - 1] == '/' ||
		   strchr(path, '\n');
	for (const char *c = path; !bad && c && *c;) {
		size_t k = strcspn(c, "/");
		bad = k == 0 || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.');
		c += k + (c[k] == '/');
	}
	if (bad)
		return brig_fail(err, BRIG_E_USAGE, 0,
				 "path outside the workspace: give a relative path of plain "
				 "components (no leading /, no . or .., at most %d bytes)",
				 WS_PATH_MAX);
	return 0;
}

/* The tool's exit status and its line on stderr as brig's error. */
static int tool_error(const ws_handle *h, const brig_result *res, brig_error **err)
{
	cleanup_free char *line =
		xstrndup(res->stderr_data ? res->stderr_data : "", res->stderr_len);
	line[strcspn(line, "\n")] = '\0';
	switch (res->exit_code) {
	case TOOL_NOT_FOUND:
		return brig_fail(err, BRIG_E_NOT_FOUND, 0, "workspace %s: %s", h->id, line);
	case TOOL_SYMLINK:
	case TOOL_NOT_FILE:
	case TOOL_BAD_PATH:
	case TOOL_NOT_DIR:
		return brig_fail(err, BRIG_E_USAGE, 0, "workspace %s: %s", h->id, line);
	case TOOL_TOO_LARGE:
		return brig_fail(err, BRIG_E_REFUSED, 0, "workspace %s: %s", h->id, line);
	case TOOL_NO_SPACE:
		return brig_fail(err, BRIG_E_REFUSED, 0, "workspace %s: %s (%lld MiB)", h->id, line,
				 h->size_mb);
	case TOOL_NO_INODES:
		return brig_fail(err, BRIG_E_REFUSED, 0, "workspace %s: %s (%lld files)", h->id,
				 line, h->max_files);
	default:
		break;
	}
	if (res->verdict == BRIG_VERDICT_SANDBOX_ERROR)
		return brig_fail(err, BRIG_E_SANDBOX, 0, "workspace %s: the file box failed: %s",
				 h->id, res->error ? res->error : "?");
	return brig_fail(err, BRIG_E_SANDBOX, 0,
			 "workspace %s: the file box ended %s (exit %d): %s", h->id,
			 brig_verdict_name(res->verdict), res->exit_code, line);
}

/* One box of the file tool in workspace id: *res holds what it printed. */
static int tool_run(brig_ctx *ctx, const char *id, const char *const *tool, const void *data,
		    size_t len, loaded_backend **lbp, brig_result *res, brig_error **err)
{
	loaded_backend *lb = NULL;
	ws_handle h = WS_HANDLE_INIT;
	int wait = ctx->policy->max_timeout_seconds * 1000;
	int r = select_backend(ctx, &lb, err);
	*lbp = lb;
	if (r == 0 && ctx->audit)
		r = audit_ready(ctx->audit, err);
	if (r == 0)
		r = ws_acquire(ctx, lb, id, wait, &h, err);
	if (r != 0)
		return r;
	spec_target t = dispatch_target(ctx, lb);
	t.user = h.user;
	t.workspace = h.id;
	brig_image_info image = { .struct_size = sizeof image };
	image_target(ctx, lb, BRIG_LANG_SHELL, &image, &t); /* as engine_start() */
	brig_spec *spec = NULL;
	r = spec_build_tool(ctx->policy, &t, tool, data, len, &spec, err);
	image_info_clear(&image);
	cleanup_free char *refused =
		r == 0 ? dispatch_refusal(lb, spec, false, "honour this box") : NULL;
	if (refused)
		r = brig_fail(err, BRIG_E_UNAVAILABLE, 0, "%s", refused);
	if (r == 0)
		r = run_slot_take(ctx, -1, wait, err);
	if (r == 0) {
		brig_outcome o = { .struct_size = sizeof o, .exit_code = -1 };
		brig_error *e = NULL;
		if (lb->be->run(spec, NULL, &o, &e) < 0)
			o.sandbox_error =
				xstrdup(e && e->message ? e->message : "the backend failed");
		brig_error_free(e);
		run_slot_release(ctx);
		res->struct_size = sizeof *res;
		spec_finish_outcome(spec, &o, res);
		outcome_clear(&o);
		if (res->verdict != BRIG_VERDICT_SUCCESS)
			r = tool_error(&h, res, err);
	}
	spec_free(spec);
	ws_release(&h);
	return r;
}

int brig_workspace_put(brig_ctx *ctx, const char *id, const char *path, const void *data,
		       size_t len, const char *front_door, brig_error **err)
{
	int r = check_path(path, err);
	if (r == 0 && len > (size_t)ctx->policy->ws.max_transfer_bytes)
		r = brig_fail(err, BRIG_E_REFUSED, 0,
			      "file too large: %zu bytes, above the policy's "
			      "workspaces.max_transfer_bytes (%ld)",
			      len, ctx->policy->ws.max_transfer_bytes);
	if (r != 0)
		return r;
	const char *tool[] = { "put", path, NULL };
	brig_result res = { .struct_size = sizeof res };
	loaded_backend *lb = NULL;
	r = tool_run(ctx, id, tool, data ? data : "", data ? len : 0, &lb, &res, err);
	audit_op(ctx, lb, front_door, id, "put", path, data ? data : "", data ? len : 0,
		 r < 0 && err && *err ? (*err)->message : NULL);
	brig_result_clear(&res);
	return r;
}

int brig_workspace_get(brig_ctx *ctx, const char *id, const char *path, char **data, size_t *len,
		       const char *front_door, brig_error **err)
{
	*data = NULL;
	*len = 0;
	int r = check_path(path, err);
	if (r != 0)
		return r;
	cleanup_free char *max = xasprintf("%ld", ctx->policy->ws.max_transfer_bytes);
	const char *tool[] = { "get", path, max, NULL };
	brig_result res = { .struct_size = sizeof res };
	loaded_backend *lb = NULL;
	r = tool_run(ctx, id, tool, NULL, 0, &lb, &res, err);
	if (r == 0) {
		*data = steal_pointer(&res.stdout_data);
		*len = res.stdout_len;
	}
	audit_op(ctx, lb, front_door, id, "get", path, r == 0 ? *data : NULL, *len,
		 r < 0 && err && *err ? (*err)->message : NULL);
	brig_result_clear(&res);
	return r;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* "%2F" -> "/": the tool escapes what would break a line (tree.h). */
static char *unescape(const char *s)
{
	char *out = xmalloc(strlen(s) + 1), *o = out;
	for (; *s; s++) {
		int h = *s == '%' && s[1] ? hexval(s[1]) : -1, l = h >= 0 ? hexval(s[2]) : -1;
		if (h >= 0 && l >= 0) {
			*o++ = (char)(h << 4 | l);
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

/* The next integer of *p (moved past it), or false. */
static bool take_ll(char **p, long long *out)
{
	char *end = NULL;
	errno = 0;
	long long v = strtoll(*p, &end, 10);
	if (!end || end == *p || errno)
		return false;
	*out = v;
	*p = end;
	return true;
}

static void add_int(json_object *o, const char *k, long long v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

/* brig-init's listing (files.c): "TYPE SIZE MTIME PATH" lines, "total COUNT BYTES INCOMPLETE",
 * "usage USED SIZE IUSED INODES". */
static json_object *parse_listing(char *text)
{
	json_object *o = json_object_new_object(), *files = json_object_new_array();
	json_object_object_add(o, "files", files);
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long long v[4];
		char *p = line;
		if (strncmp(line, "total ", 6) == 0) {
			p += 6;
			if (take_ll(&p, &v[0]) && take_ll(&p, &v[1]) && take_ll(&p, &v[2])) {
				add_int(o, "count", v[0]);
				add_int(o, "bytes", v[1]);
				json_object_object_add(o, "incomplete",
						       json_object_new_boolean(v[2]));
			}
		} else if (strncmp(line, "usage ", 6) == 0) {
			p += 6;
			if (take_ll(&p, &v[0]) && take_ll(&p, &v[1]) && take_ll(&p, &v[2]) &&
			    take_ll(&p, &v[3])) {
				add_int(o, "used_bytes", v[0]);
				add_int(o, "size_bytes", v[1]);
				add_int(o, "used_files", v[2]);
				add_int(o, "max_files", v[3]);
			}
		} else if (line[0] && line[1] == ' ') {
			char type = line[0];
			p += 2;
			if (!take_ll(&p, &v[0]) || !take_ll(&p, &v[1]) || *p != ' ' || !p[1])
				continue;
			json_object *f = json_object_new_object();
			cleanup_free char *path = unescape(p + 1);
			json_object_object_add(f, "path", json_object_new_string(path));
			json_object_object_add(f, "type",
					       json_object_new_string(type == 'f'   ? "file"
								      : type == 'd' ? "dir"
								      : type == 'l' ? "link"
										    : "other"));
			add_int(f, "size", v[0]);
			add_int(f, "mtime", v[1]);
			json_object_array_add(files, f);
		}
	}
	return o;
}

int brig_workspace_files(brig_ctx *ctx, const char *id, const char *front_door, json_object **out,
			 brig_error **err)
{
	*out = NULL;
	char max[16];
	snprintf(max, sizeof max, "%d", WS_LIST_MAX);
	const char *tool[] = { "list", max, NULL };
	brig_result res = { .struct_size = sizeof res };
	loaded_backend *lb = NULL;
	int r = tool_run(ctx, id, tool, NULL, 0, &lb, &res, err);
	if (r == 0)
		*out = parse_listing(res.stdout_data);
	audit_op(ctx, lb, front_door, id, "list", NULL, NULL, 0,
		 r < 0 && err && *err ? (*err)->message : NULL);
	brig_result_clear(&res);
	return r;
}
