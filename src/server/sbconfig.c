/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbconfig.c - the config every sandbox is made from: the server's options (limits,
 * --allow-net, the workdir given) and what a create picked among those the server allows (its
 * template's root, its allow-list within --allow-net: srv_make_spec), never anything else of a
 * request. Runs in the session maker (creator.c), which gets those options from the server at
 * its start. */
#include <errno.h>

#include "opts.h"
#include "sbconfig.h"
#include "util.h"

/* The server's options, and the create's root and allow-list (spec NULL: the server's default,
 * the same for every sandbox, so that one can be made ahead: pool.c); what else differs per
 * sandbox goes with each command (control.c's sandbox_env). */
int srv_sbconfig_make(const char *workdir, const struct srv_make_spec *spec,
		      struct cordon_config **ret, struct cordon_error *err)
{
	char *const *allow = spec && spec->own_net ? spec->allow_net : srv_opts.allow_net;
	struct cordon_config *c = cordon_config_new();
	int r;

	if (!c)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	r = cordon_config_set_workdir(c, workdir, err);
	if (r >= 0)
		r = cordon_config_set_workdir_target(c, "/home/user", err);
	if (r >= 0 && spec && spec->rootfs)
		r = cordon_config_set_rootfs(c, spec->rootfs, err);
	if (r >= 0 && srv_opts.memory)
		r = cordon_config_set_memory(c, srv_opts.memory, err);
	if (r >= 0 && srv_opts.pids)
		r = cordon_config_set_pids(c, srv_opts.pids, err);
	if (r >= 0 && srv_opts.millicpus)
		r = cordon_config_set_cpus(c, srv_opts.millicpus, err);
	for (char *const *a = allow; r >= 0 && a && *a; a++)
		r = cordon_config_allow_net(c, *a, err);
	/* unprivileged, every sandbox runs as the server's uid: one tenant must not take the
	 * inotify instances (and the like) of all */
	if (r >= 0 && srv_opts.user_share > 1)
		r = cordon_config_set_user_share(c, srv_opts.user_share, err);
	/* E2B's identity, whatever host id it maps to: "user", uid and gid 1000, its HOME the
	 * workdir (docs/e2b.md, "Commands run as the sandbox's user") */
	if (r >= 0)
		r = cordon_config_set_uid(c, SRV_SANDBOX_UID, err);
	if (r >= 0)
		r = cordon_config_set_gid(c, SRV_SANDBOX_UID, err);
	if (r >= 0)
		r = cordon_config_set_account(c, SRV_SANDBOX_USER, "/home/user", err);
	/* what E2B's sandboxes have: code may look for it */
	if (r >= 0)
		r = cordon_config_set_env(c, "E2B_SANDBOX", "true", err);
	if (r < 0) {
		cordon_config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}
