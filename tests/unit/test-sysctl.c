/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-sysctl.c - which sysctls a sandbox may set (sysctl.h): the namespaced keys and their
 * paths below /proc/sys, the refusals (the host's keys, "..", slashes that climb, odd
 * characters), values, podman's ping_group_range clamped to the one gid mapped, and the public
 * setter (cordon_config_set_sysctl). TAP.
 */
#include <string.h>

#include "config.h"
#include "sysctl.h"
#include "util.h"

#include "../lib/tap.h"

static const char *path_of(const char *key)
{
	static struct cd_sysctl_key k;
	const char *why = NULL;

	memset(&k, 0, sizeof(k));
	if (cd_sysctl_key_check(key, &k, &why) < 0)
		return why;
	return k.path;
}

static void test_keys(void)
{
	static const struct {
		const char *key, *want;
	} cases[] = {
		{ "net.ipv4.ip_unprivileged_port_start", "net/ipv4/ip_unprivileged_port_start" },
		{ "net.ipv4.ping_group_range", "net/ipv4/ping_group_range" },
		{ "net/ipv4/conf/eth0.100/forwarding", "net/ipv4/conf/eth0.100/forwarding" },
		{ "net.core.somaxconn", "net/core/somaxconn" },
		{ "kernel.shmmax", "kernel/shmmax" },
		{ "kernel/msgmax", "kernel/msgmax" },
		{ "kernel.sem", "kernel/sem" },
		{ "kernel.shm_rmid_forced", "kernel/shm_rmid_forced" },
		{ "kernel.msg_next_id", "kernel/msg_next_id" },
		{ "fs.mqueue.msg_max", "fs/mqueue/msg_max" },
		{ "vm.swappiness", "not namespaced: it would change the host: refused" },
		{ "kernel.pid_max", "not namespaced: it would change the host: refused" },
		{ "kernel.core_pattern", "not namespaced: it would change the host: refused" },
		{ "user.max_user_namespaces", "not namespaced: it would change the host: refused" },
		{ "kernel.shmmax.x", "not namespaced: it would change the host: refused" },
		{ "fs.mqueue", "not namespaced: it would change the host: refused" },
		{ "fs.mqueue.a.b", "not namespaced: it would change the host: refused" },
		{ "net", "not namespaced: it would change the host: refused" },
		{ "kernel.hostname", "the hostname is config.json's hostname (the UTS namespace's "
				     "domain name stays \"(none)\"): refused" },
		{ "net.ipv4..ip_forward",
		  "not a sysctl key (an empty, \".\" or \"..\" component): refused" },
		{ "net/ipv4/../../kernel/core_pattern",
		  "not a sysctl key (an empty, \".\" or \"..\" component): refused" },
		{ "net/./ipv4/ip_forward",
		  "not a sysctl key (an empty, \".\" or \"..\" component): refused" },
		{ "/net/ipv4/ip_forward",
		  "not a sysctl key (an empty, \".\" or \"..\" component): refused" },
		{ "net.ipv4.ip_forward.", "not a sysctl key (an empty, \".\" or \"..\" component): "
					  "refused" },
		{ "net.ipv4/../../vm/swappiness",
		  "not a sysctl key (an empty, \".\" or \"..\" component): refused" },
		{ "net.ipv4.ip forward", "not a sysctl key (components of A-Z a-z 0-9 _ -, "
					 "separated by dots or slashes): refused" },
		{ "net.ipv4.a\nb", "not a sysctl key (components of A-Z a-z 0-9 _ -, "
				   "separated by dots or slashes): refused" },
		{ "", "not a sysctl key (1 to 200 characters)" },
	};

	for (size_t i = 0; i < CD_ELEMENTSOF(cases); i++)
		is_str(path_of(cases[i].key), cases[i].want, "key %zu", i);
	{
		struct cd_sysctl_key k;
		const char *why;

		ok(cd_sysctl_key_check("net.ipv4.ip_forward", &k, &why) == 0 && k.net,
		   "net.*: the network namespace's");
		ok(cd_sysctl_key_check("kernel.shmmax", &k, &why) == 0 && !k.net,
		   "kernel.shmmax: not the network namespace's");
	}
}

