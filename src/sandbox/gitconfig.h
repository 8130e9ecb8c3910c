/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gitconfig.h - what a repository's git config names for git to run or read from elsewhere:
 * core.hooksPath (a directory of hooks git runs) and include.path, includeIf.<condition>.path
 * (more config, read whether the condition holds or not as far as we know, and silently skipped
 * by git while missing). Supervisor side, pure (gitconfig.c).
 */
#pragma once

#include <stddef.h>

/* The values as git reads them (quotes removed, escapes undone), in order, in two
 * NULL-ended vectors (NULL when none). A line git would refuse (a quote left open, an unknown
 * escape) ends the scan: git then runs nothing of the file. 0 or -ENOMEM. */
int cd_gitconfig_paths(const char *text, size_t len, char ***ret_hooks, char ***ret_includes);
