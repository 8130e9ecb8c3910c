/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto.c - one session message, one datagram (proto.h). Runs in the caller and the agent. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto.h"

int cd_sp_send(int sock, const struct cd_sp_hdr *h, const void *data, const int *fds,
	       unsigned n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * CD_SP_MAXFD)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov[2] = { { (void *)h, sizeof(*h) }, { (void *)data, h->len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = h->len ? 2 : 1 };
	ssize_t r;

	if (h->len > CD_SP_MAX || n > CD_SP_MAXFD)
		return -E2BIG;
	if (n) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == sizeof(*h) + h->len ? 0 : -EIO;
}

int cd_sp_send_simple(int sock, uint32_t type, int32_t value, uint64_t arg, const void *data,
		      size_t len, int fd)
{
	struct cd_sp_hdr h = { .type = type, .value = value, .len = (uint32_t)len, .arg = arg };

	if (len > CD_SP_MAX)
		return -E2BIG;
	return cd_sp_send(sock, &h, data, &fd, fd >= 0 ? 1 : 0);
}

void cd_sp_msg_close(struct cd_sp_msg *m)
{
	for (unsigned i = 0; i < m->n_fd; i++)
		if (m->fd[i] >= 0)
			close(m->fd[i]);
	m->n_fd = 0;
}

/* Every descriptor of every SCM_RIGHTS header: kept up to max, the rest closed. */
static bool take_fds(struct msghdr *mh, struct cd_sp_msg *m, unsigned max)
{
	bool ok = true;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (m->n_fd < max && m->n_fd < CD_SP_MAXFD) {
				m->fd[m->n_fd++] = fd;
			} else {
				close(fd);
				ok = false;
			}
		}
	}
	return ok;
}

int cd_sp_recv(int sock, struct cd_sp_msg *m, unsigned max_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (CD_SP_MAXFD + 1))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov[2] = { { &m->h, sizeof(m->h) }, { m->data, CD_SP_MAX } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t r;
	bool ok;

	m->n_fd = 0;
	do
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	ok = take_fds(&mh, m, max_fd);
	if (!ok || (size_t)r < sizeof(m->h) || (size_t)r != sizeof(m->h) + m->h.len ||
	    (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		cd_sp_msg_close(m);
		return -EPROTO;
	}
	m->data[m->h.len] = '\0';
	return 1;
}

const char *cd_sp_next(const struct cd_sp_msg *m, size_t *pos)
{
	const char *s = m->data + *pos;
	const char *end;

	if (*pos >= m->h.len)
		return NULL;
	end = memchr(s, '\0', m->h.len - *pos);
	if (!end)
		return NULL;
	*pos += (size_t)(end - s) + 1;
	return s;
}
