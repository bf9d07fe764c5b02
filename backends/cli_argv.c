/* cli_argv.c - spec -> `docker run` argv.  The order follows the list so that explain
 * output reads the same as the documentation. */
#include "config.h"

#include <inttypes.h>
#include <assert.h>
#include <string.h>

#include "cli_argv.h"
#include "util.h"

typedef struct argv_builder {
	char **v;
	size_t n, cap;
} argv_builder;

static void add(argv_builder *b, char *s)
{
	if (b->n + 2 > b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->v = xrealloc(b->v, b->cap * sizeof *b->v);
	}
	b->v[b->n++] = s;
	b->v[b->n] = NULL;
}

static void add2(argv_builder *b, const char *flag, char *value)
{
	add(b, xstrdup(flag));
	add(b, value);
}

/* Docker's CLI takes memory as bytes with a suffix; MiB multiples print as "256m". */
static char *mem_arg(int64_t bytes)
{
	if (bytes % (1024 * 1024) == 0)
		return xasprintf("%" PRId64 "m", bytes / (1024 * 1024));
	return xasprintf("%" PRId64 "b", bytes);
}

/* --cpus takes a decimal; nano_cpus keeps it exact. */
static char *cpus_arg(int64_t nano)
{
	int64_t whole = nano / 1000000000, frac = nano % 1000000000;
	if (frac == 0)
		return xasprintf("%" PRId64, whole);
	char *s = xasprintf("%" PRId64 ".%09" PRId64, whole, frac);
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == '0')
		s[--n] = '\0';
	return s;
}

/* --mount's CSV: the host refuses sources and targets with ',' or '"' (policy/spec.c). */
static char *mount_arg(const brig_mount *m)
{
	bool volume = m->type == BRIG_MOUNT_VOLUME;
	return xasprintf("type=%s,source=%s,target=%s%s%s", volume ? "volume" : "bind", m->source,
			 m->target, m->read_only ? ",readonly" : "",
			 volume && m->no_copy ? ",volume-nocopy" : "");
}

char **cli_render_argv(const brig_spec *spec, const char *docker, const char *seccomp_file)
{
	argv_builder b = { 0 };
	add(&b, xstrdup(docker));
	add(&b, xstrdup("run"));
	add(&b, xstrdup("-i"));
	/* The engine removes the box when it exits; brig tells its own kills from OOM kills
	 * without the container's state (docker-cli.c). */
	add(&b, xstrdup("--rm"));
	add2(&b, "--name", xstrdup(spec->name));
	for (char **l = spec->labels; l && *l; l++)
		add2(&b, "--label", xstrdup(*l));
	add2(&b, "--pull", xstrdup("never"));
	add2(&b, "--runtime", xstrdup(spec->runtime));
	add2(&b, "--network", xstrdup(spec->network));
	if (spec->read_only_rootfs)
		add(&b, xstrdup("--read-only"));
	add2(&b, "--tmpfs", xasprintf("%s:%s", spec->tmpfs_path, spec->tmpfs_options));
	add2(&b, "--shm-size", mem_arg(spec->shm_bytes));
	if (spec->cgroupns_private)
		add2(&b, "--cgroupns", xstrdup("private"));
	/* masked paths: the docker CLI has no way to set them (the host refuses this backend for
	 * a spec that has them: BRIG_FEATURE_MASKED_PATHS) */
	for (brig_mount **m = spec->mounts; m && *m; m++)
		add2(&b, "--mount", mount_arg(*m));
	add2(&b, "--memory", mem_arg(spec->memory_bytes));
	add2(&b, "--memory-swap", mem_arg(spec->memory_swap_bytes));
	add2(&b, "--cpus", cpus_arg(spec->nano_cpus));
	add2(&b, "--pids-limit", xasprintf("%" PRId64, spec->pids_limit));
	add2(&b, "--ulimit", xasprintf("nofile=%" PRId64 ":%" PRId64, spec->nofile, spec->nofile));
	if (spec->nproc > 0)
		add2(&b, "--ulimit",
		     xasprintf("nproc=%" PRId64 ":%" PRId64, spec->nproc, spec->nproc));
	add2(&b, "--ulimit", xasprintf("core=%" PRId64 ":%" PRId64, spec->core, spec->core));
	if (spec->cap_drop_all)
		add2(&b, "--cap-drop", xstrdup("ALL"));
	if (spec->no_new_privileges)
		add2(&b, "--security-opt", xstrdup("no-new-privileges"));
	if (seccomp_file)
		add2(&b, "--security-opt", xasprintf("seccomp=%s", seccomp_file));
	add2(&b, "--user", xstrdup(spec->user));
	add2(&b, "--workdir", xstrdup(spec->workdir));
	if (spec->hostname) /* NULL in a holder's network namespace: the holder's */
		add2(&b, "--hostname", xstrdup(spec->hostname));
	if (spec->dns)
		add2(&b, "--dns", xstrdup(spec->dns));
	for (char **e = spec->env; e && *e; e++)
		add2(&b, "--env", xstrdup(*e));
	add2(&b, "--log-driver", xstrdup(spec->log_driver));
	add(&b, xstrdup(brig_spec_image(spec)));
	for (char **a = spec->argv; a && *a; a++)
		add(&b, xstrdup(*a));
	return b.v;
}

static bool shell_safe(const char *w)
{
	if (!*w)
		return false;
	for (const char *c = w; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "-_./:=,@%+",
			    *c))
			return false;
	return true;
}

char **cli_render_detached_argv(const brig_spec *spec, const char *docker, const char *seccomp_file)
{
	/* cli_render_argv starts docker run -i --rm: the words at 2 and 3, never the program's */
	char **argv = cli_render_argv(spec, docker, seccomp_file);
	assert(strcmp(argv[2], "-i") == 0 && strcmp(argv[3], "--rm") == 0);
	free(argv[2]);
	argv[2] = xstrdup("-d");
	if (spec->auto_remove) /* --rm stays: the engine removes it when it exits */
		return argv;
	free(argv[3]);
	size_t i = 3;
	for (; argv[i + 1]; i++)
		argv[i] = argv[i + 1];
	argv[i] = NULL;
	return argv;
}

char *cli_shell_quote(const char *word)
{
	if (shell_safe(word))
		return xstrdup(word);
	strbuf sb;
	sb_init(&sb);
	sb_puts(&sb, "'");
	for (const char *c = word; *c; c++) {
		if (*c == '\'')
			sb_puts(&sb, "'\\''");
		else
			sb_append(&sb, c, 1);
	}
	sb_puts(&sb, "'");
	return sb_steal(&sb);
}
