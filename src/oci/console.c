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
#include <sched.h>
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
#include <sys/wait.h>
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

/* The master of a new pty of the devpts under root (the container's, reached through pid 1's
 * root and resolved inside it: no symlink, no magic link, the container owns that tree),
 * checked to be a devpts ptmx, unlocked; its number in *ret_n */
static int ptmx_open(int root, unsigned *ret_n, struct cordon_error *err)
{
	struct open_how how = {.flags = O_RDWR | O_NOCTTY | O_CLOEXEC,
			       .resolve =
				   RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	_cleanup_close_ int m = -1;
	struct statfs sf;
	struct stat st;
	int unlock = 0;

	m = (int)syscall(SYS_openat2, root, "dev/pts/ptmx", &how, sizeof(how));
	if (m < 0)
		return cd_fail_errno(err, errno, "terminal", "the container's /dev/pts/ptmx");
	if (fstat(m, &st) < 0 || fstatfs(m, &sf) < 0)
		return cd_fail_errno(err, errno, "terminal", "fstat /dev/pts/ptmx");
	if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(5, 2) || sf.f_type != DEVPTS_SUPER_MAGIC)
		return cd_fail(err, ENOTTY, "terminal",
			       "the container's /dev/pts/ptmx is not a ptmx");
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0 || ioctl(m, TIOCGPTN, ret_n) < 0)
		return cd_fail_errno(err, errno, "terminal", "unlockpt");
	return CD_TAKE_FD(m);
}

/* The pty's slave, from the master itself: no path looked up in the container */
static int pty_peer(int master, struct cordon_error *err)
{
	int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);

	return slave < 0 ? cd_fail_errno(err, errno, "terminal", "TIOCGPTPEER") : slave;
}

/* The pty, as the container's uid and gid: devpts gives a new slave the opener's fs ids, and
 * the holder's are not mapped in the container (its ptys showed as the overflow id, 65534). A
 * child joins the container's user namespace (the holder made it, or is root: it may), takes
 * those ids there, opens the master and its peer (the peer opened by another's credentials
 * fails) and sends both back with the number; -EPERM or -EINVAL when the namespace or the ids
 * are not to be had (the caller opens the pty itself then). */
static int ptmx_open_as(int root, int userns, uid_t uid, gid_t gid, int ret_fd[2], unsigned *ret_n)
{
	_cleanup_close_ int a = -1, b = -1;
	int sv[2], fd[2] = {-1, -1}, status = 0;
	char cbuf[CMSG_SPACE(sizeof(fd))] = {0};
	int32_t res[2] = {0, 0}; /* -errno or 0, the pty's number */
	struct iovec iov = {res, sizeof(res)};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	a = sv[0], b = sv[1];
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* the child: system calls only (the holder may have threads) */
		unsigned n = 0;

		if (setns(userns, CLONE_NEWUSER) < 0 || syscall(SYS_setresgid, gid, gid, gid) < 0 ||
		    syscall(SYS_setresuid, uid, uid, uid) < 0) {
			res[0] = -errno;
		} else {
			fd[0] = ptmx_open(root, &n, NULL);
			fd[1] = fd[0] < 0 ? fd[0] : pty_peer(fd[0], NULL);
			res[0] = fd[1] < 0 ? fd[1] : 0;
			res[1] = (int32_t)n;
		}
		if (res[0] < 0) {
			mh.msg_control = NULL;
			mh.msg_controllen = 0;
		} else {
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(fd));
			memcpy(CMSG_DATA(cm), fd, sizeof(fd));
		}
		_exit(sendmsg(b, &mh, MSG_NOSIGNAL) < 0 ? 1 : 0);
	}
	b = cd_safe_close(b);
	ssize_t got = recvmsg(a, &mh, MSG_CMSG_CLOEXEC);
	int e = errno;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	cm = got > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(fd)))
		memcpy(fd, CMSG_DATA(cm), sizeof(fd));
	if (got != (ssize_t)sizeof(res) || res[0] < 0 || fd[0] < 0 || fd[1] < 0) {
		fd[0] = cd_safe_close(fd[0]);
		fd[1] = cd_safe_close(fd[1]);
		return got < 0 ? -e : res[0] < 0 ? res[0] : -EPROTO;
	}
	ret_fd[0] = fd[0];
	ret_fd[1] = fd[1];
	*ret_n = (unsigned)res[1];
	return 0;
}

int oci_console_send(int sock, int pidfd, pid_t pid1, uid_t uid, gid_t gid, unsigned short rows,
		     unsigned short cols, struct cordon_error *err)
{
	_cleanup_close_ int root = -1, userns = -1, master = -1, slave = -1;
	char path[64], name[32];
	int fd[2] = {-1, -1}, r;
	unsigned n = 0;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid1);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return cd_fail_errno(err, errno, "terminal", "%s", path);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid1);
	userns = open(path, O_RDONLY | O_CLOEXEC);
	if (userns < 0)
		return cd_fail_errno(err, errno, "terminal", "%s", path);
	/* both opened while the pidfd's process still had the pid: they are pid 1's */
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		return cd_fail_errno(err, errno, "terminal", "the container's pid 1 is gone");
	r = ptmx_open_as(root, userns, uid, gid, fd, &n);
	if (r == 0) {
		master = fd[0];
		slave = fd[1];
	} else {
		oci_log("debug", "terminal: a pty as uid %u gid %u of the container: %s; as ours",
			uid, gid, strerror(-r));
		master = ptmx_open(root, &n, err);
		if (master < 0)
			return master;
		slave = pty_peer(master, err);
		if (slave < 0)
			return slave;
	}
	if (rows && cols) {
		struct winsize ws = {.ws_row = rows, .ws_col = cols};

		if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
			return cd_fail_errno(err, errno, "terminal", "TIOCSWINSZ");
	}
	snprintf(name, sizeof(name), "/dev/pts/%u", n);
	r = send_master(sock, master, name, err);
	return r < 0 ? r : CD_TAKE_FD(slave);
}
