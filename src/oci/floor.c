/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * floor.c - cordon's floor under an OCI config: what config.json asks, turned into a session's
 * cordon_config (everything but the command), each field honoured, clamped with a log line, or
 * refused with one line naming it (docs/oci.md has the table). This file: annotations,
 * namespaces, id mappings, root, process, hostname, resources, sysctl; floor_fs.c: mounts,
 * masked and read-only paths, devices; floor_seccomp.c: linux.seccomp. Runs in cordon-runtime,
 * before anything starts.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "specdata.h"

void oci_floor_say(const struct oci_floor *f, const char *fmt, ...)
{
	char line[600];
	va_list ap;

	if (!f->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	f->log(f->userdata, line);
}

int oci_floor_refuse(const struct oci_floor *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cd_failv(f->err, EPERM, "floor", fmt, ap);
	va_end(ap);
	return -EPERM;
}

int oci_floor_relay(const struct oci_floor *f, int r, const struct cordon_error *e,
		    const char *path)
{
	cd_fail(f->err, e->code, "config", "%s: %s", path, e->msg);
	return r < 0 ? r : -EINVAL;
}

/* --- the process (config.json's, and exec's) --- */

/* What the engines ask by default (docker's, podman's and containerd's lists): clamped to none.
 * Anything else asks for power a container under cordon never has: refused. */
static const char *const default_caps[] = {
    "CAP_AUDIT_WRITE", "CAP_CHOWN",   "CAP_DAC_OVERRIDE",     "CAP_FOWNER",	"CAP_FSETID",
    "CAP_KILL",	       "CAP_MKNOD",   "CAP_NET_BIND_SERVICE", "CAP_NET_RAW",	"CAP_SETFCAP",
    "CAP_SETGID",      "CAP_SETPCAP", "CAP_SETUID",	      "CAP_SYS_CHROOT",
};

static int floor_caps(const struct oci_proc *p, const struct oci_floor *f)
{
	size_t n = 0;

	for (size_t i = 0; p->caps && p->caps[i]; i++) {
		bool dflt = false;

		for (size_t j = 0; j < CD_ELEMENTSOF(default_caps); j++)
			dflt |= strcmp(p->caps[i], default_caps[j]) == 0;
		if (!dflt)
			return oci_floor_refuse(f,
						"%s: %s: refused (cordon's processes hold no "
						"capabilities; only the engines' default set is "
						"accepted, and clamped to none)",
						p->cap_sets[i], p->caps[i]);
		/* each name once, whatever the sets it is in */
		for (size_t j = 0; j < i && dflt; j++)
			dflt = strcmp(p->caps[i], p->caps[j]) != 0;
		n += dflt;
	}
	if (n)
		oci_floor_say(f,
			      "process.capabilities: %zu of the engines' default set: clamped to "
			      "none (cordon's processes hold no capabilities)",
			      n);
	return 0;
}

static void floor_process_notes(const struct oci_proc *p, const struct oci_floor *f)
{
	if (!p->nnp)
		oci_floor_say(f, "process.noNewPrivileges: %s: clamped to true (always on)",
			      p->has_nnp ? "false" : "absent");
	if (p->apparmor)
		oci_floor_say(f, "process.apparmorProfile: \"%s\": ignored", p->apparmor);
	if (p->selinux)
		oci_floor_say(f, "process.selinuxLabel: \"%s\": ignored", p->selinux);
	if (p->has_oom)
		oci_floor_say(f,
			      "process.oomScoreAdj: %d: not applied (the container's processes "
			      "keep cordon's)",
			      p->oom_score_adj);
	if (p->has_umask && p->umask != 022)
		oci_floor_say(f, "process.user.umask: 0%o: not applied", p->umask);
	for (size_t i = 0; i < p->n_groups; i++)
		if (p->groups[i] != p->pub.gid) {
			oci_floor_say(f,
				      "process.user.additionalGids: clamped to none (the process "
				      "has its gid %u only)",
				      p->pub.gid);
			break;
		}
	for (size_t i = 0; p->other && p->other[i]; i++)
		oci_floor_say(f, "process.%s: ignored", p->other[i]);
}

int oci_floor_process(const struct oci_proc *p, const struct oci_proc *container, oci_log_fn log,
		      void *userdata, struct cordon_error *err)
{
	const struct oci_floor f = {.log = log, .userdata = userdata, .err = err};
	int r = floor_caps(p, &f);

	if (r < 0)
		return r;
	/* a session runs every command as its one user: exec cannot pick another this round */
	if (container && (p->pub.uid != container->pub.uid || p->pub.gid != container->pub.gid))
		return oci_floor_refuse(&f,
					"process.user: %u:%u: exec runs as the container's "
					"user (%u:%u)",
					p->pub.uid, p->pub.gid, container->pub.uid,
					container->pub.gid);
	floor_process_notes(p, &f);
	return 0;
}

/* RLIMIT_NAME -> its resource, through the library's table of limits; -1: unknown. */
static int rlimit_resource(const char *type)
{
	const struct cordon_limit_info *li;

	for (size_t i = 0; (li = cordon_limit_info(i)); i++)
		if (li->kind == CORDON_LIMIT_RLIMIT && strcasecmp(type + 7, li->name) == 0)
			return li->resource;
	return -1;
}

static int floor_rlimits(const struct oci_floor *f, const struct oci_proc *p)
{
	for (size_t i = 0; i < p->n_rlimits; i++) {
		const struct oci_rlimit *rl = &p->rlimits[i];
		uint64_t soft = rl->soft, hard = rl->hard;
		int res = rlimit_resource(rl->type);
		struct cordon_error e = {0};
		char path[OCI_PATH_MAX];
		struct rlimit mine;
		int r;

		snprintf(path, sizeof(path), "process.rlimits[%zu]", i);
		if (res < 0)
			return cd_fail(f->err, 0, "config", "%s.type: %s: unknown", path, rl->type);
		/* no process can raise a hard limit without privilege: a container asks the
		 * engine's idea (nofile 1048576), the caller's is the ceiling */
		if (getrlimit(res, &mine) == 0 && mine.rlim_max != RLIM_INFINITY &&
		    hard > mine.rlim_max) {
			hard = mine.rlim_max;
			soft = soft < hard ? soft : hard;
			oci_floor_say(f,
				      "%s: %s %llu:%llu: clamped to %llu:%llu (the caller's hard "
				      "limit)",
				      path, rl->type, (unsigned long long)rl->soft,
				      (unsigned long long)rl->hard, (unsigned long long)soft,
				      (unsigned long long)hard);
		}
		r = cordon_config_set_rlimit(f->c, res, soft, hard, &e);
		if (r < 0)
			return oci_floor_relay(f, r, &e, path);
	}
	return 0;
}

static int floor_user(const struct oci_floor *f)
{
	const struct oci_proc *p = f->s->process;
	struct cordon_error e = {0};
	int r = cordon_config_set_uid(f->c, p->pub.uid, &e);

	if (r >= 0)
		r = cordon_config_set_gid(f->c, p->pub.gid, &e);
	if (r < 0)
		return oci_floor_relay(f, r, &e, "process.user");
	r = oci_floor_process(p, NULL, f->log, f->userdata, f->err);
	return r < 0 ? r : floor_rlimits(f, p);
}

/* --- namespaces and ids --- */

static const struct oci_ns *ns_find(const struct oci_spec *s, const char *type)
{
	for (size_t i = 0; i < s->n_ns; i++)
		if (strcmp(s->ns[i].type, type) == 0)
			return &s->ns[i];
	return NULL;
}

/* The namespaces that may be joined by path (a pod's, made by the engine), as setns names them. */
static int joinable_type(const char *type)
{
	return !strcmp(type, "network") ? CLONE_NEWNET
	       : !strcmp(type, "ipc")   ? CLONE_NEWIPC
	       : !strcmp(type, "uts")   ? CLONE_NEWUTS
					: 0;
}

/* fd is the network namespace of this process or of pid 1: the host's */
static bool host_netns(int fd)
{
	static const char *const host[] = {"/proc/self/ns/net", "/proc/1/ns/net"};
	struct stat st, o;

	if (fstat(fd, &st) < 0)
		return false;
	for (size_t i = 0; i < CD_ELEMENTSOF(host); i++)
		if (stat(host[i], &o) == 0 && o.st_dev == st.st_dev && o.st_ino == st.st_ino)
			return true;
	return false;
}

/* May this process join it? A child tries (setns changes only the child): a namespace owned by
 * a user namespace the runtime holds no CAP_SYS_ADMIN in (rootless, outside the one that owns
 * it) is refused now, not when the container starts. 0, or the errno. */
static int try_setns(int fd, int nstype)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(setns(fd, nstype) < 0 ? (errno & 0xff) : 0);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
}

