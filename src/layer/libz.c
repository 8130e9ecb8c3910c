/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libz.c - zlib, loaded when a binary patch is first written (libz.h). Runs in the supervisor and
 * in `cordon diff`. */
#include "dlib.h"
#include "util.h"
#include "libz.h"

static struct cd_zlib zlib;
static int loaded;

const struct cd_zlib *cd_zlib(struct cordon_error *err)
{
	const struct cd_dlib_fn fns[] = {
		CD_DLIB_FN("deflateInit_", &zlib.deflate_init_),
		CD_DLIB_FN("deflate", &zlib.deflate),
		CD_DLIB_FN("deflateEnd", &zlib.deflate_end),
	};

	if (cd_dlib_load("libz.so.1", fns, CD_ELEMENTSOF(fns), &loaded, "layer", err) < 0)
		return NULL;
	return &zlib;
}
