/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd_kill.c - kill (a signal to the process, or to all of the container's with --all; a
 * created container ends of it as its process would have), delete (a stopped container's
 * directory removed; --force kills a live one first and waits for its holder to go, through
 * the holder's lock), pause and resume (the session's freezer). Runs in cordon-runtime.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "runtime.h"
#include "util.h"

enum { K_ALL };
static const struct oci_opt kill_opts[] = {
    [K_ALL] = {"all", 'a', false},
};

int oci_cmd_kill(int argc, char **argv)
{
	const char *v[CD_ELEMENTSOF(kill_opts)], *id;
	struct oci_kill k = {.sig = SIGTERM};
	char **rest;
	int n, r;

	r = oci_opts_parse("kill", kill_opts, CD_ELEMENTSOF(kill_opts), argc, argv, v, &n, &rest,
			   false);
	if (r)
		return r;
	if (n == 2) {
		k.sig = oci_signal_parse(rest[1]);
		if (k.sig < 0)
			return oci_error(OCI_EXIT_BAD, "kill", "\"%s\": not a signal", rest[1]);
		n = 1;
	}
	id = oci_one_id("kill", n, rest);
	if (!id)
		return OCI_EXIT_BAD;
	k.all = v[K_ALL] != NULL;
	return oci_ctl_simple("kill", id, OCI_MSG_KILL, &k, sizeof(k), false);
}

static int pause_resume(const char *cmd, int argc, char **argv, uint32_t type)
{
	const char *id = oci_one_id(cmd, argc, argv);

	return id ? oci_ctl_simple(cmd, id, type, NULL, 0, false) : OCI_EXIT_BAD;
}

int oci_cmd_pause(int argc, char **argv)
{
	return pause_resume("pause", argc, argv, OCI_MSG_PAUSE);
}

int oci_cmd_resume(int argc, char **argv)
{
	return pause_resume("resume", argc, argv, OCI_MSG_RESUME);
}

enum { D_FORCE };
static const struct oci_opt delete_opts[] = {
    [D_FORCE] = {"force", 'f', false},
};

/* A live holder: refused unless created (runc deletes those) or forced; else killed, and
 * waited for through its lock, which the kernel drops when it exits */
static int delete_live(int dirfd, const char *id, bool force)
{
	struct oci_kill k = {.sig = SIGKILL, .all = 1};
	struct cordon_error err = {0};
	_cleanup_close_ int sock = -1;
	struct oci_state st;
	enum oci_status status;

	if (oci_state_read(dirfd, &st, &err) < 0)
		return oci_error_from(OCI_EXIT_FAIL, "delete", &err);
	status = st.status;
	oci_state_clear(&st);
	if (!force && status != OCI_CREATED && status != OCI_STOPPED)
		return oci_error(OCI_EXIT_FAIL, "delete",
				 "%s: container is %s: stop it first, or --force", id,
				 oci_status_name(status));
	sock = oci_ctl_connect(dirfd, &err);
	if (sock >= 0 && status != OCI_STOPPED &&
	    oci_ctl_call(sock, OCI_MSG_KILL, &k, sizeof(k), NULL, 0, NULL, 0, NULL, &err) < 0 &&
	    err.code != ECONNRESET)
		return oci_error_from(OCI_EXIT_FAIL, "delete", &err);
	while (flock(dirfd, LOCK_EX) < 0)
		if (errno != EINTR)
			return oci_error(OCI_EXIT_FAIL, "delete", "lock: %s", strerror(errno));
	return 0;
}

int oci_cmd_delete(int argc, char **argv)
{
	const char *v[CD_ELEMENTSOF(delete_opts)], *id;
	struct cordon_error err = {0};
	_cleanup_close_ int rootfd = -1, dirfd = -1;
	bool force;
	char **rest;
	int n, r;

	r = oci_opts_parse("delete", delete_opts, CD_ELEMENTSOF(delete_opts), argc, argv, v, &n,
			   &rest, false);
	if (r)
		return r;
	id = oci_one_id("delete", n, rest);
	if (!id)
		return OCI_EXIT_BAD;
	force = v[D_FORCE] != NULL;
	rootfd = oci_root_open(oci_g.root, false, true, &err);
	if (rootfd < 0 && force && err.code == ENOENT)
		return 0;
	if (rootfd < 0)
		return oci_error_from(OCI_EXIT_FAIL, "--root", &err);
	dirfd = oci_dir_open(rootfd, id, &err);
	/* the engines delete twice (containerd: delete, then delete --force) */
	if (dirfd < 0 && force && err.code == ENOENT)
		return 0;
	if (dirfd < 0)
		return oci_error_from(OCI_EXIT_FAIL, "delete", &err);
	if (flock(dirfd, LOCK_EX | LOCK_NB) < 0) {
		r = delete_live(dirfd, id, force);
		if (r)
			return r;
	}
	/* lifecycle step 13: the container is gone (its holder's lock is ours) */
	oci_hooks_poststop(dirfd, id);
	r = oci_dir_remove(rootfd, id, &err);
	if (r < 0 && !(force && err.code == ENOENT))
		return oci_error_from(OCI_EXIT_FAIL, "delete", &err);
	return 0;
}
