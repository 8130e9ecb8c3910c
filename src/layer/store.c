/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* store.c - the layer store: open and check it (and any directory of cordon's state, walked from
 * "/"), load a layer's manifest once it is checked to be cordon's own, list, discard (layer.h).
 * Runs in the supervisor (save) and the caller (the CLI, the API). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsops.h"
#include "hostroot.h"
#include "layer.h"
#include "mac.h"
#include "manifest.h"
#include "output.h"
#include "rmtree.h"
#include "util.h"

#define MANIFEST_MAX (1ull << 32) /* 4 GiB: far past any real layer, short of a runaway read */

static char *default_dir(void)
{
	const char *e = getenv("CORDON_LAYER_DIR"), *home;

	if (e && *e)
		return strdup(e);
	if (cd_host_root())
		return strdup("/var/lib/cordon/layers");
	e = getenv("XDG_STATE_HOME");
	if (e && e[0] == '/')
		return cd_strdup_printf("%s/cordon/layers", e);
	home = getenv("HOME");
	if (!home || home[0] != '/')
		return NULL;
	return cd_strdup_printf("%s/.local/state/cordon/layers", home);
}

/* ---- a host directory by its path: the store, the key's directory ---- */

struct dir_walk {
	const char *path;
	const struct cd_layer_place *how;
	const struct cd_marks *marks;
	char *marked; /* the first directory on the way that was a sandbox's workdir (malloc'd) */
	bool placed;  /* the directory below which the rest is made has been checked */
	struct cordon_error *err;
};

/* Out of every sandbox's reach: neither the run's workdir nor below it (by any mount), nor below
 * a directory that was a sandbox's workdir. */
static int check_place(struct dir_walk *w, int fd)
{
	_cleanup_free_ char *name = cd_strdup_printf("%s %s", w->how->what, w->path);
	int r;

	if (!name)
		return cd_fail(w->err, ENOMEM, "layer", "out of memory");
	if (w->how->ctx) {
		r = cd_output_refuse_in_workdir(fd, name, "layer", "keep it outside the workdir",
						w->how->ctx, w->err);
		if (r < 0)
			return r;
	}
	if (w->marked)
		return cd_fail(w->err, EPERM, "layer",
			       "%s: %s was a sandbox's workdir, where the sandbox could have written "
			       "it: keep it elsewhere",
			       name, w->marked);
	return 0;
}

static void note_mark(struct dir_walk *w, int fd, size_t end)
{
	struct cd_mark m;

	if (!w->marked && cd_marks_any(w->marks) && cd_mark_of(fd, &m) == 0 &&
	    cd_marks_has(w->marks, &m))
		w->marked = strndup(w->path, end);
}

/* One component below cur: made when missing (make), opened without following a symlink. */
static int open_component(struct dir_walk *w, int cur, const char *name, size_t end)
{
	struct stat st;
	int fd, r;

	if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return cd_fail_errno(w->err, errno, "layer", "%s %s: %s", w->how->what,
					     w->path, name);
		if (!w->how->make)
			return -ENOENT;
		if (!w->placed) { /* nothing is made where a sandbox could reach it */
			r = check_place(w, cur);
			if (r < 0)
				return r;
			w->placed = true;
		}
		if ((mkdirat(cur, name, w->how->mode) < 0 && errno != EEXIST) ||
		    fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return cd_fail_errno(w->err, errno, "layer", "%s %s: cannot make %s",
					     w->how->what, w->path, name);
		if (S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
		    fchmodat(cur, name, w->how->mode, 0) < 0) /* whatever the umask */
			return cd_fail_errno(w->err, errno, "layer", "%s %s: cannot set %s's mode",
					     w->how->what, w->path, name);
	}
	if (S_ISLNK(st.st_mode))
		return cd_fail(w->err, ELOOP, "layer", "%s %s: %s is a symlink (%s)", w->how->what,
			       w->path, name, w->how->fix);
	fd = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cd_fail_errno(w->err, errno, "layer", "%s %s: %s", w->how->what, w->path,
				     name);
	note_mark(w, fd, end);
	return fd;
}

static int walk_dirs(struct dir_walk *w)
{
	_cleanup_free_ char *copy = strdup(w->path);
	_cleanup_close_ int cur = -1;
	char *save = NULL, *c;
	int r;

	if (!copy)
		return cd_fail(w->err, ENOMEM, "layer", "out of memory");
	if (w->path[0] != '/')
		return cd_fail(w->err, EINVAL, "layer", "%s %s: not an absolute path",
			       w->how->what, w->path);
	cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return cd_fail_errno(w->err, errno, "layer", "/");
	for (c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "..") || !strcmp(c, "."))
			return cd_fail(w->err, EINVAL, "layer", "%s %s: . or .. in the path",
				       w->how->what, w->path);
		r = open_component(w, cur, c, (size_t)(c - copy) + strlen(c));
		if (r < 0)
			return r;
		close(cur);
		cur = r;
	}
	r = w->placed ? 0 : check_place(w, cur);
	return r < 0 ? r : CD_TAKE_FD(cur);
}

