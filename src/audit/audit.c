/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit.c - the audit log writer: JSON Lines, one write() per event, O_APPEND. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "output.h"
#include "utf8.h"

/* The events that did not reach the log; the first failure is the one reported. */
struct cd_audit_loss {
	int code; /* positive errno */
	uint64_t events;
	uint64_t marked; /* of those, the ones a "gap" event in the log already counts */
};

int cd_audit_open(const char *path, const struct cd_output_ctx *ctx, struct cd_audit *a,
		  struct cordon_error *err)
{
	int fd = cd_output_file(path, "audit", ctx, 0600, err);

	if (fd < 0)
		return fd;
	return cd_audit_open_fd(fd, path, a, err);
}

int cd_audit_open_fd(int fd, const char *name, struct cd_audit *a, struct cordon_error *err)
{
	_cleanup_close_ int owned = fd;

	a->loss = calloc(1, sizeof(*a->loss));
	if (!a->loss)
		return cd_fail(err, ENOMEM, "audit", "out of memory");
	/* one write per event: with O_APPEND a reader never sees half a line */
	if (fcntl(owned, F_SETFL, O_APPEND) < 0)
		return cd_fail_errno(err, errno, "audit", "%s", name);
	a->fd = CD_TAKE_FD(owned);
	return 0;
}

void cd_audit_close(struct cd_audit *a)
{
	a->fd = cd_safe_close(a->fd);
	free(a->loss);
	a->loss = NULL;
}

uint64_t cd_audit_lost(const struct cd_audit *a)
{
	return a->loss ? a->loss->events : 0;
}

int cd_audit_check(const struct cd_audit *a, struct cordon_error *err)
{
	if (!a->loss || !a->loss->events)
		return 0;
	return cd_fail_errno(err, a->loss->code, "audit",
			     "the log lacks %" PRIu64 " event%s, not written or cut short",
			     a->loss->events, a->loss->events == 1 ? "" : "s");
}

static void put_time(struct cd_json *j)
{
	struct timespec ts;
	struct tm tm;
	char buf[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000);
	cd_json_kv_string(j, "time", buf);
}

void cd_audit_begin(const struct cd_audit *a, struct cd_json *j, const char *event)
{
	*j = (struct cd_json){ 0 };
	cd_json_object_begin(j);
	cd_json_kv_string(j, "event", event);
	cd_json_kv_string(j, "id", a->id);
	put_time(j);
}

/* An event that is not in the log, or only in part: remembered for cd_audit_check(). */
static int lost(const struct cd_audit *a, int r)
{
	if (a->loss) {
		if (!a->loss->events)
			a->loss->code = -r;
		a->loss->events++;
	}
	return r;
}

/* The log's size, -1 when it is not a regular file (a pipe, a device). */
static off_t size_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : -1;
}

/* A line cut short (the disk filled up mid-write) goes: the next event must not be appended to
 * half of this one. cordon is the log's only writer. */
static void cut_back(int fd, off_t size)
{
	if (size >= 0 && size_of(fd) > size && ftruncate(fd, size) < 0)
		return; /* the event is counted lost all the same */
}

/* One whole line, or nothing of it (cut back): 0 or -errno. */
static int write_line(int fd, const char *line, size_t n)
{
	off_t before = size_of(fd);
	int r = cd_write_all(fd, line, n);

	if (r < 0)
		cut_back(fd, before);
	return r;
}

/* The event closed and written as one line, whole or not at all: 0 or -errno. */
static int put_line(const struct cd_audit *a, struct cd_json *j)
{
	_cleanup_free_ char *s = NULL;
	char *line;
	size_t n;

	cd_json_object_end(j);
	s = cd_json_steal(j);
	if (!s)
		return -ENOMEM;
	n = strlen(s);
	line = realloc(s, n + 2);
	if (!line)
		return -ENOMEM;
	s = line;
	s[n] = '\n';
	/* one write of the whole line: with O_APPEND, a reader never sees half an event */
	return write_line(a->fd, s, n + 1);
}

/* Before the first event written after some were lost: a "gap" event where they are missing,
 * so that the log itself shows that something is, and where (not only cordon's exit status). */
static void mark_gap(const struct cd_audit *a)
{
	struct cd_json j;

	if (!a->loss || a->loss->events == a->loss->marked)
		return;
	cd_audit_begin(a, &j, "gap");
	cd_json_kv_uint(&j, "lost", a->loss->events - a->loss->marked);
	cd_json_kv_int(&j, "errno", a->loss->code);
	if (put_line(a, &j) == 0)
		a->loss->marked = a->loss->events;
}

int cd_audit_end(const struct cd_audit *a, struct cd_json *j)
{
	int r;

	if (a->fd < 0) {
		cd_json_object_end(j);
		free(cd_json_steal(j));
		return 0;
	}
	mark_gap(a);
	r = put_line(a, j);
	return r < 0 ? lost(a, r) : 0;
}

void cd_audit_string(struct cd_json *j, const char *s, size_t n, bool *lossy)
{
	if (!cd_utf8_valid(s, n))
		*lossy = true;
	cd_json_string_len(j, s, n);
}

void cd_audit_hex(struct cd_json *j, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	_cleanup_free_ char *h = malloc(2 * n + 1);

	if (!h) {
		cd_json_null(j);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		h[2 * i] = hex[(unsigned char)s[i] >> 4];
		h[2 * i + 1] = hex[(unsigned char)s[i] & 15];
	}
	h[2 * n] = '\0';
	cd_json_string(j, h);
}

void cd_audit_walk_limits(const struct cd_audit *a, const char *walk, const struct cd_snapshot *s)
{
	for (int b = 0; b < CD_WALK_NBOUNDS; b++) {
		const struct cd_walk_bound_info *info = cd_walk_bound((enum cd_walk_bound)b);
		struct cd_json j;

		if (!(s->hit & (1u << b)))
			continue;
		cd_audit_begin(a, &j, "limit");
		cd_json_kv_string(&j, "limit", "audit-walk");
		cd_json_kv_string(&j, "walk", walk);
		cd_json_kv_string(&j, "bound", info->name);
		cd_json_kv_uint(&j, "max", info->max);
		if (info->counted)
			cd_json_kv_uint(&j, "count", s->count[b]);
		cd_json_kv_string(&j, "action", info->action);
		cd_audit_end(a, &j);
	}
}
