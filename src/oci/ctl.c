/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ctl.c - the holder's control socket, the client's side (start, kill, pause, resume, exec, ps
 * ask the holder over ROOT/ID/sock), and exec's request packed into one message. Runs in
 * cordon-runtime's commands (and the unpacking in the holder).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "frame.h"
#include "runtime.h"
#include "util.h"

/* ROOT/ID/sock, not followed: a socket owned by the directory's owner (root acting on a user's
 * --root, as Slurm does, must not be led by a symlink there to another container's holder) */
static int sock_open(int dirfd, uid_t *ret_owner, struct cordon_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat dir, root, st;

	if (fstat(dirfd, &dir) < 0 || fstatat(dirfd, "..", &root, 0) < 0)
		return cd_fail_errno(err, errno, "container", "its directory");
	if (dir.st_uid != root.st_uid)
		return cd_fail(err, EPERM, "container",
			       "its directory is not the --root owner's: refused");
	fd = openat(dirfd, OCI_SOCK_NAME, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cd_fail(err, ENOENT, "container", "its holder is gone (stopped)");
	if (fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "container", "its control socket");
	if (!S_ISSOCK(st.st_mode) || st.st_uid != dir.st_uid)
		return cd_fail(
		    err, EPERM, "container",
		    "its control socket is not a socket of the directory's owner: refused");
	*ret_owner = dir.st_uid;
	return CD_TAKE_FD(fd);
}

int oci_ctl_connect(int dirfd, struct cordon_error *err)
{
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), path = -1;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ucred peer;
	socklen_t n = sizeof(peer);
	uid_t owner = 0;

	if (s < 0)
		return cd_fail_errno(err, errno, "socket", "control socket");
	path = sock_open(dirfd, &owner, err);
	if (path < 0)
		return path;
	/* through the checked descriptor: no path length limit, nothing re-resolved; bounded (a
	 * full backlog of a server that never accepts would hold connect() for ever) */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", path);
	oci_ctl_bound(s, OCI_CTL_WAIT_S);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		if (e == ECONNREFUSED || e == ENOENT)
			return cd_fail(err, e, "container", "its holder is gone (stopped)");
		return cd_fail_errno(err, e, "container", "connect to its holder");
	}
	/* the holder runs as the directory's owner */
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &peer, &n) < 0 || peer.uid != owner)
		return cd_fail(err, EPERM, "container",
			       "its control socket's server is not the directory's owner: refused");
	oci_ctl_bound(s, 0); /* the caller bounds what it asks (exec streams) */
	return CD_TAKE_FD(s);
}

void oci_ctl_bound(int sock, unsigned seconds)
{
	struct timeval tv = {.tv_sec = seconds};

	(void)setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int oci_ctl_call(int sock, uint32_t type, const void *payload, size_t len, const int *fds,
		 unsigned n_fd, void *ret, size_t ret_size, size_t *ret_len,
		 struct cordon_error *err)
{
	struct cd_frame f = {.type = type, .part = {{(void *)payload, len}, {NULL, 0}}};
	size_t room =
	    ret_size > sizeof(struct cordon_error) ? ret_size : sizeof(struct cordon_error);
	_cleanup_free_ char *buf = calloc(1, room);
	int r;

	if (!buf)
		return cd_fail(err, ENOMEM, "container", "out of memory");
	for (unsigned i = 0; i < n_fd; i++)
		f.fd[i] = fds[i];
	f.n_fd = n_fd;
	r = cd_frame_send(sock, &f, 0);
	if (r < 0)
		return cd_fail_errno(err, -r, "container", "send to its holder");
	memset(&f, 0, sizeof(f));
	f.part[0].iov_base = buf;
	f.part[0].iov_len = room;
	r = cd_frame_recv(sock, &f, 0, 0, 0);
	if (r == 0)
		return cd_fail(err, ECONNRESET, "container", "its holder hung up (it stopped)");
	if (r < 0)
		return cd_fail_errno(err, -r, "container", "read its holder's answer");
	if (f.type == OCI_MSG_ERROR) {
		struct cordon_error remote;

		memcpy(&remote, buf, sizeof(remote));
		remote.step[sizeof(remote.step) - 1] = remote.msg[sizeof(remote.msg) - 1] = '\0';
		cd_error_clear(err);
		if (err)
			*err = remote;
		return -EIO;
	}
	if (f.type != OCI_MSG_OK && f.type != OCI_MSG_PIDS)
		return cd_fail(err, EPROTO, "container", "unexpected answer %u", f.type);
	if (ret)
		memcpy(ret, buf, f.len < ret_size ? f.len : ret_size);
	if (ret_len)
		*ret_len = f.len;
	return 0;
}

/* u32 flags, u32 argc, u32 envc, then argc + envc + 1 (cwd) NUL-ended strings */
char *oci_exec_pack(unsigned flags, unsigned short rows, unsigned short cols, char *const *argv,
		    char *const *env, const char *cwd, size_t *ret_len)
{
	uint32_t head[4] = {flags, (uint32_t)cd_strv_len(argv),
			    env ? (uint32_t)cd_strv_len(env) : 0, (uint32_t)rows << 16 | cols};
	size_t len = sizeof(head) + strlen(cwd ? cwd : "") + 1, at;
	char *buf;

	for (uint32_t i = 0; i < head[1]; i++)
		len += strlen(argv[i]) + 1;
	for (uint32_t i = 0; i < head[2]; i++)
		len += strlen(env[i]) + 1;
	buf = malloc(len);
	if (!buf)
		return NULL;
	memcpy(buf, head, sizeof(head));
	at = sizeof(head);
	for (uint32_t i = 0; i < head[1]; i++)
		at += (size_t)sprintf(buf + at, "%s", argv[i]) + 1;
	for (uint32_t i = 0; i < head[2]; i++)
		at += (size_t)sprintf(buf + at, "%s", env[i]) + 1;
	strcpy(buf + at, cwd ? cwd : "");
	*ret_len = len;
	return buf;
}

/* n strings from buf+*at, each NUL-ended within len: a NULL-ended vector of pointers into buf */
static char **strings_take(char *buf, size_t len, size_t *at, uint32_t n)
{
	char **v;

	if (n > len)
		return NULL;
	v = calloc((size_t)n + 1, sizeof(char *));
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		char *end = memchr(buf + *at, '\0', len - *at);

		if (*at >= len || !end) {
			free(v);
			return NULL;
		}
		v[i] = buf + *at;
		*at = (size_t)(end - buf) + 1;
	}
	return v;
}

int oci_exec_unpack(char *buf, size_t len, unsigned *ret_flags, unsigned short *ret_rows,
		    unsigned short *ret_cols, char ***ret_argv, char ***ret_env,
		    const char **ret_cwd)
{
	uint32_t head[4];
	size_t at = sizeof(head);
	char **argv, **env;

	if (len < sizeof(head) + 1 || buf[len - 1] != '\0')
		return -EBADMSG;
	memcpy(head, buf, sizeof(head));
	if (head[1] == 0)
		return -EBADMSG;
	argv = strings_take(buf, len, &at, head[1]);
	env = argv ? strings_take(buf, len, &at, head[2]) : NULL;
	if (!argv || !env || at >= len) {
		free(argv);
		free(env);
		return -EBADMSG;
	}
	*ret_flags = head[0];
	*ret_rows = (unsigned short)(head[3] >> 16);
	*ret_cols = (unsigned short)(head[3] & 0xffff);
	*ret_argv = argv;
	*ret_env = env;
	*ret_cwd = buf + at;
	return 0;
}
