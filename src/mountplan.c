/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mountplan.c - what the sandbox's filesystem is made of. Runs in the supervisor, before anything
 * is started, so that a bad path fails on the 125 path and -v can show the whole plan.
 *
 * Layout (in this order, which is the order the child mounts them):
 *  1. the root: a tmpfs, read-only at the end, holding one read-only recursive bind per top-level
 *     entry of the host's "/" (or --rootfs), symlinks copied; the top-level places that hold
 *     secrets or other users' data are empty directories instead (hidden_top below).
 *  2. what cordon manages: /proc, /sys, /dev, /tmp, /var/tmp.
 *  3. HOME, the workdir and the options' mounts, parents before children, so that the workdir is
 *     reachable under a hidden directory and --hide can hide a path inside the workdir.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "mount.h"

/* Top-level entries replaced by an empty read-only directory. /var goes whole: lib, log, spool,
 * mail, cache, backups, www... hold databases, logs and credentials; /var/tmp comes back fresh. */
static const char *const hidden_top[] = {
	"boot", "home", "lost+found", "media", "mnt", "root", "run", "snap", "srv", "var",
};
/* Top-level entries cordon provides itself. */
static const char *const managed_top[] = { "dev", "proc", "sys", "tmp" };

static bool in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return true;
	return false;
}

const char *cd_mnt_kind_name(enum cd_mnt_kind k)
{
	static const char *const names[] = {
		[CD_MNT_BIND] = "ro-bind", [CD_MNT_WORKDIR] = "workdir", [CD_MNT_SYMLINK] = "symlink",
		[CD_MNT_DIR] = "hidden",   [CD_MNT_TMPFS] = "tmpfs",     [CD_MNT_PROC] = "proc",
		[CD_MNT_SYSFS] = "sysfs",  [CD_MNT_DEV] = "dev",         [CD_MNT_HIDE] = "hide",
	};
	return k < CD_ELEMENTSOF(names) ? names[k] : "?";
}

static int add(struct cd_mount_plan *p, enum cd_mnt_kind kind, const char *src, const char *dst,
	       struct cd_mnt **ret, struct cordon_error *err)
{
	struct cd_mnt *nm, *m;

	nm = realloc(p->m, (p->n + 1) * sizeof(*nm));
	if (!nm)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	p->m = nm;
	m = &p->m[p->n];
	*m = (struct cd_mnt){ .kind = kind, .fd = -1, .mode = 0755 };
	m->src = src ? strdup(src) : NULL;
	m->dst = strdup(dst);
	if ((src && !m->src) || !m->dst) {
		free(m->src);
		free(m->dst);
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	}
	p->n++;
	if (ret)
		*ret = m;
	return 0;
}

static int add_tmpfs(struct cd_mount_plan *p, const char *dst, uint64_t size, mode_t mode,
		     bool user, struct cordon_error *err)
{
	struct cd_mnt *m;
	int r = add(p, CD_MNT_TMPFS, NULL, dst, &m, err);

	if (r < 0)
		return r;
	m->size = size;
	m->mode = mode;
	m->user = user;
	return 0;
}

static int add_top_entry(struct cd_mount_plan *p, const char *root, const char *name,
			 struct cordon_error *err)
{
	_cleanup_free_ char *src = NULL, *dst = NULL;
	char target[4096];
	struct cd_mnt *m;
	struct stat st;
	ssize_t n;
	int r;

	src = strcmp(root, "/") == 0 ? cd_strdup_printf("/%s", name)
				     : cd_strdup_printf("%s/%s", root, name);
	dst = cd_strdup_printf("/%s", name);
	if (!src || !dst)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	if (in_list(name, hidden_top, CD_ELEMENTSOF(hidden_top)))
		return add(p, CD_MNT_DIR, NULL, dst, NULL, err);
	if (lstat(src, &st) < 0)
		return cd_fail_errno(err, errno, "rootfs", "%s", src);
	if (S_ISLNK(st.st_mode)) {
		n = readlink(src, target, sizeof(target) - 1);
		if (n < 0)
			return cd_fail_errno(err, errno, "rootfs", "readlink %s", src);
		target[n] = '\0';
		return add(p, CD_MNT_SYMLINK, target, dst, NULL, err);
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return 0; /* sockets, devices, fifos at the top level: nothing a sandbox needs */
	r = add(p, CD_MNT_BIND, src, dst, &m, err);
	if (r < 0)
		return r;
	m->is_dir = S_ISDIR(st.st_mode);
	m->ro = true;
	return 0;
}

static int scandir_filter(const struct dirent *d)
{
	return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0 &&
	       !in_list(d->d_name, managed_top, CD_ELEMENTSOF(managed_top));
}

static int plan_root(struct cd_mount_plan *p, const char *root, struct cordon_error *err)
{
	struct dirent **names = NULL;
	int n, r = 0;

	n = scandir(root, &names, scandir_filter, alphasort);
	if (n < 0)
		return cd_fail_errno(err, errno, "rootfs", "read %s", root);
	for (int i = 0; i < n; i++) {
		if (r >= 0)
			r = add_top_entry(p, root, names[i]->d_name, err);
		free(names[i]);
	}
	free(names);
	return r;
}

static int plan_managed(struct cd_mount_plan *p, const struct cordon_config *c,
			struct cordon_error *err)
{
	int r;

