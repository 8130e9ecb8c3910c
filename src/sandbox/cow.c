/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow.c - the supervisor's side of the copy-on-write workdir (cow.h).
 */
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>

#include "cow.h"
#include "events.h"
#include "layer.h"
#include "mac.h"
#include "output.h"
#include "protect_run.h"

static int check_cow_from(struct cd_sandbox *sb, struct cordon_error *err)
{
	_cleanup_(cd_layer_freep) struct cd_layer *l = NULL;
	int r = cd_layer_load(sb->cow.store_fd, sb->c->cow.from, &l, err);

	if (r < 0)
		return r;
	if (l->workdir_dev != sb->wd.st.st_dev || l->workdir_ino != sb->wd.st.st_ino)
		return cd_fail(err, 0, "cow-from",
			       "layer %s holds changes of another workdir (%s), not of %s",
			       sb->c->cow.from, l->workdir, sb->wd.path);
	return 0;
}

/* nettle's HMAC leaves pads made of the key on the stack it ran on (a manifest checked for
 * --cow-from): cleared before pid 1, a fork of ours, gets a copy. */
static __attribute__((noinline)) void wipe_stack(void)
{
	uint8_t b[16384];

	explicit_bzero(b, sizeof(b));
	__asm__ volatile("" : : "r"(b) : "memory");
}

/* The run's layer store, out of the sandbox's reach (not in its workdir by any path or mount,
 * not below an earlier sandbox's workdir), and the key its manifests are signed with, made now
 * if missing: a store or a key that will not do fails the run before anything starts. The key
 * is wiped at once: pid 1, a fork of ours, must not carry it. */
static int open_store(struct cd_sandbox *sb, struct cordon_error *err)
{
	const struct cd_output_ctx ctx = { .workdir = &sb->wd, .marks = &sb->marks };
	struct cd_layer_key key;
	int r = cd_layer_store_open(sb->c->cow.layer_dir, &ctx, &sb->cow.store_fd, NULL, err);

	if (r < 0)
		return r;
	r = cd_layer_key_get(sb->cow.store_fd, true, &key, err);
	cd_layer_key_wipe(&key);
	return r;
}

/* The overlay is made in the sandbox's user namespace, where Linux takes only user.* xattrs
 * (userxattr), which implies redirect_dir=nofollow: renaming a directory of the workdir fails
 * with EXDEV (mv copies it instead; git mv and rename(2) fail). Said once pid 1 has the layer
 * (a kernel that refuses --cow gets its one error line only), before the command starts, so
 * that the failure it meets is not a mystery (issue 29; docs/design.md). */
static void say_no_rename(struct cd_sandbox *sb)
{
	cd_log_notice(&sb->c->log,
		      "cow: directories of the workdir cannot be renamed inside (EXDEV: no overlay "
		      "redirects in a user namespace; mv copies, git mv and rename(2) fail)");
}

int cd_cow_prepare(struct cd_sandbox *sb, struct cordon_error *err)
{
	const struct cordon_config *c = sb->c;
	int r;

	sb->plan.cow = c->cow.on;
	sb->plan.cow_size = c->cow.size;
	sb->cow.started = (int64_t)time(NULL);
	if (!c->cow.on)
		return 0;
	r = open_store(sb, err);
	if (r >= 0 && c->cow.from)
		r = check_cow_from(sb, err);
	wipe_stack();
	return r;
}

