/* test_seccomp.c - brig's own seccomp profile: the embedded data parses, every name resolves
 * with libseccomp, libseccomp builds the filter, each denied group is refused (and nowhere
 * allowed), the profile is at least as strict as the engine's default, the operator's deny list
 * is applied, the parser's errors name the line, and the gVisor rendering allows clone3.
 */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

#include "cunit_main.h"
#include "policy-seccomp.h"
#include "util.h"

#define CONTAINER BRIG_ISOLATION_CONTAINER
#define GVISOR    BRIG_ISOLATION_GVISOR

/* What agent code never needs: every name must be refused with EPERM, under both runtimes. */
static const char *const denied_groups[][12] = {
	{ "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	  "process_madvise" },
	{ "userfaultfd" },
	{ "perf_event_open" },
	{ "bpf" },
	{ "keyctl", "add_key", "request_key" },
	{ "unshare", "setns" },
	{ "mount", "umount", "umount2", "pivot_root", "move_mount", "fsopen", "fsconfig", "fsmount",
	  "fspick", "open_tree", "mount_setattr" },
	{ "io_uring_setup", "io_uring_enter", "io_uring_register" },
	{ "kexec_load", "kexec_file_load" },
	{ "init_module", "finit_module", "delete_module" },
	{ "swapon", "swapoff" },
	{ "reboot" },
	{ "acct" },
	{ "quotactl", "quotactl_fd" },
	{ "lookup_dcookie" },
	{ "iopl", "ioperm" },
	{ "name_to_handle_at", "open_by_handle_at" },
	{ "chroot" },
	{ "vhangup" },
	{ "syslog" },
	{ "settimeofday", "stime", "clock_settime", "clock_settime64", "adjtimex", "clock_adjtime",
	  "clock_adjtime64" },
	{ "nfsservctl" },
	{ "sethostname", "setdomainname" },
	{ "modify_ldt" },
};

/* The engine's default for a container with every capability dropped: moby v20.10.24 (this
 * host's dockerd) as it hands the profile to runc on x86_64, read from the OCI config.json of a
 * `docker run --cap-drop ALL` container.  brig's profile may allow nothing outside it. */
static const char *const engine_x86_64[] = {
	"_llseek",
	"_newselect",
	"accept",
	"accept4",
	"access",
	"adjtimex",
	"alarm",
	"arch_prctl",
	"bind",
	"brk",
	"capget",
	"capset",
	"chdir",
	"chmod",
	"chown",
	"chown32",
	"clock_adjtime",
	"clock_adjtime64",
	"clock_getres",
	"clock_getres_time64",
	"clock_gettime",
	"clock_gettime64",
	"clock_nanosleep",
	"clock_nanosleep_time64",
	"clone",
	"close",
	"close_range",
	"connect",
	"copy_file_range",
	"creat",
	"dup",
	"dup2",
	"dup3",
	"epoll_create",
	"epoll_create1",
	"epoll_ctl",
	"epoll_ctl_old",
	"epoll_pwait",
	"epoll_pwait2",
	"epoll_wait",
	"epoll_wait_old",
	"eventfd",
	"eventfd2",
	"execve",
	"execveat",
	"exit",
	"exit_group",
	"faccessat",
	"faccessat2",
	"fadvise64",
	"fadvise64_64",
	"fallocate",
	"fanotify_mark",
	"fchdir",
	"fchmod",
	"fchmodat",
	"fchown",
	"fchown32",
	"fchownat",
	"fcntl",
	"fcntl64",
	"fdatasync",
	"fgetxattr",
	"flistxattr",
	"flock",
	"fork",
	"fremovexattr",
	"fsetxattr",
	"fstat",
	"fstat64",
	"fstatat64",
	"fstatfs",
	"fstatfs64",
	"fsync",
	"ftruncate",
	"ftruncate64",
	"futex",
	"futex_time64",
	"futex_waitv",
	"futimesat",
	"get_robust_list",
	"get_thread_area",
	"getcpu",
	"getcwd",
	"getdents",
	"getdents64",
	"getegid",
	"getegid32",
	"geteuid",
	"geteuid32",
	"getgid",
	"getgid32",
	"getgroups",
	"getgroups32",
	"getitimer",
	"getpeername",
	"getpgid",
	"getpgrp",
	"getpid",
	"getppid",
	"getpriority",
	"getrandom",
	"getresgid",
	"getresgid32",
	"getresuid",
	"getresuid32",
	"getrlimit",
	"getrusage",
	"getsid",
	"getsockname",
	"getsockopt",
	"gettid",
	"gettimeofday",
	"getuid",
	"getuid32",
	"getxattr",
	"inotify_add_watch",
	"inotify_init",
	"inotify_init1",
	"inotify_rm_watch",
	"io_cancel",
	"io_destroy",
	"io_getevents",
	"io_pgetevents",
	"io_pgetevents_time64",
	"io_setup",
	"io_submit",
	"io_uring_enter",
	"io_uring_register",
	"io_uring_setup",
	"ioctl",
	"ioprio_get",
	"ioprio_set",
	"ipc",
	"kill",
	"landlock_add_rule",
	"landlock_create_ruleset",
	"landlock_restrict_self",
	"lchown",
	"lchown32",
	"lgetxattr",
	"link",
	"linkat",
	"listen",
	"listxattr",
	"llistxattr",
	"lremovexattr",
	"lseek",
	"lsetxattr",
	"lstat",
	"lstat64",
	"madvise",
	"membarrier",
	"memfd_create",
	"memfd_secret",
	"mincore",
	"mkdir",
	"mkdirat",
	"mknod",
	"mknodat",
	"mlock",
	"mlock2",
	"mlockall",
	"mmap",
	"mmap2",
	"modify_ldt",
	"mprotect",
	"mq_getsetattr",
	"mq_notify",
	"mq_open",
	"mq_timedreceive",
	"mq_timedreceive_time64",
	"mq_timedsend",
	"mq_timedsend_time64",
	"mq_unlink",
	"mremap",
	"msgctl",
	"msgget",
	"msgrcv",
	"msgsnd",
	"msync",
	"munlock",
	"munlockall",
	"munmap",
	"nanosleep",
	"newfstatat",
	"open",
	"openat",
	"openat2",
	"pause",
	"personality",
	"pidfd_open",
	"pidfd_send_signal",
	"pipe",
	"pipe2",
	"poll",
	"ppoll",
	"ppoll_time64",
	"prctl",
	"pread64",
	"preadv",
	"preadv2",
	"prlimit64",
	"process_mrelease",
	"pselect6",
	"pselect6_time64",
	"ptrace",
	"pwrite64",
	"pwritev",
	"pwritev2",
	"read",
	"readahead",
	"readlink",
	"readlinkat",
	"readv",
	"recv",
	"recvfrom",
	"recvmmsg",
	"recvmmsg_time64",
	"recvmsg",
	"remap_file_pages",
	"removexattr",
	"rename",
	"renameat",
	"renameat2",
	"restart_syscall",
	"rmdir",
	"rseq",
	"rt_sigaction",
	"rt_sigpending",
	"rt_sigprocmask",
	"rt_sigqueueinfo",
	"rt_sigreturn",
	"rt_sigsuspend",
	"rt_sigtimedwait",
	"rt_sigtimedwait_time64",
	"rt_tgsigqueueinfo",
	"sched_get_priority_max",
	"sched_get_priority_min",
	"sched_getaffinity",
	"sched_getattr",
	"sched_getparam",
	"sched_getscheduler",
	"sched_rr_get_interval",
	"sched_rr_get_interval_time64",
	"sched_setaffinity",
	"sched_setattr",
	"sched_setparam",
	"sched_setscheduler",
	"sched_yield",
	"seccomp",
	"select",
	"semctl",
	"semget",
	"semop",
	"semtimedop",
	"semtimedop_time64",
	"send",
	"sendfile",
	"sendfile64",
	"sendmmsg",
	"sendmsg",
	"sendto",
	"set_robust_list",
	"set_thread_area",
	"set_tid_address",
	"setfsgid",
	"setfsgid32",
	"setfsuid",
	"setfsuid32",
	"setgid",
	"setgid32",
	"setgroups",
	"setgroups32",
	"setitimer",
	"setpgid",
	"setpriority",
	"setregid",
	"setregid32",
	"setresgid",
	"setresgid32",
	"setresuid",
	"setresuid32",
	"setreuid",
	"setreuid32",
	"setrlimit",
	"setsid",
	"setsockopt",
	"setuid",
	"setuid32",
	"setxattr",
	"shmat",
	"shmctl",
	"shmdt",
	"shmget",
	"shutdown",
	"sigaltstack",
	"signalfd",
	"signalfd4",
	"sigprocmask",
	"sigreturn",
	"socket",
	"socketcall",
	"socketpair",
	"splice",
	"stat",
	"stat64",
	"statfs",
	"statfs64",
	"statx",
	"symlink",
	"symlinkat",
	"sync",
	"sync_file_range",
	"syncfs",
	"sysinfo",
	"tee",
	"tgkill",
	"time",
	"timer_create",
	"timer_delete",
	"timer_getoverrun",
	"timer_gettime",
	"timer_gettime64",
	"timer_settime",
	"timer_settime64",
	"timerfd_create",
	"timerfd_gettime",
	"timerfd_gettime64",
	"timerfd_settime",
	"timerfd_settime64",
	"times",
	"tkill",
	"truncate",
	"truncate64",
	"ugetrlimit",
	"umask",
	"uname",
	"unlink",
	"unlinkat",
	"utime",
	"utimensat",
	"utimensat_time64",
	"utimes",
	"vfork",
	"vmsplice",
	"wait4",
	"waitid",
	"waitpid",
	"write",
	"writev",
};

/* ---- helpers ----------------------------------------------------------------------------- */

static policy_seccomp *builtin(void)
{
	policy_seccomp *sc = NULL;
	brig_error *err = NULL;
	int r = policy_seccomp_parse(policy_seccomp_data, POLICY_SECCOMP_ORIGIN, &sc, &err);
	if (r != 0)
		fprintf(stderr, "\n  %s\n", err ? err->message : "?");
	CU_ASSERT_EQUAL_FATAL(r, 0);
	brig_error_free(err);
	return sc;
}

static json_object *rendered(const policy_seccomp *sc, int isolation)
{
	cleanup_free char *text = policy_seccomp_render(sc, isolation);
	json_object *o = json_tokener_parse(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	return o;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static bool array_has(json_object *a, const char *s)
{
	for (size_t i = 0; a && i < json_object_array_length(a); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), s) == 0)
			return true;
	return false;
}

/* The rules of the rendered profile that name `name`, in order; at most `max`. */
static size_t rules_for(json_object *profile, const char *name, json_object **out, size_t max)
{
	json_object *rules = get(profile, "syscalls");
	size_t n = 0;
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i);
		if (array_has(get(r, "names"), name) && n < max)
			out[n++] = r;
	}
	return n;
}

