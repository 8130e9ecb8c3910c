/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sync.c - one message, one frame (sync.h, frame.h). Runs in both processes. */
#include <stddef.h>
#include <string.h>

#include "frame.h"
#include "sync.h"

/* The payload: the message from value to err, as it is in memory (both ends are one build),
 * then LISTENER's path without its NUL */
#define FIXED_AT  offsetof(struct cd_msg, value)
#define FIXED_LEN (offsetof(struct cd_msg, path) - FIXED_AT)

int cd_msg_send(int sock, uint32_t type, int32_t value, const struct cordon_error *err, int fd)
{
	struct cd_msg m = { .type = type, .value = value };

	if (err)
		m.err = *err;
	return cd_msg_send_msg(sock, &m, fd);
}

int cd_msg_send_msg(int sock, const struct cd_msg *m, int fd)
{
	struct cd_frame f = {
		.type = m->type,
		.part = { { (char *)m + FIXED_AT, FIXED_LEN },
			  { (char *)m->path, strnlen(m->path, sizeof(m->path) - 1) } },
		.fd = { fd },
		.n_fd = fd >= 0 ? 1 : 0,
	};

	return cd_frame_send(sock, &f, 0);
}

int cd_msg_recv(int sock, struct cd_msg *m, int *ret_fd)
{
	struct cd_frame f = { .part = { { (char *)m + FIXED_AT, FIXED_LEN },
					{ m->path, sizeof(m->path) - 1 } } };
	int r;

	if (ret_fd)
		*ret_fd = -1;
	r = cd_frame_recv(sock, &f, FIXED_LEN, ret_fd ? 1 : 0, 0);
	if (r <= 0)
		return r;
	m->type = f.type;
	m->path[f.len - FIXED_LEN] = '\0';
	m->err.step[sizeof(m->err.step) - 1] = '\0';
	m->err.msg[sizeof(m->err.msg) - 1] = '\0';
	if (ret_fd && f.n_fd)
		*ret_fd = f.fd[0];
	return 1;
}
