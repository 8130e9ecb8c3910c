/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gitid.c - the default of --git-identity: the caller's own git user.name and user.email, from
 * its global git config, read by git itself. Runs in the caller (the cordon command), before
 * anything starts.
 *
 * Only the global scope (~/.gitconfig, $XDG_CONFIG_HOME/git/config and what they include) is
 * read: git runs in "/" with GIT_DIR at a path that does not exist and a cleared environment, so
 * no repository's config (the workdir's is the sandbox's to write), no system file and no
 * variable of the caller's session choose the identity or make git run anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gitid.h"
#include "util.h"

#define GITID_MAX 4096 /* more than that is no name and email */

/* The caller's home as its shell has it ($HOME), else its account's */
static const char *caller_home(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && h[0] == '/')
		return h;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* Whether the caller has a global git config at all: git's global scope is these two files
 * (and what they include), so without either there is nothing for git to read, and no git need
 * start (a millisecond and more of every run). A path too long to say is left to git. */
static bool has_global_config(const char *home, const char *xdg)
{
	char p[PATH_MAX];
	int n = snprintf(p, sizeof(p), "%s/.gitconfig", home);

	if (n < 0 || (size_t)n >= sizeof(p) || access(p, F_OK) == 0)
		return true;
	if (xdg && xdg[0] == '/')
		n = snprintf(p, sizeof(p), "%s/git/config", xdg);
	else
		n = snprintf(p, sizeof(p), "%s/.config/git/config", home);
	return n < 0 || (size_t)n >= sizeof(p) || access(p, F_OK) == 0;
}

/* git config's "-z --get-regexp" output into buf: its length, or -errno */
static ssize_t run_git(char *buf, size_t size)
{
	static char *const argv[] = { "git", "config", "--global", "--includes", "-z",
				      "--get-regexp", "^user\\.(name|email)$", NULL };
	const char *home = caller_home(), *xdg = getenv("XDG_CONFIG_HOME");
	_cleanup_free_ char *home_kv = home ? cd_strdup_printf("HOME=%s", home) : NULL;
	_cleanup_free_ char *xdg_kv = xdg && xdg[0] == '/' ? cd_strdup_printf("XDG_CONFIG_HOME=%s",
									      xdg) : NULL;
	char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1",
			 "GIT_DIR=/nonexistent/cordon-no-repository", "LC_ALL=C", home_kv, xdg_kv,
			 NULL };
	posix_spawn_file_actions_t fa;
	_cleanup_close_ int rd = -1, wr = -1;
	int p[2], st, r;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (!home_kv || !has_global_config(home, xdg))
		return -ENOENT;
	if (!xdg_kv)
		envp[5] = NULL;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	rd = p[0], wr = p[1];
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, wr, 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addchdir_np(&fa, "/");
	/* found in the caller's PATH: the caller's own git, as its shell would run it */
	r = posix_spawnp(&pid, "git", &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0)
		return -r;
	cd_closep(&wr);
	while (len < size) {
		n = read(rd, buf + len, size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	cd_closep(&rd); /* a git still writing gets EPIPE */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* 1: no such key, the identity is not set */
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || len == size)
		return -ENOENT;
	return (ssize_t)len;
}

static bool is_key(const char *e, const char *nl, const char *key)
{
	return (size_t)(nl - e) == strlen(key) && strncmp(e, key, strlen(key)) == 0;
}

/* "key\nvalue\0" entries: the last of each key wins, as for git's own --get */
static void pick(const char *buf, size_t len, const char **name, const char **email)
{
	for (const char *e = buf; e < buf + len; e += strlen(e) + 1) {
		const char *nl = strchr(e, '\n');

		if (nl && is_key(e, nl, "user.name"))
			*name = nl + 1;
		else if (nl && is_key(e, nl, "user.email"))
			*email = nl + 1;
	}
}

char *cd_cli_git_identity(void)
{
	char buf[GITID_MAX + 1];
	const char *name = NULL, *email = NULL;
	ssize_t n = run_git(buf, GITID_MAX);

	if (n <= 0)
		return NULL;
	buf[n] = '\0'; /* the last entry ends in a NUL of git's: this one is a guard */
	pick(buf, (size_t)n, &name, &email);
	if (!name || !email || !name[0] || !email[0])
		return NULL;
	return cd_strdup_printf("%s <%s>", name, email);
}
