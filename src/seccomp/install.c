/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* install.c - install a compiled program (filter.h): in the command's process, the last step
 * before execve. A file of its own: cordon-init (static, libc only) links it without libseccomp. */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "filter.h"

int cd_filter_install(const struct cd_filter *f)
{
	struct sock_fprog prog = { .len = f->len, .filter = f->insns };
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			 f->notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0, &prog);

	return r < 0 ? -errno : (int)r;
}
