#!/bin/sh
# enumerate.sh - what a program inside the box can learn about where it runs.
#
#   brig run -l shell tests/integration/enumerate.sh
#
# A container-enumeration pass modelled on the checks of deepce.sh
# (github.com/stealthcopter/deepce: container ID from cgroups, hostname, IPs, DNS servers, host
# IP from the default route, docker.sock on disk and in mountinfo, other mounts and host
# user names in mount paths, environment of every process, secrets in it, home directories,
# files in /, container tools, privileged mode via fdisk), plus the network view from /proc/net
# and the capability sets.  It only gathers; tests/integration/escape.py compares the output
# with the host it runs on.  Output: one "KEY<TAB>VALUE" line per fact.
#
# Written for BusyBox ash (brig's shell image); no network probes beyond one DNS lookup.

# shellcheck disable=SC2012 # ls of known directories: plain names, one a line

out() { printf '%s\t%s\n' "$1" "$2"; }
# every line of standard input under one key
each() { while IFS= read -r line || [ -n "$line" ]; do out "$1" "$line"; done; }

# -- the kernel (shared with the host by design under runc) --
out uname "$(uname -a)"
out kernel_cmdline "$(cat /proc/cmdline 2>&1)"
out cpu "$(grep -m 1 'model name' /proc/cpuinfo 2>&1)"
dmesg 2>&1 | head -n 3 | each kernel_log

# -- names and the resolver --
out hostname "$(hostname)"
out etc_hostname "$(cat /etc/hostname 2>&1)"
out domainname "$(cat /proc/sys/kernel/domainname 2>/dev/null)"
each resolv </etc/resolv.conf
each hosts </etc/hosts
nslookup example.com 2>&1 | each dns_lookup

# -- identity and privileges --
out id "$(id)"
grep -E '^(Cap|NoNewPrivs|Seccomp)' /proc/self/status | each status

# -- environment: this shell's and every visible process's (PID 1's is what the engine set) --
env | each env
for p in /proc/[0-9]*; do
	tr '\0' '\n' <"$p/environ" 2>/dev/null | each environ
done

# -- cgroups and mounts (deepce: container ID, docker.sock mounted, other mounts) --
each cgroup </proc/1/cgroup
out cpuset "$(cat /proc/1/cpuset 2>&1)"
each mountinfo </proc/self/mountinfo

# -- the network as the box sees it --
tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | each iface
ls /sys/class/net 2>&1 | each sys_net
ip addr 2>&1 | each ip_addr
each if_inet6 </proc/net/if_inet6
awk '/\|-- / { a = $2 } /\/32 host LOCAL/ { print a }' /proc/net/fib_trie 2>/dev/null | sort -u | each local_ipv4
tail -n +2 /proc/net/route | each route
each route6 </proc/net/ipv6_route
tail -n +2 /proc/net/arp | each arp
for f in tcp tcp6 udp udp6 raw raw6 unix; do
	tail -n +2 "/proc/net/$f" 2>/dev/null | each "socket_$f"
done

# -- the file system (deepce: sock, interesting files, home dirs, secrets, tools) --
find / -xdev -type s 2>/dev/null | each unix_socket_file
for s in /var/run/docker.sock /run/docker.sock /run/containerd/containerd.sock; do
	[ -e "$s" ] && out engine_socket "$s"
done
ls -a / | each root_entry
for f in /home/* /home/.[!.]* /run/secrets/* /run/secrets/.[!.]*; do
	[ -e "$f" ] && out user_file "$f"
done
{
	env
	for p in /proc/[0-9]*; do tr '\0' '\n' <"$p/environ" 2>/dev/null; done
} | grep -i 'pass\|secret\|key\|token' | sort -u | each secret_env
for t in docker kubectl ctr crictl runc containerd podman lxc curl; do
	command -v "$t" >/dev/null 2>&1 && out tool "$(command -v "$t")"
done
fdisk -l 2>/dev/null | each disk
out end 1
