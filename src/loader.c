/* loader.c - backend plugins: dlopen(RTLD_NOW|RTLD_LOCAL), one entry symbol, versioned table. */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"

__attribute__((format(printf, 2, 3))) static void host_log(int level, const char *fmt, ...)
{
	/* The library never prints; plugin diagnostics are visible only with BRIG_DEBUG set. */
	(void)level;
	if (!secure_getenv("BRIG_DEBUG"))
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("brig: backend: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void core_debug(const char *fmt, ...)
{
	if (!secure_getenv("BRIG_DEBUG"))
		return;
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	fprintf(stderr, "brig: %s\n", m); /* one write: lines of threads do not mix */
	free(m);
}

__attribute__((format(printf, 3, 4))) static brig_error *host_error_new(int status, int errnum,
									const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	brig_error *e = brig_error_newv(status, errnum, fmt, ap);
	va_end(ap);
	return e;
}

static const brig_host_services host_services = {
	.abi_major = BRIG_BACKEND_ABI_MAJOR,
	.abi_minor = BRIG_BACKEND_ABI_MINOR,
	.struct_size = sizeof(brig_host_services),
	.error_new = host_error_new,
	.log = host_log,
};

const brig_host_services *loader_host_services(void)
{
	return &host_services;
}

const char *loader_backend_dir(void)
{
	const char *d = secure_getenv("BRIG_BACKEND_DIR");
	return d && *d ? d : BRIG_BACKEND_DIR_DEFAULT;
}

static bool valid_name(const char *name)
{
	if (!name || !*name || strlen(name) > 32)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
			return false;
	return true;
}

/* The ABI checks, in the order that keeps every read inside what the plugin promised. */
static int check_table(const char *path, const brig_backend *be, brig_error **err)
{
	if (be->abi_major != BRIG_BACKEND_ABI_MAJOR)
		return brig_fail(err, BRIG_E_PLUGIN, 0,
				 "%s: built for backend ABI %u.%u, this brig speaks %u.%u; rebuild "
				 "the plugin",
				 path, be->abi_major, be->abi_minor, BRIG_BACKEND_ABI_MAJOR,
				 BRIG_BACKEND_ABI_MINOR);
	if (be->struct_size < BRIG_BACKEND_MIN_SIZE)
		return brig_fail(
			err, BRIG_E_PLUGIN, 0,
			"%s: backend table is too short (%zu bytes; ABI %u needs at least %zu)",
			path, be->struct_size, BRIG_BACKEND_ABI_MAJOR,
			(size_t)BRIG_BACKEND_MIN_SIZE);
	if (!valid_name(be->name))
		return brig_fail(err, BRIG_E_PLUGIN, 0,
				 "%s: backend name is missing or not [a-z0-9-]{1,32}", path);
	if (be->isolation != BRIG_ISOLATION_CONTAINER && be->isolation != BRIG_ISOLATION_GVISOR)
		return brig_fail(err, BRIG_E_PLUGIN, 0,
				 "%s: backend %s declares an unknown isolation %d", path, be->name,
				 be->isolation);
	if (!be->probe || !be->run)
		return brig_fail(err, BRIG_E_PLUGIN, 0,
				 "%s: backend %s lacks the required probe/run hooks", path,
				 be->name);
	return 0;
}

/* Code loaded into every brig process: the plugin directory and each file must belong to root
 * or to the user running brig, and nobody else may write them (else anyone who can write there
 * runs code as that user, with the Docker socket).  With the directory safe, a file cannot be
 * swapped after the check. */
static int check_owner(const char *path, const char *what, bool want_dir, brig_error **err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return brig_fail(err, BRIG_E_PLUGIN, errno, "%s %s", what, path);
	if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
		return brig_fail(err, BRIG_E_PLUGIN, 0, "%s %s is not a %s", what, path,
				 want_dir ? "directory" : "regular file");
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return brig_fail(
			err, BRIG_E_PLUGIN, 0,
			"%s %s belongs to uid %u, neither root nor this user (%u): refused", what,
			path, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return brig_fail(err, BRIG_E_PLUGIN, 0,
				 "%s %s is writable by %s (mode %04o): refused; chmod go-w it",
				 what, path, st.st_mode & S_IWOTH ? "everyone" : "its group",
				 (unsigned)(st.st_mode & 07777));
	return 0;
}

int loader_load_file(const char *path, loaded_backend *out, brig_error **err)
{
	memset(out, 0, sizeof *out);
	if (!path || path[0] != '/')
		return brig_fail(err, BRIG_E_PLUGIN, 0,
				 "%s: plugins are loaded from absolute paths only",
				 path ? path : "(null)");
	int r = check_owner(path, "plugin", false, err);
	if (r < 0)
		return r;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return brig_fail(err, BRIG_E_PLUGIN, 0, "%s: cannot load: %s", path, dlerror());
	brig_backend_entry_fn entry;
	*(void **)&entry = dlsym(h, BRIG_BACKEND_ENTRY_SYMBOL);
	if (!entry) {
		dlclose(h);
		return brig_fail(err, BRIG_E_PLUGIN, 0, "%s: not a brig backend (no %s symbol)",
				 path, BRIG_BACKEND_ENTRY_SYMBOL);
	}
	const brig_backend *be = entry(BRIG_BACKEND_ABI_MAJOR, &host_services);
	if (!be) {
		dlclose(h);
		return brig_fail(err, BRIG_E_PLUGIN, 0, "%s: the plugin declined backend ABI %u",
				 path, BRIG_BACKEND_ABI_MAJOR);
	}
	r = check_table(path, be, err);
	if (r < 0) {
		dlclose(h);
		return r;
	}
	out->path = xstrdup(path);
	out->handle = h;
	out->be = be;
	pthread_mutex_init(&out->probe_lock, NULL);
	return 0;
}

void loader_unload(loaded_backend *lb)
{
	if (!lb)
		return;
	if (lb->handle) {
		dlclose(lb->handle);
		pthread_mutex_destroy(&lb->probe_lock);
	}
	free(lb->path);
	free(lb->runtime);
	memset(lb, 0, sizeof *lb);
}

/* NAME.so, not hidden, and not lib*.so: a library the plugins share (libbrig-dock.so) lives
 * beside them and is not a plugin. */
static bool is_plugin_file(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && strncmp(name, "lib", 3) != 0 && n > 3 &&
	       strcmp(name + n - 3, ".so") == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **list_plugin_files(DIR *d)
{
	size_t n = 0, cap = 8;
	char **names = xcalloc(cap + 1, sizeof *names);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!is_plugin_file(de->d_name))
			continue;
		if (n == cap) {
			cap *= 2;
			names = xrealloc(names, (cap + 1) * sizeof *names);
		}
		names[n++] = xstrdup(de->d_name);
		names[n] = NULL;
	}
	qsort(names, n, sizeof *names, cmp_str);
	return names;
}

static bool name_taken(const loaded_backend *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i].be->name, name) == 0)
			return true;
	return false;
}

