/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * execlog.c - one exec event per execve/execveat in the sandbox. The call is stopped by the
 * filter (SECCOMP_RET_USER_NOTIF); the supervisor reads the path, argv and cwd through
 * /proc/PID/mem, checks the notification is still alive (so the pid was not reused), writes the
 * event and answers CONTINUE: the kernel then runs the call as asked. What a racing thread
 * writes into that memory after it was read is not what was logged: the log records what was
 * asked at the time of the check (docs/audit.md). The result is cordon's prediction: the path
 * resolved in the sandbox's root, present and executable, or the errno the kernel would give.
 * The events have a budget (execlog.h): past it an event is neither read nor written, only
 * counted, and the call continues all the same, so the sandbox never waits on the log.
 */
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "execlog.h"

#define MAX_ARGS       1024
#define MAX_ARGV_BYTES 65536 /* all arguments together, per event */
#define MAX_PATH_BYTES 4096
#define MIN_EVENT      190 /* bytes: its fixed keys alone; less room is none */

struct exec_req {
	pid_t pid;                /* host pid */
	bool at;                  /* execveat */
	uint64_t path_addr, argv_addr;
	int dirfd;                /* execveat: its dirfd (a number in the process) */
	int flags;
};

struct strbuf {
	char *s;
	size_t n;
};

/* A NUL-terminated string from the process's memory, at most max bytes. */
static int read_string(int mem, uint64_t addr, size_t max, struct strbuf *out, bool *truncated)
{
	char chunk[4096];
	size_t n = 0, cap = 0;
	char *s = NULL;

	while (n < max) {
		size_t want = sizeof(chunk) - ((addr + n) % sizeof(chunk)); /* stay in one page */
		ssize_t got = pread(mem, chunk, want, (off_t)(addr + n));
		char *nul;

		if (got <= 0)
			break;
		nul = memchr(chunk, '\0', (size_t)got);
		if (nul)
			got = nul - chunk;
		if (n + (size_t)got > max)
			got = (ssize_t)(max - n), *truncated = true;
		if (n + (size_t)got + 1 > cap) {
			char *v = realloc(s, cap = n + (size_t)got + 1);

			if (!v)
				return free(s), -ENOMEM;
			s = v;
		}
		memcpy(s + n, chunk, (size_t)got);
		n += (size_t)got;
		if (nul)
			break;
	}
	if (n == max)
		*truncated = true;
	if (s)
		s[n] = '\0';
	out->s = s ? s : strdup("");
	out->n = n;
	return out->s ? 0 : -ENOMEM;
}

static void put_string(struct cd_json *j, const struct strbuf *b, bool *lossy)
{
	cd_audit_string(j, b->s, b->n, lossy);
}

/* argv: pointers, then strings, MAX_ARGV_BYTES in all; returns how many were read */
static size_t read_argv(int mem, uint64_t addr, struct strbuf *args, bool *truncated)
{
	size_t n = 0, total = 0;

	for (; addr && n < MAX_ARGS; n++) {
		uint64_t p;

		if (pread(mem, &p, sizeof(p), (off_t)(addr + 8 * n)) != (ssize_t)sizeof(p) || !p)
			return n;
		if (total == MAX_ARGV_BYTES ||
		    read_string(mem, p, MAX_ARGV_BYTES - total, &args[n], truncated) < 0) {
			*truncated = true;
			return n;
		}
		total += args[n].n;
	}
	if (n == MAX_ARGS)
		*truncated = true;
	return n;
}

static int read_link(pid_t pid, const char *what, char *buf, size_t size)
{
	char p[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	n = readlink(p, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* "NSpid:\t<host> ... <inside>" and "PPid:\t<host>" */
static void inside_pids(pid_t pid, long *ret_pid, pid_t *ret_hostppid)
{
	char p[64], line[256];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	f = fopen(p, "re");
	*ret_pid = -1;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *last = strrchr(line, '\t') ? strrchr(line, '\t') : line + 6;

			*ret_pid = strtol(last, NULL, 10);
		} else if (strncmp(line, "PPid:", 5) == 0) {
			*ret_hostppid = (pid_t)strtol(line + 5, NULL, 10);
		}
	}
	if (f)
		fclose(f);
}

/* The path resolved as the process would, inside its root: the kernel's likely answer. */
static const char *predict(pid_t pid, const struct exec_req *r, const char *path)
{
	char base[64];
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	struct stat st;
	_cleanup_close_ int dir = -1, fd = -1;

	if (path[0] == '/')
		snprintf(base, sizeof(base), "/proc/%d/root", pid);
	else if (r->at && r->dirfd != AT_FDCWD)
		snprintf(base, sizeof(base), "/proc/%d/fd/%d", pid, r->dirfd);
	else
		snprintf(base, sizeof(base), "/proc/%d/cwd", pid);
	dir = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return "unknown";
	if (path[0] == '\0')
		return r->at && (r->flags & AT_EMPTY_PATH) ? "ok" : "ENOENT";
	fd = (int)syscall(SYS_openat2, dir, path[0] == '/' ? path + 1 : path, &how, sizeof(how));
	if (fd < 0)
		return errno == ENOENT ? "ENOENT" : errno == ENOTDIR ? "ENOTDIR" :
		       errno == EACCES ? "EACCES" : errno == ELOOP ? "ELOOP" : "unknown";
	if (fstat(fd, &st) < 0)
		return "unknown";
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111))
		return "EACCES";
	return "ok";
}

