#!/bin/sh
# escape_attempts.sh - the usual ways out of a container, tried from a POSIX shell.
#
#   brig run examples/escape_attempts.sh
#
# Written for BusyBox ash (brig's shell image), whose applets reach further than a script
# usually can: nc, wget, nslookup, ping, mount, unshare, chroot, mknod, setuidgid, su, fdisk,
# dmesg.  Every line prints BLOCKED (the control held) or OK (the attempt worked: a hole), then
# a summary "N blocked, M open".
#
# Each attempt is real: with its control removed it succeeds (tests/integration/escape.py runs
# this script in a container without brig's controls - privileged, root, a network, no limits -
# and every line must say OK there); one that would change the host if it got through only
# opens for writing.  The comment above each names the control(s) that stop it.  (Nothing tries
# /proc/sysrq-trigger, /proc/kcore, /dev/mem or the host's disks: the CI host's kernel has none
# of the first three, and its dockerd cannot give a root container the disk.)
#
# Each attempt is a function that returns 0 only if the escape WORKED; it runs in a subshell
# (a failing special builtin cannot end the report) and its output, on one line, is the detail.
# Each line is printed as soon as its attempt is decided: if a limit ends the whole box (under
# gVisor the memory attempt, the last one, does), the lines so far are not lost.

n_blocked=0
n_open=0

attempt() {
	name=$1
	shift
	detail=$("$@" 2>&1)
	rc=$?
	detail=$(printf '%s' "$detail" | tr '\n' ' ' | cut -c1-90)
	if [ "$rc" -eq 0 ]; then
		verdict=OK
		n_open=$((n_open + 1))
	else
		verdict=BLOCKED
		n_blocked=$((n_blocked + 1))
	fi
	printf '%-8s %-45s %s\n' "$verdict" "$name" "${detail:-status $rc}"
}

# ---- network (only the host is tried: no traffic leaves the machine) -------------------------

# the default route's gateway (the host's side of the bridge), from /proc/net/route's
# little-endian hex
gateway() {
	while read -r _ dest gw _; do
		[ "$dest" = 00000000 ] || continue
		printf '%d.%d.%d.%d\n' "0x$(echo "$gw" | cut -c7-8)" "0x$(echo "$gw" | cut -c5-6)" \
			"0x$(echo "$gw" | cut -c3-4)" "0x$(echo "$gw" | cut -c1-2)"
		return 0
	done </proc/net/route
}
# network none: the box has only lo
net_iface() {
	ifs=
	for d in /sys/class/net/*; do
		[ -e "$d" ] && [ "${d##*/}" != lo ] && ifs="$ifs ${d##*/}"
	done
	[ -n "$ifs" ] && { echo "interfaces$ifs"; return 0; }
	echo "only lo"
	return 1
}
# network none: no route out of the box
net_route() {
	gw=$(gateway)
	[ -n "$gw" ] && { echo "default route via $gw"; return 0; }
	echo "no default route"
	return 1
}
# network none: nothing reaches the host; "refused" is an answer from it
net_host_tcp() {
	gw=$(gateway)
	[ -n "$gw" ] || { echo "no default route, no gateway to try"; return 1; }
	out=$(nc -w 2 "$gw" 9 </dev/null 2>&1)
	rc=$?
	case $out in *refused*) echo "$gw answered (connection refused)"; return 0 ;; esac
	[ $rc -eq 0 ] && { echo "connected to $gw:9"; return 0; }
	echo "$out"
	return 1
}
# network none and CAP_NET_RAW dropped: ICMP needs a raw socket
net_ping() {
	gw=$(gateway)
	[ -n "$gw" ] || { echo "no default route, no gateway to try"; return 1; }
	ping -c 1 -W 2 "$gw"
}

attempt "network: an interface besides lo" net_iface
attempt "network: a default route" net_route
attempt "network: TCP to the host (the default gateway)" net_host_tcp
attempt "network: ICMP ping to the host" net_ping

# ---- the image and the kernel's knobs --------------------------------------------------------

