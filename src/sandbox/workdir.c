/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workdir.c - which host directory may be the sandbox's workdir, opening it once, and what at its
 * top the sandbox cannot write (a hint). Runs in the supervisor, before anything starts.
 *
 * What the sandbox writes there is used on the host: a workdir must not be a place the system
 * or a user runs or trusts files from. The rules are a function of the canonical path (pure,
 * unit-tested); the path itself is resolved once by hostpath.c and used as a descriptor.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "hostroot.h"
#include "passwd.h"
#include "util.h"
#include "workdir.h"

/* Trees of the system: refused, with everything below them. */
static const char *const system_trees[] = {
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
	"/run", "/sbin", "/snap", "/sys", "/usr",
};
/* Shared scratch: the directory itself is refused, a directory below it is a project's. */
static const char *const shared_dirs[] = { "/tmp", "/var/tmp" };
/* Where credentials and per-user configuration live: refused as any component of the path. */
static const char *const secret_names[] = {
	".aws", ".azure", ".cargo", ".config", ".docker", ".gnupg", ".kube", ".local", ".mozilla",
	".password-store", ".pki", ".ssh",
};

static bool in(const char *name, size_t len, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && memcmp(list[i], name, len) == 0)
			return true;
	return false;
}

static bool has_secret_component(const char *path)
{
	for (const char *p = path; *p;) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		if (len && in(p, len, secret_names, CD_ELEMENTSOF(secret_names)))
			return true;
		p += len;
	}
	return false;
}

/* ~/.anything (and below it): where programs keep what they trust or run, credentials and
 * plugins (~/.m2/settings.xml, ~/.vim/plugin) */
static bool in_home_dotdir(const char *path, char *const *homes)
{
	for (; homes && *homes; homes++) {
		size_t n = strlen(*homes);

		if (cd_path_startswith(path, *homes) && path[n] == '/' &&
		    path[n + 1 + (strcmp(*homes, "/") == 0 ? -1 : 0)] == '.')
			return true;
	}
	return false;
}

/* /var holds the system's state (spool, cron, databases, services' homes): refused, but for
 * directories below /var/tmp and below the caller's own home when it lives there (a CI
 * service's running cordon); another account's home there is that service's data. */
static bool var_allowed(const char *path, char *const *own)
{
	if (cd_path_startswith(path, "/var/tmp"))
		return true;
	for (; own && *own; own++)
		if (cd_path_startswith(*own, "/var") && cd_path_startswith(path, *own) &&
		    strcmp(path, *own) != 0)
			return true;
	return false;
}

const char *cd_workdir_refusal(const char *path, const char *serve, char *const *own,
			       char *const *homes, char *const *path_dirs)
{
	if (strcmp(path, "/") == 0)
		return "the root directory";
	for (size_t i = 0; i < CD_ELEMENTSOF(system_trees); i++)
		if (cd_path_startswith(path, system_trees[i]))
			return "a system directory (/etc, /usr, /opt, /run, /dev, ... and everything "
			       "below them)";
	for (size_t i = 0; i < CD_ELEMENTSOF(shared_dirs); i++)
		if (strcmp(path, shared_dirs[i]) == 0)
			return "a directory every user shares (use a directory below it)";
	/* cordon serve's sandboxes, each in a directory of its own below cordon's state (below
	 * /var/lib or ~/.local): nothing there is read or run by anything but cordon */
	if (serve && cd_path_startswith(path, serve) && strcmp(path, serve) != 0)
		return NULL;
	if (cd_path_startswith(path, "/var") && !var_allowed(path, own))
		return "a system directory (/var holds the system's state; use a directory below "
		       "/var/tmp or your home)";
	for (char *const *h = homes; h && *h; h++)
		if (cd_path_startswith(*h, path))
			return "a home directory, or one that holds home directories: they hold "
			       "~/.ssh and other secrets (use a project directory below one)";
	if (has_secret_component(path))
		return "a store of credentials or configuration (.ssh, .gnupg, .aws, .config, "
		       ".local, ...)";
	if (in_home_dotdir(path, homes))
		return "a hidden directory of a home (.vim, .m2, .npm, ...: configuration and "
		       "credentials that programs trust or run)";
	for (char *const *d = path_dirs; d && *d; d++)
		if (cd_path_startswith(*d, path))
			return "a directory on your PATH, or one that holds it: what the sandbox "
			       "wrote there would run as you";
	return NULL;
}

