/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* userns.h - who the sandbox runs as, and the user namespace id maps. Supervisor side. */
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include "config.h"
#include "idrange.h"

struct cd_identity {
	uid_t inside_uid; /* the uid the command sees */
	gid_t inside_gid;
	uid_t host_uid; /* the uid it holds on the host: never 0 */
	gid_t host_gid;
	/* Root caller: the workdir is mounted with an id mapping so that disk_uid/gid (its owner's)
	 * appears as inside_uid/gid and files written come out owned by them. */
	bool idmap_workdir;
	uid_t disk_uid;
	gid_t disk_gid;
	/* Root caller: host_uid/gid are the sandbox's alone (lease), and its user namespace is
	 * owned by them (cd_userns_owner_enter) */
	bool own_ids;
	struct cd_id_lease lease;
	bool setgroups_allowed; /* root caller: the child clears its supplementary groups */
	bool named;             /* the inside uid has no account: one is added inside */
	bool account;           /* the caller's account (cordon_config_set_account): its lines
				 * replace the root's for the inside ids and name */
	bool home_is_workdir;   /* that account's home is the workdir target: no tmpfs */
	char *user;             /* USER and LOGNAME */
	char *home;             /* HOME: a fresh tmpfs, or the workdir (home_is_workdir) */
	/* the holder of the idmap's user namespace, reaped by cd_identity_done (it exits on its
	 * own once the maps are written: nobody waits for it meanwhile) */
	bool holding;
	int holder_pidfd;
	void *holder_stack; /* its stack (CLONE_VM), freed once it is reaped */
};

/* The account inside for an id the system does not know (CORDON_SANDBOX_ID, say). */
#define CD_SANDBOX_USER "cordon"

/* Decide the identity from the caller, the workdir's owner (its stat) and the config. */
int cd_identity_resolve(const struct cd_identity_opts *who, const struct stat *workdir,
			const char *workdir_target, struct cd_identity *ret,
			struct cordon_error *err);
/* pid1_gone: every process of the sandbox is gone (pid 1 was reaped), so its host id is free */
void cd_identity_done(struct cd_identity *id, bool pid1_gone);

/* Root, own_ids: the calling thread (only it) takes the sandbox's host ids as its effective ids,
 * keeping its capabilities, so that the user namespace a clone makes now is owned by them; leave
 * puts back root's. */
struct cd_owner_creds {
	bool entered;
	unsigned long securebits;
};
int cd_userns_owner_enter(const struct cd_identity *id, struct cd_owner_creds *saved,
			  struct cordon_error *err);
void cd_userns_owner_leave(struct cd_owner_creds *saved);

/* Write setgroups, uid_map and gid_map of the child's user namespace (sync 2). */
int cd_userns_write_maps(pid_t child, const struct cd_identity *id, struct cordon_error *err);

/* A detached, id-mapped clone of the workdir's mount tree (from its descriptor), for the child
 * to attach. */
/* Does the workdir's id mapping go through the sandbox's own user namespace (its inside ids are
 * 0), which exists only once pid 1 does? Else through a namespace of its own, made any time. */
bool cd_userns_idmap_is_own(const struct cd_identity *id);
int cd_userns_idmapped_workdir(pid_t child, struct cd_identity *id, int workdir,
			       const char *path, int *ret_fd, struct cordon_error *err);
/* The same without an id mapping (nosuid, nodev; ro: read-only too): a root caller's workdir
 * or --ro-bind source, cloned from the descriptor it checked rather than looked up again by
 * the child. Needs CAP_SYS_ADMIN. */
int cd_userns_tree(int fd, const char *path, bool ro, int *ret_fd, struct cordon_error *err);
