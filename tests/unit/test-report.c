/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-report.c - writing the report (report.h): a report that cannot be written is an error
 * naming where, never silence. TAP. (Its rendering: test-json.c.)
 */
#include <fcntl.h>
#include <string.h>

#include "report.h"
#include "util.h"

#include "../lib/tap.h"

static void test_fd_failure(const struct cd_report_info *info)
{
	struct cd_report_file rf = { .dirfd = -1, .fd = -1 };
	struct cordon_error err = { 0 };
	char want[128];
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	int r;

	if (fd < 0) {
		skip("no /dev/full", "a report fd that cannot be written");
		return;
	}
	r = cd_report_write(info, &rf, fd, &err);
	snprintf(want, sizeof(want), "file descriptor %d: No space left on device", fd);
	is_int(r, -ENOSPC, "report fd on /dev/full: -ENOSPC");
	is_str(err.step, "report", "... step report");
	is_str(err.msg, want, "... naming the fd and why");
	close(fd);
}

static void test_file_failure(const struct cd_report_info *info)
{
	char dir[] = "/tmp/cordon-test-report.XXXXXX";
	struct cd_report_file rf = { .dirfd = -1, .fd = -1 };
	struct cordon_error err = { 0 };
	char want[256];
	int r;

	if (!ok(mkdtemp(dir) != NULL, "a scratch directory"))
		return;
	/* a report file whose fd cannot be written: as a full disk would make it */
	rf.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	rf.fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	rf.path = strdup(dir);
	rf.name = strdup("r.json");
	rf.tmp = strdup(".r.json.tmp");
	r = cd_report_write(info, &rf, -1, &err);
	snprintf(want, sizeof(want), "%s/r.json: No space left on device", dir);
	is_int(r, -ENOSPC, "report file that cannot be written: -ENOSPC");
	is_str(err.step, "report", "... step report");
	is_str(err.msg, want, "... naming the path and why");
	ok(rf.fd < 0 && rf.dirfd < 0 && !rf.path, "... and the file is let go");
	ok(faccessat(AT_FDCWD, want, F_OK, 0) < 0, "... no file at the path");
	rmdir(dir);
}

static void test_nothing_asked(const struct cd_report_info *info)
{
	struct cd_report_file rf = { .dirfd = -1, .fd = -1 };
	struct cordon_error err = { 0 };

	is_int(cd_report_write(info, &rf, -1, &err), 0, "no report asked for: 0");
	is_str(err.msg, "", "... and no error");
}

int main(void)
{
	struct cordon_config *c = cordon_config_new();
	const char *argv[] = { "true", NULL };
	struct cordon_result res = { .outcome = CORDON_OUTCOME_EXITED };
	struct cordon_error err = { 0 };
	struct cd_report_info info = { .workdir = "/w", .workdir_target = "/w", .chdir = "/w",
				       .res = &res };

	if (!c || cordon_config_set_command(c, argv, &err) < 0)
		return 1;
	info.c = c;
	test_nothing_asked(&info);
	test_fd_failure(&info);
	test_file_failure(&info);
	cordon_config_free(c);
	return done_testing();
}
