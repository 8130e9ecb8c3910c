/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-frame.c - one framed message over a socket (frame.h): frames with 0, 1 and the most
 * descriptors go round whole, close-on-exec; every malformed frame a peer can send (short, cut
 * off by the peer's end, longer than the room, more descriptors than taken or than declared, a
 * control message the kernel cut short) is its own clear error, with no descriptor left open
 * (counted in /proc/self/fd) and the socket still usable; an end between frames is a clean 0;
 * EINTR is retried, and the frames of a peer that closed with ours unread are still read. TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "frame.h"

#include "../lib/tap.h"

#define ROOM 64

static char fixed[16], data[ROOM - 16];

static int open_fds(void)
{
	char path[64];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

static void pair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		exit(1);
	}
}

/* A frame received into fixed (its fixed part) and data */
static int recv_into(int sock, struct cd_frame *f, size_t min_len, unsigned max_fd)
{
	memset(f, 0, sizeof(*f));
	f->part[0] = (struct iovec){ fixed, sizeof(fixed) };
	f->part[1] = (struct iovec){ data, sizeof(data) };
	return cd_frame_recv(sock, f, min_len, max_fd, 0);
}

/* A record as a peer may forge it: a header (hdr_len bytes of it), body bytes, n descriptors
 * (of /dev/null, ours closed once sent) */
static void forge(int sock, const struct cd_frame_hdr *h, size_t hdr_len, size_t body, int n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 16)];
		struct cmsghdr align;
	} ctl;
	static char zeros[4 * ROOM];
	struct iovec iov[2] = { { (void *)h, hdr_len }, { zeros, body } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	int fds[16];

	if (n) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
		for (int i = 0; i < n; i++)
			fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	}
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
		perror("sendmsg");
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/* A good frame after a bad one: the socket is still in step */
static bool still_works(int sv[2])
{
	struct cd_frame f = { .type = 9, .part = { { "ok", 2 } } };
	int r = cd_frame_send(sv[1], &f, 0);

	r = r < 0 ? r : recv_into(sv[0], &f, 0, 0);
	return r == 1 && f.type == 9 && f.len == 2 && memcmp(fixed, "ok", 2) == 0;
}

static bool all_cloexec(const struct cd_frame *f)
{
	for (unsigned i = 0; i < f->n_fd; i++)
		if (!(fcntl(f->fd[i], F_GETFD) & FD_CLOEXEC))
			return false;
	return true;
}

