/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture.c - tee the sandbox's stdout and stderr: to the caller, unchanged, and to files. */
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>

#include "capture.h"
#include "output.h"

static void stream_init(struct cd_capture_stream *s)
{
	*s = (struct cd_capture_stream){ .rd = -1, .wr = -1, .file = -1 };
}

int cd_capture_open(const char *dir, const struct stat *workdir, struct cd_capture *cap,
		    struct cordon_error *err)
{
	static const char *const names[] = { "stdout", "stderr" };
	_cleanup_close_ int dfd = -1;

	for (int i = 0; i < 2; i++)
		stream_init(&cap->s[i]);
	cap->on = true;
	dfd = cd_output_mkdir(dir, "capture", workdir, err);
	if (dfd < 0)
		return dfd;
	for (int i = 0; i < 2; i++) {
		struct cd_capture_stream *s = &cap->s[i];
		int p[2];

		s->out = i + 1;
		s->file = cd_hostpath_create(dfd, names[i], 0600, NULL);
		if (s->file < 0)
			return cd_fail_errno(err, -s->file, "capture", "%s/%s", dir, names[i]);
		if (pipe2(p, O_CLOEXEC) < 0)
			return cd_fail_errno(err, errno, "capture", "pipe");
		s->rd = p[0], s->wr = p[1];
		fcntl(s->rd, F_SETFL, O_NONBLOCK);
	}
	return 0;
}

void cd_capture_started(struct cd_capture *cap)
{
	for (int i = 0; cap->on && i < 2; i++) {
		cd_closep(&cap->s[i].wr);
		cap->s[i].wr = -1;
	}
}

bool cd_capture_pump(struct cd_capture *cap, int i)
{
	struct cd_capture_stream *s = &cap->s[i];
	char buf[65536];
	ssize_t n;

	if (s->rd < 0)
		return false;
	for (;;) {
		n = read(s->rd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0)
			break;
		/* the caller's stream may be gone (a closed pipe): the copy is still kept */
		cd_write_all(s->out, buf, (size_t)n);
		cd_write_all(s->file, buf, (size_t)n);
		s->bytes += (uint64_t)n;
	}
	cd_closep(&s->rd);
	s->rd = -1;
	return false;
}

void cd_capture_drain(struct cd_capture *cap, int timeout_ms)
{
	uint64_t end = cd_now_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;

	while (cap->on && (cap->s[0].rd >= 0 || cap->s[1].rd >= 0) && cd_now_ns() < end) {
		struct pollfd p[2] = { { cap->s[0].rd, POLLIN, 0 }, { cap->s[1].rd, POLLIN, 0 } };

		if (poll(p, 2, 50) < 0 && errno != EINTR)
			return;
		for (int i = 0; i < 2; i++)
			if (p[i].revents)
				cd_capture_pump(cap, i);
	}
}

void cd_capture_done(struct cd_capture *cap)
{
	for (int i = 0; cap->on && i < 2; i++) {
		cd_closep(&cap->s[i].rd);
		cd_closep(&cap->s[i].wr);
		cd_closep(&cap->s[i].file);
	}
	cap->on = false;
}
