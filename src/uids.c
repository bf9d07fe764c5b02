/* uids.c - a uid of its own for every box.
 *
 * Boxes that share a uid share every budget the kernel keeps per user, whatever the box: one box
 * could take all inotify instances (max_user_instances: node's fs.watch then fails in the other
 * boxes) or the POSIX message-queue bytes (RLIMIT_MSGQUEUE: mq_open fails elsewhere).  With
 * user "auto" every box runs as a uid of its own from the policy's uid_range (gid 65534): a box
 * exhausts only its own budgets.  gVisor keeps such budgets inside each sandbox anyway; the
 * boxes get their own uids there too, so that the two isolation levels differ in one thing
 * less.
 *
 * The lease is a flock on DIR/uids/UID in brig's state directory (probe.h: cache_dir), held
 * while the box lives: other brig processes of the same user skip it, and a killed brig's
 * leases end with its file descriptors (its boxes end by their own deadline).  Search starts at
 * a random uid, so concurrent processes rarely contend.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"
#include "uids.h"

int uid_lease_take(const brig_policy *p, uid_lease *out, brig_error **err)
{
	out->uid = 0;
	out->fd = -1;
	if (strcmp(p->user, "auto") != 0)
		return 0;
	unsigned long long first, count;
	if (policy_uid_range(p->uid_range, &first, &count) < 0)
		return brig_fail(err, BRIG_E_POLICY, 0, "uid_range: invalid");
	cleanup_free char *state = cache_dir();
	if (!state)
		return brig_fail(err, BRIG_E_SYSTEM, 0,
				 "user \"auto\": no state directory to lease box uids in "
				 "(set $BRIG_CACHE_DIR, or $XDG_RUNTIME_DIR for a non-root user)");
	cleanup_free char *dir = xasprintf("%s/uids", state);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot create %s", dir);
	unsigned int r = 0;
	if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
		r = (unsigned int)now_ms();
	for (unsigned long long i = 0; i < count; i++) {
		unsigned long long uid = first + (r + i) % count;
		char path[4096];
		snprintf(path, sizeof path, "%s/%llu", dir, uid);
		int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return brig_fail(err, BRIG_E_SYSTEM, errno, "cannot open %s", path);
		char ws[4200];
		snprintf(ws, sizeof ws, "%s.ws", path);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && access(ws, F_OK) != 0) {
			out->uid = uid;
			out->fd = fd;
			return 0;
		}
		close(fd);
	}
	return brig_fail(err, BRIG_E_BUSY, 0,
			 "every uid of uid_range %s is in use by a box: widen the range or run "
			 "fewer boxes at once",
			 p->uid_range);
}

void uid_lease_release(uid_lease *l)
{
	if (l->fd >= 0)
		close(l->fd); /* the flock goes with it */
	l->fd = -1;
	l->uid = 0;
}

char *uid_lease_user(const uid_lease *l)
{
	return l->uid ? xasprintf("%llu:65534", l->uid) : NULL;
}

/* DIR/uids/UID.ws, or NULL without a state directory. */
static char *reservation_path(unsigned long long uid)
{
	cleanup_free char *state = cache_dir();
	return state ? xasprintf("%s/uids/%llu.ws", state, uid) : NULL;
}

int uid_reserve_workspace(const brig_policy *p, const char *id, unsigned long long *uid,
			  brig_error **err)
{
	uid_lease l = { .fd = -1 };
	int r = uid_lease_take(p, &l, err);
	if (r < 0)
		return r;
	if (!l.uid)
		return brig_fail(err, BRIG_E_USAGE, 0, "uid_reserve_workspace: not user \"auto\"");
	cleanup_free char *path = reservation_path(l.uid);
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	if (fd < 0) {
		r = brig_fail(err, BRIG_E_SYSTEM, errno, "cannot reserve uid %llu for a workspace",
			      l.uid);
	} else {
		if (write_all(fd, id, strlen(id)) < 0)
			r = brig_fail(err, BRIG_E_SYSTEM, errno, "cannot write %s", path);
		close(fd);
		if (r < 0)
			unlink(path);
	}
	*uid = r == 0 ? l.uid : 0;
	uid_lease_release(&l);
	return r;
}

void uid_unreserve_workspace(unsigned long long uid)
{
	cleanup_free char *path = uid ? reservation_path(uid) : NULL;
	if (path)
		unlink(path);
}