static const char *action(json_object *rule)
{
	return json_object_get_string(get(rule, "action"));
}

/* Whether the rule is in force on amd64 (the engine's includes/excludes.arches). */
static bool on_amd64(json_object *rule)
{
	json_object *inc = get(rule, "includes"), *exc = get(rule, "excludes");
	if (inc && get(inc, "arches") && !array_has(get(inc, "arches"), "amd64"))
		return false;
	return !(exc && array_has(get(exc, "arches"), "amd64"));
}

/* The single rule for `name` refuses it with `errno_ret`. */
static void refused_with(json_object *profile, const char *name, int errno_ret)
{
	json_object *r[4];
	size_t n = rules_for(profile, name, r, 4);
	if (n != 1)
		fprintf(stderr, "\n  %s: %zu rules\n", name, n);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(action(r[0]), "SCMP_ACT_ERRNO");
	CU_ASSERT_EQUAL(json_object_get_int(get(r[0], "errnoRet")), errno_ret);
	CU_ASSERT_PTR_NULL(get(r[0], "args"));
	CU_ASSERT_PTR_NOT_NULL(get(r[0], "comment")); /* the reason travels with the rule */
}

static void parse_fails(const char *text, const char *message)
{
	policy_seccomp *sc = NULL;
	brig_error *err = NULL;
	int r = policy_seccomp_parse(text, "t.txt", &sc, &err);
	CU_ASSERT_EQUAL(r, BRIG_E_POLICY);
	CU_ASSERT_PTR_NULL(sc);
	policy_seccomp_free(sc);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	bool ok = strncmp(err->message, message, strlen(message)) == 0;
	if (!ok)
		fprintf(stderr, "\n  %s\n  -> %s\n  wanted %s\n", text, err->message, message);
	CU_ASSERT_TRUE(ok);
	brig_error_free(err);
}

