/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* passwd.h - the lines of an /etc/passwd text, read in one pass (passwd.c). */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct cd_passwd {
	FILE *f;
	char *line; /* getline's buffer: the fields below point into it */
	size_t cap;
	const char *name;
	uid_t uid;
	bool uid_ok; /* the third field is a number */
	const char *home;
};

/* Open path for reading: 0, or -errno. */
int cd_passwd_open(struct cd_passwd *pw, const char *path);
/* The next account line (blank lines, comments and lines of fewer than six fields skipped):
 * 1, 0 at the end, -errno on a read error. The fields last until the next call. */
int cd_passwd_next(struct cd_passwd *pw);
void cd_passwd_close(struct cd_passwd *pw);

/* The first account of uid in the file at path: 1 with copies of its name and home (either
 * pointer may be NULL), 0 if none (or no file), -ENOMEM. */
int cd_passwd_find(const char *path, uid_t uid, char **ret_name, char **ret_home);
