/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* policy_names.c - the named constants and errno names of the policy language. */
#include <errno.h>
#include <linux/sched.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <termios.h>

#include "policy.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

struct named {
	const char *name;
	uint64_t value;
};

#define N(x) { #x, (uint64_t)(x) }

static const struct named constants[] = {
	/* terminal ioctls: injection (TIOCSTI, TIOCLINUX) and what programs need */
	N(TIOCSTI), N(TIOCLINUX), N(TIOCCONS), N(TIOCSETD), N(TIOCGETD), N(TIOCSCTTY),
	N(TIOCNOTTY), N(TCGETS), N(TCSETS), N(TCSETSW), N(TCSETSF), N(TCGETA), N(TCSETA),
	N(TCSBRK), N(TCXONC), N(TCFLSH), N(TIOCGWINSZ), N(TIOCSWINSZ), N(TIOCGPGRP),
	N(TIOCSPGRP), N(TIOCGSID), N(TIOCOUTQ), N(TIOCINQ), N(TIOCGPTN), N(TIOCSPTLCK),
	N(TIOCGPTPEER), N(TIOCMGET), N(TIOCEXCL), N(TIOCNXCL),
	N(FIONREAD), N(FIONBIO), N(FIOCLEX), N(FIONCLEX), N(FIOASYNC), N(FIOQSIZE),
	/* clone and unshare flags */
	N(CLONE_VM), N(CLONE_FS), N(CLONE_FILES), N(CLONE_SIGHAND), N(CLONE_PIDFD),
	N(CLONE_PTRACE), N(CLONE_VFORK), N(CLONE_PARENT), N(CLONE_THREAD), N(CLONE_NEWNS),
	N(CLONE_SYSVSEM), N(CLONE_SETTLS), N(CLONE_PARENT_SETTID), N(CLONE_CHILD_CLEARTID),
	N(CLONE_UNTRACED), N(CLONE_CHILD_SETTID), N(CLONE_NEWCGROUP), N(CLONE_NEWUTS),
	N(CLONE_NEWIPC), N(CLONE_NEWUSER), N(CLONE_NEWPID), N(CLONE_NEWNET), N(CLONE_IO),
	N(CLONE_NEWTIME),
	/* socket families and types */
	N(AF_UNSPEC), N(AF_UNIX), N(AF_LOCAL), N(AF_INET), N(AF_INET6), N(AF_NETLINK),
	N(AF_PACKET), N(AF_KEY), N(AF_ALG), N(AF_VSOCK), N(AF_BLUETOOTH), N(AF_APPLETALK),
	N(AF_AX25), N(AF_X25), N(AF_IPX), N(AF_DECnet), N(AF_ROSE), N(AF_NETROM), N(AF_CAN),
	N(AF_TIPC), N(AF_RDS), N(AF_LLC), N(AF_IB), N(AF_MPLS), N(AF_XDP), N(AF_QIPCRTR),
	N(AF_KCM), N(AF_SMC), N(AF_PPPOX), N(AF_ATMPVC), N(AF_ATMSVC), N(AF_IEEE802154),
	N(AF_NFC), N(AF_CAIF), N(AF_PHONET), N(AF_IUCV), N(AF_RXRPC), N(AF_ISDN),
	N(AF_WANPIPE), N(AF_SECURITY), N(AF_ECONET), N(AF_IRDA), N(AF_NETBEUI), N(AF_ASH),
	N(AF_BRIDGE), N(AF_ATMPVC), N(AF_ROUTE),
	N(SOCK_STREAM), N(SOCK_DGRAM), N(SOCK_RAW), N(SOCK_SEQPACKET), N(SOCK_RDM),
	N(SOCK_PACKET), N(SOCK_NONBLOCK), N(SOCK_CLOEXEC),
	/* personality(2) */
	N(PER_LINUX), N(PER_LINUX32), N(PER_SVR4), N(ADDR_NO_RANDOMIZE), N(READ_IMPLIES_EXEC),
	N(MMAP_PAGE_ZERO), N(ADDR_COMPAT_LAYOUT), N(UNAME26), N(ADDR_LIMIT_32BIT),
	N(ADDR_LIMIT_3GB), N(SHORT_INODE), N(WHOLE_SECONDS), N(STICKY_TIMEOUTS),
	N(FDPIC_FUNCPTRS), { "PER_QUERY", 0xffffffffu },
	/* mmap, mprotect */
	N(PROT_NONE), N(PROT_READ), N(PROT_WRITE), N(PROT_EXEC), N(MAP_SHARED), N(MAP_PRIVATE),
	N(MAP_FIXED), N(MAP_ANONYMOUS),
	/* open flags and *at */
	N(O_RDONLY), N(O_WRONLY), N(O_RDWR), N(O_CREAT), N(O_EXCL), N(O_TRUNC), N(O_APPEND),
	N(O_DIRECTORY), N(O_NOFOLLOW), N(O_CLOEXEC), N(O_PATH), N(O_TMPFILE), N(AT_FDCWD),
	/* mode bits */
	N(S_ISUID), N(S_ISGID), N(S_ISVTX),
	/* prctl */
	N(PR_SET_NAME), N(PR_GET_NAME), N(PR_SET_PDEATHSIG), N(PR_SET_DUMPABLE),
	N(PR_GET_DUMPABLE), N(PR_SET_SECCOMP), N(PR_SET_NO_NEW_PRIVS), N(PR_CAPBSET_READ),
	N(PR_SET_PTRACER),
};

static const struct named errnos[] = {
	N(EPERM), N(ENOENT), N(ESRCH), N(EINTR), N(EIO), N(ENXIO), N(E2BIG), N(ENOEXEC),
	N(EBADF), N(ECHILD), N(EAGAIN), N(ENOMEM), N(EACCES), N(EFAULT), N(EBUSY), N(EEXIST),
	N(EXDEV), N(ENODEV), N(ENOTDIR), N(EISDIR), N(EINVAL), N(ENFILE), N(EMFILE), N(ENOTTY),
	N(ETXTBSY), N(EFBIG), N(ENOSPC), N(ESPIPE), N(EROFS), N(EMLINK), N(EPIPE), N(EDOM),
	N(ERANGE), N(ENOSYS), N(ENOTSUP), N(EOPNOTSUPP), N(EAFNOSUPPORT), N(EPROTONOSUPPORT),
	N(EADDRNOTAVAIL), N(ENETUNREACH), N(ECONNREFUSED), N(EHOSTUNREACH), N(ENOTSOCK),
	N(ELOOP), N(ENAMETOOLONG), N(ENOTEMPTY), N(ENODATA), N(ETIMEDOUT),
};

static const struct named *lookup(const struct named *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

bool cd_policy_constant(const char *name, uint64_t *ret)
{
	const struct named *c = lookup(constants, CD_ELEMENTSOF(constants), name);

	if (!c)
		return false;
	*ret = c->value;
	return true;
}

int cd_policy_errno(const char *name)
{
	const struct named *c = lookup(errnos, CD_ELEMENTSOF(errnos), name);

	return c ? (int)c->value : -1;
}

const char *cd_policy_errno_name(int e)
{
	/* EOPNOTSUPP == ENOTSUP and EAGAIN == EWOULDBLOCK: the first name in the table wins */
	for (size_t i = 0; i < CD_ELEMENTSOF(errnos); i++)
		if ((int)errnos[i].value == e)
			return errnos[i].name;
	return NULL;
}
