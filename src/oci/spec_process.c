/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spec_process.c - a runtime-spec "process" object (config.json's, or exec's --process file)
 * read into struct oci_proc: args, env, cwd, user, terminal, consoleSize, rlimits,
 * capabilities, noNewPrivileges, oomScoreAdj, apparmorProfile, selinuxLabel. Types checked,
 * nothing decided. Runs in cordon-runtime.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "specdata.h"
#include "util.h"

void oci_proc_free(struct oci_proc *p)
{
	if (!p)
		return;
	cd_strv_free(p->pub.args);
	cd_strv_free(p->pub.env);
	free(p->pub.cwd);
	free(p->groups);
	for (size_t i = 0; i < p->n_rlimits; i++)
		free(p->rlimits[i].type);
	free(p->rlimits);
	cd_strv_free(p->caps);
	cd_strv_free(p->cap_sets);
	free(p->apparmor);
	free(p->selinux);
	cd_strv_free(p->other);
	free(p);
}

static int parse_user(json_object *o, const char *path, struct oci_proc *p,
		      struct cordon_error *err)
{
	char upath[OCI_PATH_MAX], buf[OCI_PATH_MAX];
	json_object *user, *v;
	uint64_t u;
	int r = oci_json_member(o, path, "user", json_type_object, false, &user, err);

	if (r < 0 || !user)
		return r; /* the spec's default: 0:0 */
	oci_json_path(upath, path, "user");
	r = oci_json_member(user, upath, "uid", json_type_int, true, &v, err);
	if (r >= 0)
		r = oci_json_u64(v, oci_json_path(buf, upath, "uid"), UINT32_MAX - 1, &u, err);
	if (r < 0)
		return r;
	p->pub.uid = (uid_t)u;
	r = oci_json_member(user, upath, "gid", json_type_int, true, &v, err);
	if (r >= 0)
		r = oci_json_u64(v, oci_json_path(buf, upath, "gid"), UINT32_MAX - 1, &u, err);
	if (r < 0)
		return r;
	p->pub.gid = (gid_t)u;
	r = oci_json_member(user, upath, "umask", json_type_int, false, &v, err);
	if (r >= 0 && v)
		r = oci_json_u64(v, oci_json_path(buf, upath, "umask"), 0777, &u, err);
	if (r < 0)
		return r;
	p->has_umask = v != NULL;
	p->umask = v ? (uint32_t)u : 0;
	r = oci_json_member(user, upath, "additionalGids", json_type_array, false, &v, err);
	if (r < 0 || !v)
		return r;
	p->n_groups = json_object_array_length(v);
	p->groups = calloc(p->n_groups + 1, sizeof(gid_t));
	if (!p->groups)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t i = 0; i < p->n_groups; i++) {
		oci_json_item(buf, upath, "additionalGids", i);
		r = oci_json_u64(json_object_array_get_idx(v, i), buf, UINT32_MAX - 1, &u, err);
		if (r < 0)
			return r;
		p->groups[i] = (gid_t)u;
	}
	return 0;
}

static int parse_rlimit(json_object *e, const char *path, struct oci_rlimit *rl,
			struct cordon_error *err)
{
	char buf[OCI_PATH_MAX];
	json_object *v;
	int r;

	if (!json_object_is_type(e, json_type_object))
		return cd_fail(err, 0, "config", "%s: not an object", path);
	r = oci_json_string(e, path, "type", true, &rl->type, err);
	if (r >= 0)
		r = oci_json_member(e, path, "soft", json_type_int, true, &v, err);
	if (r >= 0)
		r = oci_json_u64(v, oci_json_path(buf, path, "soft"), UINT64_MAX, &rl->soft, err);
	if (r >= 0)
		r = oci_json_member(e, path, "hard", json_type_int, true, &v, err);
	if (r >= 0)
		r = oci_json_u64(v, oci_json_path(buf, path, "hard"), UINT64_MAX, &rl->hard, err);
	if (r < 0)
		return r;
	if (strncmp(rl->type, "RLIMIT_", 7) != 0)
		return cd_fail(err, 0, "config", "%s.type: \"%s\" is not an RLIMIT_ name", path,
			       rl->type);
	if (rl->soft > rl->hard)
		return cd_fail(err, 0, "config", "%s: soft limit above the hard limit", path);
	return 0;
}

static int parse_rlimits(json_object *o, const char *path, struct oci_proc *p,
			 struct cordon_error *err)
{
	json_object *a;
	int r = oci_json_member(o, path, "rlimits", json_type_array, false, &a, err);

	if (r < 0 || !a)
		return r;
	p->rlimits = calloc(json_object_array_length(a) + 1, sizeof(*p->rlimits));
	if (!p->rlimits)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		char buf[OCI_PATH_MAX];

		oci_json_item(buf, path, "rlimits", i);
		p->n_rlimits = i + 1;
		r = parse_rlimit(json_object_array_get_idx(a, i), buf, &p->rlimits[i], err);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->rlimits[j].type, p->rlimits[i].type) == 0)
				return cd_fail(err, 0, "config", "%s.type: %s given twice", buf,
					       p->rlimits[i].type);
	}
	return 0;
}

static int parse_caps(json_object *o, const char *path, struct oci_proc *p,
		      struct cordon_error *err)
{
	static const char *const sets[] = {"bounding", "effective", "inheritable", "permitted",
					   "ambient"};
	char cpath[OCI_PATH_MAX];
	json_object *caps;
	int r = oci_json_member(o, path, "capabilities", json_type_object, false, &caps, err);

