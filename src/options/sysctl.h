/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysctl.h - the sysctls a sandbox may set: those of the namespaces it has of its own (its
 * network namespace's net.*, its IPC namespace's kernel.shm*, kernel.msg*, kernel.sem and
 * fs.mqueue.*). Anything else would change the host's. Pure: no I/O (tests/unit/test-sysctl.c).
 * The supervisor checks; pid 1 writes them (src/sandbox/child.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CD_SYSCTL_MAX       64  /* per sandbox */
#define CD_SYSCTL_KEY_MAX   200 /* a key, dots or slashes */
#define CD_SYSCTL_VALUE_MAX 256 /* a value, in bytes */

/* A key checked: its path below /proc/sys, built from its components alone ("net/ipv4/
 * ip_forward"), and whether it is the network namespace's. */
struct cd_sysctl_key {
	char path[CD_SYSCTL_KEY_MAX + 1];
	bool net;
};

/* key as sysctl(8) takes it: dotted ("net.ipv4.ip_forward") or, when it has a slash, slashed
 * ("net/ipv4/conf/eth0.1/forwarding": dots then belong to a component). Components are made of
 * [A-Za-z0-9_-] (and dots in the slashed form), never empty, "." or "..". 0, or -EINVAL with
 * why (a static string: "not namespaced: it would change the host: refused", ...). */
int cd_sysctl_key_check(const char *key, struct cd_sysctl_key *ret, const char **why);
/* A value: 1 to CD_SYSCTL_VALUE_MAX bytes of printable ASCII or tabs (no newline: a second
 * line would be a second write). 0, or -EINVAL with why. */
int cd_sysctl_value_check(const char *value, const char **why);

/* net.ipv4.ping_group_range "LOW HIGH" as the kernel reads it, clamped to the one gid the
 * sandbox's user namespace maps (the kernel refuses a range with an unmapped end: EINVAL): "G G"
 * when gid is in it; "" when it is not or the range is empty: nobody, which no range of one
 * mapped gid can say, and which is a fresh network namespace's default ("1 0"): nothing to
 * write. *ret_clamped: what is written differs from what was asked. 0, or -EINVAL with why when
 * value is not two numbers. */
int cd_sysctl_ping_clamp(const char *value, gid_t gid, char ret[32], bool *ret_clamped,
			 const char **why);
/* The key of ping_group_range in path form. */
#define CD_SYSCTL_PING_PATH "net/ipv4/ping_group_range"
