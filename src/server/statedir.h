/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* statedir.h - the state directory, its default and checks, at start (statedir.c). */
#pragma once

#include "cordon.h"

int srv_statedir_setup(struct cordon_error *err); /* sets srv_opts.state_dir */
