/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * runtime.h - what cordon-runtime's commands share: the global options, the one error line and
 * the log (main.c), the state directory (state.c), the holder's control protocol (ctl.c), the
 * console (console.c) and the holder (holder.c). Runs in cordon-runtime: the command's process,
 * and the holder H it forks (README "Under an engine").
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon.h"
#include "spec.h"

struct oci_spec;
struct oci_process;

/* --- main.c: global options, errors, log --- */
struct oci_globals {
	const char *root;     /* --root, or the default (oci_root_default) */
	const char *log_path; /* --log */
	bool log_json;	      /* --log-format json */
	bool debug;	      /* --debug */
	int log_fd;	      /* --log opened (O_APPEND), or -1 */
	int err_fd;	      /* where the one error line goes: stderr, or -1 (a holder) */
};

extern struct oci_globals oci_g;

/* Exit statuses of the commands: bad input and refusals before anything starts (125, as every
 * cordon front end); a container that is not there, or not in a state for the command (1, as
 * runc, which the engines read as "failed"). */
#define OCI_EXIT_BAD  CORDON_EXIT_FAILURE
#define OCI_EXIT_FAIL 1

/* Print "cordon-runtime: <what>: <why>" on err_fd and in the log (level error); returns code. */
int oci_error(int code, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same from a filled cordon_error (step: its step, else what). */
int oci_error_from(int code, const char *what, const struct cordon_error *err);
/* One line in the log only (level "info", "warning" or "debug": debug lines need --debug). */
void oci_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* oci_spec_config()'s and cordon's notices, into the log at level warning. */
void oci_log_line(void *userdata, const char *line);

/* --- state.c: --root, container ids, a container's state directory --- */
enum oci_status {
	OCI_CREATED = 0,
	OCI_RUNNING,
	OCI_PAUSED,
	OCI_STOPPED,
};
const char *oci_status_name(enum oci_status s);

/* A container's state as state.json holds it (written by its holder only). */
struct oci_state {
	char *id;
	enum oci_status status;
	pid_t pid; /* the holder's; 0 once stopped */
	/* the holder's start time (/proc/PID/stat field 22): who pid is, checked by readers */
	unsigned long long start;
	/* the container's pid 1 as the host sees it (its session's cordon-init), and its start
	 * time: what `state` and hooks call the container's pid (0: not known yet) */
	pid_t init;
	unsigned long long init_start;
	char *bundle;
	char *rootfs;
	char *created;	 /* RFC 3339 with nanoseconds, UTC */
	char **ann_keys; /* annotations, in the config's order */
	char **ann_values;
	size_t n_ann;
};
void oci_state_clear(struct oci_state *st);

/* [A-Za-z0-9_.-]+, not "." or "..", at most 255 bytes; else -EINVAL and err says why. */
int oci_id_check(const char *id, struct cordon_error *err);
/* The default --root: /run/cordon-runtime for root of the initial user namespace, else
 * $XDG_RUNTIME_DIR/cordon-runtime. malloc'd, or NULL with err filled. */
char *oci_root_default(struct cordon_error *err);
/* Open --root as a directory fd (made 0700 when missing and make is true). Refused: a symlink,
 * not a directory, group- or world-writable, or not the caller's (root may open any owner's
 * when foreign_ok: state, list, ps, kill, delete; never exec, which hands the holder its stdio). */
int oci_root_open(const char *root, bool make, bool foreign_ok, struct cordon_error *err);
/* The container's directory under root: -ENOENT (err: "container ID does not exist"). */
int oci_dir_open(int rootfd, const char *id, struct cordon_error *err);
/* 1: its holder is alive (it holds the directory's lock), 0: it is not. */
int oci_holder_alive(int dirfd);
/* Read state.json; a dead holder's container is stopped (pid 0), whatever the file says. A live
 * one's pid must be its holder's: the process of that pid started when state.json says and is
 * the directory owner's; else -ESRCH (a recycled or forged pid: refused). The directory and
 * state.json: the --root owner's, not group- or world-writable (else -EPERM). */
int oci_state_read(int dirfd, struct oci_state *st, struct cordon_error *err);
/* A pidfd of st's holder, taken and then checked to be it (start time, owner): signals sent
 * through it never reach a process that took a recycled pid; -ESRCH when it is not there. */
int oci_holder_pidfd(int dirfd, const struct oci_state *st, struct cordon_error *err);
/* The start time of pid (field 22 of /proc/PID/stat, clock ticks after boot), or -errno. */
int oci_proc_start(pid_t pid, unsigned long long *ret);
/* The parent of pid (/proc/PID/stat field 4): 0, or -errno. */
int oci_proc_ppid(pid_t pid, pid_t *ret);
/* Write state.json atomically (a temporary file renamed over it). */
int oci_state_write(int dirfd, const struct oci_state *st, struct cordon_error *err);
/* state.json's text (the runtime-spec's state plus runc's owner), malloc'd. */
char *oci_state_json(const struct oci_state *st);
/* The poststop hooks create saved for delete (hooks.c reads it) */
#define OCI_HOOKS_FILE "hooks.json"
/* Remove the container's directory (its known files, then itself). */
int oci_dir_remove(int rootfd, const char *id, struct cordon_error *err);
/* Write path (the engine's --pid-file) atomically: "PID" in a temporary file of a random name,
 * made O_EXCL in the same directory (by its fd), renamed over it. */
int oci_pid_file_write(const char *path, pid_t pid, struct cordon_error *err);
/* "2026-12-07T05:40:12.123456789Z" */
void oci_now_rfc3339(char buf[40]);

/* --- scratch.c: the workdir of a container whose config binds no read-write directory --- */
/* A fresh empty directory (malloc'd path): /var/tmp/cordon-runtime-UID-RANDOM. */
int oci_scratch_make(char **ret, struct cordon_error *err);
/* Name it in the container's directory, for delete. */
int oci_scratch_note(int dirfd, const char *path, struct cordon_error *err);
/* Remove it (only a directory oci_scratch_make() could have made), and the one noted. */
void oci_scratch_remove(const char *path);
void oci_scratch_remove_noted(int dirfd);

/* --- hooks.c: config.json's hooks run (docs/oci.md "hooks") --- */
/* Run l's hooks (of kind k) one after the other, state_json on their stdin, their output into
 * the log: on the host (inside NULL; cwd bundle, exactly their env, as the caller), or as
 * processes of the session inside (path resolved in the container's root, argv[0] the path).
 * The first to fail (status not 0, a signal, its timeout: killed) ends it: -errno, err->step
 * its JSON path ("hooks.createRuntime[0]"), err->msg "PATH: exited with status 1". */
int oci_hooks_run(const struct oci_hook_list *l, enum oci_hook_kind k,
		  struct cordon_session *inside, const char *state_json, const char *bundle,
		  struct cordon_error *err);
/* The same on the host for poststart and poststop: every hook run, a failure a warning in the
 * log ("..., ignoring"). */
void oci_hooks_run_warn(const struct oci_hook_list *l, enum oci_hook_kind k, const char *state_json,
			const char *bundle);
/* delete: the poststop hooks create saved in dirfd (the container gone, its state stopped), run
 * as oci_hooks_run_warn() does. Only a file of our own uid is run: root deleting a user's
 * container (Slurm) runs none of the user's hooks (a warning says so). */
void oci_hooks_poststop(int dirfd, const char *id);

/* --- ctl.c: the holder's control socket (SOCK_SEQPACKET, frames of src/base/frame.h) --- */
enum oci_msg {
	OCI_MSG_START = 1, /* -> OK | ERROR */
	OCI_MSG_KILL,	   /* struct oci_kill -> OK | ERROR */
	OCI_MSG_PAUSE,	   /* -> OK | ERROR */
	OCI_MSG_RESUME,	   /* -> OK | ERROR */
	OCI_MSG_EXEC,	/* oci_exec_pack() + 3 fds -> OK (int32 pid inside) | ERROR, later EXIT */
	OCI_MSG_PS,	/* -> PIDS */
	OCI_MSG_SIGNAL, /* int32 sig: to the exec'd process (from exec's proxy) */
	OCI_MSG_OK = 100,
	OCI_MSG_ERROR, /* struct cordon_error */
	OCI_MSG_EXIT,  /* int32 wait status of the exec'd process */
	OCI_MSG_PIDS,  /* int32[] host pids */
};

struct oci_kill {
	int32_t sig;
	int32_t all;
};

/* The most bytes of one message (an exec's args, env and cwd). */
#define OCI_MSG_MAX   (192 * 1024)
#define OCI_SOCK_NAME "sock"

/* Connect to the holder of dirfd's container: -ECONNREFUSED/-ENOENT when it is gone. */
int oci_ctl_connect(int dirfd, struct cordon_error *err);
/* A bound on each send and answer on sock (SO_SNDTIMEO, SO_RCVTIMEO): a holder that accepts and
 * never answers (another user's, for root) cannot hold the caller for ever. */
#define OCI_CTL_WAIT_S 10
void oci_ctl_bound(int sock, unsigned seconds);
/* Send one request (payload, fds) and read the reply: OK (its payload in ret/ret_len, may be
 * NULL), or ERROR (-EIO, err filled from the holder's error). */
int oci_ctl_call(int sock, uint32_t type, const void *payload, size_t len, const int *fds,
		 unsigned n_fd, void *ret, size_t ret_size, size_t *ret_len,
		 struct cordon_error *err);
/* An exec request: flags (OCI_EXEC_TTY: the 3 fds are the socket connected to the engine's
 * --console-socket, over which the holder sends the pty's master), the terminal's size (rows x
 * cols: --process's consoleSize; 0: not given), argv, env, cwd -> one buffer (malloc'd), and
 * back (pointers into buf, which must stay; NULL-ended vectors malloc'd). */
#define OCI_EXEC_TTY 0x1u
char *oci_exec_pack(unsigned flags, unsigned short rows, unsigned short cols, char *const *argv,
		    char *const *env, const char *cwd, size_t *ret_len);
int oci_exec_unpack(char *buf, size_t len, unsigned *ret_flags, unsigned short *ret_rows,
		    unsigned short *ret_cols, char ***ret_argv, char ***ret_env,
		    const char **ret_cwd);

/* --- console.c: a terminal for a process, its master sent to the engine --- */
/* Connect to the engine's --console-socket (NULL: refused, a terminal needs one). */
int oci_console_connect(const char *socket_path, struct cordon_error *err);
/* Open a pty of the container's own /dev/pts (through pid 1's root: pidfd and its pid1), as
 * the container's uid and gid (ids inside: the slave is theirs, as `ls -l $(tty)` shows; the
 * caller's own ids where the container's user namespace cannot be joined), rows x cols when not
 * 0; send its master over sock (one message, SCM_RIGHTS, payload the pty's name, as runc does),
 * and return the slave side: tty(1) inside then names it. */
int oci_console_send(int sock, int pidfd, pid_t pid1, uid_t uid, gid_t gid, unsigned short rows,
		     unsigned short cols, struct cordon_error *err);
/* A unix socket path usable at any length: "/proc/self/fd/N/NAME" through an O_PATH fd of its
 * directory when the path is longer than sun_path takes; *ret_dirfd to close after use. */
int oci_unix_path(const char *path, char *buf, size_t size, int *ret_dirfd,
		  struct cordon_error *err);

/* --- holder.c: the holder H, the container's life --- */
struct oci_holder_args {
	const char *id;
	int rootfd;
	int dirfd;
	const struct oci_spec *spec;
	struct cordon_config *config;
	int tty;	      /* run on a terminal: that one (process.terminal), or -1 */
	int console;	      /* connected to --console-socket (process.terminal), or -1 */
	int ready_fd;	      /* create's pipe: one struct cordon_error (code 0: ready); -1: run */
	bool start_now;	      /* run: start the process at once */
	const char *pid_file; /* run: written by the holder itself (create writes its own) */
	bool remove_on_failure; /* run: nobody else removes the directory when setup fails */
};
/* Never returns: exits as the container's process did (its status, or its signal raised). */
_Noreturn void oci_holder_main(struct oci_holder_args *a);

/* Exit as a wait status says: the status, or the signal raised on ourselves (SIG_DFL, no core
 * dump), so that our parent's waitpid() sees exactly what the process's did. */
_Noreturn void oci_exit_as(int status);

/* --- the commands (cmd_*.c): argc/argv after the command's name; the exit status --- */
int oci_cmd_create(int argc, char **argv);
int oci_cmd_run(int argc, char **argv);
int oci_cmd_start(int argc, char **argv);
int oci_cmd_state(int argc, char **argv);
int oci_cmd_list(int argc, char **argv);
int oci_cmd_ps(int argc, char **argv);
int oci_cmd_kill(int argc, char **argv);
int oci_cmd_delete(int argc, char **argv);
int oci_cmd_pause(int argc, char **argv);
int oci_cmd_resume(int argc, char **argv);
int oci_cmd_exec(int argc, char **argv);
int oci_cmd_features(int argc, char **argv);
int oci_cmd_spec(int argc, char **argv);

/* start, kill, pause, resume (cmd_create.c): one request to the container's holder; gone_ok:
 * a holder gone is no error (kill of a stopped container). */
int oci_ctl_simple(const char *cmd, const char *id, uint32_t type, const void *payload, size_t len,
		   bool gone_ok);

/* A signal by number ("9"), name ("KILL") or SIG name ("SIGKILL"): its number, or -EINVAL. */
int oci_signal_parse(const char *s);

/* Options of a command, table-driven (main.c): long name, short letter (0: none), takes a
 * value; the parsed values in the same order (flags: "1" when given). Operands are left in
 * *ret_args. --opt=val and --opt val both work; "--" ends the options. */
struct oci_opt {
	const char *name;
	char letter;
	bool value;
};
int oci_opts_parse(const char *cmd, const struct oci_opt *opts, size_t n, int argc, char **argv,
		   const char **ret_values, int *ret_argc, char ***ret_argv, bool stop_at_operand);
/* The one container id operand of a command: checked; NULL after printing the error. */
const char *oci_one_id(const char *cmd, int argc, char **argv);