/* The canonical path of p, or NULL if it does not exist: resolved by the kernel in one lookup
 * and read back from its descriptor (realpath() asks readlink() about every component: 100
 * calls a run here); realpath() where that path is not a plain one (another root, deleted). */
static char *canonical(const char *p)
{
	_cleanup_close_ int fd = open(p, O_PATH | O_CLOEXEC);
	char link[64], buf[4096];
	ssize_t n;

	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf));
	if (n <= 0 || (size_t)n >= sizeof(buf) || buf[0] != '/' ||
	    (n >= 10 && memcmp(buf + n - 10, " (deleted)", 10) == 0))
		return realpath(p, NULL);
	return strndup(buf, (size_t)n);
}

/* p's canonical path added to v, once for each given path (seen: the paths given so far) */
static int push_real(char ***v, char ***seen, const char *p)
{
	_cleanup_free_ char *r = NULL;
	int e;

	if (!p || p[0] != '/')
		return 0;
	for (char **s = *seen; s && *s; s++)
		if (strcmp(*s, p) == 0)
			return 0;
	e = cd_strv_push(seen, p);
	r = e >= 0 ? canonical(p) : NULL;
	return r ? cd_strv_push(v, r) : e; /* what does not exist holds nothing */
}

/* The caller's HOME and home directory: its account in /etc/passwd, NSS only for one that is
 * not there (a directory service's) */
static int list_own(char ***ret, char ***seen)
{
	_cleanup_free_ char *dir = NULL;
	struct passwd *pw;
	int r = push_real(ret, seen, getenv("HOME"));

	if (r >= 0)
		r = cd_passwd_find("/etc/passwd", geteuid(), NULL, &dir);
	if (r == 0 && (pw = getpwuid(geteuid())))
		return push_real(ret, seen, pw->pw_dir);
	return r > 0 ? push_real(ret, seen, dir) : r;
}

/* The caller's own (own, already listed), then every account's in /etc/passwd (not NSS: a
 * directory service could be slow, and its accounts' homes are rarely local). */
static int list_homes(char *const *own, char ***ret, char ***seen)
{
	_cleanup_(cd_passwd_close) struct cd_passwd pw = { 0 };
	int r = 0;

	for (; *own && r >= 0; own++)
		r = cd_strv_push(ret, *own);
	if (r >= 0 && cd_passwd_open(&pw, "/etc/passwd") < 0)
		return 0;
	while (r >= 0 && (r = cd_passwd_next(&pw)) > 0)
		if (strcmp(pw.home, "/") != 0)
			r = push_real(ret, seen, pw.home);
	return r;
}

static int list_path_dirs(char ***ret, char ***seen)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *copy = path ? strdup(path) : NULL;
	char *save = NULL;
	int r = 0;

	if (path && !copy)
		return -ENOMEM;
	for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; r >= 0 && d;
	     d = strtok_r(NULL, ":", &save))
		r = push_real(ret, seen, d); /* relative entries (".", "") are not places */
	return r;
}

