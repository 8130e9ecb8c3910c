/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gitconfig.h - what a repository's git config names for git to run or read from elsewhere:
 * core.hooksPath (a directory of hooks git runs), include.path and includeIf.<condition>.path
 * (more config, read whether the condition holds or not as far as we know, and silently skipped
 * by git while missing), the programs git runs (core.fsmonitor at every git status, a pager,
 * an editor, filters, ...: the table in gitconfig.c), and what a .gitmodules or the config says
 * of the repository (submodule.<name>.path, extensions.objectFormat). Supervisor side, pure
 * (gitconfig.c).
 */
#pragma once

#include <stddef.h>

enum cd_gitconfig_kind {
	CD_GITCONFIG_HOOKS,     /* core.hooksPath */
	CD_GITCONFIG_INCLUDE,   /* include.path, includeIf.*.path */
	CD_GITCONFIG_COMMAND,   /* a program git runs, or a command line naming one */
	CD_GITCONFIG_SUBMODULE, /* submodule.*.path */
	CD_GITCONFIG_FORMAT,    /* extensions.objectFormat */
	CD_GITCONFIG_KINDS
};

/* The values as git reads them (quotes removed, escapes undone), in order, one NULL-ended
 * vector per kind (NULL when none). A value with blanks inside (outside quotes) that are not all
 * spaces comes twice: as git 2.45 and later read it (kept) and as earlier versions do (each a
 * space). A value of PATH_MAX bytes or more is left out (no path git could open). A line git
 * refuses (a quote left open, an unknown escape: git then dies, and runs nothing of the file) is
 * passed over, and the lines after it read: more than git would use, never less. */
struct cd_gitconfig {
	char **v[CD_GITCONFIG_KINDS];
};
int cd_gitconfig_read(const char *text, size_t len, struct cd_gitconfig *ret); /* 0, -ENOMEM */
void cd_gitconfig_done(struct cd_gitconfig *c);

/* The kind of a variable as git's callbacks name it ("section.key", "section.subsection.key",
 * section and key in lower case), or -1 */
int cd_gitconfig_kind(const char *var);
