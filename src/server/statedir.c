/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * statedir.c - cordon serve's state directory, where each sandbox's workdir is made: its
 * default, a place no other local user can make first, on disk, in cordon's state directory
 * (cordon_state_dir(): root's /var/lib/cordon/serve; a user's $XDG_STATE_HOME/cordon/serve or
 * ~/.local/state/cordon/serve), and the checks of every directory on its path, walked from "/"
 * through descriptors without following a symlink. Runs in the server process, at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostroot.h"
#include "opts.h"
#include "statedir.h"
#include "util.h"

#define SERVE_NAME "serve"

/* What to do, said after every refusal: it depends on where the path came from. */
static const char *hint_of(int origin)
{
	switch (origin) {
	case 1:
		return "give --state-dir DIR (a directory of yours no other user can write), or "
		       "set HOME or XDG_STATE_HOME to one";
	case 2:
		return "fix it (root-owned, chmod go-w), or give --state-dir DIR";
	default:
		return "choose another --state-dir";
	}
}

/* A walk: how many components, the last `make` of them made when missing, the last `strict`
 * held to the strict rule below; where the path came from (what to do is said after each
 * refusal). */
struct walk {
	unsigned n, make, strict;
	int origin;
};

/* The state directory (and XDG_STATE_HOME, or what we made above it): ours, no one else's to
 * write (strict). A directory above those: root's or ours, and writable by others only with the
 * sticky bit (no one else can then rename or remove what is ours in it, as in /tmp). */
static int check_stat(const struct stat *st, const char *shown, bool strict, int origin,
		      struct cordon_error *err)
{
	uid_t me = geteuid();

	if (strict && st->st_uid != me)
		return cd_fail(err, 0, "--state-dir",
			       "%s is owned by uid %u, not by the server's (uid %u): %s", shown,
			       (unsigned)st->st_uid, (unsigned)me, hint_of(origin));
	if (!strict && st->st_uid != me && st->st_uid != 0)
		return cd_fail(
		    err, 0, "--state-dir",
		    "%s (on the path) is owned by uid %u, who could replace what is below "
		    "it: %s",
		    shown, (unsigned)st->st_uid, hint_of(origin));
	if ((st->st_mode & 022) && (strict || !(st->st_mode & S_ISVTX)))
		return cd_fail(err, 0, "--state-dir",
			       "%s is writable by group or others (chmod go-w %s): %s", shown,
			       shown, hint_of(origin));
	return 0;
}

/* Why the directory could not be opened, said as the checks would say it when they can. */
static int open_failed(int dfd, const char *name, const char *shown, bool strict, int origin,
		       struct cordon_error *err)
{
	int e = errno;
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return cd_fail(err, ELOOP, "--state-dir",
				       "%s is a symlink: give the path of the directory itself",
				       shown);
		if (check_stat(&st, shown, strict, origin, err) < 0)
			return -EINVAL;
	}
	return cd_fail(err, e, "--state-dir", "%s: %s: %s", shown, strerror(e), hint_of(origin));
}

/* Component i of the walk, made first when asked (0755 above the state directory, whatever the
 * umask: /run/cordon is shared with other parts of cordon; 0700 for the state directory), then
 * opened and checked: its descriptor. */
static int step(int dfd, const char *name, const char *shown, unsigned i, const struct walk *w,
		struct cordon_error *err)
{
	bool last = i == w->n - 1, strict = i + w->strict >= w->n, make = i + w->make >= w->n;
	bool made = make && mkdirat(dfd, name, last ? 0700 : 0755) == 0;
	int e = errno;
	struct stat st;
	int r;
	_cleanup_close_ int fd = -1;

	if (make && !made && e != EEXIST)
		return cd_fail(err, e, "--state-dir", "mkdir %s: %s: %s", shown, strerror(e),
			       hint_of(w->origin));
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return open_failed(dfd, name, shown, strict, w->origin, err);
	if (made && !last)
		(void)fchmod(fd, 0755);
	if (fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "--state-dir", "%s", shown);
	r = check_stat(&st, shown, strict, w->origin, err);
	return r < 0 ? r : CD_TAKE_FD(fd);
}

