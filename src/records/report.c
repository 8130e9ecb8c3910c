/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report.c - render and write the JSON report. Runs in the supervisor, after the sandbox ended
 * (or failed to start). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "json.h"
#include "proxy.h"
#include "output.h"
#include "report.h"
#include "result.h"

static void render_strv(struct cd_json *j, const char *key, char *const *v)
{
	cd_json_key(j, key);
	cd_json_array_begin(j);
	for (; v && *v; v++)
		cd_json_string(j, *v);
	cd_json_array_end(j);
}

static void render_env_names(struct cd_json *j, char *const *envp)
{
	cd_json_key(j, "env");
	cd_json_array_begin(j);
	for (; envp && *envp; envp++)
		cd_json_string_len(j, *envp, strcspn(*envp, "="));
	cd_json_array_end(j);
}

static void render_mounts(struct cd_json *j, const struct cd_mount_plan *p)
{
	cd_json_key(j, "mounts");
	cd_json_array_begin(j);
	for (size_t i = 0; p && i < p->n; i++) {
		const struct cd_mnt *m = &p->m[i];

		cd_json_object_begin(j);
		cd_json_kv_string(j, "type", cd_mnt_kind_name(m->kind));
		cd_json_kv_string(j, "path", m->dst);
		if (m->src)
			cd_json_kv_string(j, m->kind == CD_MNT_SYMLINK ? "target" : "source", m->src);
		if (m->kind == CD_MNT_TMPFS)
			cd_json_kv_uint(j, "size", m->size);
		if (m->kind != CD_MNT_SYMLINK)
			cd_json_kv_bool(j, "read_only", m->kind != CD_MNT_WORKDIR &&
							       (m->kind != CD_MNT_TMPFS || m->ro));
		cd_json_object_end(j);
	}
	cd_json_array_end(j);
}

static void render_rlim(struct cd_json *j, const char *key, rlim_t v)
{
	cd_json_key(j, key);
	if (v == RLIM_INFINITY)
		cd_json_string(j, "unlimited");
	else
		cd_json_uint(j, v);
}

/* before the command exists (the audit trail's start event): the limits configured */
static void render_configured_rlimits(struct cd_json *j, const struct cordon_config *c)
{
	cd_json_object_begin(j);
	for (int i = 0; i < RLIM_NLIMITS; i++) {
		if (!c->limits.rlimits[i].set || !cd_rlimit_name(i))
			continue;
		cd_json_key(j, cd_rlimit_name(i));
		cd_json_object_begin(j);
		render_rlim(j, "soft", c->limits.rlimits[i].soft);
		render_rlim(j, "hard", c->limits.rlimits[i].hard);
		cd_json_object_end(j);
	}
	cd_json_object_end(j);
}

/* every rlimit as the command's process read it back before exec; null when it never got
 * that far (setup failed before) */
static void render_rlimits(struct cd_json *j, const struct cd_report_info *in)
{
	const struct cd_rlimits_got *got = in->rlimits;

	cd_json_key(j, "rlimits");
	if (!got) {
		render_configured_rlimits(j, in->c);
		return;
	}
	if (!got->valid) {
		cd_json_null(j);
		return;
	}
	cd_json_object_begin(j);
	for (int i = 0; i < RLIM_NLIMITS; i++) {
		const struct rlimit *r = &got->r[i];

		if (!cd_rlimit_name(i))
			continue;
		cd_json_key(j, cd_rlimit_name(i));
		cd_json_object_begin(j);
		render_rlim(j, "soft", r->rlim_cur);
		render_rlim(j, "hard", r->rlim_max);
		cd_json_object_end(j);
	}
	cd_json_object_end(j);
}

static void render_identity(struct cd_json *j, const struct cd_identity *id)
{
	cd_json_key(j, "identity");
	if (!id) {
		cd_json_null(j);
		return;
	}
	cd_json_object_begin(j);
	cd_json_kv_uint(j, "uid", id->inside_uid);
	cd_json_kv_uint(j, "gid", id->inside_gid);
	cd_json_kv_uint(j, "host_uid", id->host_uid);
	cd_json_kv_uint(j, "host_gid", id->host_gid);
	cd_json_kv_bool(j, "idmapped_workdir", id->idmap_workdir);
	cd_json_kv_string(j, "user", id->user);
	cd_json_kv_string(j, "home", id->home);
	cd_json_object_end(j);
}

