/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-audit.c - the audit log writer (audit.h): events written whole, one line each, and an
 * event that does not reach the log (a full disk: /dev/full; an event that cannot be composed)
 * returned as an error and remembered, so that cd_audit_check() can say the log is incomplete.
 * TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "audit.h"

#include "../lib/tap.h"

static int event(const struct cd_audit *a, const char *name)
{
	struct cd_json j;

	cd_audit_begin(a, &j, name);
	cd_json_kv_string(&j, "path", "/tmp/x");
	return cd_audit_end(a, &j);
}

static void test_written(void)
{
	struct cd_audit a = { .fd = -1, .id = "0123" };
	struct cordon_error err = { 0 };
	int fd = memfd_create("audit", MFD_CLOEXEC), dup_fd;
	char buf[512] = "", *second;
	ssize_t n;

	dup_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (!ok(dup_fd >= 0, "a memfd to write the log to")) {
		if (fd >= 0)
			close(fd);
		return;
	}
	is_int(cd_audit_open_fd(dup_fd, "memfd", &a, &err), 0, "the log opens on a descriptor");
	ok(cd_audit_on(&a), "... and is on");
	is_int(event(&a, "start"), 0, "an event is written");
	is_int(event(&a, "exit"), 0, "another");
	is_int(cd_audit_check(&a, &err), 0, "every event is in the log");
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	second = n > 0 ? strchr(buf, '\n') + 1 : NULL;
	ok(n > 0 && buf[n - 1] == '\n' && second < buf + n &&
		   strncmp(second, "{\"event\":\"exit\"", 15) == 0 && !strchr(second, '\n')[1],
	   "two lines, each one event");
	like_str(buf, "{\"event\":\"start\",\"id\":\"0123\",\"time\":\"", "... with event, id, time");
	cd_audit_close(&a);
	ok(!cd_audit_on(&a) && !a.loss, "close leaves the log off");
	close(fd);
}

static void test_full(void)
{
	struct cd_audit a = { .fd = -1, .id = "0123" };
	struct cordon_error err = { 0 };
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		skip("no /dev/full", "a full disk: the event is an error");
		return;
	}
	is_int(cd_audit_open_fd(fd, "/dev/full", &a, &err), 0, "a log on /dev/full opens");
	is_int(event(&a, "start"), -ENOSPC, "a full disk: the event is an error, ENOSPC");
	is_int(event(&a, "exit"), -ENOSPC, "... and the next one too");
	is_int(cd_audit_check(&a, &err), -ENOSPC, "the log says it is incomplete");
	is_int(err.code, ENOSPC, "... err.code ENOSPC");
	is_str(err.step, "audit", "... in step audit");
	like_str(err.msg, "lacks 2 events", "... counting the events it lacks");
	cd_audit_close(&a);
}

/* An event the JSON writer cannot compose (deeper than it nests) is missing just the same. */
static void test_uncomposed(void)
{
	struct cd_audit a = { .fd = -1, .id = "0123" };
	struct cordon_error err = { 0 };
	struct cd_json j;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (!ok(fd >= 0 && cd_audit_open_fd(fd, "/dev/null", &a, &err) == 0, "a log on /dev/null"))
		return;
	cd_audit_begin(&a, &j, "deep");
	for (int i = 0; i <= CD_JSON_MAX_DEPTH; i++) {
		cd_json_key(&j, "k");
		cd_json_object_begin(&j);
	}
	is_int(cd_audit_end(&a, &j), -ENOMEM, "an event that cannot be composed: -ENOMEM");
	is_int(event(&a, "exit"), 0, "the next event is written");
	is_int(cd_audit_check(&a, &err), -ENOMEM, "the log still says it is incomplete");
	like_str(err.msg, "lacks 1 event,", "... by one event");
	cd_audit_close(&a);
}

static void test_off(void)
{
	struct cd_audit a = { .fd = -1, .id = "0123" };
	struct cordon_error err = { 0 };

	is_int(event(&a, "start"), 0, "no log: an event is no error");
	is_int(cd_audit_check(&a, &err), 0, "... and nothing is missing");
	cd_audit_close(&a);
	ok(!cd_audit_on(&a), "closing a log never opened is harmless");
}

int main(void)
{
	test_written();
	test_full();
	test_uncomposed();
	test_off();
	return done_testing();
}
