/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frame.h - one framed message over a SOCK_SEQPACKET socket: the framing and descriptor passing
 * of every protocol between cordon's processes (the sync, sync.h; a session's supervisor,
 * holder.h; the agent, proto.h; the server's session maker, creator.c). Runs in every process;
 * libc only (cordon-init and cordon-agent are static, cordon-init built with musl too).
 *
 * A frame is one record of the socket (the kernel keeps its bounds and its descriptors with
 * it): a header, the payload, and 0..CD_FRAME_MAX_FD descriptors (SCM_RIGHTS):
 *
 *   struct cd_frame_hdr { type, len, n_fd }   payload: len bytes   + n_fd descriptors
 *
 * The receiver says what it takes (the payload's room and its fixed part, how many
 * descriptors); it gets the whole frame, or an error and no descriptor of the frame open:
 *   1          a frame
 *   0          the peer closed between frames: a clean end
 *   -EBADMSG   fewer bytes than a header, than the header says or than the fixed part: a short
 *              frame (a peer that died mid-message, or lies; an empty record is one too, not
 *              an end a peer could fake while it stays)
 *   -EMSGSIZE  more payload than the receiver has room for
 *   -EPROTO    descriptors: more than the receiver takes, other than the header says, or cut
 *              short by the kernel (MSG_CTRUNC: more than CD_FRAME_MAX_FD, or a full table)
 *   -errno     of recvmsg (-EAGAIN: nothing yet on a non-blocking socket or with MSG_DONTWAIT)
 * EINTR is retried. Received descriptors are close-on-exec.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define CD_FRAME_MAX_FD 8

/* On the wire, before the payload */
struct cd_frame_hdr {
	uint32_t type;
	uint32_t len;  /* payload bytes */
	uint32_t n_fd; /* descriptors passed with it */
};

/* One frame. Sending: the payload is part[0] then part[1] (an unused part: { NULL, 0 }), the
 * descriptors fd[0..n_fd). Receiving: the parts are the room the payload is read into, in order;
 * type, len (payload bytes) and fd[0..n_fd) come back. */
struct cd_frame {
	uint32_t type;
	struct iovec part[2];
	size_t len;
	int fd[CD_FRAME_MAX_FD];
	unsigned n_fd;
};

/* 0, or -errno (-EINVAL: more than CD_FRAME_MAX_FD descriptors; -EMSGSIZE: a payload past
 * 4 GiB or the socket's buffer). flags: MSG_DONTWAIT, or 0; never SIGPIPE. The descriptors
 * stay the caller's. */
int cd_frame_send(int sock, const struct cd_frame *f, int flags);
/* See above. min_len: the payload's fixed part; max_fd: the most descriptors taken (at most
 * CD_FRAME_MAX_FD); flags: MSG_DONTWAIT, or 0. On 1 the descriptors in f->fd are the caller's
 * (cd_frame_close()). */
int cd_frame_recv(int sock, struct cd_frame *f, size_t min_len, unsigned max_fd, int flags);
/* Close the descriptors a received frame brought; errno is kept. */
void cd_frame_close(struct cd_frame *f);
