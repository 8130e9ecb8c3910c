/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pool.h - sandboxes made ahead of creates, --pool (pool.c). */
#pragma once

#include <stdbool.h>

#include "cordon.h"
#include "fresh.h"

int srv_pool_start(unsigned n, struct cordon_error *err);
bool srv_pool_take(struct srv_fresh *ret); /* false: none ready */
void srv_pool_stop(void);