/* linux.namespaces[i] with a path: opened once, here, and that descriptor joined (the library
 * checks it is a namespace of the type, not the host's). The path is opened O_PATH first: a FIFO
 * or a device named there is never opened for reading (which could block, or act); only a file
 * of nsfs is reopened for setns. Symlinks are followed: what they lead to is what is checked.
 * The host's network with cordon.net=host is that mode, not a join. */
static int floor_join(const struct oci_floor *f, size_t i, bool net_host)
{
	const struct oci_ns *ns = &f->s->ns[i];
	_cleanup_close_ int path_fd = -1, fd = -1;
	struct cordon_error e = {0};
	char where[64], self[64];
	struct statfs sfs;
	int r;

	snprintf(where, sizeof(where), "linux.namespaces[%zu]", i);
	path_fd = open(ns->path, O_PATH | O_CLOEXEC);
	if (path_fd < 0)
		return cd_fail_errno(f->err, errno, "config", "%s: %s %s", where, ns->type,
				     ns->path);
	if (fstatfs(path_fd, &sfs) < 0 || sfs.f_type != NSFS_MAGIC)
		return oci_floor_refuse(f, "%s: %s %s: not a namespace file: refused", where,
					ns->type, ns->path);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cd_fail_errno(f->err, errno, "config", "%s: %s %s", where, ns->type,
				     ns->path);
	if (net_host && joinable_type(ns->type) == CLONE_NEWNET && host_netns(fd)) {
		r = cordon_config_set_net(f->c, CORDON_NET_HOST, &e);
		if (r < 0)
			return oci_floor_relay(f, r, &e, where);
		oci_floor_say(f, "%s: network %s: the host's network (annotation cordon.net=host)",
			      where, ns->path);
		return 0;
	}
	r = cordon_config_join_ns(f->c, joinable_type(ns->type), fd, &e);
	if (r < 0)
		return oci_floor_refuse(f, "%s: %s %s: %s: refused", where, ns->type, ns->path,
					e.msg);
	r = try_setns(fd, joinable_type(ns->type));
	if (r)
		return oci_floor_refuse(f, "%s: %s %s: cannot be joined: %s%s: refused", where,
					ns->type, ns->path, strerror(r),
					r == EPERM ? " (the runtime holds no CAP_SYS_ADMIN in the "
						     "user namespace that owns it)" : "");
	oci_floor_say(f, "%s: %s %s: joined (not the container's own: nothing in it can be "
			 "configured from inside)", where, ns->type, ns->path);
	return 0;
}

