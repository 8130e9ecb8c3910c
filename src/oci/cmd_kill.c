/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd_kill.c - kill (a signal to the process, or to all of the container's with --all; a
 * created container ends of it as its process would have), delete (a stopped container's
 * directory removed; --force kills a live one first and waits for its holder to go, through
 * the holder's lock, a few seconds at most, then SIGKILLs the holder itself, through a pidfd
 * checked to be it), pause and resume (the session's freezer). Runs in cordon-runtime.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
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

/* delete --force waits this long for the holder to end after its KILL (its answer included),
 * then as long again after a SIGKILL of the holder itself: a holder stopped or stuck ends the
 * command with an error line, not a wait for ever */
#define DELETE_WAIT_S 5

static void on_alarm(int sig)
{
	(void)sig;
}

/* flock(LOCK_EX) of dirfd within secs: 0, -ETIMEDOUT, or -errno. A repeating timer interrupts
 * the wait (no SA_RESTART): one that fired before flock() began is not lost */
static int lock_within(int dirfd, unsigned secs)
{
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	struct itimerval it = {.it_value = {0, 200000}, .it_interval = {0, 200000}}, off = {0};
	struct timespec now, end;
	int r = 0;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += secs;
	sigaction(SIGALRM, &sa, &old);
	setitimer(ITIMER_REAL, &it, NULL);
	while (flock(dirfd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			r = -errno;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) {
			r = -ETIMEDOUT;
			break;
		}
	}
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	return r;
}

/* The holder did not end of the KILL (stopped, stuck): SIGKILL to it, through a pidfd taken and
 * checked to be it (state.c): never to a process that took a recycled or forged pid. The
 * session ends with its caller (src/session/holder.c). */
static int kill_holder(int dirfd, const struct oci_state *st, const char *id,
		       const struct cordon_error *why)
{
	struct cordon_error err = {0};
	_cleanup_close_ int pidfd = why->msg[0] ? -ESRCH : oci_holder_pidfd(dirfd, st, &err);

	if (why->msg[0])
		err = *why;
	if (pidfd < 0)
		return oci_error(OCI_EXIT_FAIL, "delete",
				 "%s: its holder did not end within %d s, and is not signalled: %s",
				 id, DELETE_WAIT_S, err.msg);
	oci_log("warning", "delete: %s: its holder (pid %d) did not end within %d s: SIGKILL", id,
		(int)st->pid, DELETE_WAIT_S);
	if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
		return oci_error(OCI_EXIT_FAIL, "delete", "%s: SIGKILL its holder: %s", id,
				 strerror(errno));
	if (lock_within(dirfd, DELETE_WAIT_S) < 0)
		return oci_error(OCI_EXIT_FAIL, "delete",
				 "%s: its holder (pid %d) did not end within %d s of SIGKILL", id,
				 (int)st->pid, DELETE_WAIT_S);
	return 0;
}

/* A live holder: refused unless created (runc deletes those) or forced; else killed, and
 * waited for through its lock, which the kernel drops when it exits (bounded: DELETE_WAIT_S) */
static int delete_live(int dirfd, const char *id, bool force)
{
	struct oci_kill k = {.sig = SIGKILL, .all = 1};
	struct timeval tv = {.tv_sec = 2}; /* the holder's answer: at once, when it runs */
	struct cordon_error err = {0}, why = {0};
	_cleanup_close_ int sock = -1;
	struct oci_state st;
	int r;

	r = oci_state_read(dirfd, &st, &err);
	if (r < 0 && !(force && r == -ESRCH))
		return oci_error_from(OCI_EXIT_FAIL, "delete", &err);
	if (r < 0) {
		/* a pid that is not its holder's: the kill goes through the socket only */
		oci_log("warning", "delete: %s", err.msg);
		why = err;
		st = (struct oci_state){.status = OCI_RUNNING};
	}
	if (!force && st.status != OCI_CREATED && st.status != OCI_STOPPED) {
		r = oci_error(OCI_EXIT_FAIL, "delete",
			      "%s: container is %s: stop it first, or --force", id,
			      oci_status_name(st.status));
		oci_state_clear(&st);
		return r;
	}
	cd_error_clear(&err);
	sock = oci_ctl_connect(dirfd, &err);
	if (sock >= 0) {
		setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (sock >= 0 && st.status != OCI_STOPPED &&
	    oci_ctl_call(sock, OCI_MSG_KILL, &k, sizeof(k), NULL, 0, NULL, 0, NULL, &err) < 0 &&
	    err.code != ECONNRESET && err.code != EAGAIN) {
		oci_state_clear(&st);
		return oci_error_from(OCI_EXIT_FAIL, "delete", &err);
	}
	r = lock_within(dirfd, DELETE_WAIT_S);
	if (r == -ETIMEDOUT)
		r = kill_holder(dirfd, &st, id, &why);
	else if (r < 0)
		r = oci_error(OCI_EXIT_FAIL, "delete", "lock: %s", strerror(-r));
	oci_state_clear(&st);
	return r;
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
