/* spare.c - spare network holders (spare.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "loader.h"
#include "probe.h"
#include "spare.h"
#include "spec.h"

#define DOMAIN_HEX   32
#define CLAIM_WAIT   5000  /* ms for the claim lock: claims take a few ms each */
#define GC_FILL_WAIT 60000 /* ms brig gc waits for spares being started */

struct spare_state {
	const loaded_backend *lb; /* the backend the holders ran on */
	brig_spec *holder;        /* the last holder's spec: the spares' template */
	char *key;
	char **used; /* holders of this context's runs, to remove */
};

static char *lock_path(const brig_ctx *ctx, const char *what)
{
	cleanup_free char *dir = cache_dir();
	return dir ? xasprintf("%s/spares-%s.%s", dir, ctx->install, what) : NULL;
}

/* The lock domain: DOMAIN_HEX random hex digits in the cache directory, made on first use
 * (create: else NULL when there is none yet). */
static char *domain_id(const brig_ctx *ctx, bool create)
{
	cleanup_free char *path = lock_path(ctx, "id");
	if (!path)
		return NULL;
	char buf[DOMAIN_HEX + 1];
	for (int attempt = 0; attempt < 2; attempt++) {
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, buf, DOMAIN_HEX);
			close(fd);
			buf[n == DOMAIN_HEX ? DOMAIN_HEX : 0] = '\0';
			if (strspn(buf, "0123456789abcdef") == DOMAIN_HEX)
				return xstrdup(buf);
			core_debug("spare: %s is not %d hex digits: no spares (remove it)", path,
				   DOMAIN_HEX);
			return NULL;
		}
		if (errno != ENOENT || !create)
			return NULL;
		unsigned char rnd[DOMAIN_HEX / 2];
		if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
			return NULL;
		for (size_t i = 0; i < sizeof rnd; i++)
			snprintf(buf + 2 * i, 3, "%02x", rnd[i]);
		cleanup_free char *tmp = xasprintf("%s.%ld", path, (long)getpid());
		unlink(tmp); /* a dead process's of this pid */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return NULL;
		int w = write_all(fd, buf, DOMAIN_HEX);
		close(fd);
		/* link: the first writer wins, a second reads the winner's */
		if (w < 0 || (link(tmp, path) < 0 && errno != EEXIST)) {
			unlink(tmp);
			return NULL;
		}
		unlink(tmp);
	}
	return NULL;
}

char *spare_key(const brig_ctx *ctx, const brig_spec *holder)
{
	cleanup_free char *domain = domain_id(ctx, true);
	if (!domain || !holder)
		return NULL;
	json_object *o = spec_to_json(holder);
	json_object_object_del(o, "name");   /* the one run's, */
	json_object_object_del(o, "labels"); /* its owner and box, */
	json_object_object_del(o, "argv");   /* how long it waits: set for the spare */
	cleanup_free char *text =
		xasprintf("uid %lu\ninstall %s\nversion %s\ndomain %s\nlongest run %d s\n%s",
			  (unsigned long)getuid(), ctx->install, PACKAGE_VERSION, domain,
			  ctx->policy->max_timeout_seconds, /* how long a spare sleeps */
			  json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	char *key = xmalloc(65);
	sha256_hex(text, strlen(text), key);
	return key;
}

static bool spares_on(const brig_ctx *ctx, const loaded_backend *lb)
{
	return ctx->spares && lb && lb->be->abi_minor >= 5 && BE_HOOK(lb->be, claim_spare) &&
	       BE_HOOK(lb->be, start_detached) && BE_HOOK(lb->be, remove);
}

bool spare_claim(brig_ctx *ctx, const loaded_backend *lb, const brig_spec *holder)
{
	if (!holder || !spares_on(ctx, lb))
		return false;
	cleanup_free char *key = spare_key(ctx, holder);
	cleanup_free char *path = lock_path(ctx, "lock");
	if (!key || !path)
		return false;
	cleanup_close int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || flock_wait(fd, CLAIM_WAIT) < 0)
		return false;
	cleanup_free char *label = xasprintf(SPEC_SPARE_LABEL "=%s", key);
	brig_error *e = NULL;
	int64_t t0 = now_ms();
	int r = lb->be->claim_spare(label, (long long)time(NULL), holder->name, NULL, &e);
	core_debug("spare: %s in %lld ms%s%s", r > 0 ? "claimed" : "none claimed",
		   (long long)(now_ms() - t0), e && e->message ? ": " : "",
		   e && e->message ? e->message : "");
	brig_error_free(e);
	return r > 0;
}

