/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cares.h - c-ares, loaded when the egress proxy first starts (cares.c, src/base/dlib.h). */
#pragma once

#include <ares.h>

#include "cordon.h"

struct cd_cares {
	__typeof__(ares_library_init) *library_init;
	__typeof__(ares_library_cleanup) *library_cleanup;
	__typeof__(ares_init_options) *init_options;
	__typeof__(ares_destroy) *destroy;
	__typeof__(ares_getaddrinfo) *getaddrinfo;
	__typeof__(ares_freeaddrinfo) *freeaddrinfo;
	__typeof__(ares_process_fd) *process_fd;
	__typeof__(ares_strerror) *strerror;
};

/* c-ares's functions, or NULL with err set (the library cannot be loaded). */
const struct cd_cares *cd_cares(struct cordon_error *err);
