/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* store.c - the layer store: open and check it, load a layer's manifest, list, discard
 * (layer.h). Runs in the supervisor (save) and the caller (the CLI, the API). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsops.h"
#include "layer.h"
#include "manifest.h"
#include "rmtree.h"
#include "util.h"

#define MANIFEST_MAX (1ull << 32) /* 4 GiB: far past any real layer, short of a runaway read */

static char *default_dir(void)
{
	const char *e = getenv("CORDON_LAYER_DIR"), *home;

	if (e && *e)
		return strdup(e);
	if (geteuid() == 0)
		return strdup("/var/lib/cordon/layers");
	e = getenv("XDG_STATE_HOME");
	if (e && e[0] == '/')
		return cd_strdup_printf("%s/cordon/layers", e);
	home = getenv("HOME");
	if (!home || home[0] != '/')
		return NULL;
	return cd_strdup_printf("%s/.local/state/cordon/layers", home);
}

/* One component below cur: made 0700 when missing, opened without following a symlink. */
static int open_component(int cur, const char *name, const char *path, struct cordon_error *err)
{
	struct stat st;
	int fd;

	if (mkdirat(cur, name, 0700) < 0 && errno != EEXIST)
		return cd_fail_errno(err, errno, "layer", "layer store %s: cannot make %s", path,
				     name);
	if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cd_fail_errno(err, errno, "layer", "layer store %s: %s", path, name);
	if (S_ISLNK(st.st_mode))
		return cd_fail(err, ELOOP, "layer",
			       "layer store %s: %s is a symlink (give the path without symlinks)",
			       path, name);
	fd = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cd_fail_errno(err, errno, "layer", "layer store %s: %s", path, name);
	return fd;
}

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

int cd_layer_store_open(const char *dir, int *ret_fd, char **ret_path, struct cordon_error *err)
{
	_cleanup_free_ char *path = dir ? strdup(dir) : default_dir();
	_cleanup_free_ char *walk = NULL;
	_cleanup_close_ int cur = -1;
	char *save = NULL, *c;
	int r;

	if (!path)
		return dir ? cd_fail(err, ENOMEM, "layer", "out of memory")
			   : cd_fail(err, ENOENT, "layer",
				     "no layer store: set CORDON_LAYER_DIR (or HOME)");
	if (path[0] != '/')
		return cd_fail(err, EINVAL, "layer", "layer store %s: not an absolute path", path);
	walk = strdup(path);
	if (!walk)
		return cd_fail(err, ENOMEM, "layer", "out of memory");
	cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return cd_fail_errno(err, errno, "layer", "/");
	for (c = strtok_r(walk, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "..") || !strcmp(c, "."))
			return cd_fail(err, EINVAL, "layer", "layer store %s: . or .. in the path",
				       path);
		r = open_component(cur, c, path, err);
		if (r < 0)
			return r;
		close(cur);
		cur = r;
	}
	r = check_store(cur, path, err);
	if (r < 0)
		return r;
	*ret_fd = CD_TAKE_FD(cur);
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

int cd_layer_load(int store_fd, const char *id, struct cd_layer **ret, struct cordon_error *err)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	char rel[CD_LAYER_ID_LEN + 16];
	struct cd_layer *l;
	size_t len = 0;
	int r;

	if (!cd_layer_id_valid(id))
		return cd_fail(err, EINVAL, "layer",
			       "\"%s\" is not a layer id (16 lower-case hex digits)", id);
	snprintf(rel, sizeof(rel), "%s/manifest", id);
	fd = cd_lfs_open(store_fd, rel, O_RDONLY, 0);
	if (fd == -ENOENT)
		return cd_fail(err, ENOENT, "layer", "no layer %s in the store", id);
	if (fd < 0)
		return cd_fail_errno(err, -fd, "layer", "layer %s: manifest", id);
	r = read_all(fd, &buf, &len);
	if (r < 0)
		return cd_fail_errno(err, -r, "layer", "layer %s: reading the manifest", id);
	r = cd_layer_manifest_parse(buf, len, &l, err);
	if (r < 0) {
		cd_error_append(err, " (layer %s)", id);
		return r;
	}
	memcpy(l->id, id, sizeof(l->id));
	*ret = l;
	return 0;
}

struct listed {
	char *id;
	int64_t saved;
};

static int listed_cmp(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;

	if (x->saved != y->saved)
		return x->saved > y->saved ? -1 : 1; /* newest first */
	return strcmp(x->id, y->id);
}

static int collect(int store_fd, DIR *d, struct listed **ret, size_t *ret_n)
{
	struct listed *v = NULL;
	struct dirent *de;
	size_t n = 0;

	while ((de = readdir(d))) {
		struct cd_layer *l = NULL;
		struct listed *nv;

		if (!cd_layer_id_valid(de->d_name) || cd_layer_load(store_fd, de->d_name, &l, NULL) < 0)
			continue; /* .ID.tmp, a layer being removed, anything else: not a layer */
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (nv)
			v = nv;
		if (!nv || !(v[n].id = strdup(de->d_name))) {
			cd_layer_free(l);
			while (n)
				free(v[--n].id);
			free(v);
			return -ENOMEM;
		}
		v[n++].saved = l->saved;
		cd_layer_free(l);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int cd_layer_list(int store_fd, char ***ret_ids, struct cordon_error *err)
{
	int fd = fcntl(store_fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct listed *v = NULL;
	char **ids;
	size_t n = 0;
	int r;

	if (!d) {
		r = errno;
		cd_closep(&fd);
		return cd_fail_errno(err, r, "layer", "listing the layer store");
	}
	rewinddir(d);
	r = collect(store_fd, d, &v, &n);
	closedir(d);
	if (r < 0)
		return cd_fail(err, -r, "layer", "out of memory");
	if (n)
		qsort(v, n, sizeof(*v), listed_cmp);
	ids = calloc(n + 1, sizeof(*ids));
	for (size_t i = 0; i < n; i++) {
		if (ids)
			ids[i] = v[i].id;
		else
			free(v[i].id);
	}
	free(v);
	if (!ids)
		return cd_fail(err, ENOMEM, "layer", "out of memory");
	*ret_ids = ids;
	return 0;
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
	if (fstatat(store_fd, id, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return cd_fail(err, ENOENT, "layer", "no layer %s in the store", id);
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
