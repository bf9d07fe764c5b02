/* cli_argv.h - the container spec rendered as one `docker run` argv (pure; unit-tested). */
#ifndef BRIG_CLI_ARGV_H
#define BRIG_CLI_ARGV_H

#include "brig-spec.h"

/* argv for `docker run`, NULL-terminated, malloc'ed strings; argv[0] = docker.
 * seccomp_file: path of the profile file written for the CLI, or NULL. */
char **cli_render_argv(const brig_spec *spec, const char *docker, const char *seccomp_file);
/* The same for start_detached: `docker run -d`, without -i (nothing attached, no stdin), and
 * without --rm unless spec->auto_remove (else the host removes the container). */
char **cli_render_detached_argv(const brig_spec *spec, const char *docker,
				const char *seccomp_file);
/* Shell-quote one word for explain output. */
char *cli_shell_quote(const char *word);

#endif
