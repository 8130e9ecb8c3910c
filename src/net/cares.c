/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cares.c - c-ares, loaded when the egress proxy first starts (cares.h). Runs in the supervisor. */
#include "cares.h"
#include "dlib.h"
#include "util.h"

static struct cd_cares cares;
static int loaded;

const struct cd_cares *cd_cares(struct cordon_error *err)
{
	const struct cd_dlib_fn fns[] = {
		CD_DLIB_FN("ares_library_init", &cares.library_init),
		CD_DLIB_FN("ares_library_cleanup", &cares.library_cleanup),
		CD_DLIB_FN("ares_init_options", &cares.init_options),
		CD_DLIB_FN("ares_destroy", &cares.destroy),
		CD_DLIB_FN("ares_getaddrinfo", &cares.getaddrinfo),
		CD_DLIB_FN("ares_freeaddrinfo", &cares.freeaddrinfo),
		CD_DLIB_FN("ares_process_fd", &cares.process_fd),
		CD_DLIB_FN("ares_strerror", &cares.strerror),
	};

	/* the soname of c-ares 1.x, whose API cordon uses (ares_getaddrinfo: 1.16) */
	if (cd_dlib_load("libcares.so.2", fns, CD_ELEMENTSOF(fns), &loaded, "net", err) < 0)
		return NULL;
	return &cares;
}
