/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * console.c - process.terminal: a pty of the container's own /dev/pts whose slave becomes the
 * process's stdio and controlling terminal (CORDON_EXEC_TTY), whose master goes to the engine
 * over --console-socket (one message, SCM_RIGHTS, the pty's name as payload: runc's protocol,
 * which conmon and the containerd shim read). create and exec connect to the socket; the holder
 * opens the pty and sends the master. Runs in cordon-runtime and its holder.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <termios.h>
#include <unistd.h>

#include "runtime.h"
#include "util.h"

int oci_unix_path(const char *path, char *buf, size_t size, int *ret_dirfd,
		  struct cordon_error *err)
{
	_cleanup_free_ char *dir = NULL;
	const char *base;
	int fd;

	*ret_dirfd = -1;
	if (strlen(path) < size && strlen(path) < sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(buf, size, "%s", path);
		return 0;
	}
	base = strrchr(path, '/');
	if (!base || !base[1])
		return cd_fail(err, ENAMETOOLONG, "--console-socket", "%.100s...: too long", path);
	dir = strndup(path, (size_t)(base - path) + 1);
	if (!dir)
		return cd_fail(err, ENOMEM, "--console-socket", "out of memory");
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return cd_fail_errno(err, errno, "--console-socket", "%s", dir);
	if ((size_t)snprintf(buf, size, "/proc/self/fd/%d/%s", fd, base + 1) >= size) {
		close(fd);
		return cd_fail(err, ENAMETOOLONG, "--console-socket", "%s: name too long",
			       base + 1);
	}
	*ret_dirfd = fd;
	return 0;
}

static int send_master(int s, int master, const char *name, struct cordon_error *err)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {(void *)name, strlen(name)};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &master, sizeof(int));
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
		return cd_fail_errno(err, errno, "--console-socket", "send the terminal");
	return 0;
}

int oci_console_connect(const char *socket_path, struct cordon_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int s = -1;
	_cleanup_close_ int dirfd = -1;
	int r;

	if (!socket_path)
		return cd_fail(err, EINVAL, "--console-socket",
			       "process.terminal is true: a --console-socket is needed");
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return cd_fail_errno(err, errno, "--console-socket", "socket");
	r = oci_unix_path(socket_path, sa.sun_path, sizeof(sa.sun_path), &dirfd, err);
	if (r < 0)
		return r;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return cd_fail_errno(err, errno, "--console-socket", "connect %s", socket_path);
	return CD_TAKE_FD(s);
}

/* The master of a new pty of the container's devpts: its /dev/pts/ptmx, reached through pid 1's
 * root and resolved inside it (no symlink, no magic link: the container owns that tree), and
 * checked to be a devpts ptmx before it is used */
static int ptmx_open(pid_t pid1, struct cordon_error *err)
{
	struct open_how how = {.flags = O_RDWR | O_NOCTTY | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS};
	_cleanup_close_ int root = -1, m = -1;
	char path[64];
	struct statfs sf;
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid1);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return cd_fail_errno(err, errno, "terminal", "%s", path);
	m = (int)syscall(SYS_openat2, root, "dev/pts/ptmx", &how, sizeof(how));
	if (m < 0)
		return cd_fail_errno(err, errno, "terminal", "the container's /dev/pts/ptmx");
	if (fstat(m, &st) < 0 || fstatfs(m, &sf) < 0)
		return cd_fail_errno(err, errno, "terminal", "fstat /dev/pts/ptmx");
	if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(5, 2) || sf.f_type != DEVPTS_SUPER_MAGIC)
		return cd_fail(err, ENOTTY, "terminal", "the container's /dev/pts/ptmx is not a ptmx");
	return CD_TAKE_FD(m);
}

int oci_console_send(int sock, pid_t pid1, unsigned short rows, unsigned short cols,
		     struct cordon_error *err)
{
	_cleanup_close_ int master = ptmx_open(pid1, err);
	_cleanup_close_ int slave = -1;
	char name[32];
	int unlock = 0, r;
	unsigned n;

	if (master < 0)
		return master;
	if (ioctl(master, TIOCSPTLCK, &unlock) < 0 || ioctl(master, TIOCGPTN, &n) < 0)
		return cd_fail_errno(err, errno, "terminal", "unlockpt");
	/* the peer from the master itself: no path looked up in the container */
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return cd_fail_errno(err, errno, "terminal", "TIOCGPTPEER");
	if (rows && cols) {
		struct winsize ws = {.ws_row = rows, .ws_col = cols};

		if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
			return cd_fail_errno(err, errno, "terminal", "TIOCSWINSZ");
	}
	snprintf(name, sizeof(name), "/dev/pts/%u", n);
	r = send_master(sock, master, name, err);
	return r < 0 ? r : CD_TAKE_FD(slave);
}
