/* reap.c - the boxes a dead brig left behind: `brig gc`, and the same, cheaply, at the start of
 * every brig.
 *
 * A box ends by itself (brig-init's deadline; a warm box when its brig's attach stream closes),
 * but a box of the Engine API backends stays behind as an exited container when its brig was
 * killed.  Only boxes this installation verifiably made are touched: a name brig makes
 * ("brig-" + 16 hex digits), this installation's brig.install label, a well-formed brig.owner
 * label naming a process of this pid namespace that is gone.  A box of a live brig, of a brig in
 * another pid namespace (whose own gc judges it), of another installation, or a container that
 * merely carries brig=1, is left alone.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "loader.h"
#include "probe.h"
#include "reap.h"
#include "spec.h"
#include "workspace.h"

#define REAP_EVERY_S 60 /* the start-of-process reap, at most once a minute per installation */

/* A name brig gives a box ("brig-" + 16 hex) or a box's network holder (+ SPEC_NET_HOLDER_SUFFIX);
 * *holder says which. */
static bool box_name(const char *name, bool *holder)
{
	static const char prefix[] = "brig-";
	size_t n = name ? strlen(name) : 0, box = sizeof prefix - 1 + 16;
	*holder = n == box + strlen(SPEC_NET_HOLDER_SUFFIX);
	return (n == box || (*holder && strcmp(name + box, SPEC_NET_HOLDER_SUFFIX) == 0)) &&
	       strncmp(name, prefix, sizeof prefix - 1) == 0 &&
	       strspn(name + sizeof prefix - 1, "0123456789abcdef") == 16;
}

bool reap_box_orphaned(const char *name, const char *owner)
{
	bool holder;
	return box_name(name, &holder) && proc_owner_state(owner) == OWNER_DEAD;
}

/* A claimed spare holder (spare.h): a box's holder name without an owner label, whose box is
 * not among `names` or is an orphan removed in the same pass.  It was claimed once its box
 * existed, so its box is gone for good. */
static bool spare_orphaned(char *const *names, char *const *owners, size_t i, const char *owner)
{
	size_t n = strlen(names[i]), sl = strlen(SPEC_NET_HOLDER_SUFFIX);
	bool holder = false;
	if ((owner && *owner) || !box_name(names[i], &holder) || !holder)
		return false;
	for (size_t j = 0; names[j]; j++)
		if (strlen(names[j]) == n - sl && strncmp(names[j], names[i], n - sl) == 0)
			return reap_box_orphaned(names[j], owners ? owners[j] : NULL);
	return true;
}

int reap_orphans(brig_ctx *ctx, loaded_backend *lb, int *removed, brig_error **err)
{
	*removed = 0;
	int (*list)(const char *, char ***, char ***, brig_error **) =
		BE_HOOK(lb->be, list_labelled);
	int (*rm)(const char *, brig_error **) = BE_HOOK(lb->be, remove);
	if (!list || !rm)
		return brig_fail(err, BRIG_E_UNAVAILABLE, 0,
				 "backend %s cannot list or remove boxes", lb->be->name);
	char **names = NULL, **owners = NULL;
	cleanup_free char *label = xasprintf("brig.install=%s", ctx->install);
	int r = list(label, &names, &owners, err);
	if (r < 0)
		return r;
	for (size_t i = 0; names && names[i]; i++) {
		if (!reap_box_orphaned(names[i], owners ? owners[i] : NULL) &&
		    !spare_orphaned(names, owners, i, owners ? owners[i] : NULL))
			continue;
		brig_error *e = NULL;
		if (rm(names[i], &e) == 0) {
			(*removed)++;
			core_debug("reap: removed %s (its brig %s is gone, or its box)", names[i],
				   owners && owners[i] && *owners[i] ? owners[i] : "-");
		} else if (r == 0) {
			r = e->status;
			if (err) {
				brig_error_free(*err);
				*err = e;
				e = NULL;
			}
		}
		brig_error_free(e);
	}
	strv_free(names);
	strv_free(owners);
	return r;
}

/* Whether this process should reap now: no other brig of this user and installation did in the
 * last REAP_EVERY_S seconds (a stamp file's mtime), which it then renews. */
static bool reap_due(const brig_ctx *ctx)
{
	cleanup_free char *dir = cache_dir();
	if (!dir)
		return true;
	cleanup_free char *stamp = xasprintf("%s/reaped-%s", dir, ctx->install);
	struct stat st;
	time_t now = time(NULL);
	if (lstat(stamp, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime < REAP_EVERY_S &&
	    now >= st.st_mtime)
		return false;
	int fd = open(stamp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd); /* its mtime is now */
	return true;
}

void reap_at_start(brig_ctx *ctx, loaded_backend *lb)
{
	pthread_mutex_lock(&ctx->lock);
	bool first = !ctx->reaped;
	ctx->reaped = true;
	pthread_mutex_unlock(&ctx->lock);
	if (!first || !reap_due(ctx))
		return;
	int removed = 0;
	brig_error *e = NULL;
	int64_t t0 = now_ms();
	if (reap_orphans(ctx, lb, &removed, &e) < 0)
		core_debug("reap: %s", e && e->message ? e->message : "failed");
	else
		core_debug("reap: %d left-behind box(es) removed in %lld ms", removed,
			   (long long)(now_ms() - t0));
	brig_error_free(e);
	e = NULL;
	int ended = 0;
	if (ws_expire_all(ctx, lb, &ended, &e) < 0)
		core_debug("reap: workspaces: %s", e && e->message ? e->message : "failed");
	else if (ended)
		core_debug("reap: %d workspace(s) ended", ended);
	brig_error_free(e);
}
