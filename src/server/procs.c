/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* procs.c - processes of a sandbox: started with pipes (or a terminal), drained by a pump
 * thread each into a bounded log of ProcessEvent messages, so that a process nobody follows
 * never blocks on a full pipe; streams follow the log, which keeps only what a stream has still
 * to read, within a budget per process and per sandbox. Output from inside is untrusted: read
 * in bounded chunks, only ever base64-encoded. Every descriptor to the process is non-blocking:
 * no server thread waits on the sandbox for longer than a deadline. Runs in the server. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>

#include "connect.h"
#include "http.h"
#include "opts.h"
#include "procs.h"
#include "registry.h"
#include "util.h"

#define CHUNK (32 * 1024)

static void proc_free(struct srv_proc *p)
{
	for (uint64_t i = p->first; i < p->next; i++)
		free(p->ring[i % SRV_PROC_RING_EVENTS]);
	if (p->in_fd >= 0)
		close(p->in_fd);
	if (p->pty_fd >= 0)
		close(p->pty_fd);
	free(p->tag);
	json_object_put(p->config);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->in_lock);
	pthread_mutex_destroy(&p->write_lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}

void srv_proc_unref(struct srv_proc *p)
{
	bool last;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (last)
		proc_free(p);
}

static void proc_ref(struct srv_proc *p)
{
	pthread_mutex_lock(&p->lock);
	p->refs++;
	pthread_mutex_unlock(&p->lock);
}

/* read_ns of a stream waiting in srv_proc_next(): it has read everything, it is not stalled */
#define WAITING UINT64_MAX

/* Whether a stream that reads still has to read the oldest event (p->lock held): one that read
 * nothing for SRV_PROC_STALL_NS holds the process back no more, nor the server's memory. A
 * stream waiting for output is reading, however long the process was quiet (else a command
 * silent for 30 s lost its end event to its own stream). */
static bool oldest_unread(struct srv_proc *p)
{
	uint64_t now = cd_now_ns();

	for (int i = 0; i < SRV_PROC_MAX_SUBS; i++)
		if (p->subs[i] && *p->subs[i] <= p->first &&
		    (p->read_ns[i] == WAITING || now - p->read_ns[i] < SRV_PROC_STALL_NS))
			return true;
	return false;
}

/* p->bytes and the sandbox's count move together (p->lock held) */
static void count_bytes(struct srv_proc *p, size_t n, bool add)
{
	if (add)
		p->bytes += n;
	else
		p->bytes -= n;
	if (p->acct && add)
		__atomic_add_fetch(p->acct, n, __ATOMIC_RELAXED);
	else if (p->acct)
		__atomic_sub_fetch(p->acct, n, __ATOMIC_RELAXED);
}

static void drop_oldest(struct srv_proc *p)
{
	char **old = &p->ring[p->first % SRV_PROC_RING_EVENTS];

	count_bytes(p, strlen(*old), false);
	free(*old);
	*old = NULL;
	p->first++;
}

/* Once a stream has followed the process, an event every stream has read is needed by no one:
 * a stream that connects later starts from the tail (p->lock held). */
static void trim(struct srv_proc *p)
{
	while (p->followed && p->first < p->next && !oldest_unread(p))
		drop_oldest(p);
}

/* Room for len more bytes: an empty log always takes one event (so a process is never held
 * back by another's log), else within the log's own bounds and the sandbox's budget. */
static bool has_room(struct srv_proc *p, size_t len)
{
	if (p->next == p->first)
		return true;
	if (p->next - p->first >= SRV_PROC_RING_EVENTS || p->bytes + len > SRV_PROC_RING_BYTES)
		return false;
	return !p->acct ||
	       __atomic_load_n(p->acct, __ATOMIC_RELAXED) + len <= SRV_SANDBOX_LOG_BYTES;
}

static void wait_100ms(struct srv_proc *p)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 100 * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&p->cond, &p->lock, &ts);
}

