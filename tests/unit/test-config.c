/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-config.c - the config setters (config.c) through the public API. Works in a scratch
 * directory under /tmp. TAP on stdout. (The mount plan built from a config: test-mountplan.c.)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include "config.h"
#include "mount.h"
#include "userns.h"
#include "workdir.h"

#include "../lib/tap.h"

#define NOT_ABS(p)    "\"" p "\" is not an absolute path without \"..\""
#define NOT_ROOT(p)   "\"" p "\": cannot replace the root directory"
#define MANAGED(p, m) "\"" p "\": " m " is managed by cordon"
#define HOME_DIR                                                                                   \
	": refusing to make it writable: a home directory, or one that holds home directories: "  \
	"they hold ~/.ssh and other secrets (use a project directory below one)"
#define LAST_LINK                                                                                  \
	": is a symlink, which cordon does not follow here (a sandbox may have left it): give "    \
	"the real path"
#define HOSTNAME_MSG(n) "\"" n "\" is not a hostname (1-64 of a-z 0-9 - .)"

static char scratch[PATH_MAX];	  /* resolved */
static char dir_a[PATH_MAX + 8];  /* scratch/a, a directory */
static char file_f[PATH_MAX + 8]; /* scratch/f, a regular file */
static char link_l[PATH_MAX + 8]; /* scratch/l -> a */

static struct cordon_error err;
static struct stat dir_st; /* of dir_a */

static struct cordon_error *fresh_err(void)
{
	memset(&err, 0, sizeof(err));
	return &err;
}

/* r and the error are what a refused setter leaves: -EINVAL (or -code), step, code, message. */
static void refused(int r, int code, const char *step, const char *msg, const char *what)
{
	is_int(r, code ? -code : -EINVAL, "%s: refused", what);
	is_str(err.msg, msg, "%s: message", what);
	ok(err.code == code && strcmp(err.step, step) == 0, "%s: step \"%s\", code %d", what, step,
	   code);
}

