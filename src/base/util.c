/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util.c - error helpers, string vectors, paths, I/O. Runs in both processes. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>

#include "util.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif

int cd_failv(struct cordon_error *err, int code, const char *step, const char *fmt, va_list ap)
{
	if (err && err->msg[0] == '\0') {
		err->code = code;
		snprintf(err->step, sizeof(err->step), "%s", step);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	}
	return code > 0 ? -code : -EINVAL;
}

int cd_fail(struct cordon_error *err, int code, const char *step, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = cd_failv(err, code, step, fmt, ap);
	va_end(ap);
	return r;
}

int cd_fail_errno(struct cordon_error *err, int code, const char *step, const char *fmt, ...)
{
	char what[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return cd_fail(err, code, step, "%s: %s", what, strerror(code));
}

void cd_error_append(struct cordon_error *err, const char *fmt, ...)
{
	size_t n = err ? strlen(err->msg) : 0;
	va_list ap;

	if (!err || n + 1 >= sizeof(err->msg))
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - n, fmt, ap);
	va_end(ap);
}

void cd_error_clear(struct cordon_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

void cd_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

size_t cd_strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int cd_strv_push(char ***v, const char *s)
{
	size_t n = cd_strv_len(*v);
	char **nv;
	char *copy;

	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	nv = realloc(*v, (n + 2) * sizeof(char *));
	if (!nv) {
		free(copy);
		return -ENOMEM;
	}
	nv[n] = copy;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

char **cd_strv_copy(const char *const *v)
{
	_cleanup_strv_ char **copy = calloc(1, sizeof(char *));

	if (!copy)
		return NULL;
	for (; v && *v; v++)
		if (cd_strv_push(&copy, *v) < 0)
			return NULL;
	return CD_TAKE_PTR(copy);
}

char *cd_strdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : s;
}

bool cd_path_is_normalized_absolute(const char *p)
{
	if (!p || p[0] != '/')
		return false;
	if (p[1] == '\0')
		return true;
	for (const char *c = p; *c;) {
		const char *end;
		size_t len;

		c++; /* skip the '/' */
		end = strchrnul(c, '/');
		len = (size_t)(end - c);
		if (len == 0) /* "//" or trailing "/" */
			return false;
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c = end;
	}
	return true;
}

bool cd_path_startswith(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 1 && prefix[0] == '/')
		return path[0] == '/';
	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

size_t cd_path_depth(const char *p)
{
	size_t depth = 0;

	for (; *p; p++)
		if (*p == '/' && p[1] != '\0')
			depth++;
	return depth;
}

int cd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cd_write_file_at(int dirfd, const char *path, const char *s)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	return cd_write_all(fd, s, strlen(s));
}

uint64_t cd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

int cd_random_id(char ret[33])
{
	uint8_t bytes[16];
	size_t got = 0;

	while (got < sizeof(bytes)) {
		ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(ret + 2 * i, 3, "%02x", bytes[i]);
	return 0;
}

bool cd_under_valgrind(void)
{
#if __has_include(<valgrind/valgrind.h>)
	return RUNNING_ON_VALGRIND;
#else
	return false;
#endif
}

pid_t cd_clone_shared(int (*fn)(void *), void *stack_top, unsigned long flags, void *arg,
		      int *pidfd)
{
	sigset_t all, old;
	pid_t pid;
	int e;

	/* the kernel's own call: pthread_sigmask() leaves glibc's two internal signals out */
	memset(&all, 0xff, sizeof(all));
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
	pid = clone(fn, stack_top, CLONE_VM | flags, arg, pidfd);
	e = errno;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	errno = e;
	return pid;
}

void cd_stack_trim(void)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	/* our frame's page stays, and the whole page below it: at least 4 KiB for our locals and
	 * what we call here (madvise's wrapper: a return address) */
	uintptr_t hi = ((uintptr_t)__builtin_frame_address(0) & ~(page - 1)) - page, lo;
	pthread_attr_t a;
	size_t size;
	void *low;
	int r;

	/* the thread's stack, and nothing past it (glibc: above the mapping before it; musl: the
	 * mapping's own bottom, probed) */
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	r = pthread_attr_getstack(&a, &low, &size);
	pthread_attr_destroy(&a);
	lo = ((uintptr_t)low + page - 1) & ~(page - 1);
	/* below lo is not ours; between lo and the mapping's start, a hole (ENOMEM, nothing done
	 * there): the pages that are mapped are dropped, and read as zeros if touched again */
	if (r == 0 && hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}