int cd_layer_dir_open(const char *path, const struct cd_layer_place *how,
		      struct cordon_error *err)
{
	struct dir_walk w = { .path = path, .how = how, .marks = how->marks, .err = err };
	struct cd_marks own = { .dir_fd = -1, .root_fd = -1 };
	int r;

	if (!how->marks) {
		cd_marks_load(&own);
		w.marks = &own;
	}
	r = walk_dirs(&w);
	free(w.marked);
	if (!how->marks)
		cd_marks_done(&own);
	return r;
}

/* ---- the store ---- */

static int check_store(int fd, const char *path, struct cordon_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "layer", "layer store %s", path);
	if (st.st_uid != geteuid())
		return cd_fail(err, EPERM, "layer",
			       "layer store %s: owned by uid %u, not by us (uid %u): use a "
			       "directory of your own",
			       path, (unsigned)st.st_uid, (unsigned)geteuid());
	if ((st.st_mode & 07777) != 0700)
		return cd_fail(err, EPERM, "layer",
			       "layer store %s: mode %04o, not 0700 (chmod 0700 %s, after checking "
			       "who could have written there)",
			       path, (unsigned)(st.st_mode & 07777), path);
	return 0;
}

int cd_layer_store_open(const char *dir, const struct cd_output_ctx *ctx, int *ret_fd,
			char **ret_path, struct cordon_error *err)
{
	const struct cd_layer_place how = { .what = "layer store",
					    .fix = "give the path without symlinks",
					    .make = true,
					    .mode = 0700,
					    .ctx = ctx,
					    .marks = ctx ? ctx->marks : NULL };
	_cleanup_free_ char *path = dir ? strdup(dir) : default_dir();
	_cleanup_close_ int fd = -1;
	int r;

	if (!path)
		return dir ? cd_fail(err, ENOMEM, "layer", "out of memory")
			   : cd_fail(err, ENOENT, "layer",
				     "no layer store: set CORDON_LAYER_DIR (or HOME)");
	fd = cd_layer_dir_open(path, &how, err);
	if (fd < 0)
		return fd;
	r = check_store(fd, path, err);
	if (r < 0)
		return r;
	*ret_fd = CD_TAKE_FD(fd);
	if (ret_path)
		*ret_path = CD_TAKE_PTR(path);
	return 0;
}

static int read_all(int fd, char **ret, size_t *ret_len)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb = cap >= MANIFEST_MAX ? NULL : realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				return cap >= MANIFEST_MAX ? -EFBIG : -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;

			free(buf);
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* ---- a layer, read only when it is cordon's own ---- */

/* The name of what fd is, for a message (the store as it was opened). */
static const char *fd_name(int fd, char buf[256])
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, 255);
	if (n <= 0)
		return strcpy(buf, "(open)");
	buf[n] = '\0';
	return buf;
}

/* Of ours, and writable by no one else. */
static int check_ours(const struct stat *st, const char *id, const char *what,
		      struct cordon_error *err)
{
	if (st->st_uid != geteuid())
		return cd_fail(err, EPERM, "layer",
			       "layer %s: %s is owned by uid %u, not by us (uid %u): not read "
			       "(discard it)",
			       id, what, (unsigned)st->st_uid, (unsigned)geteuid());
	if (st->st_mode & 022)
		return cd_fail(err, EPERM, "layer",
			       "layer %s: %s has mode %04o: others could write it: not read "
			       "(discard it)",
			       id, what, (unsigned)(st->st_mode & 07777));
	return 0;
}

