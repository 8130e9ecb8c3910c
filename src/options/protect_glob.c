/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* protect_glob.c - a protected path's glob: the setter's check and the one match every user of
 * it shares (the mounts of protect.c, cordon apply's refusal, the default list's parser). Pure.
 * Runs in the supervisor. */
#include <fnmatch.h>
#include <string.h>

#include "protect_glob.h"

int cd_protect_glob_check(const char *glob, struct cordon_error *err)
{
	size_t len = glob ? strlen(glob) : 0;

	if (len == 0)
		return cd_fail(err, 0, "protect", "empty path");
	if (len >= PATH_MAX)
		return cd_fail(err, ENAMETOOLONG, "protect", "\"%.40s...\": too long", glob);
	if (glob[0] == '/')
		return cd_fail(err, 0, "protect",
			       "\"%s\": a path relative to the workdir, without a leading \"/\"",
			       glob);
	for (const char *c = glob; *c;) {
		size_t n = strcspn(c, "/");

		if (n == 0 && c[n] == '/')
			return cd_fail(err, 0, "protect", "\"%s\": an empty component (\"//\")",
				       glob);
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return cd_fail(err, 0, "protect",
				       "\"%s\": no \".\" or \"..\" component allowed", glob);
		c += n;
		if (*c == '/')
			c++;
	}
	if (strcmp(glob, "**") == 0 || strcmp(glob, "**/") == 0)
		return cd_fail(err, 0, "protect",
			       "\"%s\": the whole workdir (use a read-only --ro-bind instead)", glob);
	return 0;
}

int cd_protect_glob_split(const char *glob, char ***ret, size_t *ret_n)
{
	_cleanup_free_ char *copy = strdup(glob);
	_cleanup_strv_ char **v = NULL;
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save))
		if (cd_strv_push(&v, t) < 0)
			return -ENOMEM;
	*ret_n = cd_strv_len(v);
	*ret = CD_TAKE_PTR(v);
	return 0;
}

static bool match_comps(char **g, size_t ng, char **p, size_t np)
{
	if (ng == 0)
		return true; /* what the glob names, or below it */
	if (strcmp(g[0], "**") == 0)
		return match_comps(g + 1, ng - 1, p, np) ||
		       (np > 0 && match_comps(g, ng, p + 1, np - 1));
	return np > 0 && fnmatch(g[0], p[0], 0) == 0 && match_comps(g + 1, ng - 1, p + 1, np - 1);
}

bool cd_protect_glob_match(const char *glob, const char *path)
{
	_cleanup_strv_ char **g = NULL, **p = NULL;
	size_t ng, np;

	if (cd_protect_glob_split(glob, &g, &ng) < 0 || cd_protect_glob_split(path, &p, &np) < 0)
		return true; /* out of memory: err on the side of protecting */
	return match_comps(g, ng, p, np);
}