/* The network: a new one, or the host's with the annotation cordon.net=host. */
static int floor_network(const struct oci_floor *f)
{
	const char *net = oci_spec_annotation(f->s, "cordon.net");
	struct cordon_error e = {0};
	int r;

	if (net && strcmp(net, "host") != 0)
		return cd_fail(f->err, 0, "config", "annotations.cordon.net: \"%s\": only \"host\"",
			       net);
	if (ns_find(f->s, "network")) {
		if (net && !ns_find(f->s, "network")->path)
			oci_floor_say(f, "annotations.cordon.net: host: ignored (linux.namespaces "
					 "asks for a network namespace)");
		return 0;
	}
	if (!net)
		return oci_floor_refuse(
		    f, "linux.namespaces: no network entry: the host's network "
		       "namespace: refused (annotation cordon.net=host allows it)");
	r = cordon_config_set_net(f->c, CORDON_NET_HOST, &e);
	if (r < 0)
		return oci_floor_relay(f, r, &e, "annotations.cordon.net");
	oci_floor_say(f, "linux.namespaces: no network entry: the host's network (annotation "
			 "cordon.net=host)");
	return 0;
}

static int floor_namespaces(const struct oci_floor *f)
{
	static const char *const required[] = {"pid", "mount", "ipc", "uts"};

	const char *net = oci_spec_annotation(f->s, "cordon.net");

	for (size_t i = 0; i < f->s->n_ns; i++) {
		const struct oci_ns *ns = &f->s->ns[i];
		int r;

		if (ns->path && joinable_type(ns->type)) {
			r = floor_join(f, i, net && !strcmp(net, "host"));
			if (r < 0)
				return r;
			continue;
		}
		if (ns->path)
			return oci_floor_refuse(f,
						"linux.namespaces[%zu]: %s %s: joining one: "
						"refused (the container's is always its own)",
						i, ns->type, ns->path);
		if (!strcmp(ns->type, "time"))
			oci_floor_say(f, "linux.namespaces[%zu]: time: not made (no clock offsets)",
				      i);
	}
	for (size_t i = 0; i < CD_ELEMENTSOF(required); i++)
		if (!ns_find(f->s, required[i]))
			return oci_floor_refuse(f,
						"linux.namespaces: no %s entry: the host's %s "
						"namespace: refused",
						required[i], required[i]);
	/* user and cgroup: always new, whether or not listed (podman and containerd list
	 * neither) */
	return floor_network(f);
}

