/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util.h - error helpers, cleanup macros, fd and string helpers. Used by both processes. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cordon.h"

#define _cleanup_(f)   __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(cd_freep)
#define _cleanup_close_ _cleanup_(cd_closep)
#define _cleanup_strv_ _cleanup_(cd_strv_freep)
#define _unused_       __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define CD_TAKE_FD(fd)                                                                             \
	({                                                                                         \
		int _t = (fd);                                                                     \
		(fd) = -1;                                                                         \
		_t;                                                                                \
	})
#define CD_TAKE_PTR(p)                                                                             \
	({                                                                                         \
		__typeof__(p) _t = (p);                                                            \
		(p) = NULL;                                                                        \
		_t;                                                                                \
	})
#define CD_ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

#define NSEC_PER_USEC 1000ull
#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_SEC  1000000000ull

static inline void cd_freep(void *p)
{
	free(*(void **)p);
}

static inline void cd_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void cd_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* Close fd if it is one (>= 0), errno kept; returns -1: `fd = cd_safe_close(fd);` closes and
 * resets in one statement (systemd's safe_close). */
static inline int cd_safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}

static inline void cd_closep(int *fd)
{
	*fd = cd_safe_close(*fd); /* reset: a later call (or the cleanup) closes nothing twice */
}

/* Fill *err (if not already filled: the first error wins) and return -code, or -EINVAL when code
 * is 0. */
int cd_fail(struct cordon_error *err, int code, const char *step, const char *fmt, ...)
	_printf_(4, 5);
int cd_failv(struct cordon_error *err, int code, const char *step, const char *fmt, va_list ap);
/* Same, appending ": strerror(code)" to the message. */
int cd_fail_errno(struct cordon_error *err, int code, const char *step, const char *fmt, ...)
	_printf_(4, 5);
void cd_error_clear(struct cordon_error *err);
/* Add to a filled error's message (a second failure the first must not hide), as room allows. */
void cd_error_append(struct cordon_error *err, const char *fmt, ...) _printf_(2, 3);

/* NULL-terminated string vectors. */
void cd_strv_free(char **v);
static inline void cd_strv_freep(char ***v)
{
	cd_strv_free(*v);
}
size_t cd_strv_len(char *const *v);
int cd_strv_push(char ***v, const char *s); /* copies s; -ENOMEM */
char **cd_strv_copy(const char *const *v);

char *cd_strdup_printf(const char *fmt, ...) _printf_(1, 2);

/* Paths. */
bool cd_path_is_normalized_absolute(const char *p); /* "/a/b": no //, ., .., trailing / */
bool cd_path_startswith(const char *path, const char *prefix); /* component-wise */
size_t cd_path_depth(const char *p);                          /* "/" 0, "/a" 1, "/a/b" 2 */

/* I/O that retries EINTR and short writes. */
int cd_write_all(int fd, const void *buf, size_t len); /* 0 or -errno */
int cd_write_file_at(int dirfd, const char *path, const char *s); /* 0 or -errno */

uint64_t cd_now_ns(void); /* CLOCK_MONOTONIC */

/* Random id: 32 lowercase hex digits. */
int cd_random_id(char ret[33]);

/* Under valgrind, which knows no CLONE_VM child but a thread: such children are forks there. */
bool cd_under_valgrind(void);

/* Give the kernel back the pages of the calling thread's stack below the caller's frame: what
 * earlier, deeper calls made resident. For a process about to idle (a session's supervisor,
 * pid 1): nothing below its frame is live. Best effort (madvise MADV_DONTNEED). */
void cd_stack_trim(void);

/* clone(CLONE_VM | flags): fn(arg) runs on stack_top, sharing our memory (rawsys.h says how it
 * must be written), with every signal blocked from its birth, so that none of our handlers ever
 * runs in it. pidfd as clone()'s parent_tid (CLONE_PIDFD); -1 with errno on failure. */
pid_t cd_clone_shared(int (*fn)(void *), void *stack_top, unsigned long flags, void *arg,
		      int *pidfd);
