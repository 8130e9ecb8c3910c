/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * console.c - process.terminal: a pty whose slave becomes the process's stdio and controlling
 * terminal (CORDON_EXEC_TTY), whose master goes to the engine over --console-socket (one
 * message, SCM_RIGHTS, the pty's name as payload: runc's protocol, which conmon and the
 * containerd shim read). Runs in cordon-runtime's create, run and exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
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

static int send_master(const char *socket_path, int master, const char *name,
		       struct cordon_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	_cleanup_close_ int dirfd = -1;
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {(void *)name, strlen(name)};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int r;

	if (s < 0)
		return cd_fail_errno(err, errno, "--console-socket", "socket");
	r = oci_unix_path(socket_path, sa.sun_path, sizeof(sa.sun_path), &dirfd, err);
	if (r < 0)
		return r;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return cd_fail_errno(err, errno, "--console-socket", "connect %s", socket_path);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &master, sizeof(int));
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
		return cd_fail_errno(err, errno, "--console-socket", "send to %s", socket_path);
	return 0;
}

int oci_console_open(const char *socket_path, unsigned short rows, unsigned short cols,
		     struct cordon_error *err)
{
	_cleanup_close_ int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	_cleanup_close_ int slave = -1;
	char name[PATH_MAX];
	int r;

	if (!socket_path)
		return cd_fail(err, EINVAL, "--console-socket",
			       "process.terminal is true: a --console-socket is needed");
	if (master < 0)
		return cd_fail_errno(err, errno, "terminal", "posix_openpt");
	if (grantpt(master) < 0 || unlockpt(master) < 0 || ptsname_r(master, name, sizeof(name)))
		return cd_fail_errno(err, errno, "terminal", "unlockpt");
	slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return cd_fail_errno(err, errno, "terminal", "%s", name);
	if (rows && cols) {
		struct winsize ws = {.ws_row = rows, .ws_col = cols};

		if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
			return cd_fail_errno(err, errno, "terminal", "TIOCSWINSZ");
	}
	r = send_master(socket_path, master, name, err);
	if (r < 0)
		return r;
	return CD_TAKE_FD(slave);
}