static int check(const struct cd_hostpath *hp, struct cordon_error *err)
{
	_cleanup_strv_ char **own = calloc(1, sizeof(char *));
	_cleanup_strv_ char **homes = calloc(1, sizeof(char *));
	_cleanup_strv_ char **path_dirs = calloc(1, sizeof(char *));
	_cleanup_strv_ char **seen = calloc(1, sizeof(char *));
	_cleanup_strv_ char **seen_path = calloc(1, sizeof(char *));
	_cleanup_free_ char *state = cd_marks_state_dir(), *serve = NULL;
	const char *why;
	int r = own && homes && path_dirs && seen && seen_path ? 0 : -ENOMEM;

	if (state) {
		_cleanup_free_ char *s = cd_strdup_printf("%s/serve", state);

		serve = s ? canonical(s) : NULL; /* what does not exist holds no workdir */
	}
	if (r >= 0)
		r = list_own(&own, &seen);
	if (r >= 0)
		r = list_homes(own, &homes, &seen);
	if (r >= 0)
		r = list_path_dirs(&path_dirs, &seen_path);
	if (r == -ENOMEM)
		return cd_fail(err, ENOMEM, "workdir", "out of memory");
	if (r < 0) /* only reading /etc/passwd fails otherwise: its homes would go unchecked */
		return cd_fail_errno(err, -r, "workdir", "read /etc/passwd");
	why = cd_workdir_refusal(hp->path, serve, own, homes, path_dirs);
	if (why)
		return cd_fail(err, 0, "workdir", "%s: refusing to make it writable: %s", hp->path,
			       why);
	/* root: the workdir's owner is who the sandbox runs as; a symlink (root's: no other is
	 * followed) must not lead to somebody else's directory */
	if (cd_host_root() && hp->links && hp->st.st_uid != hp->link_owner)
		return cd_fail(err, 0, "workdir",
			       "%s: reached through a symlink, and owned by uid %u: cordon run as "
			       "root does not let a symlink choose whose files the sandbox writes "
			       "(give the real path)",
			       hp->path, (unsigned)hp->st.st_uid);
	return 0;
}

/* The current directory, by the path the caller's shell took to it ($PWD, when it names the
 * same directory): a `cd` through a symlink a sandbox planted is then seen and refused as a
 * path would be (a cd into a symlink of one's own is fine: no rule on the last name here). */
static int open_cwd(const struct cd_marks *marks, struct cd_hostpath *ret,
		    struct cordon_error *err)
{
	const char *pwd = getenv("PWD");
	struct stat a, b;

	if (pwd && pwd[0] == '/' && stat(pwd, &a) == 0 && stat(".", &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return cd_hostpath_open(pwd, CD_HOSTPATH_DIR, "workdir", marks, ret, err);
	return cd_hostpath_from_fd(open(".", O_PATH | O_DIRECTORY | O_CLOEXEC), "workdir", ret,
				   err);
}

int cd_workdir_open(const char *given, const struct cd_marks *marks, struct cd_hostpath *ret,
		    struct cordon_error *err)
{
	struct cd_hostpath hp = { .fd = -1 };
	int r;

	if (given)
		r = cd_hostpath_open(given, CD_HOSTPATH_DIR | CD_HOSTPATH_NOFOLLOW, "workdir", marks,
				     &hp, err);
	else
		r = open_cwd(marks, &hp, err);
	if (r >= 0)
		r = check(&hp, err);
	if (r < 0) {
		cd_hostpath_done(&hp);
		return r;
	}
	*ret = hp;
	return 0;
}

/* The workdir's entries of another owner than uid (the sandbox's on the host), not writable to
 * others: the sandbox cannot write them. One level, at most CD_WORKDIR_SCAN entries looked at
 * (a hint, not a walk); symlinks skipped (their owner decides nothing). */
#define CD_WORKDIR_SCAN 4096
int cd_workdir_foreign(int wd, uid_t uid, struct cd_workdir_foreign *ret)
{
	_cleanup_close_ int fd = openat(wd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct cd_workdir_foreign f = { 0 };
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d)
		return -errno;
	fd = -1; /* the DIR's now */
	for (unsigned n = 0; n < CD_WORKDIR_SCAN && (de = readdir(d)); n++) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    S_ISLNK(st.st_mode) || st.st_uid == uid || (st.st_mode & S_IWOTH))
			continue;
		if (f.count++ == 0) {
			snprintf(f.name, sizeof(f.name), "%s", de->d_name);
			f.uid = st.st_uid;
		}
	}
	closedir(d);
	*ret = f;
	return 0;
}
