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
 *
 * Starting git is the longest step of a cold start (6 ms of 24 on a slow machine), so the two
 * files are first read here when they are plain: every line blank, a comment, a `[section]` of
 * letters, digits and '-', or a `key = value` whose value has no quote, backslash, comment
 * character, control character or run of blanks. Every git reads such a file as its text, and
 * a plain file includes nothing; anything else (an include, quotes, escapes, a subsection, a
 * CR) is left to git, as before.
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
#include <sys/stat.h>
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

/* git's global scope: $XDG_CONFIG_HOME/git/config (or ~/.config/git/config), ~/.gitconfig.
 * false: a path too long to say. */
static bool global_paths(const char *home, const char *xdg, char (*p)[PATH_MAX])
{
	int n = xdg && xdg[0] == '/' ? snprintf(p[0], PATH_MAX, "%s/git/config", xdg)
				     : snprintf(p[0], PATH_MAX, "%s/.config/git/config", home);
	int m = snprintf(p[1], PATH_MAX, "%s/.gitconfig", home);

	return n > 0 && n < PATH_MAX && m > 0 && m < PATH_MAX;
}

/* The identity as read so far: the last value of each key wins */
struct ident {
	char name[GITID_MAX], email[GITID_MAX];
	bool has_name, has_email;
	size_t told; /* what git would print of them ("key\nvalue\0" each): run_git's bound */
};

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

static bool is_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-';
}

/* lower-cased name characters of s[*i..] into out (size bytes): their count, 0 when none or too
 * many */
static size_t plain_name(const char *s, size_t n, size_t *i, char *out, size_t size)
{
	size_t k = 0;

	for (; *i < n && is_name_char(s[*i]); (*i)++) {
		if (k + 1 >= size)
			return 0;
		out[k++] = (char)(s[*i] >= 'A' && s[*i] <= 'Z' ? s[*i] + 'a' - 'A' : s[*i]);
	}
	out[k] = '\0';
	return k;
}

/* A value git reads as its own text: printable bytes (UTF-8's included), single spaces inside,
 * none of '"', '\\', '#', ';' */
static bool plain_value(const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (ch < 0x20 || ch == 0x7f || ch == '"' || ch == '\\' || ch == '#' || ch == ';' ||
		    (ch == ' ' && i + 1 < n && v[i + 1] == ' '))
			return false;
	}
	return true;
}

/* "key = value" in section sec: user.name and user.email taken. false: not plain. */
static bool plain_entry(const char *s, size_t n, size_t i, const char *sec, struct ident *id)
{
	char key[16], *dst;
	size_t end = n;

	if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= 'A' && s[i] <= 'Z'))
		return false;
	if (!sec[0] || !plain_name(s, n, &i, key, sizeof(key)))
		return false; /* a key outside a section (git refuses the file), or a long one */
	while (i < n && is_blank(s[i]))
		i++;
	if (i == n || s[i++] != '=')
		return false; /* a key alone (a boolean), or more after it */
	while (i < n && is_blank(s[i]))
		i++;
	while (end > i && is_blank(s[end - 1]))
		end--;
	if (!plain_value(s + i, end - i) || end - i >= GITID_MAX)
		return false;
	if (strcmp(sec, "user") != 0 || (strcmp(key, "name") != 0 && strcmp(key, "email") != 0))
		return true;
	dst = key[0] == 'n' ? id->name : id->email;
	memcpy(dst, s + i, end - i);
	dst[end - i] = '\0';
	*(key[0] == 'n' ? &id->has_name : &id->has_email) = true;
	id->told += strlen("user.") + strlen(key) + 1 + (end - i) + 1;
	return true;
}

