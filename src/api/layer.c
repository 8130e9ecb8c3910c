/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* layer.c - the public API of layers (cordon.h: cordon_layer_*), over src/layer. Runs in the
 * caller. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cordon.h"
#include "layer.h"
#include "util.h"

static int open_store(const char *store, struct cordon_error *err)
{
	int fd = -1, r = cd_layer_store_open(store, &fd, NULL, err);

	return r < 0 ? r : fd;
}

static int fill_info(const struct cd_layer *l, struct cordon_layer_info *ret)
{
	memset(ret, 0, sizeof(*ret));
	memcpy(ret->id, l->id, sizeof(ret->id));
	ret->workdir = strdup(l->workdir);
	ret->created = l->created;
	ret->saved = l->saved;
	ret->changes = l->n_changes;
	ret->bytes = l->bytes;
	ret->skipped = l->skipped;
	return ret->workdir ? 0 : -ENOMEM;
}

int cordon_layer_info(const char *store, const char *id, struct cordon_layer_info *ret,
		      struct cordon_error *err)
{
	_cleanup_(cd_layer_freep) struct cd_layer *l = NULL;
	_cleanup_close_ int fd = open_store(store, err);
	int r;

	if (fd < 0)
		return fd;
	r = cd_layer_load(fd, id, &l, err);
	if (r < 0)
		return r;
	return fill_info(l, ret) < 0 ? cd_fail(err, ENOMEM, "layer", "out of memory") : 0;
}

void cordon_layer_list_free(struct cordon_layer_info *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].workdir);
	free(v);
}

int cordon_layer_list(const char *store, struct cordon_layer_info **ret, size_t *ret_n,
		      struct cordon_error *err)
{
	_cleanup_close_ int fd = open_store(store, err);
	_cleanup_strv_ char **ids = NULL;
	struct cordon_layer_info *v;
	size_t n = 0;
	int r;

	if (fd < 0)
		return fd;
	r = cd_layer_list(fd, &ids, err);
	if (r < 0)
		return r;
	v = calloc(cd_strv_len(ids) + 1, sizeof(*v));
	if (!v)
		return cd_fail(err, ENOMEM, "layer", "out of memory");
	for (char **id = ids; *id; id++) {
		struct cd_layer *l = NULL;

		if (cd_layer_load(fd, *id, &l, NULL) < 0)
			continue; /* removed meanwhile */
		r = fill_info(l, &v[n++]);
		cd_layer_free(l);
		if (r < 0) {
			cordon_layer_list_free(v, n);
			return cd_fail(err, ENOMEM, "layer", "out of memory");
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int cordon_layer_diff(const char *store, const char *id, unsigned flags, int out_fd,
		      struct cordon_error *err)
{
	_cleanup_(cd_layer_freep) struct cd_layer *l = NULL;
	_cleanup_close_ int fd = open_store(store, err);
	_cleanup_(cd_fclosep) FILE *out = NULL;
	int r, dup_fd;

	if (fd < 0)
		return fd;
	r = cd_layer_load(fd, id, &l, err);
	if (r < 0)
		return r;
	dup_fd = fcntl(out_fd, F_DUPFD_CLOEXEC, 3);
	out = dup_fd >= 0 ? fdopen(dup_fd, "w") : NULL;
	if (!out) {
		cd_closep(&dup_fd);
		return cd_fail_errno(err, errno, "layer", "diff output");
	}
	r = cd_layer_diff(l, fd, flags ? flags : CD_DIFF_STAT | CD_DIFF_PATCH, out, err);
	if (fflush(out) == EOF && r >= 0)
		r = cd_fail_errno(err, errno, "layer", "writing the diff");
	return r;
}

/* The layer's workdir, opened from / without following a symlink, checked to be the run's. */
static int open_workdir(const struct cd_layer *l, struct cordon_error *err)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS };
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1;
	const char *rel = l->workdir + strspn(l->workdir, "/");
	struct stat st;

	if (root < 0)
		return cd_fail_errno(err, errno, "layer", "/");
	do
		fd = (int)syscall(SYS_openat2, root, *rel ? rel : ".", &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		return cd_fail(err, ELOOP, "layer",
			       "workdir %s: a symlink or a file in its path now (not followed): "
			       "not applied",
			       l->workdir);
	if (fd < 0)
		return cd_fail_errno(err, errno, "layer", "workdir %s (gone?)", l->workdir);
	if (fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "layer", "workdir %s", l->workdir);
	if (st.st_dev != l->workdir_dev || st.st_ino != l->workdir_ino)
		return cd_fail(err, ESTALE, "layer",
			       "workdir %s: not the directory the run had (replaced since): not "
			       "applied",
			       l->workdir);
	return CD_TAKE_FD(fd);
}

int cordon_layer_apply(const char *store, const char *id, uint64_t *ret_changes,
		       struct cordon_error *err)
{
	_cleanup_(cd_layer_freep) struct cd_layer *l = NULL;
	_cleanup_close_ int fd = open_store(store, err), wd = -1;
	int r;

	if (fd < 0)
		return fd;
	r = cd_layer_load(fd, id, &l, err);
	if (r < 0)
		return r;
	wd = open_workdir(l, err);
	if (wd < 0)
		return wd;
	r = cd_layer_apply(l, fd, wd, err);
	if (r < 0)
		return r;
	if (ret_changes)
		*ret_changes = l->n_changes;
	return 0;
}

int cordon_layer_discard(const char *store, const char *id, struct cordon_error *err)
{
	_cleanup_close_ int fd = open_store(store, err);

	return fd < 0 ? fd : cd_layer_discard(fd, id, err);
}
