/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto.c - one session message, one frame (proto.h, frame.h). Runs in the caller and the
 * agent. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "proto.h"

/* The frame's payload: the header's fixed part (value, flags, arg), then the data */
#define FIXED_AT  offsetof(struct cd_sp_hdr, value)
#define FIXED_LEN (sizeof(struct cd_sp_hdr) - FIXED_AT)

int cd_sp_send(int sock, const struct cd_sp_hdr *h, const void *data, const int *fds,
	       unsigned n)
{
	struct cd_frame f = {
		.type = h->type,
		.part = { { (char *)h + FIXED_AT, FIXED_LEN }, { (void *)data, h->len } },
		.n_fd = n,
	};

	if (h->len > CD_SP_MAX || n > CD_SP_MAXFD)
		return -E2BIG;
	if (n)
		memcpy(f.fd, fds, sizeof(int) * n);
	return cd_frame_send(sock, &f, 0);
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

int cd_sp_recv(int sock, struct cd_sp_msg *m, unsigned max_fd)
{
	struct cd_frame f = { .part = { { (char *)&m->h + FIXED_AT, FIXED_LEN },
					{ m->data, CD_SP_MAX } } };
	int r;

	m->n_fd = 0;
	r = cd_frame_recv(sock, &f, FIXED_LEN, max_fd < CD_SP_MAXFD ? max_fd : CD_SP_MAXFD, 0);
	if (r <= 0)
		return r;
	m->h.type = f.type;
	m->h.len = (uint32_t)(f.len - FIXED_LEN);
	m->data[m->h.len] = '\0';
	memcpy(m->fd, f.fd, sizeof(int) * f.n_fd);
	m->n_fd = f.n_fd;
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
