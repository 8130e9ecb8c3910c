/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* output.c - the launcher's own files, out of the sandbox's reach (output.h). Supervisor. */
#include <fcntl.h>
#include <string.h>

#include "output.h"

int cd_output_refuse_in_workdir(int dirfd, const char *path, const char *step, const char *fix,
				const struct cd_output_ctx *ctx, struct cordon_error *err)
{
	int r = ctx->workdir ? cd_hostpath_within(dirfd, ctx->workdir) : 0;

	if (r < 0)
		return cd_fail_errno(err, -r, step, "%s", path);
	if (r > 0)
		return cd_fail(err, 0, step,
			       "%s: inside the workdir, where the sandbox could replace or rewrite "
			       "it: %s",
			       path, fix);
	return 0;
}

static int refuse_in_workdir(int dirfd, const char *path, const char *step,
			     const struct cd_output_ctx *ctx, struct cordon_error *err)
{
	return cd_output_refuse_in_workdir(dirfd, path, step, "write it outside the workdir", ctx,
					   err);
}

int cd_output_dir(const char *path, const char *step, const struct cd_output_ctx *ctx,
		  struct cd_hostpath *ret_dir, char **ret_name, struct cordon_error *err)
{
	struct cd_hostpath dir = { .fd = -1 };
	_cleanup_free_ char *name = NULL;
	int r = cd_hostpath_open_parent(path, step, ctx->marks, &dir, &name, err);

	if (r >= 0)
		r = refuse_in_workdir(dir.fd, path, step, ctx, err);
	if (r < 0) {
		cd_hostpath_done(&dir);
		return r;
	}
	*ret_dir = dir;
	*ret_name = CD_TAKE_PTR(name);
	return 0;
}

int cd_output_file(const char *path, const char *step, const struct cd_output_ctx *ctx, mode_t mode,
		   struct cordon_error *err)
{
	struct cd_hostpath dir = { .fd = -1 };
	_cleanup_free_ char *name = NULL;
	int fd, r = cd_output_dir(path, step, ctx, &dir, &name, err);

	if (r < 0)
		return r;
	fd = cd_hostpath_create(dir.fd, name, mode, NULL);
	cd_hostpath_done(&dir);
	return fd < 0 ? cd_fail_errno(err, -fd, step, "%s", path) : fd;
}

int cd_output_mkdir(const char *path, const char *step, const struct cd_output_ctx *ctx,
		    struct cordon_error *err)
{
	struct cd_hostpath dir = { .fd = -1 };
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int fd = -1;
	int r = cd_output_dir(path, step, ctx, &dir, &name, err);

	if (r < 0)
		return r;
	if (mkdirat(dir.fd, name, 0700) < 0 && errno != EEXIST)
		r = cd_fail_errno(err, errno, step, "%s", path);
	/* an existing symlink or file at the name is not a directory: O_NOFOLLOW says ENOTDIR */
	if (r >= 0)
		fd = openat(dir.fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r >= 0 && fd < 0)
		r = cd_fail_errno(err, errno, step, "%s", path);
	/* the directory itself may be the workdir, or a mount of it */
	if (r >= 0)
		r = refuse_in_workdir(fd, path, step, ctx, err);
	cd_hostpath_done(&dir);
	return r < 0 ? r : CD_TAKE_FD(fd);
}

int cd_report_open(const char *path, const struct cd_output_ctx *ctx, struct cd_report_file *rf,
		   struct cordon_error *err)
{
	struct cd_hostpath dir = { .fd = -1 };
	int r;

	*rf = (struct cd_report_file){ .dirfd = -1, .fd = -1 };
	r = cd_output_dir(path, "report", ctx, &dir, &rf->name, err);
	if (r < 0)
		return r;
	rf->dirfd = CD_TAKE_FD(dir.fd);
	rf->path = CD_TAKE_PTR(dir.path);
	cd_hostpath_done(&dir);
	rf->fd = cd_hostpath_create(rf->dirfd, rf->name, 0600, &rf->tmp);
	if (rf->fd < 0) {
		r = rf->fd;
		cd_report_discard(rf);
		return cd_fail_errno(err, -r, "report", "cannot create a file next to %s", path);
	}
	return 0;
}

int cd_report_commit(struct cd_report_file *rf, const char *json, struct cordon_error *err)
{
	int r = cd_write_all(rf->fd, json, strlen(json));

	if (r == 0 && fchmod(rf->fd, 0644) < 0)
		r = -errno;
	if (r == 0 && fsync(rf->fd) < 0)
		r = -errno;
	if (r == 0 && renameat(rf->dirfd, rf->tmp, rf->dirfd, rf->name) < 0)
		r = -errno;
	if (r < 0) {
		cd_fail_errno(err, -r, "report", "%s/%s", rf->path, rf->name);
		cd_report_discard(rf);
		return r;
	}
	free(CD_TAKE_PTR(rf->tmp));
	cd_report_discard(rf);
	return 0;
}

void cd_report_discard(struct cd_report_file *rf)
{
	if (rf->tmp && rf->dirfd >= 0)
		unlinkat(rf->dirfd, rf->tmp, 0);
	cd_closep(&rf->fd);
	cd_closep(&rf->dirfd);
	free(rf->tmp);
	free(rf->name);
	free(rf->path);
	*rf = (struct cd_report_file){ .dirfd = -1, .fd = -1 };
}
