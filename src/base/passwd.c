/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * passwd.c - the lines of an /etc/passwd text (passwd.h). Runs in the supervisor.
 *
 * glibc's fgetpwent() and fgetpwent_r() ask the kernel for the file's position at every line
 * (to read a line again with a larger buffer): 25 lseeks a read here, and a run reads the file
 * more than once. This reads it a line at a time with getline(), and keeps the fields cordon
 * uses: name, uid and home. Like glibc, it skips blank lines and comments.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "passwd.h"

int cd_passwd_open(struct cd_passwd *pw, const char *path)
{
	*pw = (struct cd_passwd){ .f = fopen(path, "re") };
	return pw->f ? 0 : -errno;
}

/* name:password:uid:gid:gecos:home[:shell], split in place */
static bool split(struct cd_passwd *pw, char *s)
{
	char *field[6], *end;
	unsigned long v;

	for (int i = 0; i < 6; i++) {
		field[i] = s;
		s = strchr(s, ':');
		if (!s && i < 5)
			return false;
		if (s)
			*s++ = '\0';
		else
			s = field[i] + strlen(field[i]);
	}
	errno = 0;
	v = strtoul(field[2], &end, 10);
	pw->name = field[0];
	pw->uid_ok = field[2][0] >= '0' && field[2][0] <= '9' && !*end && !errno &&
		     v == (uid_t)v;
	pw->uid = pw->uid_ok ? (uid_t)v : (uid_t)-1;
	pw->home = field[5];
	return true;
}

int cd_passwd_next(struct cd_passwd *pw)
{
	ssize_t n;

	if (!pw->f)
		return 0;
	errno = 0;
	while ((n = getline(&pw->line, &pw->cap, pw->f)) >= 0) {
		char *s = pw->line;

		if (n > 0 && s[n - 1] == '\n')
			s[n - 1] = '\0';
		s += strspn(s, " \t");
		if (*s && *s != '#' && split(pw, s))
			return 1;
	}
	return ferror(pw->f) ? -(errno ? errno : EIO) : 0;
}

int cd_passwd_find(const char *path, uid_t uid, char **ret_name, char **ret_home)
{
	struct cd_passwd pw;
	char *name = NULL, *home = NULL;
	int r = cd_passwd_open(&pw, path) < 0 ? 0 : -ENOENT;

	while (r == -ENOENT && cd_passwd_next(&pw) > 0) {
		if (!pw.uid_ok || pw.uid != uid)
			continue;
		name = ret_name ? strdup(pw.name) : NULL;
		home = ret_home ? strdup(pw.home) : NULL;
		r = (ret_name && !name) || (ret_home && !home) ? -ENOMEM : 1;
	}
	cd_passwd_close(&pw);
	if (r != 1) {
		free(name);
		free(home);
		return r == -ENOMEM ? r : 0;
	}
	if (ret_name)
		*ret_name = name;
	if (ret_home)
		*ret_home = home;
	return 1;
}

void cd_passwd_close(struct cd_passwd *pw)
{
	if (pw->f)
		fclose(pw->f);
	free(pw->line);
	*pw = (struct cd_passwd){ 0 };
}
