/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sigreset.c - signals back to their defaults before an exec (sigreset.h). libc only. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sigreset.h"

/* The hexadecimal mask after `key` in a /proc/PID/status text, or false */
static bool status_mask(const char *text, const char *key, uint64_t *ret)
{
	const char *p = strstr(text, key);
	char *end;

	if (!p)
		return false;
	errno = 0;
	*ret = strtoull(p + strlen(key), &end, 16);
	return !errno && end != p + strlen(key) && *end == '\n';
}

/* Into a buffer of the stack: no allocation after vfork */
uint64_t cd_signals_set(void)
{
	char buf[4096];
	uint64_t ign, cgt;
	ssize_t n = -1;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = '\0';
	return status_mask(buf, "\nSigIgn:\t", &ign) && status_mask(buf, "\nSigCgt:\t", &cgt)
		       ? ign | cgt
		       : UINT64_MAX;
}

void cd_reset_signals(void)
{
	uint64_t set = cd_signals_set();
	sigset_t none;

	for (int sig = 1; sig < NSIG && sig <= 64; sig++)
		if (set & (UINT64_C(1) << (sig - 1)))
			signal(sig, SIG_DFL); /* fails for SIGKILL, SIGSTOP and glibc's own: fine */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}
