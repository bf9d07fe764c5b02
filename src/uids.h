/* uids.h - a uid of its own for every box (policy user "auto"). */
#ifndef BRIG_UIDS_H
#define BRIG_UIDS_H

#include "internal.h"

/* A uid leased to one box until uid_release: no other box of this user's brig processes gets it
 * meanwhile (a flock on a file per uid in brig's state directory; a killed brig's leases end
 * with it).  uid is 0 when the policy names a fixed user: nothing is leased then. */
typedef struct uid_lease {
	unsigned long long uid;
	int fd;
} uid_lease;

/* Lease a free uid of the policy's uid_range (user "auto"), or nothing (a fixed user).
 * BRIG_E_BUSY when every uid of the range is leased. */
int uid_lease_take(const brig_policy *p, uid_lease *out, brig_error **err);
void uid_lease_release(uid_lease *l);
/* The box's "UID:GID" for spec_target.user: the lease's uid with gid 65534 (nogroup), or NULL
 * for the policy's own user.  Caller frees. */
char *uid_lease_user(const uid_lease *l);

/* A uid of uid_range for a workspace's whole life (src/workspace.c), across brig processes:
 * the file DIR/uids/UID.ws names the workspace, and uid_lease_take skips a uid that has one.
 * Taken under the uid's lease, so no box holds it at that moment.  BRIG_E_BUSY when none is
 * free. */
int uid_reserve_workspace(const brig_policy *p, const char *id, unsigned long long *uid,
			  brig_error **err);
void uid_unreserve_workspace(unsigned long long uid);

#endif