/* uidMappings/gidMappings: cordon maps the container's one user itself (the caller's own id,
 * or a host id leased for it by a root caller) and never the host's root: a mapping that says
 * just that is honoured, any other is clamped to it. */
static void floor_idmaps(const struct oci_floor *f)
{
	const struct oci_spec *s = f->s;
	bool same = s->n_uid_maps <= 1 && s->n_gid_maps <= 1 && getuid() != 0;

	if (!s->n_uid_maps && !s->n_gid_maps)
		return;
	if (s->n_uid_maps)
		same &= s->uid_maps[0].inside == s->process->pub.uid &&
			s->uid_maps[0].host == getuid() && s->uid_maps[0].size == 1;
	if (s->n_gid_maps)
		same &= s->gid_maps[0].inside == s->process->pub.gid &&
			s->gid_maps[0].host == getgid() && s->gid_maps[0].size == 1;
	if (!same)
		oci_floor_say(f,
			      "linux.uidMappings, gidMappings: clamped: cordon maps uid %u and "
			      "gid %u to %s, nothing else",
			      s->process->pub.uid, s->process->pub.gid,
			      getuid() ? "the caller's own ids"
				       : "host ids leased for the container");
}

/* --- the rest of the top level --- */

static int floor_root(const struct oci_floor *f)
{
	struct cordon_error e = {0};
	int r = cordon_config_set_rootfs(f->c, f->s->rootfs, &e);

	if (r < 0)
		return oci_floor_relay(f, r, &e, "root.path");
	if (!f->s->root_readonly)
		oci_floor_say(f, "root.readonly: false: clamped to true (cordon's root is "
				 "read-only)");
	return 0;
}

static int floor_hostname(const struct oci_floor *f)
{
	struct cordon_error e = {0};
	int r;

	if (f->s->domainname)
		oci_floor_say(f, "domainname: \"%s\": not set", f->s->domainname);
	if (!f->s->hostname || !*f->s->hostname)
		return 0;
	/* runc sets it in a uts namespace it joins; the container's user namespace cannot */
	if (ns_find(f->s, "uts") && ns_find(f->s, "uts")->path)
		return oci_floor_refuse(f,
					"hostname: \"%s\": with a joined uts namespace (%s): refused "
					"(its hostname is the one it has; the container cannot set it)",
					f->s->hostname, ns_find(f->s, "uts")->path);
	r = cordon_config_set_hostname(f->c, f->s->hostname, &e);
	return r < 0 ? oci_floor_relay(f, r, &e, "hostname") : 0;
}

static int floor_annotations(const struct oci_floor *f)
{
	const char *v = oci_spec_annotation(f->s, "io.podman.annotations.privileged");

	if (v && strcasecmp(v, "true") == 0)
		return oci_floor_refuse(f,
					"annotations.io.podman.annotations.privileged: %s: "
					"privileged containers are refused",
					v);
	return 0;
}

/* cordon.allow-net=HOST[:PORT],... (the egress proxy) and cordon.audit=NAME. */
static int floor_features(const struct oci_floor *f)
{
	const char *allow = oci_spec_annotation(f->s, "cordon.allow-net");
	const char *audit = oci_spec_annotation(f->s, "cordon.audit");
	struct cordon_error e = {0};
	int r;

	if (allow && !ns_find(f->s, "network"))
		return oci_floor_refuse(f, "annotations.cordon.allow-net: the host's network has "
					   "no egress proxy: refused");
	if (allow && ns_find(f->s, "network")->path)
		return oci_floor_refuse(f,
					"annotations.cordon.allow-net: a network namespace joined "
					"(%s) is not cordon's: no egress proxy in it: refused",
					ns_find(f->s, "network")->path);
	for (const char *p = allow; p && *p;) {
		size_t n = strcspn(p, ",");
		_cleanup_free_ char *one = strndup(p, n);

		if (!one)
			return cd_fail(f->err, ENOMEM, "config", "out of memory");
		r = cordon_config_allow_net(f->c, one, &e);
		if (r < 0)
			return oci_floor_relay(f, r, &e, "annotations.cordon.allow-net");
		p += n + (p[n] == ',');
	}
	if (!audit)
		return 0;
	/* the engine's user writes annotations (a Kubernetes pod's author), the runtime may be
	 * root: the trail is a plain name in the bundle, never a path of the host */
	if (!*audit || strchr(audit, '/') || audit[0] == '.' || !strcmp(audit, "config.json"))
		return cd_fail(f->err, 0, "config",
			       "annotations.cordon.audit: \"%s\": a file name "
			       "(made in the bundle directory)",
			       audit);
	{
		_cleanup_free_ char *path = cd_strdup_printf("%s/%s", f->s->bundle, audit);

		if (!path)
			return cd_fail(f->err, ENOMEM, "config", "out of memory");
		r = cordon_config_set_audit_file(f->c, path, &e);
		return r < 0 ? oci_floor_relay(f, r, &e, "annotations.cordon.audit") : 0;
	}
}

