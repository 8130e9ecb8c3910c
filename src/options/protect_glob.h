/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* protect_glob.h - a protected path's glob (README.md, "Protected paths"): relative to the
 * workdir, "**" for any number of directories. Pure. Supervisor side. */
#pragma once

#include <stdbool.h>

#include "util.h"

/* A glob as the setter accepts it: relative, not empty, no "." or ".." component, no empty
 * component; a trailing "/" says a directory. 0 or -EINVAL with the reason. */
int cd_protect_glob_check(const char *glob, struct cordon_error *err);
/* Does the relative path match the glob, or lie below what it matches? ("**" spans any number
 * of directories; "*", "?", "[...]" stay within a name and match a leading "." too.) */
bool cd_protect_glob_match(const char *glob, const char *path);
/* Its components (strv, the caller frees), empty ones dropped; 0 or -ENOMEM. */
int cd_protect_glob_split(const char *glob, char ***ret, size_t *ret_n);