static int copy_string(const char *s, size_t max, struct strbuf *out, bool *truncated)
{
	out->n = strnlen(s, max);
	if (out->n == max && s[max] != '\0')
		*truncated = true;
	out->s = strndup(s, out->n);
	return out->s ? 0 : -ENOMEM;
}

/* path and argv from the process's memory, or (mem < 0) from what cordon asked; the same caps */
static size_t gather(int mem, const struct exec_req *r, const struct cd_execlog_first *first,
		     struct strbuf *path, struct strbuf *args, bool *truncated)
{
	size_t n = 0, total = 0;

	if (mem >= 0) {
		read_string(mem, r->path_addr, MAX_PATH_BYTES, path, truncated);
		return read_argv(mem, r->argv_addr, args, truncated);
	}
	copy_string(first->path, sizeof(first->path) - 1, path, truncated);
	for (; first->argv[n] && n < MAX_ARGS; n++) {
		if (total == MAX_ARGV_BYTES ||
		    copy_string(first->argv[n], MAX_ARGV_BYTES - total, &args[n], truncated) < 0) {
			*truncated = true;
			break;
		}
		total += args[n].n;
	}
	if (n == MAX_ARGS && first->argv[n])
		*truncated = true;
	return n;
}

/* The exec event in j, up to its closing brace. */
static void render(struct cd_json *j, const struct cd_audit *a, const struct exec_req *r, int mem,
		   const struct cd_execlog_first *first)
{
	struct strbuf path = { 0 }, args[MAX_ARGS] = { { 0 } };
	bool truncated = false, lossy = false;
	char cwd[4096] = "";
	pid_t hostppid = 0;
	long ipid, ippid = -1;
	size_t n;

	n = gather(mem, r, first, &path, args, &truncated);
	read_link(r->pid, "cwd", cwd, sizeof(cwd));
	inside_pids(r->pid, &ipid, &hostppid);
	if (hostppid > 0) {
		pid_t ignored;

		inside_pids(hostppid, &ippid, &ignored);
	}
	cd_audit_begin(a, j, "exec");
	cd_json_key(j, "pid");
	cd_json_int(j, ipid);
	cd_json_key(j, "ppid");
	cd_json_int(j, ippid);
	cd_json_kv_string(j, "syscall", r->at ? "execveat" : "execve");
	cd_json_key(j, "path");
	put_string(j, &path, &lossy);
	cd_json_key(j, "argv");
	cd_json_array_begin(j);
	for (size_t i = 0; i < n; i++)
		put_string(j, &args[i], &lossy);
	cd_json_array_end(j);
	cd_json_key(j, "cwd");
	cd_audit_string(j, cwd, strlen(cwd), &lossy);
	cd_json_kv_string(j, "result", predict(r->pid, r, path.s ? path.s : ""));
	cd_json_kv_bool(j, "truncated", truncated);
	if (lossy) { /* the exact bytes, where some are not UTF-8 */
		cd_json_key(j, "path_hex");
		cd_audit_hex(j, path.s, path.n);
		cd_json_key(j, "argv_hex");
		cd_json_array_begin(j);
		for (size_t i = 0; i < n; i++)
			cd_audit_hex(j, args[i].s, args[i].n);
		cd_json_array_end(j);
	}
	free(path.s);
	for (size_t i = 0; i < n; i++)
		free(args[i].s);
}

/* Bytes the budget lets through now: the bucket (GCRA: it is full again at tat_ns, and holds
 * CD_EXECLOG_BURST, refilled at CD_EXECLOG_RATE a second), and what is left of the total. */
