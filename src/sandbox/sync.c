/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sync.c - one message, one datagram (see sync.h). Runs in both processes. */
#include <string.h>
#include <sys/socket.h>

#include "sync.h"
#include "util.h"

int cd_msg_send(int sock, uint32_t type, int32_t value, const struct cordon_error *err, int fd)
{
	struct cd_msg m = { .type = type, .value = value };

	if (err)
		m.err = *err;
	return cd_msg_send_msg(sock, &m, fd);
}

int cd_msg_send_msg(int sock, const struct cd_msg *msg, int fd)
{
	struct cd_msg m = *msg;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(m) ? 0 : -EIO;
}

int cd_msg_recv(int sock, struct cd_msg *m, int *ret_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	int resets = 0;
	ssize_t n;

	if (ret_fd)
		*ret_fd = -1;
	/* a peer that closed with a message of ours unread (pid 1 failing while START comes)
	 * is reported once, as ECONNRESET, before the messages it queued: read on to those */
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && (errno == EINTR || (errno == ECONNRESET && !resets++)));
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		int fd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
		if (ret_fd && *ret_fd < 0)
			*ret_fd = fd;
		else
			close(fd);
	}
	if (n != (ssize_t)sizeof(*m) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return -EPROTO;
	m->err.step[sizeof(m->err.step) - 1] = '\0';
	m->err.msg[sizeof(m->err.msg) - 1] = '\0';
	return 1;
}
