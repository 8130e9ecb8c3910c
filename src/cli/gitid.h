/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gitid.h - the default of --git-identity: the caller's own git identity (gitid.c). */
#pragma once

/* "Name <email>" from the caller's global git config (user.name and user.email, both set):
 * read here when it is one plain file, else by git run on the host with a cleared environment
 * and no repository; NULL when either is missing (or git, for a config it must read), or the
 * config is not a file (a FIFO would hold the run). The caller frees it. */
char *cd_cli_git_identity(void);
