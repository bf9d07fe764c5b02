/* files.h - brig-init --workspace-tool (files.c): a workspace's file operations, in the box. */
#ifndef BRIG_INIT_FILES_H
#define BRIG_INIT_FILES_H

/* argv: the operation and its arguments (after --workspace-tool); returns the exit status. */
int files_main(int argc, char **argv);

#endif
