/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mac.c - the layers' key, found or made and checked, and a manifest's MAC (mac.h). Runs where
 * layers are saved (the supervisor) and read (the caller: the CLI, the API). */
#include <fcntl.h>
#include <nettle/memops.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsops.h"
#include "hostpath.h"
#include "hostroot.h"
#include "mac.h"
#include "marks.h"
#include "util.h"

#define WHAT_DIR "the layers' key's directory"

/* A directory of the caller's or root's that no one else can write, and not the store or below
 * it: a key there could be read (and the store's manifests forged) by whoever can write the
 * store. */
static int check_dir(int fd, const char *path, int store_fd, struct cordon_error *err)
{
	struct cd_hostpath store = { .fd = store_fd };
	struct stat st;
	int r;

	if (fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "layer", WHAT_DIR " %s", path);
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return cd_fail(err, EPERM, "layer", WHAT_DIR " %s: owned by uid %u, not by us",
			       path, (unsigned)st.st_uid);
	if (st.st_mode & 022)
		return cd_fail(err, EPERM, "layer",
			       WHAT_DIR " %s: mode %04o: others could write it (chmod go-w %s, "
			       "after checking who could have written there)",
			       path, (unsigned)(st.st_mode & 07777), path);
	if (store_fd < 0)
		return 0;
	if (fstat(store_fd, &store.st) < 0)
		return cd_fail_errno(err, errno, "layer", "the layer store");
	r = cd_hostpath_within(fd, &store);
	if (r < 0)
		return cd_fail_errno(err, -r, "layer", WHAT_DIR " %s", path);
	return r ? cd_fail(err, EPERM, "layer",
			   "the layer store holds the layers' key (%s/" CD_LAYER_KEY_NAME
			   "), which must be out of the reach of whoever can write the store: "
			   "keep the store elsewhere",
			   path)
		 : 0;
}

/* STATE, opened (made when make: 0755 for root, whose list of earlier workdirs every user reads,
 * else 0700) and checked; -1 in *ret_fd when it does not exist. */
static int open_dir(int store_fd, bool make, struct cd_layer_key *k, int *ret_fd,
		    struct cordon_error *err)
{
	_cleanup_free_ char *state = cd_marks_state_dir();
	struct cd_layer_place how = { .what = WHAT_DIR,
				      .fix = cd_host_root() ? "cordon follows none on the way to "
							      "its key"
							    : "cordon follows none on the way to "
							      "its key: set XDG_STATE_HOME to a "
							      "path without symlinks" };
	_cleanup_close_ int fd = -1;
	int r;

	*ret_fd = -1;
	if (!state)
		return make ? cd_fail(err, ENOENT, "layer",
				      "no place for the layers' key: set XDG_STATE_HOME (or HOME)")
			    : 0;
	snprintf(k->path, sizeof(k->path), "%s/" CD_LAYER_KEY_NAME, state);
	how.make = make;
	how.mode = cd_host_root() ? 0755 : 0700;
	fd = cd_layer_dir_open(state, &how, err);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	r = check_dir(fd, state, store_fd, err);
	if (r < 0)
		return r;
	*ret_fd = CD_TAKE_FD(fd);
	return 0;
}

static int refuse_key(const struct cd_layer_key *k, const char *why, struct cordon_error *err)
{
	return cd_fail(err, EPERM, "layer",
		       "the layers' key %s: %s: not used (if nobody else made it so, remove it: a new "
		       "one is made, and the layers kept under the old one can only be discarded)",
		       k->path, why);
}