static uint64_t bucket_room(const struct cd_execlog *el, uint64_t now)
{
	const uint64_t tau = CD_EXECLOG_BURST * NSEC_PER_SEC / CD_EXECLOG_RATE;
	uint64_t busy = el->tat_ns > now ? el->tat_ns - now : 0;

	return busy >= tau ? 0 : (tau - busy) * CD_EXECLOG_RATE / NSEC_PER_SEC;
}

static uint64_t total_room(const struct cd_execlog *el)
{
	return CD_EXECLOG_TOTAL - el->written;
}

static void take(struct cd_execlog *el, uint64_t now, uint64_t bytes)
{
	el->tat_ns = (el->tat_ns > now ? el->tat_ns : now) + bytes * NSEC_PER_SEC / CD_EXECLOG_RATE;
	el->written += bytes;
}

/* An event not written: counted; the first of a run of drops says so in the log. */
static void drop(struct cd_execlog *el, const struct cd_audit *a, uint64_t now)
{
	bool total = total_room(el) <= bucket_room(el, now);
	bool starts = !el->last_drop_ns ||
		      now - el->last_drop_ns >= CD_EXECLOG_QUIET_MS * NSEC_PER_MSEC;
	struct cd_json j;

	el->dropped++;
	el->last_drop_ns = now;
	if (!starts || (total && el->said_total))
		return;
	el->said_total = el->said_total || total;
	cd_audit_begin(a, &j, "limit");
	cd_json_kv_string(&j, "limit", "exec-log");
	cd_json_kv_string(&j, "reason", total ? "total" : "rate");
	cd_json_kv_uint(&j, "rate", CD_EXECLOG_RATE);
	cd_json_kv_uint(&j, "burst", CD_EXECLOG_BURST);
	cd_json_kv_uint(&j, "total", CD_EXECLOG_TOTAL);
	cd_json_kv_string(&j, "action", "exec events over the budget are not written (the calls "
			  "still run); the exit event counts them");
	cd_audit_end(a, &j);
}

/* The event, within the budget: not even read when there is no room. */
static void log_exec(struct cd_execlog *el, const struct cd_audit *a, const struct exec_req *r,
		     int mem)
{
	uint64_t now = cd_now_ns(), room = bucket_room(el, now);
	struct cd_json j;

	if (total_room(el) < room)
		room = total_room(el);
	if (room < MIN_EVENT) {
		drop(el, a, now);
		return;
	}
	render(&j, a, r, mem, &el->first);
	if (j.len + 2 > room) { /* with "}\n" */
		cd_json_done(&j);
		drop(el, a, now);
		return;
	}
	take(el, now, j.len + 2);
	cd_audit_end(a, &j);
}

static void handle_one(int listener, const struct cd_audit *a, struct cd_execlog *el,
		       struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	struct cd_execlog_first *first = &el->first;
	/* the thread's id as the supervisor sees it (the host's pid namespace) */
	struct exec_req r = { .pid = (pid_t)req->pid };
	char p[64];
	_cleanup_close_ int mem = -1;

	r.at = req->data.nr == __NR_execveat;
	r.path_addr = req->data.args[r.at ? 1 : 0];
	r.argv_addr = req->data.args[r.at ? 2 : 1];
	r.dirfd = (int)req->data.args[0];
	r.flags = (int)req->data.args[4];
	snprintf(p, sizeof(p), "/proc/%d/mem", r.pid);
	mem = r.pid > 0 ? open(p, O_RDONLY | O_CLOEXEC) : -1;
	/* the pid is the notifying thread's only while the notification is alive */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0) {
		if (mem >= 0 || (first->known && !first->used))
			log_exec(el, a, &r, mem);
		first->used = true; /* the command's exec is always the first notification */
	}
	*resp = (struct seccomp_notif_resp){ .id = req->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
	ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

void cd_execlog_handle(int listener, const struct cd_audit *a, struct cd_execlog *el)
{
	static struct seccomp_notif_sizes sizes;
	_cleanup_free_ struct seccomp_notif *req = NULL;
	_cleanup_free_ struct seccomp_notif_resp *resp = NULL;

	if (!sizes.seccomp_notif && syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		return;
	req = calloc(1, sizes.seccomp_notif);
	resp = calloc(1, sizes.seccomp_notif_resp);
	if (!req || !resp)
		return;
	/* one per call: the caller polls the listener (readable: a notification is pending) */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
		return; /* ENOENT: the caller died meanwhile */
	handle_one(listener, a, el, req, resp);
}