#define HEAD "default errno EPERM\narch SCMP_ARCH_X86_64 SCMP_ARCH_X86\n"

/* ---- tests ------------------------------------------------------------------------------- */

static void test_builtin_parses_and_compiles(void)
{
	policy_seccomp *sc = builtin();
	brig_error *err = NULL;
	for (int iso = CONTAINER; iso <= GVISOR; iso++) {
		int r = policy_seccomp_compile(sc, iso, true, &err);
		if (r)
			fprintf(stderr, "\n  %s\n", err->message);
		CU_ASSERT_EQUAL(r, 0);
		CU_ASSERT_EQUAL(policy_seccomp_compile(sc, iso, false, &err), 0);
	}
	CU_ASSERT_PTR_NULL(err);
	policy_seccomp_free(sc);
}

/* Every name in every rendered rule resolves with libseccomp (on some architecture). */
static void test_every_name_resolves(void)
{
	policy_seccomp *sc = builtin();
	json_object *o = rendered(sc, CONTAINER);
	json_object *rules = get(o, "syscalls");
	size_t names = 0;
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *n = get(json_object_array_get_idx(rules, i), "names");
		for (size_t j = 0; j < json_object_array_length(n); j++, names++) {
			const char *name = json_object_get_string(json_object_array_get_idx(n, j));
			if (seccomp_syscall_resolve_name(name) == __NR_SCMP_ERROR)
				fprintf(stderr, "\n  unknown: %s\n", name);
			CU_ASSERT_NOT_EQUAL(seccomp_syscall_resolve_name(name), __NR_SCMP_ERROR);
		}
	}
	CU_ASSERT_TRUE(names > 400);
	json_object_put(o);
	policy_seccomp_free(sc);
}