/* The key file: ours, 0600, one name, 32 bytes. -ENOENT (err untouched) when not there. */
static int read_key(int dir, struct cd_layer_key *k, struct cordon_error *err)
{
	_cleanup_close_ int fd = openat(dir, CD_LAYER_KEY_NAME,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0 && errno == ELOOP)
		return refuse_key(k, "a symlink", err);
	if (fd < 0 || fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "layer", "the layers' key %s", k->path);
	if (!S_ISREG(st.st_mode))
		return refuse_key(k, "not a file", err);
	if (st.st_uid != geteuid())
		return refuse_key(k, "not owned by us", err);
	if ((st.st_mode & 07777) != 0600)
		return refuse_key(k, "its mode is not 0600", err);
	if (st.st_nlink != 1)
		return refuse_key(k, "it has more than one name (a hard link)", err);
	if (st.st_size != (off_t)sizeof(k->k))
		return refuse_key(k, "not 32 bytes", err);
	do
		n = read(fd, k->k, sizeof(k->k));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(k->k))
		return n < 0 ? cd_fail_errno(err, errno, "layer", "the layers' key %s", k->path)
			     : refuse_key(k, "not 32 bytes", err);
	k->have = true;
	return 0;
}

/* A new key: written whole under a temporary name, then linked to its name, which fails if
 * another process made one meanwhile (then that one is used). */
static int make_key(int dir, const struct cd_layer_key *k, struct cordon_error *err)
{
	_cleanup_close_ int fd = -1;
	uint8_t b[32];
	char tmp[32];
	int r = 0;

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return cd_fail_errno(err, errno, "layer", "getrandom");
	cd_lfs_tmpname(tmp);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0)
		r = -errno;
	if (r >= 0)
		r = cd_write_all(fd, b, sizeof(b));
	explicit_bzero(b, sizeof(b));
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	if (r >= 0 && linkat(dir, tmp, dir, CD_LAYER_KEY_NAME, 0) < 0 && errno != EEXIST)
		r = -errno;
	if (fd >= 0)
		unlinkat(dir, tmp, 0);
	return r < 0 ? cd_fail_errno(err, -r, "layer", "making the layers' key %s", k->path) : 0;
}

int cd_layer_key_get(int store_fd, bool make, struct cd_layer_key *ret, struct cordon_error *err)
{
	_cleanup_close_ int dir = -1;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = open_dir(store_fd, make, ret, &dir, err);
	if (r < 0 || dir < 0)
		return r;
	r = read_key(dir, ret, err);
	if (r == -ENOENT && make) {
		r = make_key(dir, ret, err);
		if (r >= 0)
			r = read_key(dir, ret, err);
	}
	if (r == -ENOENT)
		return make ? cd_fail(err, ENOENT, "layer", "the layers' key %s: gone", ret->path)
			    : 0;
	if (r < 0)
		cd_layer_key_wipe(ret);
	return r;
}

void cd_layer_key_wipe(struct cd_layer_key *k)
{
	explicit_bzero(k->k, sizeof(k->k));
	k->have = false;
}

void cd_layer_mac_init(struct cd_layer_mac *m, const struct cd_layer_key *k, const char *id)
{
	static const char domain[] = "cordon-layer-mac 1"; /* its NUL included */

	hmac_sha256_set_key(&m->ctx, sizeof(k->k), k->k);
	hmac_sha256_update(&m->ctx, sizeof(domain), (const uint8_t *)domain);
	hmac_sha256_update(&m->ctx, strlen(id) + 1, (const uint8_t *)id);
}

void cd_layer_mac_update(struct cd_layer_mac *m, const void *data, size_t len)
{
	hmac_sha256_update(&m->ctx, len, data);
}

void cd_layer_mac_final(struct cd_layer_mac *m, uint8_t out[32])
{
	hmac_sha256_digest(&m->ctx, SHA256_DIGEST_SIZE, out);
	explicit_bzero(m, sizeof(*m));
}

bool cd_layer_mac_check(const struct cd_layer_key *k, const char *id, const void *body,
			size_t len, const uint8_t mac[32])
{
	struct cd_layer_mac m;
	uint8_t want[32];
	bool ok;

	cd_layer_mac_init(&m, k, id);
	cd_layer_mac_update(&m, body, len);
	cd_layer_mac_final(&m, want);
	ok = memeql_sec(want, mac, sizeof(want));
	explicit_bzero(want, sizeof(want));
	return ok;
}
