/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gitconfig.h - what a repository's git config names for git to run or read from elsewhere:
 * core.hooksPath (a directory of hooks git runs) and include.path, includeIf.<condition>.path
 * (more config, read whether the condition holds or not as far as we know, and silently skipped
 * by git while missing). Supervisor side, pure (gitconfig.c).
 */
#pragma once

#include <stddef.h>

/* The values as git reads them (quotes removed, escapes undone), in order, in two NULL-ended
 * vectors (NULL when none). A value with blanks inside (outside quotes) that are not all spaces
 * comes twice: as git 2.45 and later read it (kept) and as earlier versions do (each a space).
 * A value of PATH_MAX bytes or more is left out (no path git could open). A line git refuses (a
 * quote left open, an unknown escape: git then dies, and runs nothing of the file) is passed
 * over, and the lines after it read: more than git would use, never less. 0 or -ENOMEM. */
int cd_gitconfig_paths(const char *text, size_t len, char ***ret_hooks, char ***ret_includes);