static void test_denied_groups(void)
{
	policy_seccomp *sc = builtin();
	for (int iso = CONTAINER; iso <= GVISOR; iso++) {
		json_object *o = rendered(sc, iso);
		for (size_t g = 0; g < sizeof denied_groups / sizeof *denied_groups; g++)
			for (size_t i = 0; denied_groups[g][i]; i++) {
				const char *name = denied_groups[g][i];
				CU_ASSERT_FALSE(policy_seccomp_allows(sc, name, iso));
				refused_with(o, name, EPERM);
			}
		json_object_put(o);
	}
	policy_seccomp_free(sc);
}

/* clone3 cannot be filtered by flags: ENOSYS under runc (glibc falls back to clone), allowed
 * under gVisor (runsc would turn ENOSYS into EPERM; the sentry answers ENOSYS itself). */
static void test_clone3(void)
{
	policy_seccomp *sc = builtin();
	json_object *o = rendered(sc, CONTAINER), *r[4];
	refused_with(o, "clone3", ENOSYS);
	CU_ASSERT_FALSE(policy_seccomp_allows(sc, "clone3", CONTAINER));
	json_object_put(o);
	o = rendered(sc, GVISOR);
	CU_ASSERT_EQUAL_FATAL(rules_for(o, "clone3", r, 4), 1);
	CU_ASSERT_STRING_EQUAL(action(r[0]), "SCMP_ACT_ALLOW");
	CU_ASSERT_PTR_NULL(get(r[0], "errnoRet"));
	CU_ASSERT_PTR_NOT_NULL(strstr(json_object_get_string(get(r[0], "comment")), "gVisor"));
	CU_ASSERT_TRUE(policy_seccomp_allows(sc, "clone3", GVISOR));
	json_object_put(o);
	policy_seccomp_free(sc);
}

/* personality() only with moby's harmless values; clone() only without CLONE_NEW* flags; no
 * device nodes; sockets only of the families a program needs (no AF_VSOCK, no netlink but
 * NETLINK_ROUTE). */
static void test_conditional_rules(void)
{
	policy_seccomp *sc = builtin();
	json_object *o = rendered(sc, CONTAINER), *r[8];
	static const int64_t persona[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffff };
	CU_ASSERT_EQUAL_FATAL(rules_for(o, "personality", r, 8), 5);
	for (size_t i = 0; i < 5; i++) {
		json_object *a = json_object_array_get_idx(get(r[i], "args"), 0);
		CU_ASSERT_STRING_EQUAL(action(r[i]), "SCMP_ACT_ALLOW");
		CU_ASSERT_EQUAL(json_object_array_length(get(r[i], "args")), 1);
		CU_ASSERT_EQUAL(json_object_get_int64(get(a, "value")), persona[i]);
		CU_ASSERT_STRING_EQUAL(json_object_get_string(get(a, "op")), "SCMP_CMP_EQ");
	}
	CU_ASSERT_EQUAL_FATAL(rules_for(o, "clone", r, 8), 2);
	for (size_t i = 0; i < 2; i++) {
		json_object *a = json_object_array_get_idx(get(r[i], "args"), 0);
		CU_ASSERT_EQUAL(json_object_get_int64(get(a, "index")), (int64_t)i);
		CU_ASSERT_EQUAL(json_object_get_int64(get(a, "value")), 0x7e020000);
		CU_ASSERT_PTR_NULL(get(a, "valueTwo"));
		CU_ASSERT_STRING_EQUAL(json_object_get_string(get(a, "op")), "SCMP_CMP_MASKED_EQ");
	}
	CU_ASSERT_TRUE(array_has(get(get(r[0], "excludes"), "arches"), "s390x"));
	CU_ASSERT_TRUE(array_has(get(get(r[1], "includes"), "arches"), "s390x"));
	static const char *const mknods[] = { "mknod", "mknodat" };
	static const int64_t types[] = { 0, 0x8000, 0x1000,
					 0xc000 }; /* REG, FIFO, SOCK; not devices */
	for (size_t k = 0; k < 2; k++) {
		CU_ASSERT_EQUAL_FATAL(rules_for(o, mknods[k], r, 8), 4);
		for (size_t i = 0; i < 4; i++) {
			json_object *a = json_object_array_get_idx(get(r[i], "args"), 0);
			CU_ASSERT_EQUAL(json_object_get_int64(get(a, "index")), (int64_t)k + 1);
			CU_ASSERT_EQUAL(json_object_get_int64(get(a, "value")), 0xf000);
			CU_ASSERT_EQUAL(json_object_get_int64(get(a, "valueTwo")), types[i]);
		}
	}
	CU_ASSERT_EQUAL_FATAL(rules_for(o, "socket", r, 8), 4);
	static const int64_t families[] = { 1, 2, 10, 16 }; /* UNIX, INET, INET6, NETLINK */
	for (size_t i = 0; i < 4; i++) {
		json_object *args = get(r[i], "args");
		json_object *a = json_object_array_get_idx(args, 0);
		CU_ASSERT_EQUAL(json_object_get_int64(get(a, "index")), 0);
		CU_ASSERT_EQUAL(json_object_get_int64(get(a, "value")), families[i]);
		CU_ASSERT_STRING_EQUAL(json_object_get_string(get(a, "op")), "SCMP_CMP_EQ");
		CU_ASSERT_EQUAL(json_object_array_length(args), families[i] == 16 ? 2 : 1);
	}
	json_object *proto = json_object_array_get_idx(get(r[3], "args"), 1);
	CU_ASSERT_EQUAL(json_object_get_int64(get(proto, "index")), 2);
	CU_ASSERT_EQUAL(json_object_get_int64(get(proto, "value")), 0); /* NETLINK_ROUTE */
	json_object_put(o);
	policy_seccomp_free(sc);
}

