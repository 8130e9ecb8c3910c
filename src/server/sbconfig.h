/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbconfig.h - the config every sandbox is made from (sbconfig.c). */
#pragma once

#include "cordon.h"

/* A new config from srv_opts, its workdir workdir (shown as /home/user inside). */
int srv_sbconfig_make(const char *workdir, struct cordon_config **ret, struct cordon_error *err);
