/* tree.h - brig-init's view of a workspace from inside the box: a walk that never follows a
 * symlink, the names escaped for one line of text, and what a run created or changed.
 *
 * Everything here runs as the box's own user, inside the box: a symlink the program planted can
 * only point into the box's own view (the read-only image, its own /proc, its own /tmp).
 */
#ifndef BRIG_INIT_TREE_H
#define BRIG_INIT_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Exit statuses of the workspace tool (brig-init --workspace-tool), which libbrig maps to its
 * errors (src/workspace_ops.c); one line on stderr says more. */
enum {
	TOOL_NOT_FOUND = 70, /* no such file */
	TOOL_SYMLINK = 71,   /* the path goes through (or ends in) a symbolic link */
	TOOL_NOT_FILE = 72,  /* not a regular file (a directory, a device, ...) */
	TOOL_TOO_LARGE = 73, /* larger than the transfer limit */
	TOOL_NO_SPACE = 74,  /* the workspace's size quota is full */
	TOOL_NO_INODES = 75, /* the workspace's file quota is full */
	TOOL_IO = 76,        /* another failure */
	TOOL_BAD_PATH = 77,  /* not a relative path of plain components */
	TOOL_NOT_DIR = 78,   /* a directory of the path is a file */
};

/* Called for every entry under the root (not the root itself), depth first, `path` relative to
 * the root ("a/b.txt"); return non-zero to stop the walk. */
typedef int (*tree_visit_fn)(void *arg, const char *path, const struct stat *st);

/* Walk the tree at `root` (lstat only: no symlink is followed), at most TREE_DEPTH_MAX levels
 * deep.  Returns what the visitor returned to stop, 0 when done, -1 when a directory could not
 * be read (the walk goes on; *incomplete is set). */
#define TREE_DEPTH_MAX 64
int tree_walk(const char *root, tree_visit_fn fn, void *arg, bool *incomplete);

/* Append `s` to out[*n..cap) escaped for one line of words: every byte outside '!'..'~', and
 * '%' itself, as %XX (what does not fit is left out; out stays NUL-terminated). */
void tree_put_escaped(char *out, size_t *n, size_t cap, const char *s);

/* The regular files of the tree now, to tell later what a run created or changed. */
typedef struct tree_snapshot tree_snapshot;
tree_snapshot *tree_snapshot_take(const char *root);
/* One line on fd: "TAG TOTAL USED SIZE IUSED INODES SIZE:PATH ...\n" - the regular files
 * created or changed since the snapshot (at most TREE_REPORT_MAX of them listed, sorted, all
 * counted), then the workspace's use of its size and file quotas; "TAG ?\n" when it cannot be
 * told (no snapshot).  The line is at most TREE_LINE_MAX bytes. */
#define TREE_REPORT_MAX 100
#define TREE_LINE_MAX   16384
void tree_report(int fd, const char *tag, const char *root, const tree_snapshot *before);

#endif
