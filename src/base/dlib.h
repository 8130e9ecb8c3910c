/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dlib.h - a shared library loaded when first needed (dlib.c). */
#pragma once

#include <stddef.h>

#include "cordon.h"

/* One function of the library: its name, and where its address goes. */
struct cd_dlib_fn {
	const char *name;
	void **slot;
};

/* Load soname, once per process (it stays loaded), and fill every slot: 0, or -ELIBACC with
 * err saying which library or function is missing (step: the error's step). Thread-safe. */
int cd_dlib_load(const char *soname, const struct cd_dlib_fn *fns, size_t n, int *loaded,
		 const char *step, struct cordon_error *err);

/* A slot for fn: fn's own type, so a call through it is checked against the header. */
#define CD_DLIB_FN(name, ptr) { (name), (void **)(ptr) }