/* --- linux.resources: cgroup v2 limits, best-effort unless cordon.cgroup=required --- */

static int floor_cgroup_mode(const struct oci_floor *f, bool any)
{
	const char *v = oci_spec_annotation(f->s, "cordon.cgroup");
	struct cordon_error e = {0};
	int r;

	if (v && strcmp(v, "required") != 0)
		return cd_fail(f->err, 0, "config",
			       "annotations.cordon.cgroup: \"%s\": only "
			       "\"required\"",
			       v);
	if (!v && !any)
		return 0;
	/* engines always send some (podman pids 2048, containerd cpu.shares): on a host without
	 * the controllers they must not refuse every container */
	r = cordon_config_set_cgroup_mode(
	    f->c, v ? CORDON_CGROUP_REQUIRED : CORDON_CGROUP_BEST_EFFORT, &e);
	return r < 0 ? oci_floor_relay(f, r, &e, "annotations.cordon.cgroup") : 0;
}

static uint64_t limit_of(int64_t v)
{
	return v < 0 ? CORDON_UNLIMITED : (uint64_t)v;
}

static int floor_memory(const struct oci_floor *f, const struct oci_resources *res)
{
	struct cordon_error e = {0};
	int r;

	if (res->has_memory) {
		r = cordon_config_set_memory(f->c, limit_of(res->memory), &e);
		if (r < 0)
			return oci_floor_relay(f, r, &e, "linux.resources.memory.limit");
	}
	if (!res->has_swap)
		return 0;
	/* OCI's swap is memory plus swap; cordon's, the swap alone */
	if (res->swap >= 0 && res->has_memory && res->memory >= 0 && res->swap < res->memory)
		return cd_fail(f->err, 0, "config",
			       "linux.resources.memory.swap: %lld is below "
			       "memory.limit (it counts memory and swap)",
			       (long long)res->swap);
	r = cordon_config_set_memory_swap(
	    f->c,
	    res->swap < 0 ? CORDON_UNLIMITED
			  : (uint64_t)res->swap -
				(res->has_memory && res->memory > 0 ? (uint64_t)res->memory : 0),
	    &e);
	return r < 0 ? oci_floor_relay(f, r, &e, "linux.resources.memory.swap") : 0;
}

static int floor_cpu_pids(const struct oci_floor *f, const struct oci_resources *res)
{
	struct cordon_error e = {0};
	int r;

	if (res->has_quota) {
		/* the spec's default period: 100 ms */
		uint64_t period = res->has_period && res->period ? res->period : 100000;
		uint64_t m = CORDON_UNLIMITED;

		if (res->quota >= 0)
			m = (uint64_t)res->quota * 1000 / period;
		r = cordon_config_set_cpus(f->c, m ? m : 1, &e);
		if (r < 0)
			return oci_floor_relay(f, r, &e, "linux.resources.cpu.quota");
	}
	if (res->has_shares)
		oci_floor_say(f,
			      "linux.resources.cpu.shares: %llu: not applied (cordon limits "
			      "bandwidth: cpu.quota)",
			      (unsigned long long)res->shares);
	if (res->has_cpuset)
		oci_floor_say(f, "linux.resources.cpu.cpus: not applied");
	/* runc reads 0 as "not set" */
	if (res->has_pids && res->pids != 0) {
		r = cordon_config_set_pids(f->c, limit_of(res->pids), &e);
		if (r < 0)
			return oci_floor_relay(f, r, &e, "linux.resources.pids.limit");
	}
	for (size_t i = 0; res->other && res->other[i]; i++)
		oci_floor_say(f, "linux.resources.%s: not applied", res->other[i]);
	return 0;
}