static void render_seccomp(struct cd_json *j, const struct cd_report_info *in)
{
	const struct cordon_config *c = in->c;
	const struct cd_filter *f = in->filter;

	cd_json_key(j, "seccomp");
	cd_json_object_begin(j);
	cd_json_kv_string(j, "policy", c->seccomp.none ? "none"
				      : c->seccomp.display ? c->seccomp.display : "default.policy");
	if (f) {
		cd_json_kv_string(j, "mode", f->log ? "log" : "enforce");
		cd_json_kv_uint(j, "rules", f->n_rules);
		cd_json_kv_uint(j, "bpf_instructions", f->len);
		cd_json_kv_bool(j, "optimized", f->optimized);
		cd_json_kv_bool(j, "blocks_tiocsti", f->blocks_tiocsti);
		if (in->policy_source)
			cd_json_kv_string(j, "source", in->policy_source);
	} else {
		cd_json_kv_string(j, "mode", c->seccomp.none ? "off" : "not-applied");
	}
	cd_json_key(j, "baseline");
	if (in->baseline) {
		cd_json_object_begin(j);
		cd_json_kv_uint(j, "rules", in->baseline->n_rules);
		cd_json_kv_uint(j, "bpf_instructions", in->baseline->len);
		cd_json_object_end(j);
	} else {
		cd_json_null(j);
	}
	cd_json_object_end(j);
}

static void kv_string_or_null(struct cd_json *j, const char *key, const char *v)
{
	cd_json_key(j, key);
	if (v)
		cd_json_string(j, v);
	else
		cd_json_null(j);
}

/* a limit as its file read back after writing: a number (null for "max"), or the file's text
 * for cpu.max; null when not applied */
static void render_limit(struct cd_json *j, const struct cd_limit_def *d, const char *text)
{
	uint64_t v;

	cd_json_key(j, d->report_key);
	if (text && d->report_text)
		cd_json_string(j, text);
	else if (text && cd_limit_parse_cgroup(d, text, &v) && v != CORDON_UNLIMITED)
		cd_json_uint(j, v);
	else
		cd_json_null(j);
}

static void render_cgroup(struct cd_json *j, const struct cd_report_info *in)
{
	static const char *const modes[] = { "auto", "required", "best-effort", "off" };
	const struct cd_cgroup *cg = in->cg;

	cd_json_key(j, "cgroup");
	cd_json_object_begin(j);
	cd_json_kv_string(j, "mode", modes[in->c->limits.cgroup_mode]);
	kv_string_or_null(j, "path", cg ? cg->path_reported : NULL);
	for (size_t i = 0; i < CD_CG_N; i++)
		render_limit(j, &cd_limit_table[i], cg ? cg->applied[i] : NULL);
	cd_json_kv_bool(j, "oom_group", cg && cg->oom_group);
	render_strv(j, "missing", cg ? cg->missing : NULL);
	render_strv(j, "fallbacks", cg ? cg->fallbacks : NULL);
	cd_json_object_end(j);
}

static void render_allow(struct cd_json *j, const struct cordon_config *c)
{
	cd_json_key(j, "allow_net");
	cd_json_array_begin(j);
	for (size_t i = 0; i < c->net.n_allow; i++)
		cd_json_string(j, c->net.allow[i].spec);
	cd_json_array_end(j);
	cd_json_key(j, "proxy");
	if (!c->net.n_allow) {
		cd_json_null(j);
		return;
	}
	cd_json_object_begin(j);
	cd_json_kv_string(j, "listen", CD_PROXY_URL);
	cd_json_kv_uint(j, "idle_timeout_ms", c->net.idle_ns / NSEC_PER_MSEC);
	cd_json_kv_uint(j, "max_connections", c->net.max_conns);
	cd_json_object_end(j);
}