/* Append one event (taken). Without room the oldest goes, once every stream has read it or
 * those that have not read nothing for SRV_PROC_STALL_NS (or the sandbox is dying); until then
 * the pump, and so the process, waits. */
static void push(struct srv_proc *p, char *ev)
{
	size_t len;

	if (!ev)
		return; /* out of memory: the event is lost, as a dropped one would be */
	len = strlen(ev);
	pthread_mutex_lock(&p->lock);
	trim(p);
	while (!has_room(p, len)) {
		if (oldest_unread(p) &&
		    !(p->sb && __atomic_load_n(&p->sb->dying, __ATOMIC_RELAXED))) {
			wait_100ms(p);
			trim(p);
			continue;
		}
		drop_oldest(p);
	}
	p->ring[p->next % SRV_PROC_RING_EVENTS] = ev;
	count_bytes(p, len, true);
	p->next++;
	trim(p);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* An event nobody would keep (streams followed the process and none reads any more: trim()
 * would drop it at once) is counted as dropped, not made: the server's time is not spent on it,
 * and a stream that reads again is told. */
static bool unwanted(struct srv_proc *p)
{
	bool skip;

	pthread_mutex_lock(&p->lock);
	trim(p);
	skip = p->followed && p->first == p->next && !oldest_unread(p);
	if (skip)
		p->first = ++p->next;
	pthread_mutex_unlock(&p->lock);
	return skip;
}

static void push_data(struct srv_proc *p, const char *stream, const char *buf, size_t n)
{
	char *b64 = NULL;

	if (unwanted(p))
		return;
	if (srv_b64_encode(buf, n, &b64, NULL) < 0)
		return;
	push(p, cd_strdup_printf("{\"data\":{\"%s\":\"%s\"}}", stream, b64));
	free(b64);
}

/* As Go's os.ProcessState says it, which envd sends: "exit status 1", "signal: killed". */
static void push_end(struct srv_proc *p, int status, bool known, const char *error)
{
	char st[64], sig[32];
	int code = -1;

	if (!known) {
		snprintf(st, sizeof(st), "unknown");
	} else if (WIFEXITED(status)) {
		code = WEXITSTATUS(status);
		snprintf(st, sizeof(st), "exit status %d", code);
	} else {
		snprintf(sig, sizeof(sig), "%s", strsignal(WTERMSIG(status)));
		sig[0] = (char)(sig[0] >= 'A' && sig[0] <= 'Z' ? sig[0] - 'A' + 'a' : sig[0]);
		snprintf(st, sizeof(st), "signal: %s", sig);
	}
	push(p,
	     cd_strdup_printf("{\"end\":{\"exitCode\":%d,\"exited\":%s,\"status\":\"%s\"%s%s%s}}",
			      code, known && WIFEXITED(status) ? "true" : "false", st,
			      error ? ",\"error\":\"" : "", error ? error : "", error ? "\"" : ""));
}

/* Read what is there; false at EOF or error (the fd is then closed). */
static bool drain(struct srv_proc *p, int *fd, const char *stream, char *buf)
{
	ssize_t n = read(*fd, buf, CHUNK);

	if (n > 0) {
		push_data(p, stream, buf, (size_t)n);
		return true;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	*fd = cd_safe_close(*fd); /* EOF, or EIO: a terminal whose last slave closed */
	return false;
}

/* Off the sandbox's list of running processes and its counts: before the end event is in the
 * log, so that a client told of the end (the event, or the stream's end) lists it no more. */
static void unlist(struct srv_proc *p)
{
	struct srv_sandbox *sb = p->sb;

	pthread_mutex_lock(&sb->lock);
	for (struct srv_proc **q = &sb->procs; *q; q = &(*q)->next_in_sb)
		if (*q == p) {
			*q = p->next_in_sb;
			pthread_mutex_lock(&p->lock);
			p->refs--; /* the list's (never the last: the pump holds one) */
			pthread_mutex_unlock(&p->lock);
			break;
		}
	sb->n_procs--;
	sb->n_ptys -= p->pty;
	pthread_mutex_unlock(&sb->lock);
}

/* The pump's end, once off the list and its end event in the log: the handle freed, the
 * streams woken, the terminal closed (a stream may hold p for longer: the host's pty is not
 * kept for it), the log no longer counted against the sandbox, references dropped. */
static void pump_done(struct srv_proc *p)
{
	struct srv_sandbox *sb = p->sb;

	pthread_mutex_lock(&p->lock);
	cordon_process_free(p->p);
	p->p = NULL;
	p->ended = true;
	if (p->acct)
		__atomic_sub_fetch(p->acct, p->bytes, __ATOMIC_RELAXED);
	p->acct = NULL;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (p->out_fd >= 0)
		close(p->out_fd);
	if (p->err_fd >= 0)
		close(p->err_fd);
	pthread_mutex_lock(&p->in_lock);
	p->pty_fd = cd_safe_close(p->pty_fd);
	pthread_mutex_unlock(&p->in_lock);
	p->sb = NULL;
	srv_sandbox_unref(sb);
	srv_proc_unref(p);
}

static void *pump(void *arg)
{
	struct srv_proc *p = arg;
	struct srv_sandbox *sb = p->sb;
	char *buf = malloc(CHUNK);
	int status = 0, w;
	bool exited = false, known = false, dying = false;
	uint64_t grace_end = 0;

	while (buf && !dying) {
		struct pollfd f[4] = {
		    {.fd = p->out_fd, .events = POLLIN},
		    {.fd = p->err_fd, .events = POLLIN},
		    {.fd = exited ? -1 : cordon_process_fd(p->p), .events = POLLIN},
		    {.fd = sb->dying_fd, .events = POLLIN},
		};
		int n;

		int wait_ms = exited ? 20 : -1;

		if (exited && ((p->out_fd < 0 && p->err_fd < 0) || cd_now_ns() >= grace_end))
			break;
		if (!exited && p->kill_at_ns) { /* its time is up even when nobody follows it */
			uint64_t now = cd_now_ns();

			if (now >= p->kill_at_ns) {
				cordon_process_signal(p->p, SIGKILL, 1, NULL);
				p->kill_at_ns = 0;
			} else {
				wait_ms = (int)((p->kill_at_ns - now) / NSEC_PER_MSEC) + 1;
			}
		}
		n = poll(f, 4, wait_ms);
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0 && exited)
			break; /* quiet since the end: what a background child still writes is not
				  its */
		if (f[3].revents)
			dying = true;
		if (f[0].revents)
			drain(p, &p->out_fd, p->pty_fd >= 0 ? "pty" : "stdout", buf);
		if (f[1].revents)
			drain(p, &p->err_fd, "stderr", buf);
		if (f[2].revents && !exited) {
			w = cordon_process_wait(p->p, 0, &status, NULL);
			if (w != 0) {
				exited = true;
				known = w == 1;
				grace_end = cd_now_ns() + NSEC_PER_SEC;
			}
		}
	}
	free(buf);
	unlist(p);
	push_end(p, status, known,
		 dying	  ? "the sandbox was killed"
		 : exited ? NULL
			  : "the server lost the process");
	pump_done(p);
	return NULL;
}

static int open_pty(int rows, int cols, int *ret_master, int *ret_slave, struct cordon_error *err)
{
	struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
	_cleanup_close_ int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	int s;

	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
		return cd_fail_errno(err, errno, "pty", "posix_openpt");
	/* the server's side never blocks: a program that does not read its terminal fills it */
	if (fcntl(m, F_SETFL, O_RDWR | O_NONBLOCK) < 0)
		return cd_fail_errno(err, errno, "pty", "O_NONBLOCK");
	s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		return cd_fail_errno(err, errno, "pty", "open the terminal's slave side");
	ioctl(m, TIOCSWINSZ, &ws);
	*ret_master = CD_TAKE_FD(m);
	*ret_slave = s;
	return 0;
}

static struct srv_proc *proc_new(void)
{
	struct srv_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->in_lock, NULL);
	pthread_mutex_init(&p->write_lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->out_fd = p->err_fd = p->in_fd = p->pty_fd = -1;
	p->refs = 1;
	return p;
}

/* The pipes (or the terminal) of the command: ours in p, the command's in fd[]. */
static int make_fds(struct srv_proc *p, struct srv_proc_start *ps, int fd[3],
		    struct cordon_error *err)
{
	int in[2] = {-1, -1}, out[2], errp[2];

	if (p->pty) {
		int s = -1, r = open_pty(ps->pty_rows, ps->pty_cols, &p->pty_fd, &s, err);

		if (r < 0)
			return r;
		p->out_fd = fcntl(p->pty_fd, F_DUPFD_CLOEXEC, 3);
		if (p->out_fd < 0) {
			close(s);
			return cd_fail_errno(err, errno, "pty", "dup");
		}
		fd[0] = fd[1] = fd[2] = s;
		return 0;
	}
	if (pipe2(out, O_CLOEXEC) < 0)
		return cd_fail_errno(err, errno, "exec", "pipe");
	if (pipe2(errp, O_CLOEXEC) < 0) {
		close(out[0]);
		close(out[1]);
		return cd_fail_errno(err, errno, "exec", "pipe");
	}
	if (ps->want_stdin && pipe2(in, O_CLOEXEC) < 0) {
		close(out[0]), close(out[1]), close(errp[0]), close(errp[1]);
		return cd_fail_errno(err, errno, "exec", "pipe");
	}
	p->out_fd = out[0];
	p->err_fd = errp[0];
	p->in_fd = in[1];
	if (p->in_fd >= 0)
		fcntl(p->in_fd, F_SETFL, O_NONBLOCK);
	fd[0] = in[0];
	fd[1] = out[1];
	fd[2] = errp[1];
	return 0;
}

static void close_child_fds(int fd[3])
{
	if (fd[0] >= 0)
		close(fd[0]);
	if (fd[1] >= 0 && fd[1] != fd[0])
		close(fd[1]);
	if (fd[2] >= 0 && fd[2] != fd[0] && fd[2] != fd[1])
		close(fd[2]);
}

/* A place among the sandbox's followed processes (and terminals): 0, or -EAGAIN said in err. */
static int reserve(struct srv_sandbox *sb, bool pty, struct cordon_error *err)
{
	unsigned procs, ptys;
	bool ok;

	pthread_mutex_lock(&sb->lock);
	procs = sb->n_procs;
	ptys = sb->n_ptys;
	ok = procs < srv_opts.max_procs && (!pty || ptys < SRV_SANDBOX_MAX_PTYS);
	if (ok) {
		sb->n_procs++;
		sb->n_ptys += pty;
	}
	pthread_mutex_unlock(&sb->lock);
	if (ok)
		return 0;
	if (procs >= srv_opts.max_procs)
		return cd_fail(err, EAGAIN, "exec",
			       "%u processes run already (the most the server follows in one "
			       "sandbox)",
			       procs);
	return cd_fail(err, EAGAIN, "pty",
		       "%u terminals are open already (the most one sandbox may have)", ptys);
}

static void unreserve(struct srv_sandbox *sb, bool pty)
{
	pthread_mutex_lock(&sb->lock);
	sb->n_procs--;
	sb->n_ptys -= pty;
	pthread_mutex_unlock(&sb->lock);
}

/* The process itself, through the library: its descriptors made, the command's closed. */
static int exec_in(struct srv_sandbox *sb, struct srv_proc *p, struct srv_proc_start *ps,
		   struct cordon_error *err)
{
	struct cordon_exec e = {
	    .argv = ps->argv, .env = ps->env, .cwd = ps->cwd, .fd = {-1, -1, -1}};
	int r = make_fds(p, ps, e.fd, err);

	if (r >= 0) {
		e.flags = p->pty ? CORDON_EXEC_TTY : 0;
		r = cordon_session_exec(sb->session, &e, &p->p, err);
		close_child_fds(e.fd);
	}
	if (r < 0) {
		if (p->out_fd >= 0)
			close(p->out_fd);
		if (p->err_fd >= 0)
			close(p->err_fd);
	}
	return r;
}

int srv_proc_start(struct srv_sandbox *sb, struct srv_proc_start *ps, struct srv_proc **ret,
		   struct cordon_error *err)
{
	struct srv_proc *p = proc_new();
	pthread_attr_t attr;
	pthread_t t;
	int r;

	if (!p) {
		json_object_put(ps->config);
		return cd_fail(err, ENOMEM, "exec", "out of memory");
	}
	p->config = ps->config;
	p->kill_at_ns = ps->kill_at_ns;
	p->tag = ps->tag ? strdup(ps->tag) : NULL;
	p->pty = ps->pty_rows > 0;
	r = reserve(sb, p->pty, err);
	if (r < 0) {
		proc_free(p);
		return r;
	}
	r = exec_in(sb, p, ps, err);
	if (r < 0) {
		unreserve(sb, p->pty);
		proc_free(p);
		return r;
	}
	p->pid = (uint32_t)cordon_process_pid(p->p);
	p->acct = &sb->log_bytes;
	if (ps->cursor) { /* no other thread knows p yet */
		*ps->cursor = 0;
		p->subs[0] = ps->cursor;
		p->read_ns[0] = cd_now_ns();
		p->followed = true;
	}
	push(p, cd_strdup_printf("{\"start\":{\"pid\":%u}}", p->pid));
	srv_sandbox_ref(sb);
	p->sb = sb;
	p->refs = 3; /* the caller's, the pump's, the sandbox list's */
	pthread_mutex_lock(&sb->lock);
	p->next_in_sb = sb->procs;
	sb->procs = p;
	pthread_mutex_unlock(&sb->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	r = pthread_create(&t, &attr, pump, p);
	pthread_attr_destroy(&attr);
	if (r) { /* no pump: kill it, and act as the pump would have */
		cordon_process_signal(p->p, SIGKILL, 1, NULL);
		pump(p); /* drops the pump's and the list's references */
	}
	*ret = p;
	return 0;
}

struct srv_proc *srv_proc_find(struct srv_sandbox *sb, uint32_t pid, const char *tag)
{
	struct srv_proc *p;

	pthread_mutex_lock(&sb->lock);
	for (p = sb->procs; p; p = p->next_in_sb)
		if (tag ? p->tag && strcmp(p->tag, tag) == 0 : p->pid == pid)
			break;
	if (p)
		proc_ref(p);
	pthread_mutex_unlock(&sb->lock);
	return p;
}

int srv_proc_subscribe(struct srv_proc *p, uint64_t *cursor)
{
	int r = -EBUSY;

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < SRV_PROC_MAX_SUBS; i++)
		if (!p->subs[i]) {
			if (*cursor == SRV_PROC_TAIL)
				*cursor = p->next;
			p->subs[i] = cursor;
			p->read_ns[i] = cd_now_ns();
			p->followed = true;
			r = 0;
			break;
		}
	pthread_mutex_unlock(&p->lock);
	return r;
}

void srv_proc_unsubscribe(struct srv_proc *p, uint64_t *cursor)
{
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < SRV_PROC_MAX_SUBS; i++)
		if (p->subs[i] == cursor)
			p->subs[i] = NULL;
	trim(p);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* What a stream is told in place of the n events the log dropped before it read them. */
static char *lost_marker(struct srv_proc *p, uint64_t n)
{
	_cleanup_free_ char *text =
	    cd_strdup_printf("\n[cordon serve: %llu chunks of output dropped here: this stream "
			     "did not keep up]\n",
			     (unsigned long long)n);
	_cleanup_free_ char *b64 = NULL;

	if (!text || srv_b64_encode(text, strlen(text), &b64, NULL) < 0)
		return NULL;
	return cd_strdup_printf("{\"data\":{\"%s\":\"%s\"}}", p->pty ? "pty" : "stderr", b64);
}

/* The stream of cursor read (its stall clock starts again), or waits for output (it has none
 * while waiting) (p->lock held). */
static void mark_read(struct srv_proc *p, const uint64_t *cursor, uint64_t when)
{
	for (int i = 0; i < SRV_PROC_MAX_SUBS; i++)
		if (p->subs[i] == cursor)
			p->read_ns[i] = when;
}

static void read_now(struct srv_proc *p, const uint64_t *cursor)
{
	mark_read(p, cursor, cd_now_ns());
}

static void deadline_in(struct timespec *ts, int timeout_ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += timeout_ms / 1000;
	ts->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int srv_proc_next(struct srv_proc *p, uint64_t *cursor, char **ret, int timeout_ms)
{
	struct timespec ts;
	int r = 0;

	deadline_in(&ts, timeout_ms);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (*cursor < p->first) { /* dropped while the reader was behind */
			*ret = lost_marker(p, p->first - *cursor);
			*cursor = p->first;
			read_now(p, cursor);
			r = *ret ? 1 : -ENOMEM;
			break;
		}
		if (*cursor < p->next) {
			*ret = strdup(p->ring[*cursor % SRV_PROC_RING_EVENTS]);
			(*cursor)++;
			read_now(p, cursor);
			r = *ret ? 1 : -ENOMEM;
			trim(p);
			pthread_cond_broadcast(&p->cond); /* a pump may wait for this room */
			break;
		}
		if (p->ended) {
			r = -EPIPE;
			break;
		}
		mark_read(p, cursor, WAITING);
		r = pthread_cond_timedwait(&p->cond, &p->lock, &ts);
		read_now(p, cursor);
		if (r == ETIMEDOUT) {
			r = 0;
			break;
		}
		r = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

int srv_write_bounded(int fd, const void *buf, size_t len, int dying_fd, int conn_fd,
		      uint64_t stall_ns)
{
	const char *b = buf;
	uint64_t stall_end = cd_now_ns() + stall_ns;

	while (len > 0) {
		struct pollfd f[2] = {{.fd = fd, .events = POLLOUT},
				      {.fd = dying_fd, .events = POLLIN}};
		/* a socket: MSG_DONTWAIT, for its O_NONBLOCK is the sandbox's to clear when the
		 * agent holds the same open file; a pipe or a terminal: its flags are ours */
		ssize_t n = send(fd, b, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, b, len);

		if (n > 0) {
			b += n;
			len -= (size_t)n;
			stall_end = cd_now_ns() + stall_ns;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (cd_now_ns() >= stall_end)
			return -ETIMEDOUT;
		if (conn_fd >= 0 && srv_http_peer_gone(conn_fd))
			return -ECONNRESET;
		if (poll(f, 2, 200) < 0 && errno != EINTR)
			return -errno;
		if (f[1].revents)
			return -ECANCELED;
	}
	return 0;
}

/* A descriptor of ours to write the input to (closed by the caller): the process's own is
 * closed by a CloseStdin or the pump's end meanwhile, never under a write. */
static int input_fd(struct srv_proc *p, bool pty, struct cordon_error *err)
{
	int fd;

	pthread_mutex_lock(&p->in_lock);
	fd = pty ? p->pty_fd : p->in_fd;
	if (fd >= 0)
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	else
		errno = EPIPE;
	pthread_mutex_unlock(&p->in_lock);
	if (fd >= 0)
		return fd;
	if (errno != EPIPE)
		return cd_fail_errno(err, errno, "stdin", "dup");
	return cd_fail(err, EPIPE, "stdin",
		       pty ? "the process has no terminal"
			   : "the process's stdin is closed or was not asked for");
}

static int input_write(struct srv_proc *p, const void *data, size_t len, bool pty, int dying_fd,
		       struct cordon_error *err)
{
	int fd = input_fd(p, pty, err), r;

	if (fd < 0)
		return fd;
	r = srv_write_bounded(fd, data, len, dying_fd, -1, SRV_PROC_INPUT_STALL_NS);
	close(fd);
	if (r == -ETIMEDOUT) /* resource_exhausted: its input is full (not the request's timeout) */
		return cd_fail(err, EAGAIN, "stdin",
			       "the process does not read its input (nothing taken in %llu s)",
			       (unsigned long long)(SRV_PROC_INPUT_STALL_NS / NSEC_PER_SEC));
	if (r == -ECANCELED)
		return cd_fail(err, ESRCH, "stdin", "the sandbox was killed");
	return r < 0 ? cd_fail_errno(err, -r, "stdin", "write") : 0;
}

int srv_proc_write_stdin(struct srv_proc *p, const void *data, size_t len, bool pty, int dying_fd,
			 struct cordon_error *err)
{
	int r;

	pthread_mutex_lock(&p->write_lock);
	r = input_write(p, data, len, pty, dying_fd, err);
	pthread_mutex_unlock(&p->write_lock);
	return r;
}

int srv_proc_close_stdin(struct srv_proc *p, int dying_fd, struct cordon_error *err)
{
	int r = 0;

	if (p->pty) { /* a terminal: end of input is ^D, after the input before it */
		pthread_mutex_lock(&p->write_lock);
		r = input_write(p, "\x04", 1, true, dying_fd, err);
		pthread_mutex_unlock(&p->write_lock);
		return r == -EPIPE ? 0 : r; /* it ended: its input is closed */
	}
	pthread_mutex_lock(&p->in_lock); /* a write under way holds a copy: EOF comes after it */
	p->in_fd = cd_safe_close(p->in_fd);
	pthread_mutex_unlock(&p->in_lock);
	return 0;
}

int srv_proc_signal(struct srv_proc *p, int sig, struct cordon_error *err)
{
	int r;

	pthread_mutex_lock(&p->lock);
	r = p->p ? cordon_process_signal(p->p, sig, 1, err)
		 : cd_fail(err, ESRCH, "signal", "the process has ended");
	pthread_mutex_unlock(&p->lock);
	return r;
}

int srv_proc_resize(struct srv_proc *p, int rows, int cols, struct cordon_error *err)
{
	struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
	int r = 0;

	pthread_mutex_lock(&p->in_lock);
	if (p->pty_fd < 0)
		r = cd_fail(err, EINVAL, "pty", "the process has no terminal");
	else if (ioctl(p->pty_fd, TIOCSWINSZ, &ws) < 0)
		r = cd_fail_errno(err, errno, "pty", "resize");
	pthread_mutex_unlock(&p->in_lock);
	return r;
}

json_object *srv_procs_list(struct srv_sandbox *sb)
{
	json_object *a = json_object_new_array();

	pthread_mutex_lock(&sb->lock);
	for (struct srv_proc *p = sb->procs; a && p; p = p->next_in_sb) {
		json_object *o = json_object_new_object();

		if (!o)
			break;
		json_object_object_add(o, "config", json_object_get(p->config));
		json_object_object_add(o, "pid", json_object_new_int64(p->pid));
		if (p->tag)
			json_object_object_add(o, "tag", json_object_new_string(p->tag));
		json_object_array_add(a, o);
	}
	pthread_mutex_unlock(&sb->lock);
	return a;
}

/* Every pump has ended (the sandbox's users are gone, its dying_fd woke them): the list's
 * references go. */
void srv_procs_on_death(struct srv_sandbox *sb, void *arg)
{
	struct srv_proc *p;

	(void)arg;
	pthread_mutex_lock(&sb->lock);
	p = sb->procs;
	sb->procs = NULL;
	pthread_mutex_unlock(&sb->lock);
	while (p) {
		struct srv_proc *next = p->next_in_sb;

		srv_proc_unref(p);
		p = next;
	}
}