/* Walks path (absolute, no "." or ".." in it) from "/", checking each directory. */
static int walk(const char *path, struct walk *w, struct cordon_error *err)
{
	_cleanup_free_ char *copy = strdup(path);
	_cleanup_close_ int dfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *names[PATH_MAX / 2], *save = NULL;
	char shown[PATH_MAX] = "";
	struct stat st;
	int r;

	if (!copy || dfd < 0 || fstat(dfd, &st) < 0)
		return cd_fail_errno(err, copy ? errno : ENOMEM, "--state-dir", "%s", path);
	w->n = 0;
	for (char *c = strtok_r(copy, "/", &save); c && w->n < CD_ELEMENTSOF(names);
	     c = strtok_r(NULL, "/", &save))
		names[w->n++] = c;
	if (w->n == 0)
		return cd_fail(err, 0, "--state-dir", "\"/\" cannot be the state directory");
	r = check_stat(&st, "/", false, w->origin, err);
	for (unsigned i = 0; r >= 0 && i < w->n; i++) {
		if (strcmp(names[i], ".") == 0 || strcmp(names[i], "..") == 0)
			return cd_fail(err, 0, "--state-dir", "%s: a path without . or ..", path);
		snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), "/%s", names[i]);
		r = step(dfd, names[i], shown, i, w, err);
		if (r >= 0) {
			close(dfd);
			dfd = r;
		}
	}
	return r < 0 ? r : 0;
}

/* A given --state-dir: its parent's symlinks resolved once here (all that is walked after is
 * checked), the directory itself never a symlink. */
static char *resolve_given(const char *given, struct cordon_error *err)
{
	_cleanup_free_ char *a = strdup(given), *b = strdup(given), *parent = NULL;
	char *base, *dir;

	if (!a || !b) {
		cd_fail(err, ENOMEM, "--state-dir", "out of memory");
		return NULL;
	}
	for (size_t e = strlen(a); e > 1 && a[e - 1] == '/'; e--)
		a[e - 1] = b[e - 1] = '\0';
	base = basename(a);
	dir = dirname(b);
	parent = realpath(dir, NULL);
	if (!parent) {
		cd_fail_errno(err, errno, "--state-dir", "%s (make the parent first)", dir);
		return NULL;
	}
	if (strcmp(base, "/") == 0 || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		cd_fail(err, 0, "--state-dir", "%s: name the directory itself", given);
		return NULL;
	}
	return cd_strdup_printf("%s%s%s", parent, strcmp(parent, "/") == 0 ? "" : "/", base);
}

/* Not given: "serve" in cordon's state directory (cordon_state_dir()), on disk, where the
 * library accepts its subdirectories as workdirs: root's /var/lib/cordon/serve, a user's below
 * XDG_STATE_HOME or ~/.local/state (made as far as missing, the user's own); nothing in a place
 * every user can write, such as /var/tmp, where another user could make it first, nor a tmpfs
 * such as /run that the host needs room in. */
static char *default_path(struct walk *w, struct cordon_error *err)
{
	_cleanup_free_ char *state = cordon_state_dir();
	const char *xdg = getenv("XDG_STATE_HOME");

	if (!state) {
		cd_fail(err, 0, "--state-dir", "no default: no home directory: %s", hint_of(1));
		return NULL;
	}
	if (cd_host_root()) /* /var/lib is the system's: "cordon" and "serve" ours */
		*w = (struct walk){.origin = 2, .make = 2, .strict = 2};
	else if (xdg && xdg[0] == '/') /* XDG_STATE_HOME and below: the user's own */
		*w = (struct walk){.origin = 1, .make = 2, .strict = 3};
	else /* ~/.local/state/cordon/serve: made as far as missing; the home on the path */
		*w = (struct walk){.origin = 1, .make = 4, .strict = 2};
	return cd_strdup_printf("%s/" SERVE_NAME, state);
}

int srv_statedir_setup(struct cordon_error *err)
{
	struct walk w = {.make = 1, .strict = 1};
	char *path;
	int r;

	if (srv_opts.state_dir)
		path = resolve_given(srv_opts.state_dir, err);
	else
		path = default_path(&w, err);
	if (!path)
		return err->msg[0] ? -EINVAL : cd_fail(err, ENOMEM, "--state-dir", "out of memory");
	r = walk(path, &w, err);
	if (r < 0) {
		free(path);
		return r;
	}
	free(srv_opts.state_dir);
	srv_opts.state_dir = path;
	return 0;
}
