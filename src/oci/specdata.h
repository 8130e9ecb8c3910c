/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * specdata.h - config.json as read (spec.c, spec_process.c, spec_linux.c) and judged (floor.c):
 * plain data, every field type-checked, nothing decided yet. Runs in cordon-runtime.
 * Private to src/oci's parser and floor; the lifecycle uses spec.h only.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spec.h"
#include "util.h"

#define OCI_PATH_MAX 160 /* a JSON path in a message: "linux.resources.devices[12].access" */

/* One of process.rlimits. */
struct oci_rlimit {
	char *type; /* "RLIMIT_NOFILE" as written */
	uint64_t soft, hard;
};

/* process, whole: the public part first, so an oci_process * is an oci_proc *. */
struct oci_proc {
	struct oci_process pub;
	gid_t *groups; /* user.additionalGids */
	size_t n_groups;
	bool has_umask;
	uint32_t umask;
	struct oci_rlimit *rlimits;
	size_t n_rlimits;
	/* capabilities: every name of every set, and the set it first came from */
	char **caps;
	char **cap_sets;
	bool has_nnp, nnp;
	bool has_oom;
	int oom_score_adj;
	char *apparmor, *selinux;
	char **other; /* other keys present: ioPriority, scheduler, execCPUAffinity */
};

struct oci_mount {
	char *dest, *type, *source; /* type, source: NULL when absent */
	char **options;		    /* never NULL */
	bool has_idmap;		    /* mounts[].uidMappings / gidMappings */
};

struct oci_ns {
	char *type;
	char *path; /* NULL: a new one */
};

struct oci_idmap {
	uint32_t inside, host, size;
};

/* linux.resources.devices[] */
struct oci_devrule {
	bool allow;
	char type;	      /* 'a' (or absent), 'c', 'b' */
	int64_t major, minor; /* -1: any */
	char *access;
};

/* linux.devices[] */
struct oci_device {
	char *path, *type;
	int64_t major, minor;
};

struct oci_resources {
	bool has_memory, has_swap, has_shares, has_quota, has_period, has_pids, has_cpuset;
	int64_t memory, swap, quota, pids; /* -1: unlimited */
	uint64_t shares, period;
	struct oci_devrule *devs;
	size_t n_devs;
	char **other; /* keys present that cordon does not apply: blockIO, memory.reservation... */
};

/* linux.seccomp's actions and comparisons, as spec_seccomp.c reads them (floor_seccomp.c maps
 * them to libseccomp's) */
enum oci_scmp_action {
	OCI_SCMP_KILL_THREAD, /* SCMP_ACT_KILL too */
	OCI_SCMP_KILL_PROCESS,
	OCI_SCMP_TRAP,
	OCI_SCMP_ERRNO,
	OCI_SCMP_TRACE,
	OCI_SCMP_ALLOW,
	OCI_SCMP_LOG,
	OCI_SCMP_NOTIFY,
};

enum oci_scmp_op {
	OCI_SCMP_NE,
	OCI_SCMP_LT,
	OCI_SCMP_LE,
	OCI_SCMP_EQ,
	OCI_SCMP_GE,
	OCI_SCMP_GT,
	OCI_SCMP_MASKED_EQ,
};

/* linux.seccomp.flags */
#define OCI_SCMP_FLAG_TSYNC		 0x1u
#define OCI_SCMP_FLAG_LOG		 0x2u
#define OCI_SCMP_FLAG_SPEC_ALLOW	 0x4u
#define OCI_SCMP_FLAG_WAIT_KILLABLE_RECV 0x8u

struct oci_scmp_arg {
	unsigned index; /* 0 to 5 */
	uint64_t value, value_two;
	enum oci_scmp_op op;
};

/* One of linux.seccomp.syscalls */
struct oci_scmp_rule {
	char **names; /* never NULL */
	enum oci_scmp_action action;
	uint32_t errno_ret; /* ERRNO and TRACE: errnoRet, default EPERM */
	struct oci_scmp_arg *args;
	size_t n_args;
};

struct oci_seccomp {
	bool present;
	char *default_action; /* as written */
	enum oci_scmp_action default_act;
	uint32_t default_errno; /* defaultErrnoRet, default EPERM */
	char **archs;		/* architectures as written ("SCMP_ARCH_X86"); NULL: none */
	unsigned flags;		/* OCI_SCMP_FLAG_* */
	char *notify_at; /* the JSON path of an SCMP_ACT_NOTIFY or a listenerPath; NULL: none */
	struct oci_scmp_rule *rules;
	size_t n_rules;
};