static void test_values(void)
{
	char big[CD_SYSCTL_VALUE_MAX + 2];
	const char *why = NULL;

	ok(cd_sysctl_value_check("0 2147483647", &why) == 0, "a range");
	ok(cd_sysctl_value_check("4096\t87380\t6291456", &why) == 0, "tabs");
	ok(cd_sysctl_value_check("1\n2", &why) < 0, "a newline: refused");
	is_str(why, "a newline or control character in the value: refused", "why");
	ok(cd_sysctl_value_check("", &why) < 0, "empty: refused");
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ok(cd_sysctl_value_check(big, &why) < 0, "257 bytes: refused");
	big[CD_SYSCTL_VALUE_MAX] = '\0';
	ok(cd_sysctl_value_check(big, &why) == 0, "256 bytes");
}

static void test_ping(void)
{
	static const struct {
		const char *value;
		gid_t gid;
		const char *want;
		bool clamped;
	} cases[] = {
		{ "0 0", 0, "0 0", false },
		{ "0 2147483647", 0, "0 0", true },
		{ "0 2147483647", 1000, "1000 1000", true },
		{ "0 0", 1000, "", true },
		{ "1 0", 0, "", false },
		{ "5 10", 11, "", true },
		{ " 5\t10 ", 7, "7 7", true },
		{ "1000 1000", 1000, "1000 1000", false },
	};
	const char *why = NULL;
	char out[32];
	bool clamped;

	for (size_t i = 0; i < CD_ELEMENTSOF(cases); i++) {
		int r = cd_sysctl_ping_clamp(cases[i].value, cases[i].gid, out, &clamped, &why);

		ok(r == 0 && !strcmp(out, cases[i].want) && clamped == cases[i].clamped,
		   "ping_group_range \"%s\", gid %u: \"%s\"%s", cases[i].value, cases[i].gid,
		   cases[i].want, cases[i].clamped ? ", clamped" : "");
	}
	ok(cd_sysctl_ping_clamp("0", 0, out, &clamped, &why) < 0, "one number: refused");
	ok(cd_sysctl_ping_clamp("0 x", 0, out, &clamped, &why) < 0, "not a number: refused");
	ok(cd_sysctl_ping_clamp("0 4294967296", 0, out, &clamped, &why) < 0,
	   "above 2147483647: refused");
	ok(cd_sysctl_ping_clamp("0 1 2", 0, out, &clamped, &why) < 0, "three: refused");
}

static void test_setter(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };

	ok(cordon_config_set_sysctl(c, "net.ipv4.ip_forward", "1", &err) == 0, "set net.*");
	ok(cordon_config_set_sysctl(c, "net/ipv4/ip_forward", "0", &err) == 0, "again, slashed");
	ok(cordon_config_set_sysctl(c, "kernel.shmmax", "1048576", &err) == 0, "set kernel.shmmax");
	is_uint(c->sysctl.n, 2, "the same file twice: one entry");
	is_str(c->sysctl.v[0].value, "0", "the later value");
	is_str(c->sysctl.v[0].path, "net/ipv4/ip_forward", "its path");
	ok(c->sysctl.v[0].net && !c->sysctl.v[1].net, "net.* marked");
	ok(cordon_config_set_sysctl(c, "vm.swappiness", "10", &err) < 0, "vm.swappiness refused");
	is_str(err.msg, "vm.swappiness: not namespaced: it would change the host: refused",
	       "naming the key");
	memset(&err, 0, sizeof(err)); /* the first error stays: a fresh one */
	ok(cordon_config_set_sysctl(c, "kernel.shmmax", "1\n2", &err) < 0, "a newline refused");
	is_str(err.msg, "kernel.shmmax: a newline or control character in the value: refused",
	       "naming the key");
	memset(&err, 0, sizeof(err));
	ok(cordon_config_set_sysctl(c, "net.a\nb", "1", &err) < 0, "a newline in a key refused");
	is_str(err.msg, "(a key with a space or control character): not a sysctl key (components "
			"of A-Z a-z 0-9 _ -, separated by dots or slashes): refused",
	       "the key not shown");
	is_uint(c->sysctl.n, 2, "nothing added by a refusal");
	cordon_config_free(c);
}

int main(void)
{
	test_keys();
	test_values();
	test_ping();
	test_setter();
	return done_testing();
}