/* STORE/ID: a directory of ours, not a symlink, opened. */
static int open_layer_dir(int store_fd, const char *id, struct cordon_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	char name[256];
	int r;

	/* the store as it is now (its name looked up only to say what is wrong) */
	if (fstat(store_fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700) {
		r = check_store(store_fd, fd_name(store_fd, name), err);
		if (r < 0)
			return r;
	}
	if (fstatat(store_fd, id, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? cd_fail(err, ENOENT, "layer", "no layer %s in the store", id)
				       : cd_fail_errno(err, errno, "layer", "layer %s", id);
	if (S_ISLNK(st.st_mode))
		return cd_fail(err, ELOOP, "layer",
			       "layer %s: a symlink in the store, not a layer cordon saved: not "
			       "followed (discard it)",
			       id);
	if (!S_ISDIR(st.st_mode))
		return cd_fail(err, ENOTDIR, "layer",
			       "layer %s: not a directory, not a layer cordon saved (discard it)", id);
	fd = openat(store_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "layer", "layer %s", id);
	r = check_ours(&st, id, "its directory", err);
	return r < 0 ? r : CD_TAKE_FD(fd);
}

/* A manifest's stat: a file of ours with one name. */
static int check_manifest(const struct stat *st, const char *id, struct cordon_error *err)
{
	int r;

	if (S_ISLNK(st->st_mode))
		return cd_fail(err, ELOOP, "layer",
			       "layer %s: its manifest is a symlink: not followed (discard it)", id);
	if (!S_ISREG(st->st_mode))
		return cd_fail(err, EBADMSG, "layer",
			       "layer %s: its manifest is not a file (discard it)", id);
	r = check_ours(st, id, "its manifest", err);
	if (r < 0)
		return r;
	if (st->st_nlink != 1)
		return cd_fail(err, EPERM, "layer",
			       "layer %s: its manifest has %ju names (a hard link): not read "
			       "(discard it)",
			       id, (uintmax_t)st->st_nlink);
	return 0;
}

/* STORE/ID/manifest, read whole: checked by its name (what is there), then opened without
 * following a symlink and checked again (what was opened). */
static int read_manifest(int store_fd, const char *id, char **ret, size_t *ret_len,
			 struct cordon_error *err)
{
	_cleanup_close_ int dir = open_layer_dir(store_fd, id, err), fd = -1;
	struct stat st, st2;
	int r;

	if (dir < 0)
		return dir;
	if (fstatat(dir, "manifest", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cd_fail_errno(err, errno, "layer", "layer %s: manifest", id);
	r = check_manifest(&st, id, err);
	if (r < 0)
		return r;
	fd = openat(dir, "manifest", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st2) < 0)
		return cd_fail_errno(err, errno, "layer", "layer %s: manifest", id);
	r = check_manifest(&st2, id, err);
	if (r < 0)
		return r;
	if (st.st_dev != st2.st_dev || st.st_ino != st2.st_ino)
		return cd_fail(err, EAGAIN, "layer", "layer %s: its manifest changed as it was read",
			       id);
	r = read_all(fd, ret, ret_len);
	return r < 0 ? cd_fail_errno(err, -r, "layer", "layer %s: reading the manifest", id) : 0;
}

/* The manifest is cordon's own: its body's length (without the "mac" line) in *ret_body. */
static int authenticate(const struct cd_layer_key *k, const char *id, const char *buf,
			size_t len, size_t *ret_body, struct cordon_error *err)
{
	uint8_t mac[32];

	if (cd_layer_manifest_is_v1(buf, len))
		return cd_fail(err, EBADMSG, "layer",
			       "layer %s: saved by an earlier cordon, without a MAC: it cannot be "
			       "told from a forgery, so it is not read (discard it)",
			       id);
	if (!cd_layer_manifest_split_mac(buf, len, ret_body, mac))
		return cd_fail(err, EBADMSG, "layer",
			       "layer %s: its manifest carries no MAC (cut short, or not cordon's): "
			       "not read (discard it)",
			       id);
	if (!k->have)
		return cd_fail(err, EBADMSG, "layer",
			       "layer %s: no key to check it with (%s is missing): not read "
			       "(discard it)",
			       id, k->path);
	if (!cd_layer_mac_check(k, id, buf, *ret_body, mac))
		return cd_fail(err, EBADMSG, "layer",
			       "layer %s: its manifest's MAC does not match: changed since cordon "
			       "saved it (or saved under another key): not read (discard it)",
			       id);
	return 0;
}

int cd_layer_load_with(int store_fd, const struct cd_layer_key *key, const char *id,
		       struct cd_layer **ret, struct cordon_error *err)
{
	_cleanup_free_ char *buf = NULL;
	struct cd_layer *l;
	size_t len = 0, body = 0;
	int r;

	if (!cd_layer_id_valid(id))
		return cd_fail(err, EINVAL, "layer",
			       "\"%s\" is not a layer id (16 lower-case hex digits)", id);
	r = read_manifest(store_fd, id, &buf, &len, err);
	if (r >= 0)
		r = authenticate(key, id, buf, len, &body, err);
	if (r < 0)
		return r;
	r = cd_layer_manifest_parse(buf, body, &l, err);
	if (r < 0) {
		cd_error_append(err, " (layer %s)", id);
		return r;
	}
	memcpy(l->id, id, sizeof(l->id));
	*ret = l;
	return 0;
}

int cd_layer_load(int store_fd, const char *id, struct cd_layer **ret, struct cordon_error *err)
{
	struct cd_layer_key key;
	int r = cd_layer_key_get(store_fd, false, &key, err);

	if (r >= 0)
		r = cd_layer_load_with(store_fd, &key, id, ret, err);
	cd_layer_key_wipe(&key);
	return r;
}

/* ---- listing ---- */

static int entry_cmp(const void *a, const void *b)
{
	const struct cd_layer_entry *x = a, *y = b;

	if (!x->l != !y->l)
		return x->l ? -1 : 1; /* the layers that can be read first */
	if (x->l && x->l->saved != y->l->saved)
		return x->l->saved > y->l->saved ? -1 : 1; /* newest first */
	return strcmp(x->id, y->id);
}

/* The header of l only: its changes and globs freed (n_changes still counts them). */
static void header_only(struct cd_layer *l)
{
	for (size_t i = 0; l->changes && i < l->n_changes; i++)
		free(l->changes[i].path);
	free(l->changes);
	l->changes = NULL;
	cd_strv_free(l->protect);
	l->protect = NULL;
}

static int collect(int store_fd, const struct cd_layer_key *key, DIR *d,
		   struct cd_layer_entry **ret, size_t *ret_n)
{
	struct cd_layer_entry *v = NULL, *nv;
	struct dirent *de;
	size_t n = 0;

	while ((de = readdir(d))) {
		struct cd_layer_entry e = { 0 };

		if (!cd_layer_id_valid(de->d_name))
			continue; /* .ID.tmp (being written or removed), anything else: not a layer */
		memcpy(e.id, de->d_name, sizeof(e.id));
		if (cd_layer_load_with(store_fd, key, e.id, &e.l, &e.why) >= 0)
			header_only(e.l);
		else if (e.why.code == ENOENT)
			continue; /* removed meanwhile */
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv) {
			cd_layer_free(e.l);
			cd_layer_entries_free(v, n);
			return -ENOMEM;
		}
		v = nv;
		v[n++] = e;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int cd_layer_list(int store_fd, struct cd_layer_entry **ret, size_t *ret_n,
		  struct cordon_error *err)
{
	int fd = fcntl(store_fd, F_DUPFD_CLOEXEC, 3);
	_cleanup_(cd_closedirp) DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct cd_layer_entry *v = NULL;
	struct cd_layer_key key;
	size_t n = 0;
	int r;

	if (!d) {
		r = errno;
		cd_closep(&fd);
		return cd_fail_errno(err, r, "layer", "listing the layer store");
	}
	rewinddir(d);
	r = cd_layer_key_get(store_fd, false, &key, err);
	if (r >= 0)
		r = collect(store_fd, &key, d, &v, &n);
	cd_layer_key_wipe(&key);
	if (r == -ENOMEM)
		return cd_fail(err, ENOMEM, "layer", "out of memory");
	if (r < 0)
		return r;
	if (n)
		qsort(v, n, sizeof(*v), entry_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
}

void cd_layer_entries_free(struct cd_layer_entry *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		cd_layer_free(v[i].l);
	free(v);
}

/* Remove STORE/name (a directory of ours, or nothing). */
static int remove_entry(int store_fd, const char *name)
{
	_cleanup_close_ int fd = openat(store_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
								 O_CLOEXEC);
	int r;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = cd_rmtree_contents(fd);
	if (r < 0)
		return r;
	return unlinkat(store_fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

int cd_layer_tmp_remove(int store_fd, const char *id)
{
	char tmp[CD_LAYER_ID_LEN + 8];

	snprintf(tmp, sizeof(tmp), ".%s.tmp", id);
	return remove_entry(store_fd, tmp);
}

int cd_layer_discard(int store_fd, const char *id, struct cordon_error *err)
{
	char tmp[CD_LAYER_ID_LEN + 8];
	struct stat st;
	int r;

	if (!cd_layer_id_valid(id))
		return cd_fail(err, EINVAL, "layer",
			       "\"%s\" is not a layer id (16 lower-case hex digits)", id);
	if (fstatat(store_fd, id, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cd_fail(err, ENOENT, "layer", "no layer %s in the store", id);
	/* what only looks like a layer (a symlink, a file): removed, never followed */
	if (!S_ISDIR(st.st_mode))
		return unlinkat(store_fd, id, 0) < 0
			       ? cd_fail_errno(err, errno, "layer", "removing layer %s", id)
			       : 0;
	/* out of sight first (a listing never shows half a layer), then removed */
	snprintf(tmp, sizeof(tmp), ".%s.tmp", id);
	r = remove_entry(store_fd, tmp);
	if (r >= 0 && renameat(store_fd, id, store_fd, tmp) < 0)
		r = -errno;
	if (r >= 0)
		r = remove_entry(store_fd, tmp);
	if (r < 0)
		return cd_fail_errno(err, -r, "layer", "removing layer %s", id);
	return 0;
}