static int setup_scratch(void)
{
	char tmpl[] = "/tmp/cordon-test-config.XXXXXX";
	int fd;

	if (!mkdtemp(tmpl) || !realpath(tmpl, scratch))
		return -1;
	snprintf(dir_a, sizeof(dir_a), "%s/a", scratch);
	snprintf(file_f, sizeof(file_f), "%s/f", scratch);
	snprintf(link_l, sizeof(link_l), "%s/l", scratch);
	if (mkdir(dir_a, 0755) < 0 || symlink("a", link_l) < 0 || stat(dir_a, &dir_st) < 0)
		return -1;
	fd = open(file_f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void remove_scratch(void)
{
	char p[PATH_MAX + 16];

	unlink(link_l);
	unlink(file_f);
	rmdir(dir_a);
	snprintf(p, sizeof(p), "%s/home", scratch);
	unlink(p);
	snprintf(p, sizeof(p), "%s/h", scratch);
	rmdir(p);
	rmdir(scratch);
}

static void test_defaults(void)
{
	struct cordon_config *c = cordon_config_new();

	ok(c->fs.tmp_size == 256ull << 20 && c->limits.kill_after_ns == 2 * NSEC_PER_SEC &&
	       c->outputs.report_fd == -1 && c->net.mode == CORDON_NET_NONE &&
	       !c->identity.hostname && !c->fs.workdir &&
	       !c->command.argv && !c->limits.timeout_ns,
	   "defaults: /tmp 256M, kill-after 2s, no report fd, net none, no timeout");
	ok(c->limits.rlimits[RLIMIT_CORE].set && c->limits.rlimits[RLIMIT_CORE].soft == 0 &&
	       c->limits.rlimits[RLIMIT_CORE].hard == 0 && !c->limits.rlimits[RLIMIT_NOFILE].set,
	   "defaults: core dumps off, other limits unset");
	cordon_config_free(c);
	cordon_config_free(NULL);
	ok(1, "cordon_config_free(NULL) is fine");
}

/* the rules, as a pure function of the canonical path */
static void test_workdir_rules(void)
{
	static char *const own[] = { "/home/ann", NULL };
	static char *const own_var[] = { "/var/lib/jenkins", NULL };
	static char *const homes[] = { "/home/ann", "/root", "/var/lib/jenkins", "/var/lib/postgresql",
				       NULL };
	static char *const path_dirs[] = { "/home/ann/bin", "/home/ann/go/bin", "/usr/bin", NULL };
	static const struct {
		const char *path;
		const char *why; /* the start of the rule's reason; NULL: accepted */
	} cases[] = {
		{ "/", "the root directory" },
		{ "/etc", "a system directory" },
		{ "/etc/cron.d", "a system directory" },
		{ "/usr/local/bin", "a system directory" },
		{ "/opt/tool", "a system directory" },
		{ "/run/user/1000", "a system directory" },
		{ "/dev/shm", "a system directory" },
		{ "/proc/1", "a system directory" },
		{ "/sys/fs/cgroup", "a system directory" },
		{ "/boot/efi", "a system directory" },
		{ "/lib64", "a system directory" },
		{ "/var", "a system directory (/var" },
		{ "/var/lib/dpkg", "a system directory (/var" },
		{ "/var/spool/cron", "a system directory (/var" },
		{ "/var/tmp", "a directory every user shares" },
		{ "/var/tmp/job", NULL },
		{ "/var/lib/jenkins", "a system directory (/var" },
		{ "/var/lib/jenkins/workspace/x", "a system directory (/var" },
		{ "/var/lib/postgresql/15", "a system directory (/var" },
		{ "/tmp", "a directory every user shares" },
		{ "/tmp/x", NULL },
		{ "/home", "a home directory, or one that holds" },
		{ "/home/ann", "a home directory" },
		{ "/root", "a home directory" },
		{ "/home/ann/proj", NULL },
		{ "/home/ann/.ssh", "a store of credentials" },
		{ "/home/ann/.config/app", "a store of credentials" },
		{ "/home/ann/.local/share", "a store of credentials" },
		{ "/home/ann/proj/.aws", "a store of credentials" },
		{ "/home/ann/.sshx", "a hidden directory of a home" },
		{ "/home/ann/.m2/repository", "a hidden directory of a home" },
		{ "/home/ann/.vim", "a hidden directory of a home" },
		{ "/home/ann/proj/.venv", NULL },
		{ "/home/ann/bin", "a directory on your PATH" },
		{ "/home/ann/go", "a directory on your PATH, or one that holds it" },
		{ "/home/ann/go/src/x", NULL },
		{ "/srv/job/42", NULL },
		{ "/data/project", NULL },
	};

	for (size_t i = 0; i < CD_ELEMENTSOF(cases); i++) {
		const char *why = cd_workdir_refusal(cases[i].path, NULL, own, homes, path_dirs);

		if (!cases[i].why)
			ok(!why, "workdir rule: %s accepted%s%s", cases[i].path, why ? ": " : "",
			   why ? why : "");
		else
			ok(why && strncmp(why, cases[i].why, strlen(cases[i].why)) == 0,
			   "workdir rule: %s refused: %s", cases[i].path, why ? why : "(accepted)");
	}
	ok(!cd_workdir_refusal("/var/lib/jenkins/workspace/x", NULL, own_var, homes, path_dirs),
	   "workdir rule: below the caller's own home under /var: accepted");
	ok(cd_workdir_refusal("/var/lib/postgresql/15", NULL, own_var, homes, path_dirs) != NULL,
	   "workdir rule: below another account's home under /var: refused");
	/* cordon serve's state directory: its sandboxes' workdirs, not itself nor what is beside */
	ok(!cd_workdir_refusal("/var/lib/cordon/serve/abc", "/var/lib/cordon/serve", own, homes,
			       path_dirs),
	   "workdir rule: below cordon serve's state directory (root's): accepted");
	ok(!cd_workdir_refusal("/home/ann/.local/state/cordon/serve/abc",
			       "/home/ann/.local/state/cordon/serve", own, homes, path_dirs),
	   "workdir rule: below cordon serve's state directory (a user's): accepted");
	ok(cd_workdir_refusal("/var/lib/cordon/serve", "/var/lib/cordon/serve", own, homes,
			      path_dirs) != NULL,
	   "workdir rule: cordon serve's state directory itself: refused");
	ok(cd_workdir_refusal("/var/lib/cordon/servex", "/var/lib/cordon/serve", own, homes,
			      path_dirs) != NULL &&
		   cd_workdir_refusal("/var/lib/cordon", "/var/lib/cordon/serve", own, homes,
				      path_dirs) != NULL,
	   "workdir rule: beside or above it: refused");
	ok(cd_workdir_refusal("/etc/cordon/serve/x", "/etc/cordon/serve", own, homes, path_dirs) !=
		   NULL,
	   "workdir rule: a state directory in a system tree grants nothing");
}

static void test_workdir(void)
{
	static const char *const system_dirs[] = {
	    "/", "/usr", "/etc", "/tmp", "/var", "/var/tmp", "/dev/shm", "/proc",
	};
	/* spelled differently, resolved to a system directory */
	static const struct {
		const char *in;
		const char *resolved;
	} aliases[] = {
	    {"/usr/", "/usr"}, {"//etc", "/etc"}, {"/usr/../etc", "/etc"}, {"/tmp/.", "/tmp"}};
	struct cordon_config *c = cordon_config_new();
	const char *old_home = getenv("HOME");
	_cleanup_free_ char *saved_home = old_home ? strdup(old_home) : NULL;
	char home[PATH_MAX + 8], home_slash[PATH_MAX + 8], home_link[PATH_MAX + 8],
	    msg[PATH_MAX + 256], what[PATH_MAX + 64];
	int r;

	for (size_t i = 0; i < CD_ELEMENTSOF(system_dirs); i++) {
		snprintf(what, sizeof(what), "workdir %s", system_dirs[i]);
		r = cordon_config_set_workdir(c, system_dirs[i], fresh_err());
		is_int(r, -EINVAL, "%s: refused", what);
		snprintf(msg, sizeof(msg), "%s: refusing to make it writable: ", system_dirs[i]);
		ok(strncmp(err.msg, msg, strlen(msg)) == 0 && strcmp(err.step, "workdir") == 0,
		   "%s: says which rule: %s", what, err.msg);
	}
	for (size_t i = 0; i < CD_ELEMENTSOF(aliases); i++) {
		snprintf(msg, sizeof(msg), "%s: refusing to make it writable: ", aliases[i].resolved);
		snprintf(what, sizeof(what), "workdir %s", aliases[i].in);
		r = cordon_config_set_workdir(c, aliases[i].in, fresh_err());
		ok(r == -EINVAL && strncmp(err.msg, msg, strlen(msg)) == 0,
		   "%s: refused as %s: %s", what, aliases[i].resolved, err.msg);
	}
	ok(c->fs.workdir == NULL, "workdir: nothing stored after refusals");

	/* the caller's home directory, as $HOME says */
	snprintf(home, sizeof(home), "%s/h", scratch);
	snprintf(home_slash, sizeof(home_slash), "%s/h/", scratch);
	snprintf(home_link, sizeof(home_link), "%s/home", scratch);
	if (mkdir(home, 0700) < 0 || symlink("h", home_link) < 0)
		diag("cannot create %s: %s", home, strerror(errno));
	setenv("HOME", home, 1);
	snprintf(msg, sizeof(msg), "%s" HOME_DIR, home);
	refused(cordon_config_set_workdir(c, home, fresh_err()), 0, "workdir", msg,
		"workdir $HOME");
	refused(cordon_config_set_workdir(c, home_slash, fresh_err()), 0, "workdir", msg,
		"workdir $HOME/");
	snprintf(msg, sizeof(msg), "%s" LAST_LINK, home_link);
	refused(cordon_config_set_workdir(c, home_link, fresh_err()), ELOOP, "workdir", msg,
		"workdir given as a symlink (to $HOME)");
	/* $HOME spelled differently from the resolved path */
	setenv("HOME", home_slash, 1);
	r = cordon_config_set_workdir(c, home, fresh_err());
	ok(r < 0, "workdir %s refused when HOME=%s (r=%d)", home, home_slash, r);
	setenv("HOME", home_link, 1);
	r = cordon_config_set_workdir(c, home, fresh_err());
	ok(r < 0, "workdir %s refused when HOME=%s -> h (r=%d)", home, home_link, r);
	if (saved_home)
		setenv("HOME", saved_home, 1);
	else
		unsetenv("HOME");
	free(c->fs.workdir);
	c->fs.workdir = NULL;

	/* the real $HOME, whatever it is, is refused one way or the other */
	if (saved_home && access(saved_home, F_OK) == 0) {
		r = cordon_config_set_workdir(c, saved_home, fresh_err());
		ok(r < 0, "workdir real $HOME %s refused", saved_home);
		like_str(err.msg, ": refusing to make ", "workdir real $HOME: message");
	} else {
		skip("no $HOME", "workdir real $HOME refused");
		skip("no $HOME", "workdir real $HOME: message");
	}

	/* accepted: a fresh directory, stored as given (cordon_run() opens it again) */
	is_int(cordon_config_set_workdir(c, dir_a, fresh_err()), 0, "workdir %s accepted", dir_a);
	is_str(c->fs.workdir, dir_a, "workdir stored");
	snprintf(msg, sizeof(msg), "%s" LAST_LINK, link_l);
	refused(cordon_config_set_workdir(c, link_l, fresh_err()), ELOOP, "workdir", msg,
		"workdir given as a symlink");
	if (chdir(scratch) == 0) {
		is_int(cordon_config_set_workdir(c, "a/", fresh_err()), 0, "relative workdir");
		is_str(c->fs.workdir, "a/", "relative workdir stored as given");
		if (chdir("/") < 0)
			diag("chdir /: %s", strerror(errno));
	} else {
		skip("cannot chdir", "relative workdir");
		skip("cannot chdir", "relative workdir stored as given");
	}

	/* refused: not there, not a directory, empty */
	snprintf(what, sizeof(what), "%s/nope", scratch);
	snprintf(msg, sizeof(msg), "%s/nope: No such file or directory", scratch);
	refused(cordon_config_set_workdir(c, what, fresh_err()), ENOENT, "workdir", msg,
		"workdir that does not exist");
	snprintf(msg, sizeof(msg), "%s: not a directory", file_f);
	refused(cordon_config_set_workdir(c, file_f, fresh_err()), ENOTDIR, "workdir", msg,
		"workdir that is a file");
	refused(cordon_config_set_workdir(c, "", fresh_err()), 0, "workdir", "empty path",
		"workdir \"\"");
	refused(cordon_config_set_workdir(c, NULL, fresh_err()), 0, "workdir", "empty path",
		"workdir NULL");
	is_str(c->fs.workdir, "a/", "a refused workdir keeps the previous one");
	cordon_config_free(c);
}

enum inside_setter { WORKDIR_TARGET, RO_BIND, TMPFS, HIDE, N_SETTERS };

static const char *const setter_step[] = {"workdir-target", "ro-bind", "tmpfs", "hide"};

static int set_inside(struct cordon_config *c, enum inside_setter s, const char *p)
{
	switch (s) {
	case WORKDIR_TARGET:
		return cordon_config_set_workdir_target(c, p, fresh_err());
	case RO_BIND:
		return cordon_config_add_ro_bind(c, dir_a, p, fresh_err());
	case TMPFS:
		return cordon_config_add_tmpfs(c, p, 0, fresh_err());
	case HIDE:
	default:
		return cordon_config_add_hide(c, p, fresh_err());
	}
}

/* What the last call of that setter stored. */
static const char *stored(const struct cordon_config *c, enum inside_setter s)
{
	switch (s) {
	case WORKDIR_TARGET:
		return c->fs.workdir_target;
	case RO_BIND:
		return c->fs.n_binds ? c->fs.binds[c->fs.n_binds - 1].dst : NULL;
	case TMPFS:
		return c->fs.n_tmpfs ? c->fs.tmpfs[c->fs.n_tmpfs - 1].path : NULL;
	case HIDE:
	default:
		return c->fs.hide ? c->fs.hide[cd_strv_len(c->fs.hide) - 1] : NULL;
	}
}

static size_t count(const struct cordon_config *c, enum inside_setter s)
{
	switch (s) {
	case WORKDIR_TARGET:
		return c->fs.workdir_target ? 1 : 0;
	case RO_BIND:
		return c->fs.n_binds;
	case TMPFS:
		return c->fs.n_tmpfs;
	case HIDE:
	default:
		return cd_strv_len(c->fs.hide);
	}
}

static void test_inside_paths(void)
{
	static const struct {
		const char *p;
		const char *msg;
	} bad[] = {
	    {"rel", NOT_ABS("rel")},
	    {"a/b", NOT_ABS("a/b")},
	    {"", NOT_ABS("")},
	    {"..", NOT_ABS("..")},
	    {"/..", NOT_ABS("/..")},
	    {"/a/../b", NOT_ABS("/a/../b")},
	    {"/a/..", NOT_ABS("/a/..")},
	    {"/", NOT_ROOT("/")},
	    {"//", NOT_ROOT("//")},
	    {"/./", NOT_ROOT("/./")},
	    {"/proc", MANAGED("/proc", "/proc")},
	    {"/proc/", MANAGED("/proc/", "/proc")},
	    {"/proc/sys/kernel", MANAGED("/proc/sys/kernel", "/proc")},
	    {"/sys", MANAGED("/sys", "/sys")},
	    {"/sys/fs/cgroup", MANAGED("/sys/fs/cgroup", "/sys")},
	    {"/dev", MANAGED("/dev", "/dev")},
	    {"/dev/shm", MANAGED("/dev/shm", "/dev")},
	    {"//dev/./shm/", MANAGED("//dev/./shm/", "/dev")},
	};
	static const struct {
		const char *p;
		const char *want;
	} good[] = {
	    {"//a/./b/", "/a/b"},    {"/opt/x", "/opt/x"},     {"/procx", "/procx"},
	    {"/device/", "/device"}, {"/srv/sys", "/srv/sys"}, {"/tmp/t", "/tmp/t"},
	};
	char what[256];

	for (int s = 0; s < N_SETTERS; s++) {
		struct cordon_config *c = cordon_config_new();

		for (size_t i = 0; i < CD_ELEMENTSOF(bad); i++) {
			snprintf(what, sizeof(what), "%s \"%s\"", setter_step[s], bad[i].p);
			refused(set_inside(c, s, bad[i].p), 0, setter_step[s], bad[i].msg, what);
		}
		is_uint(count(c, s), 0, "%s: nothing stored after refusals", setter_step[s]);
		for (size_t i = 0; i < CD_ELEMENTSOF(good); i++) {
			is_int(set_inside(c, s, good[i].p), 0, "%s \"%s\" accepted", setter_step[s],
			       good[i].p);
			is_str(stored(c, s), good[i].want, "%s \"%s\" stored as %s", setter_step[s],
			       good[i].p, good[i].want);
		}
		cordon_config_free(c);
	}
}

static void test_inside_path_details(void)
{
	struct cordon_config *c = cordon_config_new();
	char msg[PATH_MAX + 128], longp[5000];
	int r;

	/* too long for PATH_MAX once normalized */
	for (size_t i = 0; i < sizeof(longp) - 1; i++)
		longp[i] = i % 100 == 0 ? '/' : 'a';
	longp[sizeof(longp) - 1] = '\0';
	r = cordon_config_add_tmpfs(c, longp, 0, fresh_err());
	ok(r == -ENAMETOOLONG && err.code == ENAMETOOLONG && strcmp(err.step, "tmpfs") == 0,
	   "tmpfs: a path longer than PATH_MAX is ENAMETOOLONG (r=%d)", r);
	ok(strncmp(err.msg, "\"/aaaa", 6) == 0, "tmpfs: too long: message names the path");

	/* tmpfs sizes */
	is_int(cordon_config_add_tmpfs(c, "/t0", 0, fresh_err()), 0, "tmpfs size 0");
	is_uint(c->fs.tmpfs[c->fs.n_tmpfs - 1].size, 64ull << 20, "tmpfs size 0 is the default 64M");
	is_int(cordon_config_add_tmpfs(c, "/t1", 1 << 20, fresh_err()), 0, "tmpfs size 1M");
	is_uint(c->fs.tmpfs[c->fs.n_tmpfs - 1].size, 1 << 20, "tmpfs size 1M stored");

	/* ro-bind: the source is a host path, resolved; dst NULL means the same path inside */
	is_int(cordon_config_add_ro_bind(c, link_l, NULL, fresh_err()), 0,
	       "ro-bind symlink, no dst");
	is_str(c->fs.binds[c->fs.n_binds - 1].src, dir_a, "ro-bind: source resolved");
	is_str(c->fs.binds[c->fs.n_binds - 1].dst, dir_a,
	       "ro-bind: dst defaults to the resolved source");
	is_int(cordon_config_add_ro_bind(c, file_f, "/etc//x.conf", fresh_err()), 0,
	       "ro-bind of a file");
	is_str(c->fs.binds[c->fs.n_binds - 1].dst, "/etc/x.conf", "ro-bind of a file: dst normalized");
	refused(cordon_config_add_ro_bind(c, "/", NULL, fresh_err()), 0, "ro-bind", NOT_ROOT("/"),
		"ro-bind / without dst");
	refused(cordon_config_add_ro_bind(c, "/proc/self/..", NULL, fresh_err()), 0, "ro-bind",
		MANAGED("/proc", "/proc"), "ro-bind /proc/self/.. without dst");
	snprintf(msg, sizeof(msg), "%s/nope: No such file or directory", scratch);
	{
		char nope[PATH_MAX + 8];

		snprintf(nope, sizeof(nope), "%s/nope", scratch);
		refused(cordon_config_add_ro_bind(c, nope, "/x", fresh_err()), ENOENT, "ro-bind",
			msg, "ro-bind of a missing source");
	}
	refused(cordon_config_add_ro_bind(c, "", "/x", fresh_err()), 0, "ro-bind", "empty path",
		"ro-bind of an empty source");
	refused(cordon_config_add_ro_bind(c, dir_a, "rel", fresh_err()), 0, "ro-bind",
		NOT_ABS("rel"), "ro-bind to a relative dst");
	is_uint(c->fs.n_binds, 2, "ro-bind: two binds stored");

	/* chdir: absolute, normalized; / and the managed trees are fine; a relative one is the
	 * workdir's, and may not climb out of it */
	is_int(cordon_config_set_chdir(c, "rel/./x/../y/", fresh_err()), 0, "chdir relative");
	is_str(c->command.chdir, "rel/y", "chdir relative: normalized below the workdir");
	ok(c->command.chdir_relative, "chdir relative: marked the workdir's");
	refused(cordon_config_set_chdir(c, "rel/../..", fresh_err()), 0, "chdir",
		"\"rel/../..\": outside the workdir", "chdir relative climbing out");
	refused(cordon_config_set_chdir(c, "/a/../b", fresh_err()), 0, "chdir", NOT_ABS("/a/../b"),
		"chdir with ..");
	is_int(cordon_config_set_chdir(c, "//w/./sub/", fresh_err()), 0, "chdir //w/./sub/");
	is_str(c->command.chdir, "/w/sub", "chdir normalized");
	is_int(cordon_config_set_chdir(c, "/", fresh_err()), 0, "chdir /");
	is_str(c->command.chdir, "/", "chdir / stored");

	/* rootfs: a host directory, resolved */
	is_int(cordon_config_set_rootfs(c, link_l, fresh_err()), 0, "rootfs symlink");
	is_str(c->fs.rootfs, dir_a, "rootfs resolved");
	snprintf(msg, sizeof(msg), "%s: not a directory", file_f);
	refused(cordon_config_set_rootfs(c, file_f, fresh_err()), ENOTDIR, "rootfs", msg,
		"rootfs that is a file");
	cordon_config_free(c);
}

static void test_hostname(void)
{
	static const char *const good[] = {"a-b.c", "cordon", "A1", "x", "0", "a.b-c.d9"};
	static const struct {
		const char *name;
		const char *msg;
	} bad[] = {
	    {"", HOSTNAME_MSG("")},	    {"-x", HOSTNAME_MSG("-x")},
	    {".x", HOSTNAME_MSG(".x")},	    {"a b", HOSTNAME_MSG("a b")},
	    {"a_b", HOSTNAME_MSG("a_b")},   {"a/b", HOSTNAME_MSG("a/b")},
	    {"a\nb", HOSTNAME_MSG("a\nb")}, {"\xc3\xa9", HOSTNAME_MSG("\xc3\xa9")},
	};
	struct cordon_config *c = cordon_config_new();
	char n64[65], n65[66], msg[128];

	for (size_t i = 0; i < CD_ELEMENTSOF(good); i++) {
		is_int(cordon_config_set_hostname(c, good[i], fresh_err()), 0,
		       "hostname \"%s\" accepted", good[i]);
		is_str(c->identity.hostname, good[i], "hostname \"%s\" stored", good[i]);
	}
	memset(n64, 'h', 64);
	n64[64] = '\0';
	memset(n65, 'h', 65);
	n65[65] = '\0';
	is_int(cordon_config_set_hostname(c, n64, fresh_err()), 0, "hostname of 64 characters");
	for (size_t i = 0; i < CD_ELEMENTSOF(bad); i++) {
		char what[64];

		snprintf(what, sizeof(what), "hostname \"%s\"", bad[i].name);
		refused(cordon_config_set_hostname(c, bad[i].name, fresh_err()), 0, "hostname",
			bad[i].msg, what);
	}
	snprintf(msg, sizeof(msg), "\"%s\" is not a hostname (1-64 of a-z 0-9 - .)", n65);
	refused(cordon_config_set_hostname(c, n65, fresh_err()), 0, "hostname", msg,
		"hostname of 65 characters");
	refused(cordon_config_set_hostname(c, NULL, fresh_err()), 0, "hostname", HOSTNAME_MSG(""),
		"hostname NULL");
	is_str(c->identity.hostname, n64, "a refused hostname keeps the previous one");
	cordon_config_free(c);
}

static void test_env(void)
{
	struct cordon_config *c = cordon_config_new();

	is_int(cordon_config_set_env(c, "FOO", "bar=baz", fresh_err()), 0, "env FOO");
	is_int(cordon_config_set_env(c, "EMPTY", NULL, fresh_err()), 0, "env EMPTY, NULL value");
	is_int(cordon_config_set_env(c, "X", "", fresh_err()), 0, "env X, empty value");
	is_uint(cd_strv_len(c->command.env), 3, "env: three stored");
	is_str(c->command.env[0], "FOO=bar=baz", "env FOO stored as KEY=VALUE");
	is_str(c->command.env[1], "EMPTY=", "env NULL value stored empty");
	is_str(c->command.env[2], "X=", "env empty value");
	refused(cordon_config_set_env(c, "", "x", fresh_err()), 0, "env",
		"\"\" is not a variable name", "env empty key");
	refused(cordon_config_set_env(c, NULL, "x", fresh_err()), 0, "env",
		"\"\" is not a variable name", "env NULL key");
	refused(cordon_config_set_env(c, "A=B", "x", fresh_err()), 0, "env",
		"\"A=B\" is not a variable name", "env key with =");
	refused(cordon_config_set_env(c, "=", "x", fresh_err()), 0, "env",
		"\"=\" is not a variable name", "env key =");
	is_uint(cd_strv_len(c->command.env), 3, "env: nothing stored after refusals");

	is_int(cordon_config_pass_env(c, "SSH_AUTH_SOCK", fresh_err()), 0, "pass-env");
	is_str(c->command.pass_env[0], "SSH_AUTH_SOCK", "pass-env stored");
	refused(cordon_config_pass_env(c, "", fresh_err()), 0, "pass-env",
		"\"\" is not a variable name", "pass-env empty key");
	refused(cordon_config_pass_env(c, NULL, fresh_err()), 0, "pass-env",
		"\"\" is not a variable name", "pass-env NULL key");
	refused(cordon_config_pass_env(c, "A=B", fresh_err()), 0, "pass-env",
		"\"A=B\" is not a variable name", "pass-env key with =");
	is_uint(cd_strv_len(c->command.pass_env), 1, "pass-env: one stored");
	cordon_config_free(c);
}

static void test_report_fd(void)
{
	struct cordon_config *c = cordon_config_new();
	char msg[128];
	int fds[2], closed, rd, wr, rw;

	closed = open("/dev/null", O_WRONLY | O_CLOEXEC);
	close(closed);
	snprintf(msg, sizeof(msg), "%d is not an open file descriptor", closed);
	refused(cordon_config_set_report_fd(c, closed, fresh_err()), EBADF, "report-fd", msg,
		"report-fd of a closed fd");
	refused(cordon_config_set_report_fd(c, -1, fresh_err()), EBADF, "report-fd",
		"-1 is not an open file descriptor", "report-fd -1");
	rd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	snprintf(msg, sizeof(msg), "%d is not open for writing", rd);
	refused(cordon_config_set_report_fd(c, rd, fresh_err()), EBADF, "report-fd", msg,
		"report-fd of an O_RDONLY fd");
	is_int(c->outputs.report_fd, -1, "report-fd: nothing stored after refusals");
	wr = open("/dev/null", O_WRONLY | O_CLOEXEC);
	is_int(cordon_config_set_report_fd(c, wr, fresh_err()), 0, "report-fd O_WRONLY");
	is_int(c->outputs.report_fd, wr, "report-fd stored");
	rw = open("/dev/null", O_RDWR | O_CLOEXEC);
	is_int(cordon_config_set_report_fd(c, rw, fresh_err()), 0, "report-fd O_RDWR");
	if (pipe2(fds, O_CLOEXEC) == 0) {
		snprintf(msg, sizeof(msg), "%d is not open for writing", fds[0]);
		refused(cordon_config_set_report_fd(c, fds[0], fresh_err()), EBADF, "report-fd",
			msg, "report-fd of a pipe's read end");
		is_int(cordon_config_set_report_fd(c, fds[1], fresh_err()), 0,
		       "report-fd of a pipe's write end");
		close(fds[0]);
		close(fds[1]);
	}
	close(rd);
	close(wr);
	close(rw);

	refused(cordon_config_set_report_file(c, "", fresh_err()), 0, "report", "empty path",
		"report file \"\"");
	refused(cordon_config_set_report_file(c, NULL, fresh_err()), 0, "report", "empty path",
		"report file NULL");
	is_int(cordon_config_set_report_file(c, "out.json", fresh_err()), 0, "report file");
	is_str(c->outputs.report_path, "out.json", "report file stored as given");
	cordon_config_free(c);
}

static void test_rlimit_setter(void)
{
	struct cordon_config *c = cordon_config_new();
	char msg[64];

	refused(cordon_config_set_rlimit(c, RLIMIT_NOFILE, 10, 5, fresh_err()), 0, "rlimit",
		"nofile: soft limit above hard limit", "set_rlimit nofile soft > hard");
	refused(cordon_config_set_rlimit(c, RLIMIT_AS, RLIM_INFINITY, 1 << 30, fresh_err()), 0,
		"rlimit", "as: soft limit above hard limit", "set_rlimit as unlimited:1G");
	ok(!c->limits.rlimits[RLIMIT_NOFILE].set && !c->limits.rlimits[RLIMIT_AS].set,
	   "set_rlimit: nothing stored after refusals");
	refused(cordon_config_set_rlimit(c, -1, 1, 1, fresh_err()), 0, "rlimit",
		"unknown resource -1", "set_rlimit resource -1");
	snprintf(msg, sizeof(msg), "unknown resource %d", RLIM_NLIMITS);
	refused(cordon_config_set_rlimit(c, RLIM_NLIMITS, 1, 1, fresh_err()), 0, "rlimit", msg,
		"set_rlimit resource RLIM_NLIMITS");
	is_int(cordon_config_set_rlimit(c, RLIMIT_NOFILE, 10, 20, fresh_err()), 0,
	       "set_rlimit nofile 10:20");
	ok(c->limits.rlimits[RLIMIT_NOFILE].set && c->limits.rlimits[RLIMIT_NOFILE].soft == 10 &&
	       c->limits.rlimits[RLIMIT_NOFILE].hard == 20,
	   "set_rlimit nofile stored");
	is_int(cordon_config_set_rlimit(c, RLIMIT_CORE, RLIM_INFINITY, RLIM_INFINITY, fresh_err()),
	       0, "set_rlimit core unlimited");
	ok(c->limits.rlimits[RLIMIT_CORE].soft == RLIM_INFINITY, "set_rlimit core unlimited stored");
	is_int(cordon_config_set_rlimit(c, RLIMIT_CPU, 5, 5, fresh_err()), 0,
	       "set_rlimit soft == hard");
	cordon_config_free(c);
}

static void test_command_and_scalars(void)
{
	struct cordon_config *c = cordon_config_new();
	const char *none[] = {NULL};
	const char *empty[] = {"", "x", NULL};
	const char *argv[] = {"make", "", "test", NULL};

	refused(cordon_config_set_command(c, NULL, fresh_err()), 0, "command", "no command given",
		"set_command NULL");
	refused(cordon_config_set_command(c, none, fresh_err()), 0, "command", "no command given",
		"set_command {NULL}");
	refused(cordon_config_set_command(c, empty, fresh_err()), 0, "command", "no command given",
		"set_command {\"\", ...}");
	ok(c->command.argv == NULL, "set_command: nothing stored after refusals");
	is_int(cordon_config_set_command(c, argv, fresh_err()), 0, "set_command make '' test");
	ok(c->command.argv && cd_strv_len(c->command.argv) == 3 &&
	       strcmp(c->command.argv[0], "make") == 0 &&
	       strcmp(c->command.argv[1], "") == 0 && strcmp(c->command.argv[2], "test") == 0 &&
	       c->command.argv[0] != argv[0],
	   "set_command copies argv, empty later arguments included");

	refused(cordon_config_set_timeout(c, CD_MAX_DURATION + 1, fresh_err()), 0, "timeout",
		"too long (at most 100 years)", "timeout above 100 years");
	is_int(cordon_config_set_timeout(c, CD_MAX_DURATION, fresh_err()), 0,
	       "timeout of 100 years");
	refused(cordon_config_set_kill_after(c, UINT64_MAX, fresh_err()), 0, "kill-after",
		"too long (at most 100 years)", "kill-after above 100 years");
	is_int(cordon_config_set_kill_after(c, 0, fresh_err()), 0, "kill-after 0");
	refused(cordon_config_set_tmp_size(c, 0, fresh_err()), 0, "tmp-size", "must be more than 0",
		"tmp-size 0");
	is_int(cordon_config_set_tmp_size(c, 1 << 20, fresh_err()), 0, "tmp-size 1M");
	refused(cordon_config_set_net(c, (enum cordon_net)2, fresh_err()), 0, "net",
		"unknown network mode 2", "net mode 2");
	is_int(cordon_config_set_net(c, CORDON_NET_HOST, fresh_err()), 0, "net host");
	refused(cordon_config_set_uid(c, (uid_t)-1, fresh_err()), 0, "uid",
		"4294967295 is not a valid uid", "uid -1");
	refused(cordon_config_set_gid(c, (gid_t)-1, fresh_err()), 0, "gid",
		"4294967295 is not a valid gid", "gid -1");
	is_int(cordon_config_set_uid(c, 0, fresh_err()), 0, "uid 0");
	ok(c->identity.uid_set && c->identity.uid == 0 && !c->identity.gid_set,
	   "uid 0 stored, gid still unset");
	refused(cordon_config_set_account(c, "Root", "/home/x", fresh_err()), 0, "account",
		"\"Root\" is not a user name (1-32 of a-z 0-9 _ -)", "account: upper case");
	refused(cordon_config_set_account(c, "a:b", "/home/x", fresh_err()), 0, "account",
		"\"a:b\" is not a user name (1-32 of a-z 0-9 _ -)", "account: a colon");
	refused(cordon_config_set_account(c, "user", "home", fresh_err()), 0, "account",
		"\"home\" is not a home (an absolute path, no ':')", "account: relative home");
	refused(cordon_config_set_account(c, "user", "/a:b", fresh_err()), 0, "account",
		"\"/a:b\" is not a home (an absolute path, no ':')", "account: a colon in home");
	is_int(cordon_config_set_account(c, "user", "/home//user/", fresh_err()), 0, "account");
	ok(strcmp(c->identity.account_name, "user") == 0 &&
	   strcmp(c->identity.account_home, "/home/user") == 0, "account stored, home normalized");

	/* the first error wins: a second failure does not overwrite it */
	fresh_err();
	cordon_config_set_hostname(c, "-x", &err);
	cordon_config_set_env(c, "", "x", &err);
	is_str(err.msg, HOSTNAME_MSG("-x"), "the first error wins");
	is_str(err.step, "hostname", "the first error's step");
	cordon_config_free(c);
}

/* cordon_config_set_seccomp_bpf(): whole instructions, 1 to 4096, known flags; copied; and a
 * run refuses it (a session's commands install it: the agent) */
static void test_seccomp_bpf(void)
{
	static struct sock_filter prog[BPF_MAXINSNS + 1];
	struct cordon_config *c = cordon_config_new();
	struct cordon_result res;

	prog[0] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	refused(cordon_config_set_seccomp_bpf(c, prog, 12, 0, fresh_err()), EINVAL, "seccomp-bpf",
		"a program of 12 bytes: not a whole number of instructions from 1 to 4096",
		"seccomp_bpf 12 bytes");
	refused(cordon_config_set_seccomp_bpf(c, prog, sizeof(prog), 0, fresh_err()), EINVAL,
		"seccomp-bpf",
		"a program of 32776 bytes: not a whole number of instructions from 1 to 4096",
		"seccomp_bpf 4097 instructions");
	refused(cordon_config_set_seccomp_bpf(c, prog, 8, SECCOMP_FILTER_FLAG_TSYNC, fresh_err()),
		EINVAL, "seccomp-bpf", "unknown flags 0x1", "seccomp_bpf TSYNC");
	ok(c->seccomp.bpf == NULL, "seccomp_bpf: nothing stored after refusals");
	is_int(cordon_config_set_seccomp_bpf(c, prog, 8, SECCOMP_FILTER_FLAG_LOG, fresh_err()), 0,
	       "seccomp_bpf: one instruction, LOG");
	ok(c->seccomp.bpf && c->seccomp.bpf != (void *)prog && c->seccomp.bpf_len == 8 &&
		   c->seccomp.bpf_flags == SECCOMP_FILTER_FLAG_LOG &&
		   memcmp(c->seccomp.bpf, prog, 8) == 0,
	   "seccomp_bpf: copied, with its flags");
	refused(cordon_run(c, &res, fresh_err()), EINVAL, "seccomp-bpf",
		"a program for a session's commands (cordon_config_set_seccomp_bpf) in a run",
		"cordon_run with a commands' program");
	is_int(res.exit_code, CORDON_EXIT_FAILURE, "... exit code 125");
	is_int(cordon_config_set_seccomp_bpf(c, NULL, 0, 0, fresh_err()), 0,
	       "seccomp_bpf: len 0 removes it");
	ok(c->seccomp.bpf == NULL && c->seccomp.bpf_len == 0, "... gone");
	cordon_config_free(c);
}

/* A network namespace of a child's (in a user namespace of its own): its pid, or -1. */
static pid_t hold_netns(void)
{
	int p[2];
	char c = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		c = unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0;
		if (write(p[1], &c, 1) != 1 || !c)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid > 0 && (read(p[0], &c, 1) != 1 || !c)) {
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(p[0]);
	return pid;
}

/* cordon_config_join_ns(): a namespace file of the type, open for setns, not the caller's own */
static void test_join_ns(void)
{
	struct cordon_config *c = cordon_config_new();
	int self_net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	int self_ipc = open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC);
	int self_user = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	int path_net = open("/proc/self/ns/net", O_PATH | O_CLOEXEC);
	int file = open(file_f, O_RDONLY | O_CLOEXEC);
	char link[64];
	pid_t pid;

	ok(c && self_net >= 0 && self_ipc >= 0 && self_user >= 0 && path_net >= 0 && file >= 0,
	   "join: the descriptors to try");
	ok(c->ns.join[CD_JOIN_NET] == -1 && c->ns.join[CD_JOIN_IPC] == -1 &&
	   c->ns.join[CD_JOIN_UTS] == -1, "join: none by default");
	refused(cordon_config_join_ns(c, CLONE_NEWNET, self_net, fresh_err()), 0, "namespaces",
		"the host's own network namespace (the caller's, or pid 1's): joining it is no "
		"isolation", "join: the caller's own network");
	refused(cordon_config_join_ns(c, CLONE_NEWNET, self_ipc, fresh_err()), 0, "namespaces",
		"a namespace of type ipc, not network", "join: an ipc namespace as the network");
	refused(cordon_config_join_ns(c, CLONE_NEWUSER, self_user, fresh_err()), 0, "namespaces",
		"a user namespace cannot be joined (only network, ipc and uts: the sandbox's others "
		"are always its own)", "join: a user namespace");
	refused(cordon_config_join_ns(c, CLONE_NEWNET, path_net, fresh_err()), 0, "namespaces",
		"opened with O_PATH: setns needs it open for reading", "join: an O_PATH descriptor");
	refused(cordon_config_join_ns(c, CLONE_NEWNET, file, fresh_err()), 0, "namespaces",
		"not a namespace file", "join: a regular file");
	refused(cordon_config_join_ns(c, CLONE_NEWNET, -1, fresh_err()), EBADF, "namespaces",
		"-1 is not an open file descriptor", "join: -1");
	ok(c->ns.join[CD_JOIN_NET] == -1, "join: nothing kept of the refused");
	pid = hold_netns();
	if (pid > 0) {
		int fd;

		snprintf(link, sizeof(link), "/proc/%d/ns/net", (int)pid);
		fd = open(link, O_RDONLY | O_CLOEXEC);
		is_int(cordon_config_join_ns(c, CLONE_NEWNET, fd, fresh_err()), 0,
		       "join: another network namespace: accepted");
		ok(c->ns.join[CD_JOIN_NET] >= 0 && c->ns.join[CD_JOIN_NET] != fd &&
		   (fcntl(c->ns.join[CD_JOIN_NET], F_GETFD) & FD_CLOEXEC),
		   "join: the config's own copy, close-on-exec");
		close(fd);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	} else {
		skip("no unprivileged user namespace here", "join: another network namespace");
	}
	close(self_net);
	close(self_ipc);
	close(self_user);
	close(path_net);
	close(file);
	cordon_config_free(c);
}

int main(void)
{
	if (setup_scratch() < 0) {
		printf("Bail out! cannot create a scratch directory in /tmp: %s\n",
		       strerror(errno));
		return 1;
	}
	test_defaults();
	test_workdir_rules();
	test_workdir();
	test_inside_paths();
	test_inside_path_details();
	test_hostname();
	test_env();
	test_report_fd();
	test_rlimit_setter();
	test_command_and_scalars();
	test_seccomp_bpf();
	test_join_ns();
	remove_scratch();
	return done_testing();
}
