/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idrange.h - a host uid and gid of its own for each sandbox of a root caller. Runs in the
 * supervisor.
 *
 * The kernel counts much per user: inotify instances and watches, epoll watches, processes
 * (RLIMIT_NPROC), POSIX message queue bytes, pending signals, pipe buffers, user namespaces. And
 * what a process in a user namespace holds is charged, all the way up, to the namespace's owner.
 * So each root sandbox takes an id of its own from CORDON_ID_RANGE (no two live sandboxes on
 * one, none a user has: ids /etc/subuid, /etc/subgid, /etc/passwd or /etc/group give away are
 * skipped), and its user namespace is made by a thread holding that id as its euid: one tenant
 * that takes all of its inotify instances leaves every other tenant, and root, theirs.
 *
 * A slot is a file in /run/cordon/ids (root's, 0700), held with flock() for the sandbox's life:
 * a supervisor that dies, even of SIGKILL, lets go of it. The file names the sandbox's pid 1 (pid
 * and start time) once it runs, so that a slot whose pid 1 still exists (its supervisor gone
 * first) is not taken again until it is gone, and with it every process of the sandbox. A
 * release removes its file; those of supervisors killed first are removed by later acquires,
 * each looking at a few random slots.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

#define CD_ID_DIR "/run/cordon/ids"

struct cd_id_lease {
	int fd;        /* the slot's file, locked; -1: none held */
	unsigned slot; /* the id is CORDON_ROOT_HOST_ID + slot */
};

#define CD_ID_LEASE_INIT { .fd = -1 }

/* Is the whole range mapped in our own user namespace (cordon as root in a container may see
 * only part of the ids)? */
bool cd_idrange_usable(void);
/* A free slot, held: 0, or -errno with *err (the directory unsafe, every id in use). */
int cd_idrange_acquire(struct cd_id_lease *ret, struct cordon_error *err);
/* The sandbox's pid 1 runs (as we see it): written into the slot. */
void cd_idrange_record(struct cd_id_lease *l, pid_t pid1);
/* Let go. gone: pid 1 has been reaped (every process of the sandbox is gone): the slot is free
 * at once; else it stays taken while pid 1 exists. */
void cd_idrange_release(struct cd_id_lease *l, bool gone);

/* Remove the slot file slot under dir (CD_ID_DIR's descriptor) if it is free for good: ours
 * (the caller's uid), a regular file, not held, and its pid 1 gone or never recorded. 1 if
 * removed, 0 if not. acquire calls it on a few random slots; exposed for its tests. */
int cd_idrange_sweep_at(int dir, unsigned slot);

/* pure: a line of /etc/subuid or /etc/subgid ("name:first:count"), and the id field of a line of
 * /etc/passwd or /etc/group ("name:x:ID:..."): ids the system gives a user, never a sandbox's */
bool cd_idrange_parse_sub(const char *line, unsigned long *ret_first, unsigned long *ret_count);
bool cd_idrange_parse_id(const char *line, unsigned long *ret);
/* pure: "PID STARTTIME\n" of a slot's file, and field 22 (starttime) of a /proc/PID/stat text */
bool cd_idrange_parse_owner(const char *text, pid_t *ret_pid, unsigned long long *ret_start);
bool cd_idrange_parse_starttime(const char *stat, unsigned long long *ret);
