/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* keys.h - where the API keys come from, at start (keys.c). */
#pragma once

#include "cordon.h"

#define SRV_KEY_ENV "CORDON_SERVE_API_KEY"
int srv_keys_read_file(const char *path, struct cordon_error *err); /* --api-key-file */
int srv_keys_from_env(struct cordon_error *err);		    /* then wiped */
void srv_keys_argv_wipe(char *arg);				    /* --api-key's KEY */
/* After the options: --api-key's notice; no key: one made, written to DIR/api-key (0600) */
int srv_keys_setup(const char *dir, struct cordon_error *err);
void srv_keys_forget_made(void); /* at the end */
