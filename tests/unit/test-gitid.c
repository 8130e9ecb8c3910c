/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-gitid.c - the default of --git-identity (src/cli/gitid.c) against git itself: for each
 * global config (a table of plain and not plain ones, then many drawn from pieces), the
 * identity cordon takes is the one `git config --global --includes` gives. With no git to
 * find (PATH an empty directory), a plain config is still read (no git started: what makes it
 * fast), one that is not gives none (it was left to git). TAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitid.h"
#include "util.h"

#include "../lib/tap.h"

static char home[64], nogit[80], path_env[4096];

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", home, rel);
	f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

static void clear(void)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/.gitconfig", home);
	unlink(p);
	snprintf(p, sizeof(p), "%s/.config/git/config", home);
	unlink(p);
	snprintf(p, sizeof(p), "%s/other", home);
	unlink(p);
}

/* git's own answer for KEY: its value, NULL when it has none (or refuses the file) */
static char *git_get(const char *key)
{
	char cmd[512], buf[8192];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "cd / && env -i HOME=%s PATH=/usr/local/bin:/usr/bin:/bin GIT_CONFIG_NOSYSTEM=1 "
		 "GIT_DIR=/nonexistent git config --global --includes --get %s 2>/dev/null",
		 home, key);
	p = popen(cmd, "r");
	if (!p)
		abort();
	n = fread(buf, 1, sizeof(buf) - 1, p);
	if (pclose(p) != 0 || n == 0)
		return NULL;
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return strdup(buf);
}

static char *git_identity(void)
{
	_cleanup_free_ char *name = git_get("user.name"), *email = git_get("user.email");

	if (!name || !email || !name[0] || !email[0])
		return NULL;
	return cd_strdup_printf("%s <%s>", name, email);
}

/* cordon's reading, with git found as usual or with none to find */
static char *cordon_identity(bool with_git)
{
	char *r;

	setenv("PATH", with_git ? path_env : nogit, 1);
	r = cd_cli_git_identity();
	setenv("PATH", path_env, 1);
	return r;
}

/* the config (home's, and XDG's when given) read as git reads it; plain: without git too */
static void check(const char *what, const char *home_cfg, const char *xdg_cfg, bool plain)
{
	_cleanup_free_ char *want = NULL, *got = NULL, *alone = NULL;

	clear();
	if (home_cfg)
		put(".gitconfig", home_cfg);
	if (xdg_cfg)
		put(".config/git/config", xdg_cfg);
	want = git_identity();
	got = cordon_identity(true);
	alone = cordon_identity(false);
	is_str(got, want, "%s: as git reads it", what);
	if (plain)
		is_str(alone, want, "%s: read without git (plain)", what);
	else
		is_str(alone, NULL, "%s: left to git (not plain)", what);
}

static void test_table(void)
{
	check("tab-indented, as git config writes it",
	      "[user]\n\tname = Ann Caller\n\temail = ann@example.com\n", NULL, true);
	check("names in any case, no blanks around =", "[User]\nNAME=Bo\n  Email=bo@x.org\n", NULL,
	      true);
	check("the last value wins", "[user]\nname = A\nemail = a@x\n[core]\nname = C\n[user]\nname = B\n",
	      NULL, true);
	check("comments and blank lines", "# mine\n\n; more\n[user]  \n name = Zoë Ü  \n email = z@x\n",
	      NULL, true);
	check("both ~/.gitconfig and XDG's: git's to choose", "[user]\nemail = home@x\n",
	      "[user]\nname = Xdg\nemail = xdg@x\n", false);
	check("only XDG's", NULL, "[user]\nname = X\nemail = x@x\n", true);
	check("a value with = and dots", "[user]\nname = a=b.c\nemail = e@x\n", NULL, true);
	check("an empty name: none", "[user]\nname =\nemail = e@x\n", NULL, true);
	check("no email: none", "[user]\nname = N\n", NULL, true);
	check("no config at all", NULL, NULL, true);
	check("quotes", "[user]\nname = \"Ann  Q\"\nemail = q@x\n", NULL, false);
	check("a comment after the value", "[user]\nname = Ann # me\nemail = c@x\n", NULL, false);
	check("a tab inside", "[user]\nname = A\tB\nemail = t@x\n", NULL, false);
	check("two spaces inside", "[user]\nname = A  B\nemail = t@x\n", NULL, false);
	check("an escape", "[user]\nname = A\\\\B\nemail = t@x\n", NULL, false);
	check("CRLF", "[user]\r\nname = A\r\nemail = t@x\r\n", NULL, false);
	check("a subsection", "[user \"x\"]\nname = S\n[user]\nemail = s@x\nname = T\n", NULL, false);
	check("a dotted section", "[user.x]\nname = S\n[user]\nemail = s@x\nname = T\n", NULL, false);
	check("a key alone", "[user]\nname\nemail = k@x\n", NULL, false);
	check("a key before any section", "name = K\n[user]\nname = L\nemail = l@x\n", NULL, false);
	check("a header with more on its line", "[user] name = H\nemail = h@x\n", NULL, false);
	put("other", "[user]\nname = Included\nemail = inc@x\n");
	check("an include", "[user]\nname = Before\nemail = b@x\n[include]\npath = other\n", NULL,
	      false);
	check("a conditional include", "[includeIf \"gitdir:/\"]\npath = other\n", NULL, false);
	check("a byte order mark", "\xef\xbb\xbf[user]\nname = M\nemail = m@x\n", NULL, false);
}