/* Nothing allowed on amd64 that the engine's default refuses. */
static void test_stricter_than_engine(void)
{
	policy_seccomp *sc = builtin();
	json_object *o = rendered(sc, CONTAINER);
	json_object *rules = get(o, "syscalls");
	size_t allowed = 0;
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i);
		if (strcmp(action(r), "SCMP_ACT_ALLOW") != 0 || !on_amd64(r))
			continue;
		json_object *n = get(r, "names");
		for (size_t j = 0; j < json_object_array_length(n); j++) {
			const char *name = json_object_get_string(json_object_array_get_idx(n, j));
			bool found = false;
			for (size_t k = 0; k < sizeof engine_x86_64 / sizeof *engine_x86_64; k++)
				found = found || strcmp(engine_x86_64[k], name) == 0;
			if (!found)
				fprintf(stderr, "\n  allowed but not by the engine: %s\n", name);
			CU_ASSERT_TRUE(found);
			allowed++;
		}
	}
	/* 351 of the engine's, minus ptrace, modify_ldt, adjtimex, clock_adjtime(64), io_uring_*
	 * (8), sync, syncfs, memfd_secret, sched_setattr (4): 339 names; personality has five
	 * rules, mknod and mknodat four each and socket four, so 352 rule entries. */
	CU_ASSERT_EQUAL(allowed, 339 + 4 + 3 + 3 + 3);
	json_object_put(o);
	policy_seccomp_free(sc);
}

static void test_rendered_shape(void)
{
	policy_seccomp *sc = builtin();
	json_object *o = rendered(sc, CONTAINER);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(get(o, "defaultAction")), "SCMP_ACT_ERRNO");
	CU_ASSERT_EQUAL(json_object_get_int(get(o, "defaultErrnoRet")), EPERM);
	json_object *map = get(o, "archMap");
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(map), 8);
	json_object *x86 = json_object_array_get_idx(map, 0);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(get(x86, "architecture")),
			       "SCMP_ARCH_X86_64");
	CU_ASSERT_TRUE(array_has(get(x86, "subArchitectures"), "SCMP_ARCH_X86"));
	CU_ASSERT_TRUE(array_has(get(x86, "subArchitectures"), "SCMP_ARCH_X32"));
	json_object *first = json_object_array_get_idx(get(o, "syscalls"), 0);
	CU_ASSERT_STRING_EQUAL(action(first), "SCMP_ACT_ALLOW");
	CU_ASSERT_TRUE(array_has(get(first, "names"), "read"));
	CU_ASSERT_TRUE(array_has(get(first, "names"), "futex"));
	CU_ASSERT_PTR_NULL(get(first, "args"));
	json_object *r[2];
	CU_ASSERT_EQUAL_FATAL(rules_for(o, "arch_prctl", r, 2), 1);
	CU_ASSERT_TRUE(array_has(get(get(r[0], "includes"), "arches"), "amd64"));
	json_object_put(o);
	policy_seccomp_free(sc);
}

/* The numbers `brig explain` shows; a change of the profile is a deliberate act. */
static void test_counts(void)
{
	policy_seccomp *sc = builtin();
	size_t a, d, ga, gd;
	policy_seccomp_count(sc, CONTAINER, &a, &d);
	policy_seccomp_count(sc, GVISOR, &ga, &gd);
	CU_ASSERT_EQUAL(a, 350);
	CU_ASSERT_EQUAL(d, 79);
	CU_ASSERT_EQUAL(ga, a + 1); /* clone3 */
	CU_ASSERT_EQUAL(gd, d - 1);
	policy_seccomp_free(sc);
}

