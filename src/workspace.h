/* workspace.h - workspaces inside libbrig: what a run in one needs, and their expiry. */
#ifndef BRIG_WORKSPACE_H
#define BRIG_WORKSPACE_H

#include "internal.h"

/* A workspace held for one run or file operation: its lock (runs and operations on one
 * workspace are serialised) and the box's user. */
typedef struct ws_handle {
	char id[SPEC_WS_ID_HEX + 1];
	char *user; /* "UID:GID" of every box in it */
	int lock_fd;
	long long size_mb, max_files;
	long long idle_ttl; /* seconds */
} ws_handle;

#define WS_HANDLE_INIT        \
	{                     \
		.lock_fd = -1 \
	}

/* Find the workspace `id`, check it lives (not expired, its holder running; an expired or lost
 * one is ended here and said so), and lock it, waiting up to wait_ms for a call in it to end. */
int ws_acquire(brig_ctx *ctx, const loaded_backend *lb, const char *id, int wait_ms, ws_handle *out,
	       brig_error **err);
/* Record the use (the idle TTL starts again) and unlock. */
void ws_release(ws_handle *h);
/* Unlock without recording a use: the warm pool's start of a box for the workspace is none. */
void ws_unlock(ws_handle *h);

/* End every workspace of this user whose idle TTL or lifetime is over or whose holder is gone,
 * and the holders and volumes of this installation no workspace owns any more that stopped.
 * *ended counts them. */
int ws_expire_all(brig_ctx *ctx, loaded_backend *lb, int *ended, brig_error **err);

#endif