struct oci_spec {
	json_object *json; /* kept for annotations' strings */
	char *version;
	char *bundle, *rootfs;
	bool root_readonly; /* root.readonly (default false) */
	struct oci_proc *process;
	char *hostname, *domainname;
	struct oci_mount *mounts;
	size_t n_mounts;
	struct oci_ns *ns;
	size_t n_ns;
	struct oci_idmap *uid_maps, *gid_maps;
	size_t n_uid_maps, n_gid_maps;
	struct oci_resources res;
	struct oci_seccomp seccomp;
	char *cgroups_path;
	char **masked, **readonly;
	char **sysctl_keys, **sysctl_values;
	struct oci_device *devices;
	size_t n_devices;
	struct oci_hook_list hooks[OCI_HOOK_KINDS];
	const char **ann_keys, **ann_values; /* borrowed from json */
	size_t n_ann;
	char **linux_other; /* other linux keys present: mountLabel, personality, ... */
};

/* config.json's text (len bytes) for the bundle at the absolute path bundle: oci_spec_load()
 * without the reading (pure: the unit tests' and the fuzzer's way in). */
int oci_spec_parse(const char *bundle, const char *text, size_t len, struct oci_spec **ret,
		   struct cordon_error *err);

/* The reader's helpers (spec.c): a member of obj of the given type; absent or null: *ret NULL
 * (required: an error). Messages name the JSON path "<parent>.<key>". */
int oci_json_member(json_object *obj, const char *parent, const char *key, json_type type,
		    bool required, json_object **ret, struct cordon_error *err);
int oci_json_string(json_object *obj, const char *parent, const char *key, bool required,
		    char **ret, struct cordon_error *err);
int oci_json_strv(json_object *obj, const char *parent, const char *key, char ***ret,
		  struct cordon_error *err);
int oci_json_u64(json_object *v, const char *path, uint64_t max, uint64_t *ret,
		 struct cordon_error *err);
int oci_json_i64(json_object *v, const char *path, int64_t *ret, struct cordon_error *err);
int oci_json_bool(json_object *obj, const char *parent, const char *key, bool *ret_has, bool *ret,
		  struct cordon_error *err);
/* "parent.key" into buf ("key" when parent is ""). */
const char *oci_json_path(char buf[OCI_PATH_MAX], const char *parent, const char *key);
/* "parent.key[i]" into buf. */
const char *oci_json_item(char buf[OCI_PATH_MAX], const char *parent, const char *key, size_t i);
/* The names of obj's members not in known (NULL-ended), pushed on *other. */
int oci_json_others(json_object *obj, const char *const *known, char ***other,
		    struct cordon_error *err);

/* spec_hooks.c: a "hooks" object into ret (zeroed by the caller; freed by oci_hooks_free() even
 * half-read). */
int oci_hooks_parse(json_object *hooks, struct oci_hook_list ret[OCI_HOOK_KINDS],
		    struct cordon_error *err);

/* spec_process.c */
int oci_proc_parse(json_object *o, const char *path, struct oci_proc **ret,
		   struct cordon_error *err);
void oci_proc_free(struct oci_proc *p);
/* spec_seccomp.c: linux.seccomp (o, an object) into sc, whole: an unknown action, comparison,
 * flag or an argument index past 5 is an error naming its JSON path. Syscall and architecture
 * names are kept as written (floor_seccomp.c resolves them). */
int oci_seccomp_parse(json_object *o, struct oci_seccomp *sc, struct cordon_error *err);
void oci_seccomp_done(struct oci_seccomp *sc);
/* floor_seccomp.c: the profile compiled (libseccomp) and handed to c for the container's
 * processes, beside cordon's own filters; NOTIFY refused. */
struct oci_floor;
int oci_floor_seccomp(const struct oci_floor *f);
/* spec_linux.c: the "linux" object into s. */
int oci_linux_parse(json_object *o, struct oci_spec *s, struct cordon_error *err);
void oci_linux_done(struct oci_spec *s);
/* floor.c: what the floor says of a process (config.json's, or exec's against the container's
 * when container is not NULL): refusals; clamps through log. */
int oci_floor_process(const struct oci_proc *p, const struct oci_proc *container, oci_log_fn log,
		      void *userdata, struct cordon_error *err);

/* The floor at work (floor.c, floor_fs.c): the config being filled and where lines go. */
struct oci_floor {
	const struct oci_spec *s;
	struct cordon_config *c;
	oci_log_fn log;
	void *userdata;
	struct cordon_error *err;
	char workdir_from[OCI_PATH_MAX]; /* what chose the workdir ("mounts[3]"); "": none yet */
};

/* One log line (printf-like); nothing when the caller gave no log function. */
void oci_floor_say(const struct oci_floor *f, const char *fmt, ...) _printf_(2, 3);
/* A refusal: -EPERM, err->msg "what: why". */
int oci_floor_refuse(const struct oci_floor *f, const char *fmt, ...) _printf_(2, 3);
/* A library setter's failure, its message behind the JSON path: -EINVAL (or its -errno). */
int oci_floor_relay(const struct oci_floor *f, int r, const struct cordon_error *e,
		    const char *path);
/* floor_fs.c: mounts (and the workdir they give), maskedPaths, readonlyPaths, devices. */
int oci_floor_mounts(struct oci_floor *f, const char *scratch_dir);
int oci_floor_paths(struct oci_floor *f);
int oci_floor_devices(struct oci_floor *f);