void cd_report_render_applied(struct cd_json *j, const struct cd_report_info *in)
{
	static const char *const ns[] = { "user", "mount", "pid", "ipc", "uts", "cgroup", "net" };
	const struct cordon_config *c = in->c;
	bool joined_net = c->ns.join[CD_JOIN_NET] >= 0;
	/* made: the host's network, and what was joined (nsjoin.h), are not */
	bool made[] = { true, true, true, c->ns.join[CD_JOIN_IPC] < 0,
			c->ns.join[CD_JOIN_UTS] < 0, true,
			c->net.mode != CORDON_NET_HOST && !joined_net };

	_Static_assert(CD_ELEMENTSOF(made) == CD_ELEMENTSOF(ns), "one flag a namespace");
	cd_json_key(j, "applied");
	cd_json_object_begin(j);
	cd_json_key(j, "namespaces");
	cd_json_array_begin(j);
	for (size_t i = 0; i < CD_ELEMENTSOF(ns); i++)
		if (made[i])
			cd_json_string(j, ns[i]);
	cd_json_array_end(j);
	cd_json_kv_string(j, "net", c->net.mode == CORDON_NET_HOST ? "host"
				    : joined_net ? "joined" : c->net.n_allow ? "proxy" : "none");
	render_allow(j, c);
	cd_json_kv_string(j, "workdir", in->workdir);
	cd_json_kv_string(j, "workdir_target", in->workdir_target);
	cd_json_kv_string(j, "chdir", in->chdir);
	cd_json_kv_string(j, "rootfs", c->fs.rootfs ? c->fs.rootfs : "/");
	cd_json_kv_string(j, "hostname",
			  c->identity.hostname ? c->identity.hostname : CD_DEFAULT_HOSTNAME);
	render_identity(j, in->id);
	cd_json_kv_uint(j, "timeout_ms", c->limits.timeout_ns / NSEC_PER_MSEC);
	cd_json_kv_uint(j, "kill_after_ms", c->limits.kill_after_ns / NSEC_PER_MSEC);
	render_rlimits(j, in);
	cd_json_kv_bool(j, "capabilities", false);
	cd_json_kv_bool(j, "no_new_privs", true);
	cd_json_kv_bool(j, "new_session", !in->baseline || !in->baseline->blocks_tiocsti);
	render_seccomp(j, in);
	render_cgroup(j, in);
	render_env_names(j, in->envp);
	render_mounts(j, in->plan);
	cd_json_object_end(j);
}

char *cd_report_render(const struct cd_report_info *in)
{
	struct cd_json j = { 0 };
	char *s, *out;

	cd_json_object_begin(&j);
	cd_json_kv_int(&j, "version", CORDON_REPORT_VERSION);
	cd_json_kv_string(&j, "id", in->res->id);
	cd_json_kv_string(&j, "cordon", cordon_version());
	render_strv(&j, "command", in->c->command.argv);
	cd_audit_render_result(&j, in->res);
	cd_report_render_applied(&j, in);
	cd_json_object_end(&j);
	s = cd_json_steal(&j);
	if (!s)
		return NULL;
	out = cd_strdup_printf("%s\n", s);
	free(s);
	return out;
}

struct cd_report_info cd_report_info_of(const struct cd_sandbox *sb, const char *chdir,
					char *const *envp, const struct cd_rlimits_got *rlimits)
{
	return (struct cd_report_info){
		.c = sb->c,
		.workdir = sb->wd.path,
		.workdir_target = sb->workdir_target,
		.chdir = chdir,
		.id = sb->have_id ? &sb->id : NULL,
		.plan = &sb->plan,
		.envp = envp,
		.res = sb->res,
		.filter = sb->sec.have_filter ? &sb->sec.filter : NULL,
		.policy_source = sb->sec.have_filter ? sb->sec.policy_path : NULL,
		.baseline = sb->sec.have_baseline ? &sb->sec.baseline : NULL,
		.cg = &sb->bounds.cg,
		.rlimits = rlimits,
	};
}

void cd_report_render_sandbox(struct cd_json *j, const struct cd_sandbox *sb, const char *chdir,
			      char *const *envp)
{
	/* no command's process yet: the configured rlimits */
	struct cd_report_info info = cd_report_info_of(sb, chdir, envp, NULL);

	cd_report_render_applied(j, &info);
}

int cd_report_write(const struct cd_report_info *info, struct cd_report_file *rf, int fd,
		    struct cordon_error *err)
{
	_cleanup_free_ char *json = NULL;
	int r = 0, r2;

	if (rf->fd < 0 && fd < 0)
		return 0;
	json = cd_report_render(info);
	if (!json) {
		cd_report_discard(rf); /* no half report: the temp file goes */
		return cd_fail(err, ENOMEM, "report", "out of memory");
	}
	if (rf->fd >= 0)
		r = cd_report_commit(rf, json, err);
	/* both are tried: the fd's reader may be waiting for it whatever became of the file */
	if (fd >= 0) {
		r2 = cd_write_all(fd, json, strlen(json));
		if (r2 < 0)
			r = r < 0 ? r : cd_fail_errno(err, -r2, "report", "file descriptor %d", fd);
	}
	return r;
}
