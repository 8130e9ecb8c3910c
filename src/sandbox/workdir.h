/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workdir.h - the one host directory the sandbox may write: which directories may be it, and
 * finding it once, safely. Supervisor side.
 */
#pragma once

#include "hostpath.h"

/* Why the directory at canonical path `path` may not be a workdir, or NULL when it may. Pure:
 * serve is cordon serve's default state directory (cordon_state_dir()/serve, canonical; NULL:
 * none), below which a directory may be one though it lies below /var or ~/.local; own are the
 * caller's HOME and home directory, homes those of every account, path_dirs the caller's PATH:
 * canonical absolute paths, NULL-terminated. */
const char *cd_workdir_refusal(const char *path, const char *serve, char *const *own,
			       char *const *homes, char *const *path_dirs);

/* Open the workdir: `given` (NULL: the current directory) resolved with hostpath.h's rules, its
 * last component never a symlink; then refused by cd_workdir_refusal's rules, and, for a root
 * caller, when a symlink on the way leads to a directory of someone else (which would choose
 * whose files the sandbox writes). *ret holds the descriptor every later step uses. */
int cd_workdir_open(const char *given, const struct cd_marks *marks, struct cd_hostpath *ret,
		    struct cordon_error *err);

/* What the sandbox cannot write at the workdir's top (a tarball unpacked there by root keeps its
 * archive's owners): the first such entry's name and owner, and how many. */
struct cd_workdir_foreign {
	unsigned count;
	uid_t uid;
	char name[256];
};
/* wd: the workdir's descriptor (O_PATH will do); uid: the sandbox's owner on the host. 0 or
 * -errno. */
int cd_workdir_foreign(int wd, uid_t uid, struct cd_workdir_foreign *ret);
