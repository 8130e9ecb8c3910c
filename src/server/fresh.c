/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fresh.c - a session from the server's options (and a create's template and network, when it
 * picked them), in a fresh workdir under the state directory, made by the session maker
 * (creator.c); what a create takes (control.c), or the pool makes ahead (pool.c). Runs in the
 * server (connection threads, the pool's thread). */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "creator.h"
#include "fresh.h"
#include "opts.h"
#include "util.h"

/* A fresh workdir under the state directory, named at random (not after the sandbox's id: a
 * pooled one is made before it has one). */
static int make_workdir(char **ret, struct cordon_error *err)
{
	char name[21];
	char *dir;

	if (srv_auth_random(name, 20, SRV_AUTH_ID_ALPHABET) < 0)
		return cd_fail(err, EIO, "workdir", "no random name");
	dir = cd_strdup_printf("%s/%s", srv_opts.state_dir, name);
	if (!dir)
		return cd_fail(err, ENOMEM, "workdir", "out of memory");
	if (mkdir(dir, 0700) < 0) {
		int e = errno;

		free(dir);
		return cd_fail_errno(err, e, "workdir", "mkdir %s/%s", srv_opts.state_dir, name);
	}
	*ret = dir;
	return 0;
}

int srv_fresh_make(const struct srv_make_spec *spec, struct srv_fresh *ret,
		   struct cordon_error *err)
{
	char *workdir = NULL;
	int r = make_workdir(&workdir, err);

	if (r < 0)
		return r;
	/* made by the creator process (creator.c), never forked from this threaded one */
	if (stat(workdir, &ret->workdir_st) < 0)
		r = cd_fail_errno(err, errno, "workdir", "stat %s", workdir);
	else
		r = srv_creator_make(workdir, spec, &ret->session, err);
	if (r < 0) {
		rmdir(workdir); /* still empty: nothing ran */
		free(workdir);
		return r;
	}
	ret->workdir = workdir;
	return 0;
}

void srv_fresh_drop(struct srv_fresh *p)
{
	struct cordon_error err;

	cordon_session_destroy(p->session, NULL, &err);
	free(p->workdir);
	*p = (struct srv_fresh){0};
}
