/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spec.h - an OCI bundle's config.json (runtime-spec 1.0 to 1.2) as cordon-runtime needs it.
 * Runs in cordon-runtime (src/oci), the OCI front end: json-c reads the file (spec.c), and the
 * floor (floor.c) turns what the config asks into a cordon_config: honoured, clamped with a log
 * line, or refused with one line naming the field (docs/oci.md has the table).
 *
 * The contract between the parser (spec.c, floor.c) and the lifecycle (main.c and the cmd_*.c,
 * holder.c): the lifecycle loads a bundle, asks the floor for a session config (everything but
 * the process), and starts the process itself with cordon_session_exec().
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon.h"

/* What the container's process is: config.json's "process", or exec's --process file. */
struct oci_process {
	char **args;           /* NULL-ended, at least one */
	char **env;            /* NULL-ended KEY=VALUE, exactly the config's (cordon adds none) */
	char *cwd;             /* absolute, inside */
	uid_t uid;             /* process.user: ids inside the container's user namespace */
	gid_t gid;
	bool terminal;         /* process.terminal: a pty, its master to --console-socket */
	unsigned short rows;   /* process.consoleSize (0: not given) */
	unsigned short cols;
};

struct oci_spec;

/* config.json's hooks (spec_hooks.c), one list per kind, in the lifecycle's order. */
enum oci_hook_kind {
	OCI_HOOK_PRESTART,	   /* deprecated in 1.2; run as createRuntime, before it */
	OCI_HOOK_CREATE_RUNTIME,   /* create: on the host, after the sandbox exists */
	OCI_HOOK_CREATE_CONTAINER, /* create: inside the container (docs/oci.md) */
	OCI_HOOK_START_CONTAINER,  /* start: inside, before the process */
	OCI_HOOK_POSTSTART,	   /* start: on the host, after the process started */
	OCI_HOOK_POSTSTOP,	   /* delete: on the host, once the container is gone */
	OCI_HOOK_KINDS
};
extern const char *const oci_hook_names[OCI_HOOK_KINDS];

struct oci_hook {
	char *path;	  /* absolute */
	char **args;	  /* NULL-ended, argv (args[0] is argv[0]); NULL: none given */
	char **env;	  /* NULL-ended KEY=VALUE; NULL: none given */
	unsigned timeout; /* seconds; 0: none given (no limit) */
};
struct oci_hook_list {
	struct oci_hook *v;
	size_t n;
};
/* The config's hooks of kind k (n 0: none). */
const struct oci_hook_list *oci_spec_hooks(const struct oci_spec *s, enum oci_hook_kind k);
/* {"poststop": [...]} as the config has it (malloc'd; NULL: out of memory), for delete. */
char *oci_spec_poststop_json(const struct oci_spec *s);
/* A "hooks" object's text (what oci_spec_poststop_json() wrote) into ret (zeroed first); errors
 * as oci_spec_load()'s. */
int oci_hooks_parse_text(const char *text, struct oci_hook_list ret[OCI_HOOK_KINDS],
			 struct cordon_error *err);
void oci_hooks_free(struct oci_hook_list l[OCI_HOOK_KINDS]);

/* One line for the runtime's log (--log), no newline: what was clamped or ignored. */
typedef void (*oci_log_fn)(void *userdata, const char *line);

/* Read bundle/config.json (bundle: a directory). Malformed JSON, a wrong type, an unknown
 * ociVersion major: -EINVAL (or -errno), err->msg naming the field ("process.args: not an
 * array of strings"). */
int oci_spec_load(const char *bundle, struct oci_spec **ret, struct cordon_error *err);
void oci_spec_free(struct oci_spec *s);

/* The absolute bundle directory and root.path made absolute against it. */
const char *oci_spec_bundle(const struct oci_spec *s);
const char *oci_spec_rootfs(const struct oci_spec *s);
/* config.json's process (never NULL once loaded: a config without one is refused). */
const struct oci_process *oci_spec_process(const struct oci_spec *s);
/* The annotations, in the file's order; *ret_keys and *ret_values have n entries. */
size_t oci_spec_annotations(const struct oci_spec *s, const char *const **ret_keys,
			    const char *const **ret_values);
/* The value of one annotation, or NULL. */
const char *oci_spec_annotation(const struct oci_spec *s, const char *key);

/* The floor (floor.c): fill c (from cordon_config_new()) with the container's sandbox, without
 * its command: root, mounts, ids, hostname, namespaces, limits, seccomp, masks, annotations.
 * A field asking for less isolation than cordon's floor fails: -EPERM, err->msg naming the
 * field and why ("linux.namespaces: pid: the host's pid namespace: refused"); what is clamped or
 * ignored is said through log (may be NULL). */
int oci_spec_config(const struct oci_spec *s, struct cordon_config *c, oci_log_fn log,
		    void *userdata, struct cordon_error *err);

/* The same, for a container whose config binds no read-write directory: cordon's sandbox always
 * has one (its workdir), so scratch_dir, an empty directory the lifecycle made for this
 * container, is it, at OCI_SCRATCH_TARGET inside. It must pass cordon_config_set_workdir()'s
 * rules: not /run or /var (but below /var/tmp), not /tmp itself, not a home directory; e.g.
 * /var/tmp/cordon-runtime/ID (remove it at delete). A config's first read-write directory bind
 * is the workdir instead (scratch_dir unused); a second is refused. oci_spec_config() is this
 * with scratch_dir NULL: a config without a read-write directory bind is then refused. */
#define OCI_SCRATCH_TARGET "/.cordon-scratch"
int oci_spec_config_scratch(const struct oci_spec *s, const char *scratch_dir,
			    struct cordon_config *c, oci_log_fn log, void *userdata,
			    struct cordon_error *err);

/* exec's --process FILE (one runtime-spec "process" object), checked against the container's
 * floor as config.json's process is: the same errors as oci_spec_load(). */
int oci_process_load(const char *path, const struct oci_spec *container,
		     struct oci_process **ret, struct cordon_error *err);
void oci_process_free(struct oci_process *p);

/* `cordon-runtime spec`: a minimal config.json for a rootfs "rootfs" beside it, as runc spec
 * writes, that cordon's floor accepts (rootless: for an unprivileged caller). malloc'd. */
char *oci_spec_example(bool rootless);