	if (r < 0 || !caps)
		return r;
	oci_json_path(cpath, path, "capabilities");
	for (size_t i = 0; i < CD_ELEMENTSOF(sets); i++) {
		_cleanup_strv_ char **names = NULL;

		r = oci_json_strv(caps, cpath, sets[i], &names, err);
		if (r < 0)
			return r;
		for (size_t j = 0; names && names[j]; j++) {
			char where[OCI_PATH_MAX];

			oci_json_item(where, cpath, sets[i], j);
			if (cd_strv_push(&p->caps, names[j]) < 0 ||
			    cd_strv_push(&p->cap_sets, where) < 0)
				return cd_fail(err, ENOMEM, "config", "out of memory");
		}
	}
	return 0;
}

static int parse_console(json_object *o, const char *path, struct oci_proc *p,
			 struct cordon_error *err)
{
	char cpath[OCI_PATH_MAX], buf[OCI_PATH_MAX];
	json_object *cs, *v;
	uint64_t h, w;
	int r = oci_json_member(o, path, "consoleSize", json_type_object, false, &cs, err);

	if (r < 0 || !cs)
		return r;
	oci_json_path(cpath, path, "consoleSize");
	r = oci_json_member(cs, cpath, "height", json_type_int, true, &v, err);
	if (r >= 0)
		r = oci_json_u64(v, oci_json_path(buf, cpath, "height"), UINT16_MAX, &h, err);
	if (r >= 0)
		r = oci_json_member(cs, cpath, "width", json_type_int, true, &v, err);
	if (r >= 0)
		r = oci_json_u64(v, oci_json_path(buf, cpath, "width"), UINT16_MAX, &w, err);
	if (r < 0)
		return r;
	p->pub.rows = (unsigned short)h;
	p->pub.cols = (unsigned short)w;
	return 0;
}

static int parse_oom(json_object *o, const char *path, struct oci_proc *p, struct cordon_error *err)
{
	char buf[OCI_PATH_MAX];
	json_object *v;
	int64_t adj;
	int r = oci_json_member(o, path, "oomScoreAdj", json_type_int, false, &v, err);

	if (r < 0 || !v)
		return r;
	r = oci_json_i64(v, oci_json_path(buf, path, "oomScoreAdj"), &adj, err);
	if (r < 0)
		return r;
	if (adj < -1000 || adj > 1000)
		return cd_fail(err, 0, "config", "%s: %lld is out of range (-1000 to 1000)", buf,
			       (long long)adj);
	p->has_oom = true;
	p->oom_score_adj = (int)adj;
	return 0;
}

static int parse_command(json_object *o, const char *path, struct oci_proc *p,
			 struct cordon_error *err)
{
	char buf[OCI_PATH_MAX];
	int r = oci_json_strv(o, path, "args", &p->pub.args, err);

	if (r < 0)
		return r;
	if (!p->pub.args || !p->pub.args[0] || !*p->pub.args[0])
		return cd_fail(err, 0, "config", "%s: missing or empty (the command to run)",
			       oci_json_path(buf, path, "args"));
	r = oci_json_strv(o, path, "env", &p->pub.env, err);
	if (r < 0)
		return r;
	if (!p->pub.env && !(p->pub.env = calloc(1, sizeof(char *))))
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t i = 0; p->pub.env[i]; i++)
		if (!strchr(p->pub.env[i], '=') || p->pub.env[i][0] == '=')
			return cd_fail(err, 0, "config", "%s.env[%zu]: \"%s\" is not KEY=VALUE",
				       path, i, p->pub.env[i]);
	r = oci_json_string(o, path, "cwd", true, &p->pub.cwd, err);
	if (r < 0)
		return r;
	if (p->pub.cwd[0] != '/')
		return cd_fail(err, 0, "config", "%s.cwd: \"%s\" is not absolute", path,
			       p->pub.cwd);
	return 0;
}

int oci_proc_parse(json_object *o, const char *path, struct oci_proc **ret,
		   struct cordon_error *err)
{
	static const char *const known[] = {
	    "terminal",
	    "consoleSize",
	    "user",
	    "args",
	    "env",
	    "cwd",
	    "capabilities",
	    "rlimits",
	    "noNewPrivileges",
	    "apparmorProfile",
	    "oomScoreAdj",
	    "selinuxLabel",
	    NULL,
	};
	struct oci_proc *p = calloc(1, sizeof(*p));
	bool has;
	int r;

	if (!p)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	r = parse_command(o, path, p, err);
	if (r >= 0)
		r = oci_json_bool(o, path, "terminal", &has, &p->pub.terminal, err);
	if (r >= 0)
		r = parse_console(o, path, p, err);
	if (r >= 0)
		r = parse_user(o, path, p, err);
	if (r >= 0)
		r = parse_rlimits(o, path, p, err);
	if (r >= 0)
		r = parse_caps(o, path, p, err);
	if (r >= 0)
		r = oci_json_bool(o, path, "noNewPrivileges", &p->has_nnp, &p->nnp, err);
	if (r >= 0)
		r = parse_oom(o, path, p, err);
	if (r >= 0)
		r = oci_json_string(o, path, "apparmorProfile", false, &p->apparmor, err);
	if (r >= 0)
		r = oci_json_string(o, path, "selinuxLabel", false, &p->selinux, err);
	if (r >= 0)
		r = oci_json_others(o, known, &p->other, err);
	if (r < 0) {
		oci_proc_free(p);
		return r;
	}
	*ret = p;
	return 0;
}