int cd_cow_handshake(struct cd_sandbox *sb, struct cordon_error *err)
{
	struct cd_msg m;
	int fd = -1, r;

	if (!sb->c->cow.on)
		return 0;
	do { /* pid 1 is making its mounts: the socket is non-blocking */
		struct pollfd p = { sb->pid1.sock, POLLIN, 0 };

		r = poll(&p, 1, 60 * 1000);
		r = r > 0 ? cd_msg_recv(sb->pid1.sock, &m, &fd) : r == 0 ? -ETIMEDOUT : -errno;
	} while (r == -EAGAIN || r == -EINTR);
	if (r > 0 && m.type == CD_MSG_ERROR) {
		cd_closep(&fd);
		sb->failed = true;
		sb->res->error = m.err;
		*err = m.err;
		return -(m.err.code ? m.err.code : EINVAL);
	}
	if (r <= 0 || m.type != CD_MSG_LAYER || fd < 0) {
		cd_closep(&fd);
		return cd_fail(err, r < 0 ? -r : EPROTO, "cow", "pid 1 sent no layer");
	}
	sb->cow.layer_fd = fd;
	if (sb->c->cow.from) {
		r = cd_layer_seed(sb->cow.store_fd, sb->c->cow.from, sb->cow.layer_fd,
				  sb->id.host_uid, sb->id.host_gid, err);
		if (r < 0)
			return r;
	}
	r = cd_msg_send(sb->pid1.sock, CD_MSG_LAYER, 0, NULL, -1);
	if (r < 0)
		return cd_fail_errno(err, -r, "cow", "answer pid 1");
	say_no_rename(sb);
	return 0;
}

static int save_layer(struct cd_sandbox *sb, bool live, char id[CD_LAYER_ID_LEN + 1],
		      struct cordon_error *err)
{
	_cleanup_close_ int lower = openat(sb->wd.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct cd_layer meta = { .workdir = sb->wd.path, .workdir_dev = sb->wd.st.st_dev,
				 .workdir_ino = sb->wd.st.st_ino, .created = sb->cow.started,
				 .protect = sb->plan.protect.globs };

	if (lower < 0)
		return cd_fail_errno(err, errno, "cow", "open the workdir %s", sb->wd.path);
	return cd_layer_save_protected(sb->cow.store_fd, sb->cow.layer_fd, lower, &meta,
				       sb->c->protect.no_defaults ? NULL : cd_protect_run_layer_git,
				       sb, live, id, err);
}

int cd_cow_checkpoint(struct cd_sandbox *sb, char ret_id[17], struct cordon_error *err)
{
	if (!sb->c->cow.on || sb->cow.layer_fd < 0)
		return cd_fail(err, EINVAL, "session", "not a copy-on-write session");
	return save_layer(sb, true, ret_id, err); /* live: the sandbox runs */
}

static void save_failed(struct cd_sandbox *sb, const struct cordon_error *e)
{
	struct cordon_result *res = sb->res;

	res->layer_error = *e;
	if (res->outcome != CORDON_OUTCOME_SETUP_ERROR) {
		res->error = *e;
		res->exit_code = CORDON_EXIT_FAILURE;
	}
}

static void save(struct cd_sandbox *sb)
{
	struct cordon_result *res = sb->res;
	_cleanup_(cd_layer_freep) struct cd_layer *l = NULL;
	struct cordon_error e = { 0 };
	char id[CD_LAYER_ID_LEN + 1];
	struct statfs fs;
	int r;

	if (fstatfs(sb->cow.layer_fd, &fs) == 0 && (fs.f_bavail == 0 || fs.f_ffree == 0))
		res->layer_full = 1;
	r = save_layer(sb, false, id, &e); /* the sandbox has ended */
	if (r >= 0)
		r = cd_layer_load(sb->cow.store_fd, id, &l, &e);
	if (r < 0)
		return save_failed(sb, &e);
	cd_layer_audit_files(&sb->rec.audit, l);
	if (l->n_changes == 0 && l->skipped == 0) {
		(void)cd_layer_discard(sb->cow.store_fd, id, &e); /* nothing to review */
		return;
	}
	snprintf(res->layer_id, sizeof(res->layer_id), "%s", id);
	res->layer_changes = l->n_changes;
	res->layer_skipped = l->skipped;
}

void cd_cow_end(struct cd_sandbox *sb)
{
	if (!sb->c->cow.on)
		return; /* a direct workdir: its protected paths are swept (protect_run.h) */
	if (sb->cow.layer_fd >= 0)
		save(sb);
	/* the layer's tmpfs goes with the last reference */
	sb->cow.layer_fd = cd_safe_close(sb->cow.layer_fd);
}

void cd_cow_done(struct cd_sandbox *sb)
{
	cd_closep(&sb->cow.layer_fd);
	cd_closep(&sb->cow.store_fd);
}