static void round_trips(void)
{
	char big[sizeof(data)];
	struct cd_frame f = { .type = 7, .part = { { "0123456789abcdef", 16 }, { big, 30 } } };
	struct stat a, b;
	int sv[2], fd, r;

	pair(sv);
	memset(big, 'x', sizeof(big));
	is_int(cd_frame_send(sv[1], &f, 0), 0, "send: no descriptor, a payload of two parts");
	r = recv_into(sv[0], &f, sizeof(fixed), 0);
	ok(r == 1 && f.type == 7 && f.len == 46 && f.n_fd == 0 &&
	   memcmp(fixed, "0123456789abcdef", 16) == 0 && memcmp(data, big, 30) == 0,
	   "recv: type, length and payload (the fixed part first), no descriptor (r %d)", r);

	fd = open("/etc/hostname", O_RDONLY); /* not close-on-exec: the received copy must be */
	f = (struct cd_frame){ .type = 8, .fd = { fd }, .n_fd = 1 };
	is_int(cd_frame_send(sv[1], &f, 0), 0, "send: one descriptor, no payload");
	r = recv_into(sv[0], &f, 0, 1);
	ok(r == 1 && f.type == 8 && f.len == 0 && f.n_fd == 1 && fstat(fd, &a) == 0 &&
	   fstat(f.fd[0], &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev,
	   "recv: the same file (r %d)", r);
	ok(all_cloexec(&f), "... close-on-exec");
	cd_frame_close(&f);
	close(fd);

	f = (struct cd_frame){ .type = 3, .part = { { "x", 1 } }, .n_fd = CD_FRAME_MAX_FD };
	for (int i = 0; i < CD_FRAME_MAX_FD; i++)
		f.fd[i] = i % 2 ? 0 : 1;
	is_int(cd_frame_send(sv[1], &f, 0), 0, "send: %d descriptors (the most)", CD_FRAME_MAX_FD);
	r = recv_into(sv[0], &f, 1, CD_FRAME_MAX_FD);
	ok(r == 1 && f.n_fd == CD_FRAME_MAX_FD && all_cloexec(&f),
	   "recv: all %d, close-on-exec (r %d, %u)", CD_FRAME_MAX_FD, r, f.n_fd);
	cd_frame_close(&f);

	f = (struct cd_frame){ .type = 3, .n_fd = CD_FRAME_MAX_FD + 1 };
	is_int(cd_frame_send(sv[1], &f, 0), -EINVAL, "send: more than %d descriptors: refused",
	       CD_FRAME_MAX_FD);
	f = (struct cd_frame){ 0 };
	is_int(cd_frame_recv(sv[0], &f, 0, 0, MSG_DONTWAIT), -EAGAIN,
	       "... nothing was sent (MSG_DONTWAIT: -EAGAIN)");
	close(sv[0]);
	close(sv[1]);
}

static void ends(void)
{
	struct cd_frame_hdr h = { .type = 1, .len = 50 };
	struct cd_frame f;
	int sv[2], before = open_fds();

	pair(sv);
	close(sv[1]);
	is_int(recv_into(sv[0], &f, 0, 4), 0, "EOF before any byte: a clean end (0)");
	close(sv[0]);

	pair(sv);
	forge(sv[1], &h, sizeof(h), 20, 2); /* part of its payload, two descriptors, then gone */
	close(sv[1]);
	is_int(recv_into(sv[0], &f, 0, 4), -EBADMSG,
	       "a peer that died mid-message (20 of 50 bytes, then EOF): -EBADMSG, not an end");
	is_int(recv_into(sv[0], &f, 0, 4), 0, "... then the end");
	close(sv[0]);

	pair(sv);
	forge(sv[1], &h, 5, 0, 1); /* 5 bytes of a 12-byte header */
	is_int(recv_into(sv[0], &f, 0, 4), -EBADMSG, "a short read (part of a header): -EBADMSG");
	forge(sv[1], &h, 0, 0, 2); /* an empty record: not the end the peer could fake with it */
	is_int(recv_into(sv[0], &f, 0, 4), -EBADMSG,
	       "an empty record with descriptors: -EBADMSG, not a clean end");
	forge(sv[1], &h, 0, 0, 0); /* an empty record alone, the peer still there */
	is_int(recv_into(sv[0], &f, 0, 4), -EBADMSG,
	       "an empty record without descriptors, the peer still there: -EBADMSG, not a "
	       "clean end");
	h.len = 10;
	forge(sv[1], &h, sizeof(h), 15, 0);
	is_int(recv_into(sv[0], &f, 0, 4), -EBADMSG, "more bytes than the header says: -EBADMSG");
	h.len = 4;
	forge(sv[1], &h, sizeof(h), 4, 0);
	is_int(recv_into(sv[0], &f, sizeof(fixed), 4), -EBADMSG,
	       "a payload shorter than the receiver's fixed part: -EBADMSG");
	ok(still_works(sv), "... the socket still works after each");
	close(sv[0]);
	close(sv[1]);
	is_int(open_fds(), before, "no descriptor left open");
}

static void oversize(void)
{
	struct cd_frame_hdr h = { .type = 1, .len = ROOM + 1 };
	struct cd_frame f;
	int sv[2], before = open_fds();

	pair(sv);
	forge(sv[1], &h, sizeof(h), ROOM + 1, 1);
	is_int(recv_into(sv[0], &f, 0, 4), -EMSGSIZE,
	       "a payload past the receiver's room (%d of %d bytes): -EMSGSIZE", ROOM + 1, ROOM);
	h.len = 3 * ROOM;
	forge(sv[1], &h, sizeof(h), 20, 0);
	is_int(recv_into(sv[0], &f, 0, 4), -EMSGSIZE,
	       "a header that claims more than the room: -EMSGSIZE");
	h.len = ROOM;
	forge(sv[1], &h, sizeof(h), 2 * ROOM, 0);
	is_int(recv_into(sv[0], &f, 0, 4), -EMSGSIZE,
	       "a record longer than the room, its header claiming the room (cut: MSG_TRUNC): "
	       "-EMSGSIZE");
	ok(still_works(sv), "... the socket still works");
	close(sv[0]);
	close(sv[1]);
	is_int(open_fds(), before, "no descriptor left open");
}

static void descriptors(void)
{
	struct cd_frame_hdr h = { .type = 1 };
	struct cd_frame f;
	int sv[2], before = open_fds(), r;

	pair(sv);
	f = (struct cd_frame){ .type = 2, .fd = { 0, 1, 2 }, .n_fd = 3 };
	cd_frame_send(sv[1], &f, 0);
	is_int(recv_into(sv[0], &f, 0, 2), -EPROTO,
	       "more descriptors than the receiver takes (3 of 2): -EPROTO");
	is_int(open_fds(), before + 2, "... none of them left open");

	h.n_fd = CD_FRAME_MAX_FD;
	forge(sv[1], &h, sizeof(h), 0, CD_FRAME_MAX_FD + 1);
	r = recv_into(sv[0], &f, 0, CD_FRAME_MAX_FD);
	is_int(r, -EPROTO,
	       "a control message cut short (%d descriptors, room for %d, the header claiming %d: "
	       "MSG_CTRUNC): -EPROTO",
	       CD_FRAME_MAX_FD + 1, CD_FRAME_MAX_FD, CD_FRAME_MAX_FD);
	is_int(open_fds(), before + 2, "... none of those that arrived left open");

	h.n_fd = 2;
	forge(sv[1], &h, sizeof(h), 0, 1);
	is_int(recv_into(sv[0], &f, 0, 4), -EPROTO, "fewer descriptors than declared: -EPROTO");
	h.n_fd = 0;
	forge(sv[1], &h, sizeof(h), 0, 1);
	is_int(recv_into(sv[0], &f, 0, 4), -EPROTO,
	       "a descriptor where none was declared: -EPROTO");
	ok(still_works(sv), "... the socket still works");
	close(sv[0]);
	close(sv[1]);
	is_int(open_fds(), before, "no descriptor left open");
}

/* --- EINTR: a signal lands while the receiver waits in recvmsg --- */

static int sig_pipe[2];

static void on_usr1(int sig)
{
	(void)sig;
	(void)!write(sig_pipe[1], "x", 1);
}

struct interrupter {
	int sock;
	pid_t tid;
	bool skipped;
};

/* Whether thread tid waits in recvmsg now (-1: cannot tell) */
static int in_recvmsg(pid_t tid)
{
	char path[64], buf[128] = "";
	int fd, n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	return strtol(buf, NULL, 10) == SYS_recvmsg && strncmp(buf, "running", 7) != 0;
}

static void *interrupt(void *arg)
{
	struct interrupter *x = arg;
	struct cd_frame f = { .type = 5 };
	char c;
	int r;

	while ((r = in_recvmsg(x->tid)) == 0)
		usleep(1000);
	if (r < 0) {
		x->skipped = true;
	} else {
		syscall(SYS_tgkill, getpid(), x->tid, SIGUSR1);
		(void)!read(sig_pipe[0], &c, 1); /* the handler ran: recvmsg returned */
	}
	cd_frame_send(x->sock, &f, 0);
	return NULL;
}

static void eintr(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART: EINTR */
	struct interrupter x = { .tid = (pid_t)syscall(SYS_gettid) };
	struct cd_frame f;
	pthread_t t;
	int sv[2], r;

	pair(sv);
	if (pipe2(sig_pipe, O_CLOEXEC) < 0)
		exit(1);
	sigaction(SIGUSR1, &sa, NULL);
	x.sock = sv[1];
	pthread_create(&t, NULL, interrupt, &x);
	r = recv_into(sv[0], &f, 0, 0);
	pthread_join(t, NULL);
	if (x.skipped)
		skip("/proc/self/task/TID/syscall unreadable", "EINTR is retried");
	else
		ok(r == 1 && f.type == 5, "EINTR is retried: the frame after the signal (r %d)", r);
	close(sv[0]);
	close(sv[1]);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
}

static void reset(void)
{
	struct cd_frame f = { .type = 1 };
	int sv[2], r;

	pair(sv);
	cd_frame_send(sv[0], &f, 0); /* ours, never read */
	f.type = 2;
	cd_frame_send(sv[1], &f, 0);
	close(sv[1]);
	r = recv_into(sv[0], &f, 0, 0);
	ok(r == 1 && f.type == 2,
	   "a peer that closed with our frame unread (ECONNRESET): its frame is read (r %d)", r);
	is_int(recv_into(sv[0], &f, 0, 0), 0, "... then the end");
	close(sv[0]);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	round_trips();
	ends();
	oversize();
	descriptors();
	eintr();
	reset();
	return done_testing();
}
