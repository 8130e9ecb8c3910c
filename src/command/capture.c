/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture.c - tee the sandbox's stdout and stderr: to the caller, unchanged, and to files,
 * without ever blocking the supervisor (capture.h). */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>

#include "capture.h"
#include "output.h"

static void stream_init(struct cd_capture_stream *s)
{
	*s = (struct cd_capture_stream){ .rd = -1, .wr = -1, .file = -1, .out_nb = -1 };
}

/* The caller's stdout or stderr, to be written without blocking: its flags are the caller's
 * (a shell's terminal, a pipe shared with others), so a file description of our own is opened
 * on the same pipe or terminal, non-blocking. A regular file never blocks: written as it is.
 * A socket cannot be opened again: send(MSG_DONTWAIT) is used on it instead (out_nb = -1). */
static void open_out(struct cd_capture_stream *s)
{
	struct stat st;
	char proc[64];

	if (fstat(s->out, &st) < 0 || S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode))
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", s->out);
	s->out_nb = open(proc, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

/* The caller's stdout is a terminal: the command's is a pseudo-terminal of cordon's, so that it
 * sees a terminal, of the same size and modes, but for output processing (OPOST): bytes pass
 * unchanged, and the caller's terminal does what it always does with them. */
static int open_pty(struct cd_capture_stream *s, struct cordon_error *err)
{
	struct termios t;
	struct winsize ws;

	s->rd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s->rd < 0 || grantpt(s->rd) < 0 || unlockpt(s->rd) < 0)
		return cd_fail_errno(err, errno, "capture", "make a pseudo-terminal");
	s->wr = ioctl(s->rd, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s->wr < 0)
		return cd_fail_errno(err, errno, "capture", "open the pseudo-terminal");
	if (tcgetattr(1, &t) == 0) {
		t.c_oflag &= ~(tcflag_t)OPOST;
		tcsetattr(s->wr, TCSANOW, &t);
	}
	if (ioctl(1, TIOCGWINSZ, &ws) == 0)
		ioctl(s->wr, TIOCSWINSZ, &ws);
	fcntl(s->rd, F_SETFL, O_NONBLOCK);
	s->pty = true;
	return 0;
}

static int open_pipe(struct cd_capture_stream *s, struct cordon_error *err)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return cd_fail_errno(err, errno, "capture", "pipe");
	s->rd = p[0], s->wr = p[1];
	fcntl(s->rd, F_SETFL, O_NONBLOCK);
	return 0;
}

/* stdout and stderr are one file, pipe, socket or terminal (2>&1): one channel carries both, in
 * order. Not a device that is not a terminal (/dev/null): no one sees an order there, and the
 * captured files stay apart. */
static bool same_file(void)
{
	struct stat a, b;

	if (fstat(1, &a) < 0 || fstat(2, &b) < 0)
		return false;
	if (S_ISCHR(a.st_mode) && !isatty(1))
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_rdev == b.st_rdev;
}

int cd_capture_open(const char *dir, const struct cd_output_ctx *ctx, uint64_t max,
		    struct cd_capture *cap, struct cordon_error *err)
{
	static const char *const names[] = { "stdout", "stderr" };
	_cleanup_close_ int dfd = -1;
	int r;

	for (int i = 0; i < 2; i++)
		stream_init(&cap->s[i]);
	cap->on = true;
	cap->max = max;
	cap->merged = same_file();
	dfd = cd_output_mkdir(dir, "capture", ctx, err);
	if (dfd < 0)
		return dfd;
	for (int i = 0; i < 2; i++) {
		struct cd_capture_stream *s = &cap->s[i];

		s->out = i + 1;
		s->file = cd_hostpath_create(dfd, names[i], 0600, NULL);
		if (s->file < 0)
			return cd_fail_errno(err, -s->file, "capture", "%s/%s", dir, names[i]);
		if (i == 1 && cap->merged)
			break; /* stderr goes with stdout: its file stays empty */
		s->buf = malloc(CD_CAPTURE_BUFFER);
		if (!s->buf)
			return cd_fail(err, ENOMEM, "capture", "out of memory");
		r = isatty(s->out) ? open_pty(s, err) : open_pipe(s, err);
		if (r < 0)
			return r;
		open_out(s);
	}
	return 0;
}