/* What cordon does alone: a config that is no file (a FIFO: git would wait on it, and the run
 * with it) gives none at once; one whose identity would not fit git's answer in cordon's bound
 * gives none whichever way it is read */
static void test_bounds(void)
{
	char p[256], big[8192];

	clear();
	snprintf(p, sizeof(p), "%s/.gitconfig", home);
	if (mkfifo(p, 0600) < 0)
		abort();
	alarm(20); /* a wait on the FIFO fails the test instead of holding it */
	is_str(cordon_identity(true), NULL, "a FIFO as ~/.gitconfig: no identity, and no wait");
	alarm(0);
	unlink(p);
	snprintf(p, sizeof(p), "%s/.config/git/config", home);
	if (mkfifo(p, 0600) < 0)
		abort();
	put(".gitconfig", "[user]\nname = A\nemail = a@x\n");
	alarm(20);
	is_str(cordon_identity(true), NULL, "... or as XDG's beside a ~/.gitconfig: the same");
	alarm(0);
	clear();
	snprintf(big, sizeof(big), "[user]\nname = %03000d\nemail = %03000d\n", 1, 2);
	put(".gitconfig", big);
	is_str(cordon_identity(false), NULL,
	       "an identity past cordon's bound (4096 bytes of git's answer): none when plain...");
	strcat(big, "[x]\ny = \"q\"\n");
	put(".gitconfig", big);
	is_str(cordon_identity(true), NULL, "... and none when git reads it: the same either way");
}

/* Configs drawn from pieces, plain or not: cordon's reading is git's, each time */
static void test_drawn(void)
{
	static const char *const lines[] = {
	    "[user]", "[USER]", "[core]", "[user] ", "[user \"x\"]", "[include]", "\tname = A B",
	    "name=Cé", "NAME = D  E", "name = \"F\"", "name = G # c", "email = g@x", "email=",
	    "Email = h@y  ", "email = i\\\\j", "# c", "; c", "", "   ", "key", "key = v",
	    "path = other", "email = k@x ; c", "name = ;", "na-me = x", "9name = y",
	};
	unsigned seed = 20261207, plain_runs = 0, failed = 0;
	char cfg[1024];

	put("other", "[user]\nname = O\n");
	for (int i = 0; i < 300; i++) {
		_cleanup_free_ char *want = NULL, *got = NULL, *alone = NULL;
		size_t len = 0;
		FILE *f;

		if (seed % 2) /* half of them start with a plain identity */
			len = (size_t)snprintf(cfg, sizeof(cfg), "[user]\nname = P Q\nemail = p@q\n");
		for (int k = (int)(seed % 7) + 1; k > 0; k--) {
			seed = seed * 1103515245u + 12345u;
			len += (size_t)snprintf(cfg + len, sizeof(cfg) - len, "%s\n",
						 lines[(seed >> 16) % CD_ELEMENTSOF(lines)]);
		}
		clear();
		put("other", "[user]\nname = O\n");
		put(".gitconfig", cfg);
		want = git_identity();
		got = cordon_identity(true);
		alone = cordon_identity(false);
		plain_runs += alone != NULL;
		if ((!want != !got) || (want && strcmp(want, got) != 0) ||
		    (alone && (!want || strcmp(alone, want) != 0))) {
			if (!failed++) {
				f = stdout;
				fprintf(f, "# differs from git for:\n# %s\n# git: %s, cordon: %s, "
					   "without git: %s\n",
					cfg, want ? want : "(none)", got ? got : "(none)",
					alone ? alone : "(none)");
			}
		}
	}
	is_int(failed, 0, "300 drawn configs: cordon's identity is git's each time");
	ok(plain_runs > 10, "... and %u of them were read without git", plain_runs);
}

int main(void)
{
	char p[128];

	snprintf(home, sizeof(home), "/tmp/test-gitid.XXXXXX");
	if (!mkdtemp(home))
		return 1;
	snprintf(nogit, sizeof(nogit), "%s/nogit", home); /* PATH without git */
	snprintf(p, sizeof(p), "%s/.config", home);
	if (mkdir(nogit, 0700) < 0 || mkdir(p, 0700) < 0)
		return 1;
	snprintf(p, sizeof(p), "%s/.config/git", home);
	if (mkdir(p, 0700) < 0)
		return 1;
	snprintf(path_env, sizeof(path_env), "%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("HOME", home, 1);
	unsetenv("XDG_CONFIG_HOME");
	if (system("git --version >/dev/null 2>&1") != 0) {
		skip("git is not installed: nothing to compare with", "cordon's reading is git's");
	} else {
		test_table();
		test_bounds();
		test_drawn();
	}
	clear();
	rmdir(p);
	snprintf(p, sizeof(p), "%s/.config", home);
	rmdir(p);
	rmdir(nogit);
	rmdir(home);
	return done_testing();
}
