/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frame.c - one framed message, one record of a SOCK_SEQPACKET socket (frame.h). Runs in every
 * process: libc only. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"

/* Room for CD_FRAME_MAX_FD descriptors exactly: the kernel cuts more short (MSG_CTRUNC) */
union frame_ctl {
	char buf[CMSG_SPACE(sizeof(int) * CD_FRAME_MAX_FD)];
	struct cmsghdr align;
};

void cd_frame_close(struct cd_frame *f)
{
	int saved = errno;

	for (unsigned i = 0; i < f->n_fd; i++)
		if (f->fd[i] >= 0)
			close(f->fd[i]);
	f->n_fd = 0;
	errno = saved;
}

int cd_frame_send(int sock, const struct cd_frame *f, int flags)
{
	size_t len = f->part[0].iov_len + f->part[1].iov_len;
	struct cd_frame_hdr h = { .type = f->type, .len = (uint32_t)len, .n_fd = f->n_fd };
	struct iovec iov[3] = { { &h, sizeof(h) }, f->part[0], f->part[1] };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3 };
	union frame_ctl ctl;
	ssize_t n;

	if (f->n_fd > CD_FRAME_MAX_FD)
		return -EINVAL;
	if (len > UINT32_MAX)
		return -EMSGSIZE;
	if (f->n_fd) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * f->n_fd);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * f->n_fd);
		memcpy(CMSG_DATA(c), f->fd, sizeof(int) * f->n_fd);
	}
	do
		n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* a record goes whole or not at all: anything else is not a socket of ours */
	return (size_t)n == sizeof(h) + len ? 0 : -EIO;
}

/* recvmsg, EINTR retried. A peer that closed with a frame of ours unread is reported once, as
 * ECONNRESET, before the frames it sent us: those are read on (then EOF). */
static ssize_t recv_record(int sock, struct msghdr *mh, size_t ctl_size, int flags)
{
	bool reset = false;

	for (;;) {
		ssize_t n;

		mh->msg_controllen = ctl_size;
		mh->msg_flags = 0;
		n = recvmsg(sock, mh, flags | MSG_CMSG_CLOEXEC);
		if (n >= 0)
			return n;
		if (errno == ECONNRESET && !reset)
			reset = true;
		else if (errno != EINTR)
			return -errno;
	}
}

/* Every descriptor that arrived into f (ours to close from now on); false when there were more
 * than f holds, closed here (a guard: the control buffer holds CD_FRAME_MAX_FD, and the kernel
 * cuts more short itself). */
static bool take_fds(struct msghdr *mh, struct cd_frame *f)
{
	bool all = true;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (f->n_fd < CD_FRAME_MAX_FD) {
				f->fd[f->n_fd++] = fd;
			} else {
				close(fd);
				all = false;
			}
		}
	}
	return all;
}

/* Whether the record read is one whole frame as the receiver takes it (frame.h's codes). */
static int check_frame(const struct msghdr *mh, size_t n, const struct cd_frame_hdr *h,
		       const struct cd_frame *f, size_t min_len, unsigned max_fd)
{
	size_t room = f->part[0].iov_len + f->part[1].iov_len;

	if (n == 0 && f->n_fd == 0 && !(mh->msg_flags & MSG_CTRUNC))
		return 0; /* nothing at all: the peer closed (peer_closed() told an empty record) */
	if (mh->msg_flags & MSG_CTRUNC)
		return -EPROTO;
	if (n < sizeof(*h))
		return -EBADMSG;
	if (h->len > room || (mh->msg_flags & MSG_TRUNC))
		return -EMSGSIZE;
	if (n - sizeof(*h) != h->len || h->len < min_len)
		return -EBADMSG;
	if (h->n_fd > max_fd || f->n_fd > max_fd || f->n_fd != h->n_fd)
		return -EPROTO;
	return 1;
}

/* After a read of 0 bytes: whether the peer is gone (its end closed or shut down: the kernel
 * flags our end RDHUP before the read returns 0) or it sent an empty record, which would
 * otherwise pass for a clean end. */
static bool peer_closed(int sock)
{
	struct pollfd p = { sock, POLLRDHUP, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP));
}

int cd_frame_recv(int sock, struct cd_frame *f, size_t min_len, unsigned max_fd, int flags)
{
	struct cd_frame_hdr h = { 0 };
	struct iovec iov[3] = { { &h, sizeof(h) }, f->part[0], f->part[1] };
	union frame_ctl ctl;
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3, .msg_control = ctl.buf };
	ssize_t n;
	int r;

	f->n_fd = 0;
	f->len = 0;
	n = recv_record(sock, &mh, sizeof(ctl.buf), flags);
	if (n < 0)
		return (int)n;
	if (!take_fds(&mh, f))
		mh.msg_flags |= MSG_CTRUNC; /* more than we hold: as if cut short */
	r = check_frame(&mh, (size_t)n, &h, f, min_len,
			max_fd < CD_FRAME_MAX_FD ? max_fd : CD_FRAME_MAX_FD);
	if (r == 0 && !peer_closed(sock))
		r = -EBADMSG;
	if (r <= 0) {
		cd_frame_close(f);
		return r;
	}
	f->type = h.type;
	f->len = h.len;
	return 1;
}
