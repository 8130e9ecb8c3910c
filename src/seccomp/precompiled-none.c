/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* precompiled-none.c - an empty table, for precompile itself (precompiled.h) */
#include <stdbool.h>

#include "precompiled.h"

const struct cd_precompiled cd_precompiled[1];
const size_t cd_n_precompiled = 0;
