/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libz.h - zlib, loaded when a binary patch is first written (libz.c, src/base/dlib.h). */
#pragma once

#include <zlib.h>

#include "cordon.h"

struct cd_zlib {
	__typeof__(deflateInit_) *deflate_init_;
	__typeof__(deflate) *deflate;
	__typeof__(deflateEnd) *deflate_end;
};

/* zlib's functions, or NULL with err set (the library cannot be loaded). */
const struct cd_zlib *cd_zlib(struct cordon_error *err);