static void test_brig_labels(void)
{
	char *json = NULL, *label = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(policy_seccomp_brig(NULL, CONTAINER, &json, &label, &err), 0);
	CU_ASSERT_STRING_EQUAL(label, "brig default (350 syscalls allowed, 79 denied)");
	free(json);
	free(label);
	CU_ASSERT_EQUAL_FATAL(policy_seccomp_brig(NULL, GVISOR, &json, &label, &err), 0);
	CU_ASSERT_STRING_EQUAL(label, "brig default, gVisor rendering: allowed clone3 (351 "
				      "syscalls allowed, 78 denied)");
	free(json);
	free(label);
	char *deny[] = { "ptrace", "getcpu", NULL };
	CU_ASSERT_EQUAL_FATAL(policy_seccomp_brig(deny, CONTAINER, &json, &label, &err), 0);
	CU_ASSERT_STRING_EQUAL(label, "brig default + deny [ptrace, getcpu] (349 syscalls "
				      "allowed, 80 denied)");
	free(json);
	free(label);
	char *bad[] = { "getcpu", "nosuchcall", NULL };
	CU_ASSERT_EQUAL(policy_seccomp_brig(bad, CONTAINER, &json, &label, &err), BRIG_E_POLICY);
	CU_ASSERT_PTR_NULL(json);
	CU_ASSERT_PTR_NULL(label);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_STRING_EQUAL(err->message, "brig's seccomp profile: seccomp.deny[1]: "
					     "\"nosuchcall\" is not a syscall known to libseccomp "
					     "2.5.4");
	brig_error_free(err);
}

/* The operator's names leave every allow and errno rule and get one EPERM rule. */
static void test_deny_applied(void)
{
	policy_seccomp *sc = builtin();
	brig_error *err = NULL;
	char *deny[] = { "getcpu", "ptrace", "clone3", "personality", "getcpu", NULL };
	CU_ASSERT_EQUAL_FATAL(policy_seccomp_deny(sc, deny, &err), 0);
	for (int iso = CONTAINER; iso <= GVISOR; iso++) {
		json_object *o = rendered(sc, iso), *r[8];
		CU_ASSERT_FALSE(policy_seccomp_allows(sc, "getcpu", iso));
		CU_ASSERT_FALSE(policy_seccomp_allows(sc, "personality", iso));
		refused_with(o, "getcpu", EPERM);
		refused_with(o, "personality", EPERM); /* all five conditional rules gone */
		refused_with(o, "clone3", EPERM);      /* no ENOSYS, no gVisor allowance */
		refused_with(o, "ptrace", EPERM);      /* denied already: not twice */
		CU_ASSERT_EQUAL_FATAL(rules_for(o, "getcpu", r, 8), 1);
		CU_ASSERT_STRING_EQUAL(json_object_get_string(get(r[0], "comment")),
				       POLICY_SECCOMP_DENY_REASON);
		CU_ASSERT_EQUAL(json_object_array_length(get(r[0], "names")), 3);
		CU_ASSERT_TRUE(policy_seccomp_allows(sc, "read", iso));
		CU_ASSERT_EQUAL(policy_seccomp_compile(sc, iso, true, &err), 0);
		json_object_put(o);
	}
	size_t a, d;
	policy_seccomp_count(sc, GVISOR, &a, &d);
	CU_ASSERT_EQUAL(a, 350 - 2); /* getcpu, personality */
	CU_ASSERT_EQUAL(d, 79 + 2);
	char *bad[] = { "getcpu", "Ptrace", NULL };
	CU_ASSERT_EQUAL(policy_seccomp_deny(sc, bad, &err), BRIG_E_POLICY);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	CU_ASSERT_STRING_EQUAL(err->message,
			       "seccomp.deny[1]: \"Ptrace\" is not a syscall name (lowercase "
			       "letters, digits and _)");
	brig_error_free(err);
	policy_seccomp_free(sc);
}

static void test_unknown_name_names_line(void)
{
	const struct scmp_version *v = seccomp_version();
	cleanup_free char *msg = xasprintf("t.txt:4: \"ptrac\" is not a syscall known to "
					   "libseccomp %u.%u.%u",
					   v->major, v->minor, v->micro);
	parse_fails(HEAD "allow read write\n\tclose ptrac -- x\n", msg);
	parse_fails(HEAD "deny FOO -- x\n", "t.txt:3: \"FOO\" is not a syscall name");
}