# read-only root (and uid 65534)
write_image() { echo x >/usr/bin/evil && echo "wrote /usr/bin/evil"; }
write_root() { touch /evil && echo "created /evil"; }
# uid 65534 (and the read-only root)
write_passwd() { echo 'evil::0:0::/:/bin/sh' >>/etc/passwd && echo "appended to /etc/passwd"; }
# uid 65534, /proc/sys read-only: only opened for writing (`: >>`), never written
core_pattern() { : >>/proc/sys/kernel/core_pattern && echo "opened core_pattern for writing"; }
# /sys/fs/cgroup read-only, uid 65534 (release_agent only opened; a new cgroup removed again)
cgroup_escape() {
	for d in /sys/fs/cgroup/*; do
		: 2>/dev/null >>"$d/release_agent" && { echo "opened $d/release_agent for writing"; return 0; }
		mkdir "$d/brig-escape" 2>/dev/null && rmdir "$d/brig-escape" && { echo "created a cgroup under $d"; return 0; }
	done
	echo "no release_agent or new cgroup under /sys/fs/cgroup"
	return 1
}
# uid 65534 and seccomp (syslog)
kernel_log() {
	out=$(dmesg 2>&1) && [ -n "$out" ] && { echo "$out" | head -n 1; return 0; }
	echo "$out"
	return 1
}

attempt "write the image: /usr/bin/evil" write_image
attempt "write the image: /evil" write_root
attempt "write /etc/passwd" write_passwd
attempt "/proc/sys/kernel/core_pattern (open for writing)" core_pattern
attempt "cgroup: release_agent or a new cgroup" cgroup_escape
attempt "read the kernel log (dmesg)" kernel_log

# ---- namespaces and mounts -------------------------------------------------------------------

# seccomp (the mount family), CAP_SYS_ADMIN dropped
mount_tmpfs() { mkdir -p /tmp/m && mount -t tmpfs none /tmp/m && umount /tmp/m && echo "mounted a tmpfs"; }
remount_root() { mount -o remount,rw / && echo "remounted / read-write"; }
# seccomp (unshare)
unshare_user() { unshare -r id -u && echo "in a new user namespace"; }
unshare_mount() { unshare -m true && echo "in a new mount namespace"; }
# seccomp (chroot), CAP_SYS_CHROOT dropped
chroot_root() { chroot / true && echo "chrooted"; }

attempt "mount a tmpfs" mount_tmpfs
attempt "remount / read-write" remount_root
attempt "unshare a user namespace (unshare -r)" unshare_user
attempt "unshare a mount namespace (unshare -m)" unshare_mount
attempt "chroot" chroot_root

# ---- identity and privileges -----------------------------------------------------------------

# uid 65534, no capabilities
become_root() { start-stop-daemon -S -c root -p /tmp/none.pid -x /bin/busybox -- id -u && echo "became root"; }
su_root() { su -c 'id -u' root </dev/null && echo "su worked"; }
# --cap-drop ALL: the bounding set is empty (a non-root uid alone would only empty CapEff)
capabilities() {
	bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)
	case $bnd in *[1-9a-f]*) echo "CapBnd: $bnd"; return 0 ;; esac
	echo "CapBnd is ${bnd:-unreadable}"
	return 1
}

attempt "setuid(0) (start-stop-daemon -c root)" become_root
attempt "su root" su_root
attempt "capabilities (CapBnd != 0)" capabilities

# ---- devices and the engine ------------------------------------------------------------------

# CAP_MKNOD dropped, uid 65534, seccomp (block and character devices)
mknod_disk() { mknod /tmp/sda b 8 0 && echo "created a block device node"; }
# nothing of the host mounted
engine_socket() {
	for s in /var/run/docker.sock /run/docker.sock /run/containerd/containerd.sock; do
		[ -S "$s" ] && { echo "$s is there"; return 0; }
	done
	socks=$(find / -xdev -type s 2>/dev/null | head -n 3)
	[ -n "$socks" ] && { echo "sockets: $socks"; return 0; }
	echo "no engine socket (and no unix socket at all) in the file system"
	return 1
}

attempt "/dev access: mknod a disk" mknod_disk
attempt "docker.sock / containerd.sock" engine_socket

# ---- /tmp: noexec, size ----------------------------------------------------------------------

# /tmp noexec
exec_script() { printf '#!/bin/sh\necho ran\n' >/tmp/x.sh && chmod 755 /tmp/x.sh && /tmp/x.sh; }
exec_copy() { cp /bin/busybox /tmp/busybox && chmod 755 /tmp/busybox && /tmp/busybox true && echo "ran /tmp/busybox"; }
# tmpfs_mb
fill_tmp() {
	out=$(dd if=/dev/zero of=/tmp/big bs=1M count=200 2>&1)
	rc=$?
	rm -f /tmp/big
	echo "$out" | grep -v records
	return $rc
}

attempt "execute a script written to /tmp" exec_script
attempt "execute a copy of busybox in /tmp" exec_copy
attempt "fill /tmp beyond its size (200 MiB)" fill_tmp

# ---- exhaustion ------------------------------------------------------------------------------

# nofile (hard limit)
# shellcheck disable=SC3045 # BusyBox ash has ulimit -n
raise_nofile() { ulimit -n 4096 && echo "open-files limit now $(ulimit -n)"; }
# nofile
open_files() {
	# `exec N<` that fails ends this subshell (a special builtin): the count so far is in /tmp
	(
		i=3
		while [ $i -lt 1000 ]; do
			eval "exec $i</dev/null"
			echo $i >>/tmp/fds
			i=$((i + 1))
		done
	)
	rc=$?
	echo "opened up to fd $(tail -n 1 /tmp/fds 2>/dev/null)"
	rm -f /tmp/fds
	return $rc
}
# pids_limit
fork_many() {
	# Background sleepers until fork fails ("can't fork" ends the inner subshell); then kill
	# them with builtins only (no fork is possible while they live).
	: >/tmp/forked
	(
		i=0
		while [ $i -lt 1000 ]; do
			sleep 30 &
			echo $! >>/tmp/forked
			i=$((i + 1))
		done
	) 2>/dev/null
	rc=$?
	n=0
	while read -r p; do
		kill -9 "$p" 2>/dev/null
		n=$((n + 1))
	done </tmp/forked
	rm -f /tmp/forked
	[ $rc -eq 0 ] && echo "all $n started" && return 0
	echo "$n started, then fork failed"
	return $rc
}
# memory_mb
eat_memory() {
	# a 16-byte string doubled 25 times: 512 MiB, twice the default limit, in one awk process
	# (BusyBox awk's string lengths are ints: 2 GiB would overflow), OOM-killed at the limit
	awk 'BEGIN { s = "0123456789abcdef"; for (i = 0; i < 25; i++) s = s s; print length(s) }'
	rc=$?
	[ $rc -gt 128 ] && echo "awk killed by signal $((rc - 128)) at the memory limit"
	return $rc
}

attempt "raise the open-files limit (ulimit -n)" raise_nofile
attempt "open 1000 files" open_files
attempt "fork 1000 processes" fork_many
# last: under gVisor the memory limit covers the sandbox's own kernel too, and reaching it ends
# the whole box
attempt "allocate 512 MiB of memory (awk)" eat_memory

echo "$n_blocked blocked, $n_open open"
