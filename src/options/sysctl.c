/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysctl.c - which sysctls a sandbox may set, and their paths below /proc/sys (sysctl.h). Runs in
 * the supervisor. Pure.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysctl.h"
#include "util.h"

/* The IPC namespace's (ipc/ipc_sysctl.c); fs.mqueue.* are too (ipc/mq_sysctl.c). */
static const char *const ipc_keys[] = {
	"shmmax", "shmall", "shmmni",	   "shm_rmid_forced", "msgmax",	     "msgmnb",
	"msgmni", "sem",    "auto_msgmni", "msg_next_id",     "sem_next_id", "shm_next_id",
};

static bool component_char(char ch, bool slashed)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '-' || (slashed && ch == '.');
}

/* Split key into path's components; n of them. */
static int split(const char *key, char *path, size_t *ret_n, const char **why)
{
	bool slashed = strchr(key, '/') != NULL;
	char sep = slashed ? '/' : '.';
	size_t len = strlen(key), n = 0, start = 0;

	if (len == 0 || len > CD_SYSCTL_KEY_MAX) {
		*why = "not a sysctl key (1 to 200 characters)";
		return -EINVAL;
	}
	for (size_t i = 0; i <= len; i++) {
		if (i < len && key[i] != sep) {
			if (!component_char(key[i], slashed)) {
				*why = "not a sysctl key (components of A-Z a-z 0-9 _ -, "
				       "separated by dots or slashes): refused";
				return -EINVAL;
			}
			path[i] = key[i];
			continue;
		}
		if (i == start || (i - start == 1 && key[start] == '.') ||
		    (i - start == 2 && key[start] == '.' && key[start + 1] == '.')) {
			*why = "not a sysctl key (an empty, \".\" or \"..\" component): refused";
			return -EINVAL;
		}
		path[i] = i < len ? '/' : '\0';
		start = i + 1;
		n++;
	}
	*ret_n = n;
	return 0;
}

int cd_sysctl_key_check(const char *key, struct cd_sysctl_key *ret, const char **why)
{
	struct cd_sysctl_key k = { 0 };
	size_t n;
	int r = split(key, k.path, &n, why);

	if (r < 0)
		return r;
	if (n >= 2 && !strncmp(k.path, "net/", 4)) {
		k.net = true;
		*ret = k;
		return 0;
	}
	if (n == 3 && !strncmp(k.path, "fs/mqueue/", 10)) {
		*ret = k;
		return 0;
	}
	if (n == 2 && !strncmp(k.path, "kernel/", 7)) {
		const char *name = k.path + 7;

		if (!strcmp(name, "hostname") || !strcmp(name, "domainname")) {
			*why = "the hostname is config.json's hostname (the UTS namespace's "
			       "domain name stays \"(none)\"): refused";
			return -EINVAL;
		}
		for (size_t i = 0; i < CD_ELEMENTSOF(ipc_keys); i++)
			if (!strcmp(name, ipc_keys[i])) {
				*ret = k;
				return 0;
			}
	}
	*why = "not namespaced: it would change the host: refused";
	return -EINVAL;
}

int cd_sysctl_value_check(const char *value, const char **why)
{
	size_t len = strlen(value);

	if (len == 0 || len > CD_SYSCTL_VALUE_MAX) {
		*why = "not a sysctl value (1 to 256 bytes)";
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		if (value[i] != '\t' && (value[i] < 0x20 || value[i] > 0x7e)) {
			*why = "a newline or control character in the value: refused";
			return -EINVAL;
		}
	return 0;
}

/* A gid as the kernel's proc_dointvec-style reader takes it: decimal, spaces around. */
static int read_gid(const char **p, uint64_t *ret)
{
	char *end;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*ret = strtoull(*p, &end, 10);
	if (errno || *ret > INT32_MAX)
		return -EINVAL;
	*p = end;
	return 0;
}

int cd_sysctl_ping_clamp(const char *value, gid_t gid, char ret[32], bool *ret_clamped,
			 const char **why)
{
	uint64_t lo, hi;
	const char *p = value;

	if (read_gid(&p, &lo) < 0 || read_gid(&p, &hi) < 0 || p[strspn(p, " \t")] != '\0') {
		*why = "not a range of gids (\"LOW HIGH\", 0 to 2147483647)";
		return -EINVAL;
	}
	if (lo <= gid && gid <= hi)
		snprintf(ret, 32, "%u %u", (unsigned)gid, (unsigned)gid);
	else /* nobody: no range of one mapped gid says it ("1 0" has an unmapped end) */
		ret[0] = '\0';
	/* an empty range (LOW above HIGH) is "nobody" as asked */
	*ret_clamped = !((lo == gid && hi == gid) || lo > hi);
	return 0;
}
