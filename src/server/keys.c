/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keys.c - where cordon serve's API keys come from, kept out of every other local user's sight:
 * a file whose owner and mode are checked on the descriptor read, the environment variable
 * CORDON_SERVE_API_KEY (wiped from the process once read), or a key made at start and written
 * to a file only the server's user can read (its path printed, never the key). Runs in the
 * server process, at start, before any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "keys.h"
#include "opts.h"
#include "util.h"

#define KEY_FILE_MAX (64 * 1024)
#define MADE_NAME    "api-key"

/* the file made by make_key(), removed at the end if it is still ours */
static struct {
	char *path;
	dev_t dev;
	ino_t ino;
} made;
static bool key_in_argv; /* --api-key was given */

static int add_key(const char *k, const char *where, struct cordon_error *err)
{
	if (!srv_auth_key_valid_form(k))
		return cd_fail(err, 0, where, "a key is e2b_ followed by lowercase hex digits");
	if (cd_strv_push(&srv_opts.api_keys, k) < 0)
		return cd_fail(err, ENOMEM, where, "out of memory");
	return 0;
}

/* A key file: a regular file of the server's user (or root), no permission for group or
 * others. Opened without following a symlink and without waiting for a FIFO's writer; what is
 * checked is what is read (fstat of the descriptor). */
static int open_checked(const char *path, struct stat *st, struct cordon_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	uid_t me = geteuid();

	if (fd < 0 && errno == ELOOP)
		return cd_fail(err, ELOOP, "--api-key-file",
			       "%s is a symlink: give the file itself (chmod 600, yours)", path);
	if (fd < 0)
		return cd_fail_errno(err, errno, "--api-key-file", "%s", path);
	if (fstat(fd, st) < 0)
		return cd_fail_errno(err, errno, "--api-key-file", "%s", path);
	if (!S_ISREG(st->st_mode))
		return cd_fail(err, 0, "--api-key-file", "%s is not a regular file", path);
	if (st->st_uid != me && st->st_uid != 0)
		return cd_fail(err, 0, "--api-key-file",
			       "%s is owned by uid %u, not by you (uid %u) or root: another user "
			       "could change the keys (use a file of yours, chmod 600)",
			       path, (unsigned)st->st_uid, (unsigned)me);
	if (st->st_mode & 077)
		return cd_fail(err, 0, "--api-key-file",
			       "%s may be read or written by group or others: chmod 600 %s", path,
			       path);
	if (st->st_size > KEY_FILE_MAX)
		return cd_fail(err, 0, "--api-key-file", "%s is larger than %u bytes", path,
			       KEY_FILE_MAX);
	return CD_TAKE_FD(fd);
}

/* Keys, one a line; blank lines and lines starting with '#' are skipped. */
static int parse_lines(char *buf, const char *path, struct cordon_error *err)
{
	unsigned n = 0, lineno = 0;
	char *save = NULL;

	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		for (size_t e = strlen(line); e > 0 && strchr(" \t\r", line[e - 1]); e--)
			line[e - 1] = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		if (!line[0] || line[0] == '#')
			continue;
		if (!srv_auth_key_valid_form(line))
			return cd_fail(err, 0, "--api-key-file",
				       "%s:%u: a key is e2b_ followed by lowercase hex digits",
				       path, lineno);
		if (add_key(line, "--api-key-file", err) < 0)
			return -ENOMEM;
		n++;
	}
	return n ? 0 : cd_fail(err, 0, "--api-key-file", "%s: no key in it", path);
}

