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

# ---- network ---------------------------------------------------------------------------------

net_tcp() { nc -w 2 1.1.1.1 53 </dev/null && echo "connected"; }
# nslookup prints "Address: ..." lines for each answer (and exits 0 on NXDOMAIN as well)
lookup() {
	out=$(nslookup example.com "$@" 2>&1)
	echo "$out" | grep -q '^Address.*[0-9]' && return 0
	echo "$out"
	return 1
}
net_dns() { lookup; }
net_dns_direct() { lookup 8.8.8.8; }
net_ping() { ping -c 1 -W 2 1.1.1.1; }
net_docker_tcp() { nc -w 2 172.17.0.1 2375 </dev/null && echo "connected"; }
net_route() {
	routes=$(ip route 2>&1)
	echo "$routes" | grep -q default && { echo "$routes"; return 0; }
	echo "no default route: ${routes:-no routes}"
	return 1
}

attempt "network: TCP connect to 1.1.1.1:53" net_tcp
attempt "network: DNS lookup" net_dns
attempt "network: UDP DNS query to 8.8.8.8" net_dns_direct
attempt "network: ICMP ping 1.1.1.1" net_ping
attempt "network: Docker API at 172.17.0.1:2375" net_docker_tcp
attempt "network: a default route exists" net_route

# ---- the image and the kernel's knobs --------------------------------------------------------

write_image() { echo x >/usr/bin/evil && echo "wrote /usr/bin/evil"; }
write_root() { touch /evil && echo "created /evil"; }
write_passwd() { echo 'evil::0:0::/:/bin/sh' >>/etc/passwd && echo "appended to /etc/passwd"; }
sysrq() { echo h >/proc/sysrq-trigger && echo "wrote /proc/sysrq-trigger"; }
core_pattern() { echo '|/tmp/x' >/proc/sys/kernel/core_pattern && echo "wrote core_pattern"; }
cgroup_escape() {
	for d in /sys/fs/cgroup/*; do
		echo /tmp/x 2>/dev/null >"$d/release_agent" && { echo "wrote $d/release_agent"; return 0; }
		mkdir "$d/brig-escape" 2>/dev/null && { echo "created $d/brig-escape"; return 0; }
	done
	echo "no release_agent or new cgroup under /sys/fs/cgroup"
	return 1
}
# (to the current time: harmless should it work; BusyBox date reports a failure but exits 0)
set_clock() {
	out=$(date -s "$(date '+%Y-%m-%d %H:%M:%S')" 2>&1 >/dev/null)
	[ -z "$out" ] && echo "set the clock" && return 0
	echo "$out"
	return 1
}
kernel_log() {
	out=$(dmesg 2>&1) && [ -n "$out" ] && { echo "$out" | head -n 1; return 0; }
	echo "$out"
	return 1
}

attempt "write the image: /usr/bin/evil" write_image
attempt "write the image: /evil" write_root
attempt "write /etc/passwd" write_passwd
attempt "/proc/sysrq-trigger" sysrq
attempt "write /proc/sys/kernel/core_pattern" core_pattern
attempt "cgroup release_agent / new cgroup" cgroup_escape
attempt "set the host clock (date -s)" set_clock
attempt "read the kernel log (dmesg)" kernel_log

# ---- namespaces and mounts -------------------------------------------------------------------

mount_tmpfs() { mkdir -p /tmp/m && mount -t tmpfs none /tmp/m && echo "mounted a tmpfs"; }
remount_root() { mount -o remount,rw / && echo "remounted / read-write"; }
unshare_user() { unshare -r id -u && echo "in a new user namespace"; }
unshare_mount() { unshare -m true && echo "in a new mount namespace"; }
chroot_root() { chroot / true && echo "chrooted"; }

attempt "mount a tmpfs" mount_tmpfs
attempt "remount / read-write" remount_root
attempt "unshare a user namespace (unshare -r)" unshare_user
attempt "unshare a mount namespace (unshare -m)" unshare_mount
attempt "chroot" chroot_root

# ---- identity and privileges -----------------------------------------------------------------

become_root() { start-stop-daemon -S -c root -x /bin/id -- -u && echo "became root"; }
su_root() { su -c 'id -u' root </dev/null && echo "su worked"; }
suid_binaries() {
	found=$(find / -xdev -type f -perm -4000 2>/dev/null)
	for f in $found; do
		"$f" --help >/dev/null 2>&1 && { echo "$f ran set-uid"; return 0; }
	done
	echo "$(echo "$found" | grep -c .) set-uid binaries, none usable (no-new-privileges)"
	return 1
}
capabilities() {
	eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
	case $eff in *[1-9a-f]*) echo "CapEff: $eff"; return 0 ;; esac
	echo "CapEff is ${eff:-unreadable}"
	return 1
}

attempt "setuid(0) (start-stop-daemon -c root)" become_root
attempt "su root" su_root
attempt "setuid binary on the image" suid_binaries
attempt "capabilities (CapEff != 0)" capabilities

# ---- devices and the engine ------------------------------------------------------------------

mknod_disk() { mknod /tmp/sda b 8 0 && echo "created a block device node"; }
host_memory() {
	for f in /dev/mem /proc/kcore; do
		[ -n "$(head -c 16 "$f" 2>/dev/null | od -An -c)" ] && { echo "read $f"; return 0; }
	done
	echo "neither /dev/mem nor /proc/kcore readable"
	return 1
}
see_disks() {
	out=$(fdisk -l 2>/dev/null)
	[ -n "$out" ] && { echo "$out" | head -n 1; return 0; }
	echo "fdisk sees no disk"
	return 1
}
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
attempt "read host memory (/dev/mem, /proc/kcore)" host_memory
attempt "see the host's disks (fdisk -l)" see_disks
attempt "docker.sock / containerd.sock" engine_socket

# ---- /tmp: noexec, size ----------------------------------------------------------------------

exec_script() { printf '#!/bin/sh\necho ran\n' >/tmp/x.sh && chmod 755 /tmp/x.sh && /tmp/x.sh; }
exec_copy() { cp /bin/busybox /tmp/bb && chmod 755 /tmp/bb && /tmp/bb true && echo "ran /tmp/bb"; }
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

# shellcheck disable=SC3045 # BusyBox ash has ulimit -n
raise_nofile() { ulimit -n 4096 && echo "open-files limit now $(ulimit -n)"; }
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
eat_memory() {
	# a 16-byte string doubled 26 times: 1 GiB in one awk process (BusyBox awk's string
	# lengths are ints: 2 GiB would overflow), OOM-killed at the limit
	awk 'BEGIN { s = "0123456789abcdef"; for (i = 0; i < 26; i++) s = s s; print length(s) }'
	rc=$?
	[ $rc -gt 128 ] && echo "awk killed by signal $((rc - 128)) at the memory limit"
	return $rc
}

attempt "raise the open-files limit (ulimit -n)" raise_nofile
attempt "open 1000 files" open_files
attempt "fork 1000 processes" fork_many
# last: under gVisor the memory limit covers the sandbox's own kernel too, and reaching it ends
# the whole box
attempt "allocate 1 GiB of memory (awk)" eat_memory

echo "$n_blocked blocked, $n_open open"