static void test_parse_errors(void)
{
	parse_fails(HEAD "deny ptrace\n", "t.txt:3: a deny line needs its reason after \"--\"");
	parse_fails(HEAD "errno ENOSYS clone3\n", "t.txt:3: a errno line needs its reason");
	parse_fails(HEAD "errno EFOO clone3 -- x\n", "t.txt:3: write \"errno ERRNO NAME...\"");
	parse_fails(HEAD "allow\n", "t.txt:3: allow needs at least one syscall name");
	parse_fails(HEAD "permit read\n", "t.txt:3: unknown directive \"permit\"");
	parse_fails("\tread\n", "t.txt:1: a continuation line without a directive");
	parse_fails(HEAD "-- why\n", "t.txt:3: a reason without a directive");
	parse_fails(HEAD "allow read --\n", "t.txt:3: an empty reason after \"--\"");
	parse_fails(HEAD "allow read write\nallow write\n",
		    "t.txt:4: \"write\" is listed twice in the rule of line 3"); /* merged */
	parse_fails(HEAD "allow read -- one\nallow read -- two\n",
		    "t.txt:4: \"read\" is already in the rule of line 3");
	parse_fails(HEAD "allow read read\n", "t.txt:3: \"read\" is listed twice");
	parse_fails(HEAD "allow read\ndeny read -- x\n",
		    "t.txt:4: \"read\" is also in the rule of line 3, with another action");
	parse_fails(HEAD "deny read if arg0 == 1 -- x\n",
		    "t.txt:3: a deny line takes no conditions");
	parse_fails(HEAD "allow read if arg6 == 1\n", "t.txt:3: write \"if argN OP VALUE\"");
	parse_fails(HEAD "allow read if arg0 =~ 1\n", "t.txt:3: unknown comparison \"=~\"");
	parse_fails(HEAD "allow read if arg0 == 1x\n", "t.txt:3: \"1x\" is not a number");
	parse_fails(HEAD "allow read if arg0 & 0x10 != 0\n",
		    "t.txt:3: write \"if argN & MASK == VALUE\"");
	parse_fails(HEAD "allow read arches amd64 vax\n",
		    "t.txt:3: \"vax\" is not an architecture");
	parse_fails(HEAD "allow read arches\n", "t.txt:3: \"arches\" needs architecture names");
	parse_fails(HEAD "allow read min-kernel 4\n", "t.txt:3: write \"min-kernel X.Y\" once");
	parse_fails(HEAD "allow read colour blue\n", "t.txt:3: \"colour\" is not a syscall known");
	parse_fails(HEAD "default errno EPERM\n", "t.txt:3: a second default line");
	parse_fails("default errno 1\n", "t.txt:1: write \"default errno ERRNO\"");
	parse_fails(HEAD "arch SCMP_ARCH_VAX\n",
		    "t.txt:3: \"SCMP_ARCH_VAX\" is not an architecture");
	parse_fails(HEAD "arch SCMP_ARCH_X86_64 -- x\n", "t.txt:3: a arch line takes no reason");
	parse_fails("arch SCMP_ARCH_X86_64\nallow read\n", "t.txt: no \"default errno\" line");
	parse_fails("default errno EPERM\nallow read\n", "t.txt: no \"arch\" line");
}

/* The grammar's other forms parse and render as the engine expects them. */
static void test_parse_forms(void)
{
	const char *text =
		HEAD "# a comment\n"
		     "allow read   write # trailing comment\n"
		     "\n"
		     "allow\n"
		     "\tclose\n"
		     "allow ioctl if arg1 <= 0x5401 if arg0 >= 3 min-kernel 5.10 -- tty\n"
		     "allow prctl if arg0 & 0xff == 0x16 arches amd64 x32 not-arches x86\n"
		     "errno EACCES uname\n"
		     "\t-- a reason\n"
		     "\tover two lines\n";
	policy_seccomp *sc = NULL;
	brig_error *err = NULL;
	CU_ASSERT_EQUAL_FATAL(policy_seccomp_parse(text, "t.txt", &sc, &err), 0);
	json_object *o = rendered(sc, CONTAINER), *r[2];
	json_object *rules = get(o, "syscalls");
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(rules), 4);
	CU_ASSERT_STRING_EQUAL(json_object_to_json_string_ext(json_object_array_get_idx(rules, 0),
							      JSON_C_TO_STRING_PLAIN),
			       "{\"names\":[\"read\",\"write\",\"close\"],\"action\":\"SCMP_ACT_"
			       "ALLOW\"}");
	CU_ASSERT_STRING_EQUAL(
		json_object_to_json_string_ext(json_object_array_get_idx(rules, 1),
					       JSON_C_TO_STRING_PLAIN),
		"{\"names\":[\"ioctl\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,"
		"\"value\":21505,\"op\":\"SCMP_CMP_LE\"},{\"index\":0,\"value\":3,\"op\":\"SCMP_"
		"CMP_GE\"}],\"comment\":\"tty\",\"includes\":{\"minKernel\":\"5.10\"}}");
	CU_ASSERT_STRING_EQUAL(
		json_object_to_json_string_ext(json_object_array_get_idx(rules, 2),
					       JSON_C_TO_STRING_PLAIN),
		"{\"names\":[\"prctl\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
		"\"value\":255,\"valueTwo\":22,\"op\":\"SCMP_CMP_MASKED_EQ\"}],\"includes\":{"
		"\"arches\":[\"amd64\",\"x32\"]},\"excludes\":{\"arches\":[\"x86\"]}}");
	CU_ASSERT_EQUAL_FATAL(rules_for(o, "uname", r, 2), 1);
	CU_ASSERT_EQUAL(json_object_get_int(get(r[0], "errnoRet")), EACCES);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(get(r[0], "comment")),
			       "a reason over two lines");
	CU_ASSERT_EQUAL(policy_seccomp_compile(sc, CONTAINER, true, &err), 0);
	json_object_put(o);
	/* under gVisor the EACCES rule becomes an allow rule */
	CU_ASSERT_TRUE(policy_seccomp_allows(sc, "uname", GVISOR));
	CU_ASSERT_FALSE(policy_seccomp_allows(sc, "uname", CONTAINER));
	policy_seccomp_free(sc);
}

