/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * env.c - the command's environment. Runs in the supervisor, before anything starts: pure but
 * for the caller's environ and getenv().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "env.h"
#include "proxy.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static int env_set(char ***envp, const char *kv)
{
	size_t klen = strcspn(kv, "=");
	char *copy;

	for (char **p = *envp; p && *p; p++)
		if (strncmp(*p, kv, klen) == 0 && (*p)[klen] == '=') {
			copy = strdup(kv);
			if (!copy)
				return -ENOMEM;
			free(*p);
			*p = copy;
			return 0;
		}
	return cd_strv_push(envp, kv);
}

static bool keep_from_caller(const char *kv)
{
	static const char *const keep[] = { "PATH=", "TERM=", "LANG=", "LANGUAGE=", "TZ=",
					    "COLORTERM=", "NO_COLOR=" };

	if (strncmp(kv, "LC_", 3) == 0)
		return true;
	for (size_t i = 0; i < CD_ELEMENTSOF(keep); i++)
		if (strncmp(kv, keep[i], strlen(keep[i])) == 0)
			return true;
	return false;
}

/* Cleared, then a short safe set; --pass-env and --env on top, in that order. */
/* No network at all: a retry cannot help, yet npm (fetch-retries: 71 s) and pip (--retries:
 * 9 s) retry every failure, a lookup the sandbox's resolver refused included: they stop at the
 * first. --env and --pass-env come later and may change it. */
static int no_net_env(char ***envp)
{
	int r = env_set(envp, "npm_config_fetch_retries=0");

	return r == 0 ? env_set(envp, "PIP_RETRIES=0") : r;
}

/* --allow-net: every common spelling points at the proxy (a client that goes direct finds no
 * route anyway). Loopback is the sandbox's own (a dev server the command started): exempt, in
 * the forms clients read (names, addresses, CIDR), unless the host's loopback was allowed,
 * which only the proxy reaches. --env and --pass-env come later and may change it. */
#define CD_NO_PROXY "localhost,.localhost,127.0.0.1,127.0.1.1,127.0.0.0/8,::1"

/* the sandbox's own hostname is on its loopback too (/etc/hosts: 127.0.1.1) */
static int proxy_env(char ***envp, bool host_loopback, const char *hostname)
{
	static const char *const vars[] = {
		"http_proxy=" CD_PROXY_URL, "HTTP_PROXY=" CD_PROXY_URL, "https_proxy=" CD_PROXY_URL,
		"HTTPS_PROXY=" CD_PROXY_URL, "all_proxy=" CD_PROXY_URL, "ALL_PROXY=" CD_PROXY_URL,
	};
	_cleanup_free_ char *no_proxy = host_loopback ? strdup("") :
		cd_strdup_printf("%s,%s", CD_NO_PROXY, hostname);
	_cleanup_free_ char *lower = no_proxy ? cd_strdup_printf("no_proxy=%s", no_proxy) : NULL;
	_cleanup_free_ char *upper = no_proxy ? cd_strdup_printf("NO_PROXY=%s", no_proxy) : NULL;
	int r = lower && upper ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < CD_ELEMENTSOF(vars); i++)
		r = env_set(envp, vars[i]);
	if (r == 0)
		r = env_set(envp, lower);
	return r == 0 ? env_set(envp, upper) : r;
}

const char *cd_env_get(char *const *envp, const char *key)
{
	size_t n = strlen(key);

	for (; envp && *envp; envp++)
		if (strncmp(*envp, key, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* --git-identity: HOME is empty inside, so git has no identity of its own */
static int git_env(char ***envp, char *const id[2])
{
	static const char *const keys[] = { "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
					    "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL" };
	int r = 0;

	for (size_t i = 0; r == 0 && i < CD_ELEMENTSOF(keys); i++) {
		_cleanup_free_ char *kv = cd_strdup_printf("%s=%s", keys[i], id[i % 2]);

		r = kv ? env_set(envp, kv) : -ENOMEM;
	}
	return r;
}

/* PATH inside without the directories the sandbox does not have (below a hidden HOME, say:
 * pyenv's shims), so that a command is not taken from a later, other directory without a word;
 * those bound in stay. */
static int visible_path(const struct cd_log *log, const struct cd_mount_plan *plan,
			char ***envp, char ***dropped)
{
	const char *path = cd_env_get(*envp, "PATH");
	_cleanup_free_ char *copy = path ? strdup(path) : NULL, *kept = NULL;
	size_t len = 0;

	if (!path)
		return 0;
	kept = malloc(strlen(path) + sizeof("PATH="));
	if (!copy || !kept)
		return -ENOMEM;
	len = (size_t)sprintf(kept, "PATH=");
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (d[0] == '/' && !cd_mount_plan_visible(plan, d)) {
			cd_log_line(log, "env: PATH: %s is not in the sandbox, dropped", d);
			if (cd_strv_push(dropped, d) < 0)
				return -ENOMEM;
			continue;
		}
		len += (size_t)sprintf(kept + len, "%s%s", len > 5 ? ":" : "", d);
	}
	return env_set(envp, kept);
}

int cd_env_build(const struct cd_command_opts *o, const struct cd_net_opts *net,
		 const char *hostname, const struct cd_log *log, const struct cd_identity *id,
		 const struct cd_mount_plan *plan, char ***ret, char ***ret_dropped,
		 struct cordon_error *err)
{
	extern char **environ;
	_cleanup_free_ char *home = cd_strdup_printf("HOME=%s", id->home);
	_cleanup_free_ char *user = cd_strdup_printf("USER=%s", id->user);
	_cleanup_free_ char *logname = cd_strdup_printf("LOGNAME=%s", id->user);
	_cleanup_strv_ char **envp = NULL, **dropped = NULL;
	int r = home && user && logname ? 0 : -ENOMEM;

	envp = calloc(1, sizeof(char *));
	if (!envp)
		r = -ENOMEM;
	for (char **p = environ; r == 0 && p && *p; p++)
		if (keep_from_caller(*p))
			r = env_set(&envp, *p);
	if (r == 0 && !getenv("PATH"))
		r = env_set(&envp, "PATH=" DEFAULT_PATH);
	if (r == 0)
		r = env_set(&envp, home);
	if (r == 0)
		r = env_set(&envp, user);
	if (r == 0)
		r = env_set(&envp, logname);
	if (r == 0 && net->mode == CORDON_NET_NONE && !net->n_allow)
		r = no_net_env(&envp);
	if (r == 0 && net->n_allow)
		r = proxy_env(&envp, cd_allow_has_loopback(net->allow, net->n_allow),
			      hostname ? hostname : CD_DEFAULT_HOSTNAME);
	if (r == 0 && o->git_identity[0])
		r = git_env(&envp, o->git_identity);
	if (r == 0)
		r = visible_path(log, plan, &envp, &dropped);
	for (char **k = o->pass_env; r == 0 && k && *k; k++) {
		const char *v = getenv(*k);
		_cleanup_free_ char *kv = v ? cd_strdup_printf("%s=%s", *k, v) : NULL;

		if (!v)
			cd_log_line(log, "env: %s is not set, not passed", *k);
		else
			r = kv ? env_set(&envp, kv) : -ENOMEM;
	}
	for (char **kv = o->env; r == 0 && kv && *kv; kv++)
		r = env_set(&envp, *kv);
	if (r < 0)
		return cd_fail(err, -r, "env", "out of memory");
	*ret = CD_TAKE_PTR(envp);
	*ret_dropped = CD_TAKE_PTR(dropped);
	return 0;
}