	r = add(p, CD_MNT_PROC, NULL, "/proc", NULL, err);
	if (r >= 0)
		r = add(p, CD_MNT_SYSFS, "/sys", "/sys", NULL, err);
	if (r >= 0)
		r = add(p, CD_MNT_DEV, NULL, "/dev", NULL, err);
	if (r >= 0)
		r = add_tmpfs(p, "/tmp", c->tmp_size, 01777, false, err);
	if (r >= 0) /* /var itself is hidden (hidden_top), or created as a parent */
		r = add_tmpfs(p, "/var/tmp", c->tmp_size, 01777, false, err);
	return r;
}

/* The options' mounts, HOME and the workdir, into p (unsorted). */
static int plan_user(struct cd_mount_plan *p, const struct cordon_config *c, const char *workdir,
		     const char *workdir_target, const struct cd_identity *id,
		     struct cordon_error *err)
{
	struct cd_mnt *m;
	int r;

	r = add_tmpfs(p, id->home, CD_DEFAULT_TMPFS_SIZE, 0700, false, err);
	if (r < 0)
		return r;
	r = add(p, CD_MNT_WORKDIR, workdir, workdir_target, NULL, err);
	if (r < 0)
		return r;
	for (size_t i = 0; r >= 0 && c->hide && c->hide[i]; i++) {
		r = add(p, CD_MNT_HIDE, NULL, c->hide[i], &m, err);
		if (r >= 0)
			m->user = true;
	}
	for (size_t i = 0; r >= 0 && i < c->n_tmpfs; i++)
		r = add_tmpfs(p, c->tmpfs[i].path, c->tmpfs[i].size, 0755, true, err);
	for (size_t i = 0; r >= 0 && i < c->n_binds; i++) {
		struct stat st;

		if (stat(c->binds[i].src, &st) < 0)
			return cd_fail_errno(err, errno, "ro-bind", "%s", c->binds[i].src);
		r = add(p, CD_MNT_BIND, c->binds[i].src, c->binds[i].dst, &m, err);
		if (r >= 0) {
			m->is_dir = S_ISDIR(st.st_mode);
			m->ro = true;
			m->user = true;
		}
	}
	return r;
}

static const char *option_of(const struct cd_mnt *m)
{
	if (m->kind == CD_MNT_TMPFS)
		return m->user ? "--tmpfs" : "HOME";
	if (m->kind == CD_MNT_WORKDIR)
		return "--workdir-target";
	if (m->kind == CD_MNT_HIDE)
		return "--hide";
	return "--ro-bind";
}

/* Two of the options' mounts on one path would silently shadow each other: refuse. */
static int check_conflicts(const struct cd_mnt *m, size_t n, struct cordon_error *err)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(m[i].dst, m[j].dst) == 0)
				return cd_fail(err, 0, "mount", "%s and %s both mount on %s",
					       option_of(&m[i]), option_of(&m[j]), m[i].dst);
	return 0;
}

/* Parents before children; stable, so that equal depths keep the options' order. */
static void sort_by_depth(struct cd_mnt *m, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct cd_mnt cur = m[i];
		size_t d = cd_path_depth(cur.dst), j = i;

		while (j > 0 && cd_path_depth(m[j - 1].dst) > d) {
			m[j] = m[j - 1];
			j--;
		}
		m[j] = cur;
	}
}

int cd_mount_plan_build(const struct cordon_config *c, const char *workdir,
			const char *workdir_target, const struct cd_identity *id,
			struct cd_mount_plan *ret, struct cordon_error *err)
{
	struct cd_mount_plan p = { .uid = id->inside_uid, .gid = id->inside_gid,
				   .tmp_size = c->tmp_size, .fresh_sysfs = c->net != CORDON_NET_HOST };
	size_t user_start;
	int r;

	r = plan_root(&p, c->rootfs ? c->rootfs : "/", err);
	if (r >= 0)
		r = plan_managed(&p, c, err);
	user_start = p.n;
	if (r >= 0)
		r = plan_user(&p, c, workdir, workdir_target, id, err);
	if (r >= 0)
		r = check_conflicts(p.m + user_start, p.n - user_start, err);
	if (r < 0) {
		cd_mount_plan_done(&p);
		return r;
	}
	sort_by_depth(p.m + user_start, p.n - user_start);
	for (size_t i = user_start; i < p.n; i++)
		if (p.m[i].kind == CD_MNT_WORKDIR)
			p.workdir_target = p.m[i].dst;
	*ret = p;
	return 0;
}

void cd_mount_plan_done(struct cd_mount_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->m[i].src);
		free(p->m[i].dst);
	}
	free(p->m);
	p->m = NULL;
	p->n = 0;
}