char *loader_find_init(const char *dir, brig_error **err)
{
	cleanup_free char *parent = xstrdup(dir);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	cleanup_free char *path = xasprintf("%s/brig-init", parent);
	int r = check_owner(path, "brig-init (every box's PID 1)", false, err);
	if (r == 0 && access(path, X_OK) < 0)
		r = brig_fail(err, BRIG_E_PLUGIN, errno, "brig-init %s is not executable", path);
	return r == 0 ? steal_pointer(&path) : NULL;
}

int loader_load_dir(const char *dir, loaded_backend **list, size_t *n, char ***refused,
		    brig_error **err)
{
	if (!dir || dir[0] != '/')
		return brig_fail(
			err, BRIG_E_PLUGIN, 0,
			"backend directory %s: must be an absolute path (BRIG_BACKEND_DIR)",
			dir ? dir : "(null)");
	int r = check_owner(dir, "backend directory", true, err);
	if (r < 0)
		return r;
	DIR *d = opendir(dir);
	if (!d)
		return brig_fail(err, BRIG_E_PLUGIN, errno, "cannot open backend directory %s",
				 dir);
	cleanup_strv char **files = list_plugin_files(d);
	closedir(d);
	size_t nf = strv_len(files), nl = 0, nr = 0;
	loaded_backend *out = xcalloc(nf + 1, sizeof *out);
	char **ref = xcalloc(nf + 1, sizeof *ref);
	for (size_t i = 0; i < nf; i++) {
		cleanup_free char *path = xasprintf("%s/%s", dir, files[i]);
		brig_error *e = NULL;
		if (loader_load_file(path, &out[nl], &e) < 0) {
			ref[nr++] = xstrdup(e->message);
			brig_error_free(e);
		} else if (name_taken(out, nl, out[nl].be->name)) {
			ref[nr++] = xasprintf("%s: a backend named %s is already loaded", path,
					      out[nl].be->name);
			loader_unload(&out[nl]);
		} else {
			nl++;
		}
	}
	*list = out;
	*n = nl;
	*refused = ref;
	return 0;
}