int cd_capture_fd(const struct cd_capture *cap, int i)
{
	if (!cap->on)
		return -1;
	return i == 1 && cap->merged ? cap->s[0].wr : cap->s[i].wr;
}

void cd_capture_started(struct cd_capture *cap)
{
	for (int i = 0; cap->on && i < 2; i++) {
		cap->s[i].wr = cd_safe_close(cap->s[i].wr);
	}
}

void cd_capture_poll(const struct cd_capture *cap, int i, struct pollfd *in, struct pollfd *out)
{
	const struct cd_capture_stream *s = &cap->s[i];

	*in = (struct pollfd){ .fd = -1, .events = POLLIN };
	*out = (struct pollfd){ .fd = -1, .events = POLLOUT };
	if (!cap->on)
		return;
	if (s->len < CD_CAPTURE_BUFFER)
		in->fd = s->rd;
	if (s->len && !s->out_gone)
		out->fd = s->out_nb >= 0 ? s->out_nb : s->out;
}

/* Pass on what the buffer holds, as much as goes without waiting. */
static void flush(struct cd_capture_stream *s)
{
	while (s->len && !s->out_gone) {
		ssize_t n;

		if (s->out_nb >= 0)
			n = write(s->out_nb, s->buf, s->len);
		else
			n = send(s->out, s->buf, s->len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK) /* a regular file: it does not block */
			n = write(s->out, s->buf, s->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			s->out_gone = true; /* EPIPE and the like: the copy is still kept */
			s->len = 0;
			return;
		}
		memmove(s->buf, s->buf + n, s->len - (size_t)n);
		s->len -= (size_t)n;
	}
	if (s->out_gone)
		s->len = 0;
}

/* The copy of what was just read, up to the bound: beyond it the caller still gets it all. */
static void keep(uint64_t max, struct cd_capture_stream *s, size_t n)
{
	size_t room = s->bytes >= max ? 0 : max - s->bytes < n ? (size_t)(max - s->bytes) : n;

	if (room)
		cd_write_all(s->file, s->buf + s->len, room);
	s->bytes += room;
	s->truncated = s->truncated || room < n;
}

/* Read what fits in the buffer; the copy is written at once. */
static void fill(uint64_t cap_max, struct cd_capture_stream *s)
{
	while (s->rd >= 0 && s->len < CD_CAPTURE_BUFFER) {
		ssize_t n = read(s->rd, s->buf + s->len, CD_CAPTURE_BUFFER - s->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		/* (a pseudo-terminal whose every writer is gone says EIO: the end, as EOF) */
		if (n <= 0) {
			s->rd = cd_safe_close(s->rd);
			return;
		}
		keep(cap_max, s, (size_t)n);
		s->len += (size_t)n;
		if (!s->out_gone)
			return; /* pass it on before reading more */
		s->len = 0;
	}
}

void cd_capture_pump(struct cd_capture *cap, int i)
{
	struct cd_capture_stream *s = &cap->s[i];

	if (!cap->on)
		return;
	flush(s);
	fill(cap->max, s);
	flush(s);
}

static bool busy(const struct cd_capture_stream *s)
{
	return s->rd >= 0 || (s->len && !s->out_gone);
}

void cd_capture_drain(struct cd_capture *cap, int timeout_ms)
{
	uint64_t end = cd_now_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;

	while (cap->on && (busy(&cap->s[0]) || busy(&cap->s[1])) && cd_now_ns() < end) {
		struct pollfd p[4];

		cd_capture_poll(cap, 0, &p[0], &p[1]);
		cd_capture_poll(cap, 1, &p[2], &p[3]);
		if (poll(p, 4, 50) < 0 && errno != EINTR)
			return;
		for (int i = 0; i < 2; i++)
			if (p[2 * i].revents || p[2 * i + 1].revents)
				cd_capture_pump(cap, i);
	}
}

void cd_capture_done(struct cd_capture *cap)
{
	for (int i = 0; cap->on && i < 2; i++) {
		cd_closep(&cap->s[i].rd);
		cd_closep(&cap->s[i].wr);
		cd_closep(&cap->s[i].file);
		cd_closep(&cap->s[i].out_nb);
		free(cap->s[i].buf);
	}
	cap->on = false;
}