int srv_keys_read_file(const char *path, struct cordon_error *err)
{
	char buf[KEY_FILE_MAX + 1];
	_cleanup_close_ int fd = -1;
	struct stat st;
	size_t len = 0;
	int r;

	fd = open_checked(path, &st, err);
	if (fd < 0)
		return fd;
	while (len < KEY_FILE_MAX) {
		ssize_t n = read(fd, buf + len, KEY_FILE_MAX - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cd_fail_errno(err, errno, "--api-key-file", "read %s", path);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (strlen(buf) != len)
		r = cd_fail(err, 0, "--api-key-file", "%s holds a NUL byte", path);
	else
		r = parse_lines(buf, path, err);
	explicit_bzero(buf, sizeof(buf)); /* the keys stay in srv_opts only */
	return r;
}

/* CORDON_SERVE_API_KEY: one or more keys, separated by commas or white space. Gone from the
 * process once read: from environ (nothing the server starts inherits it) and from the
 * environment block itself, which /proc/PID/environ shows as it was at exec whatever
 * unsetenv() does. */
int srv_keys_from_env(struct cordon_error *err)
{
	char *v = getenv(SRV_KEY_ENV), *copy, *save = NULL;
	unsigned n = 0;
	int r = 0;

	if (!v)
		return 0;
	copy = strdup(v);
	explicit_bzero(v, strlen(v));
	unsetenv(SRV_KEY_ENV);
	if (!copy)
		return cd_fail(err, ENOMEM, SRV_KEY_ENV, "out of memory");
	for (char *k = strtok_r(copy, ", \t\r\n", &save); k && r >= 0;
	     k = strtok_r(NULL, ", \t\r\n", &save), n++)
		r = add_key(k, SRV_KEY_ENV, err);
	explicit_bzero(copy, strlen(copy));
	free(copy);
	if (r >= 0 && n == 0)
		r = cd_fail(err, 0, SRV_KEY_ENV,
			    "set but holds no key (e2b_ and lowercase hex digits; several: "
			    "separated by commas)");
	return r;
}

/* Writes the key to a new file (O_EXCL, 0600) of a random name beside NAME, then renames it
 * over NAME: whatever was at NAME (a planted symlink too) is replaced, never followed. */
static int write_key_file(int dfd, const char *dir, const char *key, struct cordon_error *err)
{
	char tmp[32] = MADE_NAME ".";
	_cleanup_close_ int fd = -1;
	size_t len = strlen(key);
	struct stat st;

	if (srv_auth_random(tmp + strlen(tmp), 12, "0123456789abcdefghijklmnopqrstuvwxyz") < 0)
		return cd_fail(err, EIO, "api-key", "getrandom failed");
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return cd_fail_errno(err, errno, "api-key", "create %s/%s", dir, tmp);
	errno = EIO; /* a short write sets none */
	if (write(fd, key, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd) < 0 ||
	    fstat(fd, &st) < 0 || renameat(dfd, tmp, dfd, MADE_NAME) < 0) {
		int e = errno;

		unlinkat(dfd, tmp, 0);
		return cd_fail_errno(err, e, "api-key", "write %s/%s", dir, MADE_NAME);
	}
	made.dev = st.st_dev;
	made.ino = st.st_ino;
	return 0;
}

static int make_key(const char *dir, struct cordon_error *err)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char key[45] = "e2b_";
	int r;

	if (dfd < 0)
		return cd_fail_errno(err, errno, "api-key", "%s", dir);
	if (srv_auth_random(key + 4, 40, "0123456789abcdef") < 0)
		return cd_fail(err, EIO, "api-key", "getrandom failed");
	r = write_key_file(dfd, dir, key, err);
	if (r >= 0)
		r = add_key(key, "api-key", err);
	explicit_bzero(key, sizeof(key));
	if (r < 0)
		return r;
	made.path = cd_strdup_printf("%s/%s", dir, MADE_NAME);
	if (!made.path)
		return cd_fail(err, ENOMEM, "api-key", "out of memory");
	fprintf(stderr,
		"cordon: serve: no key given: this run's key is in %s (mode 0600, uid %u): "
		"E2B_API_KEY=$(cat %s)\n",
		made.path, (unsigned)geteuid(), made.path);
	return 0;
}

void srv_keys_forget_made(void)
{
	struct stat st;

	/* a key of a server that stopped opens nothing: not left to mislead */
	if (made.path && lstat(made.path, &st) == 0 && st.st_dev == made.dev &&
	    st.st_ino == made.ino)
		unlink(made.path);
	free(made.path);
	made.path = NULL;
}

/* The key was on the command line (ps shows it to every local user): the copy in this
 * process's argv is overwritten now, which shortens that window but cannot close it; it is said
 * once the options are known good (a bad option is one line). */
void srv_keys_argv_wipe(char *arg)
{
	key_in_argv = true;
	memset(arg, 'x', strlen(arg));
}

int srv_keys_setup(const char *dir, struct cordon_error *err)
{
	if (key_in_argv)
		fprintf(stderr,
			"cordon: serve: --api-key: a key on the command line can be read by "
			"every local user (ps, /proc/PID/cmdline); use " SRV_KEY_ENV
			"=KEY or --api-key-file FILE (chmod 600) instead\n");
	return srv_opts.api_keys ? 0 : make_key(dir, err);
}