void spare_after_run(brig_ctx *ctx, const loaded_backend *lb, brig_spec *box, bool ran)
{
	if (!box || !box->net_holder)
		return;
	pthread_mutex_lock(&ctx->lock);
	spare_state *s = ctx->spare;
	if (!s)
		s = ctx->spare = xcalloc(1, sizeof *s);
	size_t n = strv_len(s->used);
	s->used = xrealloc(s->used, (n + 2) * sizeof *s->used);
	s->used[n] = xstrdup(box->net_holder->name);
	s->used[n + 1] = NULL;
	s->lb = lb;
	/* never spares on a network no run of this configuration was found good on, nor with a
	 * plugin that cannot claim them */
	char *key = ran && spares_on(ctx, lb) ? spare_key(ctx, box->net_holder) : NULL;
	if (key) { /* the latest configuration is the one refilled */
		spec_free(s->holder);
		free(s->key);
		s->holder = steal_pointer(&box->net_holder);
		s->key = key;
	}
	pthread_mutex_unlock(&ctx->lock);
}

void spare_state_free(spare_state *s)
{
	if (!s)
		return;
	spec_free(s->holder);
	free(s->key);
	strv_free(s->used);
	free(s);
}

/* Start spares of s->holder's configuration up to SPARE_COUNT (the grandchild). */
static void fill(const brig_ctx *ctx, spare_state *s)
{
	cleanup_free char *domain = domain_id(ctx, false);
	cleanup_free char *label = xasprintf(SPEC_SPARE_LABEL "=%s", s->key);
	int have = 0;
	if (!domain || s->lb->be->claim_spare(label, (long long)time(NULL), NULL, &have, NULL) < 0)
		return;
	for (int i = have; i < SPARE_COUNT; i++) {
		char box[32];
		if (spec_random_name(box, sizeof box) < 0)
			return;
		cleanup_free char *name = xasprintf("%s" SPEC_SPARE_SUFFIX, box);
		spec_holder_to_spare(s->holder, name, s->key, domain,
				     (long long)time(NULL) + SPEC_SPARE_CLAIM_S,
				     ctx->policy->max_timeout_seconds);
		if (s->lb->be->start_detached(s->holder, NULL) < 0)
			return;
	}
}

/* The holders of this context's runs removed (a plugin without remove: the reaper's). */
static void remove_used(const spare_state *s)
{
	int (*rm)(const char *, brig_error **) = BE_HOOK(s->lb->be, remove);
	for (char **n = s->used; rm && n && *n; n++)
		rm(*n, NULL);
}

static void detached(const brig_ctx *ctx, spare_state *s, bool filling)
{
	setsid();
	signal(SIGPIPE, SIG_IGN);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	/* nothing of the caller's pipes kept open: who reads brig's output sees its end */
	for (int fd = 0; null >= 0 && fd <= 2; fd++)
		dup2(null, fd);
	if (filling && s->holder) /* first: the next run may be waiting for one */
		fill(ctx, s);
	remove_used(s);
}

void spare_detach(brig_ctx *ctx)
{
	spare_state *s = ctx->spare;
	if (!s || !s->used || !s->lb)
		return;
	/* one filler at a time per installation: it holds the lock until it is done */
	cleanup_free char *path = lock_path(ctx, "fill");
	int fd = path ? open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	bool filling = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;
	pid_t pid = fork();
	if (pid == 0) {
		pid_t g = fork();
		if (g == 0)
			detached(ctx, s, filling);
		else if (g < 0) /* no grandchild: the holders at least, while brig waits */
			remove_used(s);
		_exit(0);
	}
	if (fd >= 0)
		close(fd); /* the grandchild's copy keeps the lock */
	if (pid > 0) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return;
	}
	remove_used(s); /* no process: removed here */
}

int spare_gc(brig_ctx *ctx, const loaded_backend *lb, int *removed)
{
	*removed = 0;
	cleanup_free char *domain = domain_id(ctx, false);
	cleanup_free char *path = lock_path(ctx, "fill");
	if (!domain || !path || !BE_HOOK(lb->be, list_labelled) || !BE_HOOK(lb->be, remove))
		return 0;
	cleanup_close int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		flock_wait(fd, GC_FILL_WAIT); /* spares being started: removed once they are */
	/* and no claim meanwhile: a spare being removed must not become a box's holder */
	cleanup_free char *claim = lock_path(ctx, "lock");
	cleanup_close int cfd =
		claim ? open(claim, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	if (cfd >= 0)
		flock_wait(cfd, GC_FILL_WAIT);
	cleanup_free char *label = xasprintf("brig.spare-domain=%s", domain);
	char **names = NULL, **owners = NULL;
	brig_error *e = NULL;
	int r = lb->be->list_labelled(label, &names, &owners, &e);
	brig_error_free(e);
	size_t sl = strlen(SPEC_SPARE_SUFFIX);
	for (size_t i = 0; r == 0 && names && names[i]; i++) {
		size_t n = strlen(names[i]);
		/* a claimed one has its box's holder name: its run removes it */
		if (n > sl && strcmp(names[i] + n - sl, SPEC_SPARE_SUFFIX) == 0 &&
		    lb->be->remove(names[i], NULL) == 0)
			(*removed)++;
	}
	strv_free(names);
	strv_free(owners);
	return r;
}
