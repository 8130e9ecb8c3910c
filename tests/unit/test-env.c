/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-env.c - the command's environment (env.c): the caller's cleared to the safe set, the
 * identity's HOME/USER/LOGNAME, the proxy's variables with an allow-list, the git identity, PATH
 * without what the sandbox does not have, then passed and set variables, in that order. TAP.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "env.h"
#include "mount.h"
#include "userns.h"

#include "../lib/tap.h"

static char user[] = "ann", home[] = "/home/ann";
static char usr[] = "/usr", bin[] = "/bin", hid[] = "/home/ann", sym[] = "usr/bin";
static char sbin[] = "/sbin", ssym[] = "usr/sbin";

/* /usr bound, /bin and /sbin symlinks into it, /home/ann an empty tmpfs, /opt not there at all */
static struct cd_mnt mnts[] = {
	{ .kind = CD_MNT_BIND, .src = usr, .dst = usr },
	{ .kind = CD_MNT_SYMLINK, .src = sym, .dst = bin },
	{ .kind = CD_MNT_SYMLINK, .src = ssym, .dst = sbin },
	{ .kind = CD_MNT_TMPFS, .dst = hid },
};
static const struct cd_mount_plan plan = { .m = mnts, .n = 4 };
static const struct cd_identity id = { .user = user, .home = home };

static char **dropped; /* the last build's */

static char **build(struct cordon_config *c)
{
	struct cordon_error err = { 0 };
	char **envp = NULL;

	cd_strv_free(dropped);
	dropped = NULL;
	if (!ok(cd_env_build(&c->command, &c->net, c->identity.hostname, &c->log, &id, &plan, &envp,
			     &dropped, &err) == 0,
		"built: %s", err.msg))
		return NULL;
	return envp;
}

static void test_cleared(void)
{
	struct cordon_config *c = cordon_config_new();
	char **envp;

	setenv("PATH", "/usr/bin:/opt/x/bin:/home/ann/.pyenv/shims:relative:/bin", 1);
	setenv("TERM", "xterm", 1);
	setenv("LC_ALL", "C.UTF-8", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t", 1);
	setenv("SSH_AUTH_SOCK", "/run/user/0/ssh", 1);
	setenv("LD_PRELOAD", "/tmp/evil.so", 1);
	envp = build(c);
	is_str(cd_env_get(envp, "TERM"), "xterm", "TERM kept");
	is_str(cd_env_get(envp, "LC_ALL"), "C.UTF-8", "LC_* kept");
	ok(!cd_env_get(envp, "AWS_SECRET_ACCESS_KEY"), "a secret of the caller's is not passed");
	ok(!cd_env_get(envp, "SSH_AUTH_SOCK"), "nor the ssh agent's socket");
	ok(!cd_env_get(envp, "LD_PRELOAD"), "nor LD_PRELOAD");
	is_str(cd_env_get(envp, "HOME"), "/home/ann", "HOME is the identity's");
	is_str(cd_env_get(envp, "USER"), "ann", "USER too");
	is_str(cd_env_get(envp, "LOGNAME"), "ann", "and LOGNAME");
	is_str(cd_env_get(envp, "PATH"), "/usr/bin:relative:/bin",
	       "PATH drops what the sandbox does not have (/opt, an empty HOME), keeps the rest");
	ok(cd_strv_len(dropped) == 2 && strcmp(dropped[0], "/opt/x/bin") == 0 &&
		   strcmp(dropped[1], "/home/ann/.pyenv/shims") == 0,
	   "and lists what it dropped, for the not-found hint");
	ok(!cd_env_get(envp, "http_proxy") && !cd_env_get(envp, "NO_PROXY"),
	   "no proxy variables without an allow-list");
	cd_strv_free(envp);
	unsetenv("PATH");
	envp = build(c);
	is_str(cd_env_get(envp, "PATH"), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	       "no PATH: the default one");
	cd_strv_free(envp);
	cordon_config_free(c);
}

static void test_proxy_git_and_order(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	char **envp;

	ok(cordon_config_allow_net(c, "example.com", &err) == 0 &&
		   cordon_config_set_git_identity(c, "Ann Example <ann@example.com>", &err) == 0 &&
		   cordon_config_set_hostname(c, "box", &err) == 0 &&
		   cordon_config_pass_env(c, "CORDON_TEST_PASSED", &err) == 0 &&
		   cordon_config_pass_env(c, "CORDON_TEST_UNSET", &err) == 0 &&
		   cordon_config_set_env(c, "HOME", "/elsewhere", &err) == 0 &&
		   cordon_config_set_env(c, "NO_PROXY", "mine", &err) == 0,
	   "config: %s", err.msg);
	setenv("CORDON_TEST_PASSED", "yes", 1);
	unsetenv("CORDON_TEST_UNSET");
	envp = build(c);
	is_str(cd_env_get(envp, "https_proxy"), "http://127.0.0.1:3128", "https_proxy: the proxy");
	is_str(cd_env_get(envp, "ALL_PROXY"), "http://127.0.0.1:3128", "ALL_PROXY too");
	is_str(cd_env_get(envp, "no_proxy"),
	       "localhost,.localhost,127.0.0.1,127.0.1.1,127.0.0.0/8,::1,box",
	       "no_proxy: the sandbox's own loopback and its hostname");
	is_str(cd_env_get(envp, "NO_PROXY"), "mine", "a set variable comes last and wins");
	is_str(cd_env_get(envp, "GIT_COMMITTER_EMAIL"), "ann@example.com", "the git identity");
	is_str(cd_env_get(envp, "GIT_AUTHOR_NAME"), "Ann Example", "... its name");
	is_str(cd_env_get(envp, "CORDON_TEST_PASSED"), "yes", "a passed variable");
	ok(!cd_env_get(envp, "CORDON_TEST_UNSET"), "a passed variable the caller lacks: absent");
	is_str(cd_env_get(envp, "HOME"), "/elsewhere", "set variables win over the identity's");
	cd_strv_free(envp);
	cordon_config_free(c);

	c = cordon_config_new();
	ok(cordon_config_allow_net(c, "127.0.0.1:8080", &err) == 0, "config: host loopback allowed");
	envp = build(c);
	is_str(cd_env_get(envp, "no_proxy"), "",
	       "with the host's loopback allowed, no_proxy is empty: only the proxy reaches it");
	cd_strv_free(envp);
	cordon_config_free(c);
}

int main(void)
{
	test_cleared();
	test_proxy_git_and_order();
	cd_strv_free(dropped);
	return done_testing();
}
