/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-report.c - the report (report.h): its rendering, checked with python3's json module when
 * python3 is there, and its writing: a report that cannot be written is an error naming where,
 * never silence. TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "config.h"
#include "json.h"
#include "mount.h"

#include "report.h"
#include "util.h"

#include "../lib/tap.h"

static bool have_python(void)
{
	return system("command -v python3 >/dev/null 2>&1") == 0;
}

/* Feed text to a shell command on its stdin; its exit status, or -1. */
static int pipe_to(const char *cmd, const char *text)
{
	FILE *f = popen(cmd, "w");
	int st;

	if (!f)
		return -1;
	fputs(text, f);
	st = pclose(f);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Run python3 on text (from a temp file) and read back its whole stdout (the caller frees it). */
static char *python_out(const char *script, const char *text)
{
	char path[] = "/tmp/cordon-test-json.XXXXXX";
	_cleanup_free_ char *cmd = NULL;
	char *out = NULL;
	size_t len = 0;
	FILE *in, *f;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	in = fdopen(fd, "w");
	if (!in) {
		close(fd);
		unlink(path);
		return NULL;
	}
	fputs(text, in);
	fclose(in);
	cmd = cd_strdup_printf("python3 -c '%s' < %s", script, path);
	f = cmd ? popen(cmd, "r") : NULL;
	if (f) {
		FILE *mem = open_memstream(&out, &len);
		char buf[4096];
		size_t n;

		while (mem && (n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, mem);
		if (mem)
			fclose(mem);
		pclose(f);
	}
	unlink(path);
	return out;
}

#define VALIDATE "import json,sys; json.load(sys.stdin)"
/* One line per top-level key the report must have (MISSING when it has not), then the env names
 * and the identity. Values as json.dumps with sorted keys. */
#define SUMMARY                                                                                    \
	"import json,sys\n"                                                                        \
	"d = json.load(sys.stdin)\n"                                                               \
	"for k in (\"version\", \"id\", \"command\", \"outcome\", \"exit_code\", \"status\",\n"    \
	"          \"signal\", \"error\"):\n"                                                      \
	"    print(k, json.dumps(d.get(k, \"MISSING\"), sort_keys=True))\n"                        \
	"a = d.get(\"applied\")\n"                                                                 \
	"print(\"applied\", type(a).__name__)\n"                                                   \
	"print(\"env\", json.dumps(a[\"env\"]))\n"                                                 \
	"print(\"identity\", json.dumps(a[\"identity\"], sort_keys=True))\n"                       \
	"print(\"mounts\", json.dumps(a[\"mounts\"], sort_keys=True))\n"

struct report_case {
	const char *name;
	struct cordon_result res;
	const struct cd_identity *id;
	const struct cd_mount_plan *plan;
	const struct cd_rlimits_got *rlimits; /* what the command got; NULL: never got that far */
	const char *summary; /* what SUMMARY prints */
	const char *contains[4];
};

static void check_report(const struct cordon_config *c, char *const *envp,
			 const struct report_case *rc, bool python)
{
	static const struct cd_mount_plan empty = {0};
	struct cd_report_info info = {
	    .c = c,
	    .workdir = "/w",
	    .workdir_target = "/w",
	    .chdir = "/w/sub",
	    .id = rc->id,
	    .plan = rc->plan ? rc->plan : &empty,
	    .envp = envp,
	    .res = &rc->res,
	    .rlimits = rc->rlimits,
	};
	char *s = cd_report_render(&info);

	if (!ok(s != NULL, "report %s: rendered", rc->name))
		return;
	ok(strlen(s) > 2 && s[0] == '{' && strcmp(s + strlen(s) - 2, "}\n") == 0,
	   "report %s: one object and a newline", rc->name);
	ok(strchr(s, '\n') == s + strlen(s) - 1, "report %s: on one line", rc->name);
	unlike_str(s, "hunter2", "report %s: no env value", rc->name);
	unlike_str(s, "/secret/bin", "report %s: no PATH value", rc->name);
	like_str(s, "\"env\":[\"SECRET\",\"PATH\",\"EMPTY\",\"NOEQ\"]",
		 "report %s: env names only, in order", rc->name);
	like_str(s, "\"version\":1,", "report %s: version %d", rc->name, CORDON_REPORT_VERSION);
	like_str(s, "\"command\":[\"echo\",\"say \\\"hi\\\"\\n\"]", "report %s: command, escaped",
		 rc->name);
	for (size_t i = 0; i < CD_ELEMENTSOF(rc->contains) && rc->contains[i]; i++)
		like_str(s, rc->contains[i], "report %s: has %s", rc->name, rc->contains[i]);
	if (!python) {
		skip("python3 not found", "report %s: parses as JSON", rc->name);
		skip("python3 not found", "report %s: keys and values", rc->name);
	} else {
		char *sum = python_out(SUMMARY, s);

		is_int(pipe_to("python3 -c '" VALIDATE "'", s), 0, "report %s: parses as JSON",
		       rc->name);
		if (!is_str(sum, rc->summary, "report %s: keys and values", rc->name))
			diag("report: %s", s);
		free(sum);
	}
	free(s);
}

static void test_report(void)
{
	const char *argv[] = {"echo", "say \"hi\"\n", NULL};
	char *envp[] = {"SECRET=hunter2", "PATH=/secret/bin", "EMPTY=", "NOEQ", NULL};
	struct cordon_error err = {0};
	struct cordon_config *c = cordon_config_new();
	bool python = have_python();
	char user[] = "x", home[] = "/home/x";
	char src_usr[] = "usr/bin", dst_bin[] = "/bin", dst_tmp[] = "/tmp", src_w[] = "/host/w",
	     dst_w[] = "/w";
	struct cd_mnt mnts[] = {
	    {.kind = CD_MNT_SYMLINK, .src = src_usr, .dst = dst_bin, .fd = -1},
	    {.kind = CD_MNT_TMPFS, .dst = dst_tmp, .size = 1024, .fd = -1},
	    {.kind = CD_MNT_WORKDIR, .src = src_w, .dst = dst_w, .fd = -1},
	};
	const struct cd_mount_plan plan = {.m = mnts, .n = CD_ELEMENTSOF(mnts)};
	const struct cd_identity id = {
	    .inside_uid = 1000,
	    .inside_gid = 100,
	    .host_uid = 1000,
	    .host_gid = 100,
	    .user = user,
	    .home = home,
	};
	struct cd_rlimits_got got = {.valid = true}, none = {.valid = false};
	const struct report_case cases[] = {
	    {
		.name = "exited",
		.res = {.outcome = CORDON_OUTCOME_EXITED,
			.exit_code = 3,
			.status = 3,
			.id = "0123456789abcdef0123456789abcdef",
			.wall_ns = 1500000},
		.summary = "version 1\n"
			   "id \"0123456789abcdef0123456789abcdef\"\n"
			   "command [\"echo\", \"say \\\"hi\\\"\\n\"]\n"
			   "outcome \"exited\"\n"
			   "exit_code 3\n"
			   "status 3\n"
			   "signal null\n"
			   "error null\n"
			   "applied dict\n"
			   "env [\"SECRET\", \"PATH\", \"EMPTY\", \"NOEQ\"]\n"
			   "identity null\n"
			   "mounts []\n",
		.rlimits = &got,
		.contains = {"\"wall_us\":1500,", "\"identity\":null",
			     "\"rlimits\":{\"cpu\":{\"soft\":\"unlimited\",\"hard\":\"unlimited\"},"
			     "\"fsize\":{\"soft\":\"unlimited\",\"hard\":\"unlimited\"},",
			     "\"core\":{\"soft\":0,\"hard\":0},\"rss\":{\"soft\":\"unlimited\","
			     "\"hard\":\"unlimited\"},\"nproc\":{\"soft\":1,\"hard\":2},"},
	    },
	    {
		.name = "timeout",
		.res = {.outcome = CORDON_OUTCOME_TIMEOUT,
			.exit_code = CORDON_EXIT_TIMEOUT,
			.signal = SIGTERM},
		.id = &id,
		.plan = &plan,
		.summary = "version 1\n"
			   "id \"\"\n"
			   "command [\"echo\", \"say \\\"hi\\\"\\n\"]\n"
			   "outcome \"timeout\"\n"
			   "exit_code 124\n"
			   "status null\n"
			   "signal 15\n"
			   "error null\n"
			   "applied dict\n"
			   "env [\"SECRET\", \"PATH\", \"EMPTY\", \"NOEQ\"]\n"
			   "identity {\"gid\": 100, \"home\": \"/home/x\", \"host_gid\": 100, "
			   "\"host_uid\": 1000, \"idmapped_workdir\": false, \"uid\": 1000, "
			   "\"user\": \"x\"}\n"
			   "mounts [{\"path\": \"/bin\", \"target\": \"usr/bin\", "
			   "\"type\": \"symlink\"}, {\"path\": \"/tmp\", \"read_only\": false, "
			   "\"size\": 1024, \"type\": \"tmpfs\"}, {\"path\": \"/w\", "
			   "\"read_only\": false, \"source\": \"/host/w\", "
			   "\"type\": \"workdir\"}]\n",
		.contains = {"\"signal\":15", "\"status\":null",
			     "\"rlimits\":{\"core\":{\"soft\":0,\"hard\":0},"
			     "\"nofile\":{\"soft\":\"unlimited\",\"hard\":\"unlimited\"}},"},
	    },
	    {
		.name = "setup-error",
		.res = {.outcome = CORDON_OUTCOME_SETUP_ERROR,
			.exit_code = CORDON_EXIT_FAILURE,
			.error = {.code = EACCES,
				  .step = "mount",
				  .msg = "bind \"/a\" on /b:\tPermission denied\n"}},
		.summary = "version 1\n"
			   "id \"\"\n"
			   "command [\"echo\", \"say \\\"hi\\\"\\n\"]\n"
			   "outcome \"setup-error\"\n"
			   "exit_code 125\n"
			   "status null\n"
			   "signal null\n"
			   "error {\"errno\": 13, \"message\": \"bind \\\"/a\\\" on "
			   "/b:\\tPermission denied\\n\", \"step\": \"mount\"}\n"
			   "applied dict\n"
			   "env [\"SECRET\", \"PATH\", \"EMPTY\", \"NOEQ\"]\n"
			   "identity null\n"
			   "mounts []\n",
		.contains = {"\"error\":{\"step\":\"mount\",\"errno\":13,\"message\":"
			     "\"bind \\\"/a\\\" on /b:\\tPermission denied\\n\"}",
			     "\"rlimits\":null,"},
		.rlimits = &none,
	    },
	};

	for (int i = 0; i < RLIM_NLIMITS; i++)
		got.r[i] = (struct rlimit){RLIM_INFINITY, RLIM_INFINITY};
	got.r[RLIMIT_CORE] = (struct rlimit){0, 0};
	got.r[RLIMIT_NPROC] = (struct rlimit){1, 2};
	if (!ok(c != NULL, "cordon_config_new"))
		return;
	ok(cordon_config_set_command(c, argv, &err) == 0, "report: set_command");
	ok(cordon_config_set_rlimit(c, RLIMIT_NOFILE, RLIM_INFINITY, RLIM_INFINITY, &err) == 0,
	   "report: set_rlimit nofile unlimited");
	for (size_t i = 0; i < CD_ELEMENTSOF(cases); i++)
		check_report(c, envp, &cases[i], python);
	cordon_config_free(c);
}

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
	test_report();
	test_nothing_asked(&info);
	test_fd_failure(&info);
	test_file_failure(&info);
	cordon_config_free(c);
	return done_testing();
}