/* One line (without its newline). sec: the section it is in, updated by a header. */
static bool plain_line(const char *s, size_t n, char *sec, size_t sec_size, struct ident *id)
{
	size_t i = 0;

	while (i < n && is_blank(s[i]))
		i++;
	if (i == n || s[i] == '#' || s[i] == ';')
		return true; /* blank, or a comment */
	if (s[i] != '[')
		return plain_entry(s, n, i, sec, id);
	i++;
	if (!plain_name(s, n, &i, sec, sec_size) || i == n || s[i++] != ']')
		return false;
	while (i < n && is_blank(s[i]))
		i++;
	/* an include (include.path; includeIf has quotes) reads another file: git's to follow */
	return i == n && strcmp(sec, "include") != 0;
}

/* One of the global files, read plainly into id. 1: read (or absent); 0: not plain, or not
 * readable here (git is left to say what it makes of it); -EINVAL: not a file (no identity,
 * and no git started to wait on it); -ENOMEM. */
static int read_plain(const char *path, struct ident *id)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	char sec[64] = "";
	struct stat st;
	size_t len = 0;
	ssize_t r;

	if (fd < 0)
		return errno == ENOENT ? 1 : 0;
	if (fstat(fd, &st) < 0)
		return 0;
	if (!S_ISREG(st.st_mode))
		return -EINVAL; /* a FIFO would hold git (and the run) forever; a directory is no config */
	if (st.st_size > 65536)
		return 0;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (len <= (size_t)st.st_size &&
	       (r = read(fd, buf + len, (size_t)st.st_size + 1 - len)) != 0) {
		if (r < 0 && errno != EINTR)
			return 0;
		len += r > 0 ? (size_t)r : 0;
	}
	if (len > (size_t)st.st_size || memchr(buf, '\0', len) || memchr(buf, '\r', len))
		return 0; /* grew meanwhile; a NUL or a CR (git's readings of them differ) */
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (buf + at)) : len - at;

		if (!plain_line(buf + at, n, sec, sizeof(sec), id))
			return 0;
		at += n + 1;
	}
	return 1;
}

/* The identity from the global config when it is one plain file: 1 (id filled, perhaps without
 * a name or an email), 0 when git must read it, -errno when there is none to take (read_plain).
 * More than git's output would fit in run_git's buffer is left to git too (which then gives none:
 * both ways agree). `git config --global` reads one file
 * (~/.gitconfig, or XDG's when that one is missing: git 2.39), where git's other commands read
 * both; with both present, which counts is left to the git installed. */
static int plain_identity(struct ident *id)
{
	const char *home = caller_home();
	char p[2][PATH_MAX];
	struct stat st[2];
	bool xdg, dot;
	int r;

	if (!home || !global_paths(home, getenv("XDG_CONFIG_HOME"), p))
		return 0;
	xdg = stat(p[0], &st[0]) == 0;
	dot = stat(p[1], &st[1]) == 0;
	if ((xdg && !S_ISREG(st[0].st_mode)) || (dot && !S_ISREG(st[1].st_mode)))
		return -EINVAL; /* a FIFO would hold git (and the run) forever */
	if (xdg && dot)
		return 0;
	r = read_plain(p[xdg ? 0 : 1], id);
	return r > 0 && id->told >= GITID_MAX ? 0 : r;
}

/* git config's "-z --get-regexp" output into buf: its length, or -errno. Called only for a
 * config plain_identity() found and could not read (no config at all starts no git). */
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

	if (!home_kv)
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
	_cleanup_free_ struct ident *id = calloc(1, sizeof(*id));
	char buf[GITID_MAX + 1];
	const char *name = NULL, *email = NULL;
	ssize_t n;
	int r = id ? plain_identity(id) : 0;

	if (r < 0)
		return NULL;
	if (r > 0) {
		name = id->has_name ? id->name : NULL;
		email = id->has_email ? id->email : NULL;
	} else {
		n = run_git(buf, GITID_MAX);
		if (n <= 0)
			return NULL;
		buf[n] = '\0'; /* the last entry ends in a NUL of git's: this one is a guard */
		pick(buf, (size_t)n, &name, &email);
	}
	if (!name || !email || !name[0] || !email[0])
		return NULL;
	return cd_strdup_printf("%s <%s>", name, email);
}
