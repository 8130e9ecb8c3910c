/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * output.h - where the launcher writes its own files (--report, --audit, --capture): opened
 * before the command starts, in a directory resolved without following a symlink anyone but
 * root or the caller made, outside the workdir (the one host directory the sandbox can write,
 * where it could replace or rewrite them), each file created anew and renamed into place, so
 * that what was at the path before (a symlink, a hard link, a FIFO) is replaced, never opened.
 * Written through those descriptors only. Supervisor side.
 */
#pragma once

#include "hostpath.h"

/* What the launcher's files are kept apart from: the workdir, and the earlier workdirs. */
struct cd_output_ctx {
	const struct cd_hostpath *workdir;
	const struct cd_marks *marks;
};

/* Refuse the directory dirfd (named path in the message) when it is the workdir (ctx) or below
 * it, by whatever mount (cd_hostpath_within): "PATH: inside the workdir, ...: FIX". 0 or -errno.
 * The launcher's other host state out of the sandbox's reach (the layer store) uses it too. */
int cd_output_refuse_in_workdir(int dirfd, const char *path, const char *step, const char *fix,
				const struct cd_output_ctx *ctx, struct cordon_error *err);

/* The directory of the file at path, and the file's name (malloc'd): refused inside the
 * workdir (ctx). step names the option in messages. */
int cd_output_dir(const char *path, const char *step, const struct cd_output_ctx *ctx,
		  struct cd_hostpath *ret_dir, char **ret_name, struct cordon_error *err);

/* The file at path, created anew (mode), for writing: the fd, or -errno with *err filled. */
int cd_output_file(const char *path, const char *step, const struct cd_output_ctx *ctx, mode_t mode,
		   struct cordon_error *err);

/* The directory at path, made if missing (0700), as an O_PATH fd: the same rules. */
int cd_output_mkdir(const char *path, const char *step, const struct cd_output_ctx *ctx,
		    struct cordon_error *err);

/* The report file: created when the run starts under a temporary name beside it (never through
 * a symlink, never inside the workdir: as above), renamed into place at the end. */
struct cd_report_file {
	int dirfd;
	char *path; /* the directory, for messages */
	char *name;
	char *tmp;
	int fd;
};

int cd_report_open(const char *path, const struct cd_output_ctx *ctx, struct cd_report_file *rf,
		   struct cordon_error *err);
int cd_report_commit(struct cd_report_file *rf, const char *json, struct cordon_error *err);
void cd_report_discard(struct cd_report_file *rf);
