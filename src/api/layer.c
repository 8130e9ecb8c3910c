/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* layer.c - the public API of layers (cordon.h: cordon_layer_*), over src/layer. Runs in the
 * caller. Apply writes where it is asked to, once that is the layer's workdir by device and
 * inode: never where a manifest says. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cordon.h"
#include "layer.h"
#include "util.h"
#include "workdir.h"

static int open_store(const char *store, struct cordon_error *err)
{
	int fd = -1, r = cd_layer_store_open(store, NULL, &fd, NULL, err);

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

/* A layer that cannot be read: its id and why, nothing else. */
static int fill_problem(const struct cd_layer_entry *e, struct cordon_layer_info *ret)
{
	memset(ret, 0, sizeof(*ret));
	memcpy(ret->id, e->id, sizeof(ret->id));
	ret->workdir = strdup("");
	ret->problem = strdup(e->why.msg);
	return ret->workdir && ret->problem ? 0 : -ENOMEM;
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
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].workdir);
		free(v[i].problem);
	}
	free(v);
}

int cordon_layer_list(const char *store, struct cordon_layer_info **ret, size_t *ret_n,
		      struct cordon_error *err)
{
	_cleanup_close_ int fd = open_store(store, err);
	struct cd_layer_entry *e = NULL;
	struct cordon_layer_info *v;
	size_t n = 0;
	int r;

	if (fd < 0)
		return fd;
	r = cd_layer_list(fd, &e, &n, err);
	if (r < 0)
		return r;
	v = calloc(n + 1, sizeof(*v));
	for (size_t i = 0; v && i < n; i++) {
		r = e[i].l ? fill_info(e[i].l, &v[i]) : fill_problem(&e[i], &v[i]);
		if (r < 0) {
			cordon_layer_list_free(v, i + 1);
			v = NULL;
		}
	}
	cd_layer_entries_free(e, n);
	if (!v)
		return cd_fail(err, ENOMEM, "layer", "out of memory");
	*ret = v;
	*ret_n = n;
	return 0;
}

/* The run's commits, listed against the workdir's repository when it is still the layer's. */
static int diff_git(const struct cd_layer *l, int store_fd, FILE *out, struct cordon_error *err)
{
	_cleanup_close_ int wd = -1;
	struct stat st;

	if (cd_layer_git_count(l) == 0)
		return 0;
	wd = open(l->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wd >= 0 && (fstat(wd, &st) < 0 || st.st_dev != l->workdir_dev ||
			st.st_ino != l->workdir_ino))
		wd = cd_safe_close(wd);
	return cd_layer_git_log(l, store_fd, wd, out, err);
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
	flags = flags ? flags : CD_DIFF_STAT | CD_DIFF_PATCH;
	r = flags & CD_DIFF_STAT ? cd_layer_diff(l, fd, CD_DIFF_STAT, out, err) : 0;
	if (r >= 0 && (flags & CD_DIFF_STAT))
		r = diff_git(l, fd, out, err);
	if (r >= 0 && flags == (CD_DIFF_STAT | CD_DIFF_PATCH))
		fputc('\n', out);
	if (r >= 0 && (flags & CD_DIFF_PATCH))
		r = cd_layer_diff(l, fd, CD_DIFF_PATCH, out, err);
	if (fflush(out) == EOF && r >= 0)
		r = cd_fail_errno(err, errno, "layer", "writing the diff");
	return r;
}

/* Is the directory that was opened the layer's workdir? By device and inode only: the path the
 * layer records names it in messages, nothing more. */
static int check_workdir(const struct cd_layer *l, const struct cd_hostpath *wd,
			 struct cordon_error *err)
{
	if (wd->st.st_dev == l->workdir_dev && wd->st.st_ino == l->workdir_ino)
		return 0;
	if (!strcmp(wd->path, l->workdir))
		return cd_fail(err, ESTALE, "layer",
			       "%s: not the directory the run had (replaced since): layer %s not "
			       "applied",
			       wd->path, l->id);
	return cd_fail(err, ESTALE, "layer",
		       "%s is not the workdir of layer %s (%s): not applied (apply it from there)",
		       wd->path, l->id, l->workdir);
}

/* The directory asked for (NULL: the current one), opened as a run opens its workdir, checked
 * to be the layer's; reopened for reading. */
static int open_workdir(const struct cd_layer *l, const char *given, struct cordon_error *err)
{
	struct cd_hostpath wd = { .fd = -1 };
	struct cd_marks marks;
	int r, fd = -1;

	cd_marks_load(&marks);
	r = cd_workdir_open(given, &marks, &wd, err);
	cd_marks_done(&marks);
	if (r >= 0)
		r = check_workdir(l, &wd, err);
	if (r >= 0) {
		fd = openat(wd.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			r = cd_fail_errno(err, errno, "layer", "workdir %s", wd.path);
	}
	cd_hostpath_done(&wd);
	return r < 0 ? r : fd;
}

int cordon_layer_apply_result(const char *store, const char *id, const char *workdir,
			      struct cordon_apply_result *ret, struct cordon_error *err)
{
	_cleanup_(cd_layer_freep) struct cd_layer *l = NULL;
	_cleanup_close_ int fd = open_store(store, err), wd = -1;
	char **refs = NULL;
	int r;

	*ret = (struct cordon_apply_result){ 0 };
	if (fd < 0)
		return fd;
	r = cd_layer_load(fd, id, &l, err);
	if (r < 0)
		return r;
	wd = open_workdir(l, workdir, err);
	if (wd < 0)
		return wd;
	r = cd_layer_apply_git(l, fd, wd, &refs, err);
	if (r < 0)
		return r;
	ret->changes = l->n_changes;
	ret->git_state = cd_layer_git_count(l);
	ret->refs = refs;
	return 0;
}

void cordon_apply_result_done(struct cordon_apply_result *r)
{
	cd_strv_free(r->refs);
	r->refs = NULL;
}

int cordon_layer_apply(const char *store, const char *id, const char *workdir,
		       uint64_t *ret_changes, struct cordon_error *err)
{
	struct cordon_apply_result res;
	int r = cordon_layer_apply_result(store, id, workdir, &res, err);

	if (r < 0)
		return r;
	if (ret_changes)
		*ret_changes = res.changes;
	cordon_apply_result_done(&res);
	return 0;
}

int cordon_layer_discard(const char *store, const char *id, struct cordon_error *err)
{
	_cleanup_close_ int fd = open_store(store, err);

	return fd < 0 ? fd : cd_layer_discard(fd, id, err);
}