/* The generated C string is the data file, byte for byte. */
/* The profile compiled in is the reviewed file, byte for byte.  make check gives $top_srcdir;
 * run by hand, the source tree this test was built from. */
static void test_embedded_equals_file(void)
{
	const char *top = getenv("top_srcdir");
	if (!top || !*top)
		top = BRIG_ABS_TOP_SRCDIR;
	cleanup_free char *path = xasprintf("%s/policy/seccomp-profile.txt", top);
	FILE *f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	strbuf sb;
	sb_init(&sb);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		sb_append(&sb, buf, n);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(sb.data, policy_seccomp_data);
	sb_free(&sb);
}

static void test_check_name(void)
{
	char why[256];
	CU_ASSERT_EQUAL(policy_seccomp_check_name("ptrace", why, sizeof why), 0);
	CU_ASSERT_EQUAL(policy_seccomp_check_name("socketcall", why, sizeof why), 0);
	CU_ASSERT_EQUAL(policy_seccomp_check_name("", why, sizeof why), -1);
	CU_ASSERT_EQUAL(policy_seccomp_check_name("read write", why, sizeof why), -1);
	CU_ASSERT_STRING_EQUAL(
		why, "\"read write\" is not a syscall name (lowercase letters, digits and _)");
	char lng[80];
	memset(lng, 'a', sizeof lng - 1);
	lng[sizeof lng - 1] = '\0';
	CU_ASSERT_EQUAL(policy_seccomp_check_name(lng, why, sizeof why), -1);
	CU_ASSERT_EQUAL(policy_seccomp_check_name("nosuchcall", why, sizeof why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "is not a syscall known to libseccomp"));
}

static void test_json_deny_errors(void)
{
	char why[256], *out = NULL;
	char *deny[] = { "ptrace", "ptrace", NULL }; /* listed once in the rule */
	CU_ASSERT_EQUAL(policy_seccomp_json_deny("[]", deny, &out, why, sizeof why), -1);
	CU_ASSERT_STRING_EQUAL(why, "the profile is not a JSON object");
	CU_ASSERT_EQUAL(policy_seccomp_json_deny("{\"syscalls\": 3}", deny, &out, why, sizeof why),
			-1);
	CU_ASSERT_STRING_EQUAL(why, "the profile's \"syscalls\" is not an array");
	CU_ASSERT_PTR_NULL(out);
	CU_ASSERT_EQUAL(policy_seccomp_json_deny("{\"defaultAction\": \"SCMP_ACT_ALLOW\"}", deny,
						 &out, why, sizeof why),
			0);
	CU_ASSERT_STRING_EQUAL(out,
			       "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
			       "\"names\":[\"ptrace\"],\"action\":\"SCMP_ACT_ERRNO\","
			       "\"errnoRet\":1,\"comment\":\"" POLICY_SECCOMP_DENY_REASON "\"}]}");
	free(out);
}

static CU_TestInfo tests[] = {
	{ "builtin profile parses and compiles", test_builtin_parses_and_compiles },
	{ "every name resolves", test_every_name_resolves },
	{ "denied groups refused, never allowed", test_denied_groups },
	{ "clone3: ENOSYS, allowed under gVisor", test_clone3 },
	{ "conditional rules: personality, clone, socket", test_conditional_rules },
	{ "at least as strict as the engine's default", test_stricter_than_engine },
	{ "rendered JSON shape", test_rendered_shape },
	{ "counts", test_counts },
	{ "labels for explain", test_brig_labels },
	{ "operator's deny list applied", test_deny_applied },
	{ "unknown name: the name and its line", test_unknown_name_names_line },
	{ "parse errors", test_parse_errors },
	{ "parse forms", test_parse_forms },
	{ "embedded data equals the file", test_embedded_equals_file },
	{ "check_name", test_check_name },
	{ "JSON deny on an operator's file", test_json_deny_errors },
	CU_TEST_INFO_NULL,
};

BRIG_CUNIT_MAIN("seccomp", tests)
