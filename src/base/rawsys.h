/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rawsys.h - system calls that touch no memory of ours but what they are given: -errno on
 * failure, errno itself left alone. For a child made with CLONE_VM and without CLONE_SETTLS: it
 * runs on the thread pointer of the thread that made it, so libc's syscall() would write a
 * failure into that thread's errno, under its feet. CD_HAVE_RAW_SYSCALL is 0 where none is
 * written here: libc's stands in, and such a child is a fork (cgroup.c, userns.c).
 */
#pragma once

/* For every function such a child runs: no stack protector (it would check its canary against
 * the maker's thread, which may be gone by then) and no sanitizer (ASan's fake stack frames and
 * reports are the maker's thread's too). */
#define _raw_child_ __attribute__((no_stack_protector, no_sanitize("address", "undefined")))

#if defined(__x86_64__) && !defined(__ILP32__)
#define CD_HAVE_RAW_SYSCALL 1

_raw_child_
static inline long cd_raw_syscall5(long n, long a, long b, long c, long d, long e)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define CD_HAVE_RAW_SYSCALL 1

_raw_child_
static inline long cd_raw_syscall5(long n, long a, long b, long c, long d, long e)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	return x0;
}
#else
#define CD_HAVE_RAW_SYSCALL 0 /* libc's: it sets errno, so only for a fork's child */
#include <errno.h>
#include <unistd.h>

_raw_child_
static inline long cd_raw_syscall5(long n, long a, long b, long c, long d, long e)
{
	long r = syscall(n, a, b, c, d, e);

	return r < 0 ? -errno : r;
}
#endif

/* at most five arguments: a sixth would be dropped */
#define cd_raw_syscall(n, ...) cd_raw_syscall_(n, __VA_ARGS__, 0, 0, 0, 0, 0)
#define cd_raw_syscall_(n, a, b, c, d, e, ...)                                                     \
	cd_raw_syscall5((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e))