/* The device cgroup: a deny-all and allow rules for the nodes cordon's /dev has (or the
 * engines' usual list: ptys, console); any other allow rule is refused. */
static int floor_devrules(const struct oci_floor *f, const struct oci_resources *res)
{
	static const int std[][2] = {{1, 3}, {1, 5}, {1, 7}, {1, 8},   {1, 9},
				     {5, 0}, {5, 1}, {5, 2}, {136, -1}};

	for (size_t i = 0; i < res->n_devs; i++) {
		const struct oci_devrule *d = &res->devs[i];
		bool ok = !d->allow;

		for (size_t j = 0; j < CD_ELEMENTSOF(std) && !ok; j++)
			ok = d->type == 'c' && d->major == std[j][0] && d->minor == std[j][1];
		if (!ok)
			return oci_floor_refuse(f,
						"linux.resources.devices[%zu]: allow %c %lld:%lld: "
						"refused (cordon's /dev has only its standard "
						"nodes)",
						i, d->type, (long long)d->major,
						(long long)d->minor);
	}
	return 0;
}

static int floor_resources(const struct oci_floor *f)
{
	const struct oci_resources *res = &f->s->res;
	bool any =
	    res->has_memory || res->has_swap || res->has_quota || (res->has_pids && res->pids != 0);
	int r = floor_cgroup_mode(f, any);

	if (r >= 0)
		r = floor_memory(f, res);
	if (r >= 0)
		r = floor_cpu_pids(f, res);
	if (r >= 0)
		r = floor_devrules(f, res);
	if (r >= 0 && f->s->cgroups_path)
		oci_floor_say(f,
			      "linux.cgroupsPath: \"%s\": not used (cordon makes the "
			      "container's cgroup under its own parent)",
			      f->s->cgroups_path);
	return r;
}

/* --- sysctl, the rest of linux (seccomp: floor_seccomp.c) --- */

/* linux.sysctl: the keys of the container's own namespaces are set inside them (the library's
 * cordon_config_set_sysctl() checks each: src/options/sysctl.c); net.* only where the network
 * is the container's own. */
static int floor_sysctl(const struct oci_floor *f)
{
	bool own_net = ns_find(f->s, "network") != NULL;

	for (size_t i = 0; f->s->sysctl_keys && f->s->sysctl_keys[i]; i++) {
		const char *k = f->s->sysctl_keys[i];
		struct cordon_error e = {0};
		int r = cordon_config_set_sysctl(f->c, k, f->s->sysctl_values[i], &e);

		/* the message starts with the key (or what stands for it) */
		if (r < 0)
			return cd_fail(f->err, e.code, "config", "linux.sysctl.%s", e.msg);
		if (!own_net && (!strncmp(k, "net.", 4) || !strncmp(k, "net/", 4)))
			return oci_floor_refuse(f,
						"linux.sysctl.%s: the host's network (annotation "
						"cordon.net=host): it would change the host's: "
						"refused",
						k);
	}
	for (size_t i = 0; f->s->linux_other && f->s->linux_other[i]; i++)
		oci_floor_say(f, "linux.%s: ignored", f->s->linux_other[i]);
	return 0;
}

int oci_spec_config_scratch(const struct oci_spec *s, const char *scratch_dir,
			    struct cordon_config *c, oci_log_fn log, void *userdata,
			    struct cordon_error *err)
{
	struct oci_floor f = {.s = s, .c = c, .log = log, .userdata = userdata, .err = err};
	int r = floor_annotations(&f);

	if (r >= 0)
		r = floor_namespaces(&f);
	if (r >= 0) {
		floor_idmaps(&f);
		r = floor_root(&f);
	}
	if (r >= 0)
		r = floor_user(&f);
	if (r >= 0)
		r = floor_hostname(&f);
	if (r >= 0)
		r = oci_floor_mounts(&f, scratch_dir);
	if (r >= 0)
		r = oci_floor_paths(&f);
	if (r >= 0)
		r = oci_floor_devices(&f);
	if (r >= 0)
		r = floor_resources(&f);
	if (r >= 0)
		r = oci_floor_seccomp(&f);
	if (r >= 0)
		r = floor_sysctl(&f);
	if (r >= 0)
		r = floor_features(&f);
	return r;
}

int oci_spec_config(const struct oci_spec *s, struct cordon_config *c, oci_log_fn log,
		    void *userdata, struct cordon_error *err)
{
	return oci_spec_config_scratch(s, NULL, c, log, userdata, err);
}
