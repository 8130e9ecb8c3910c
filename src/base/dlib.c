/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dlib.c - a shared library loaded when first needed (dlib.h). Runs in the supervisor.
 *
 * c-ares (the egress proxy's resolver) and zlib (a layer's binary patches) serve a few runs
 * only; linked, they were mapped and relocated at every start (16 page faults, a quarter of a
 * millisecond here). They are loaded by their soname at first use instead, as systemd loads its
 * optional libraries: the same Debian library, so its security updates still reach cordon.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "dlib.h"
#include "util.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int load(const char *soname, const struct cd_dlib_fn *fns, size_t n, const char *step,
		struct cordon_error *err)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return cd_fail(err, ELIBACC, step, "cannot load %s: %s", soname, dlerror());
	for (size_t i = 0; i < n; i++) {
		void *f = dlsym(h, fns[i].name);

		if (!f) {
			dlclose(h);
			return cd_fail(err, ELIBACC, step, "%s has no %s (a version too old?)", soname,
				       fns[i].name);
		}
		*fns[i].slot = f;
	}
	return 0; /* the handle stays open: the slots point into it */
}

int cd_dlib_load(const char *soname, const struct cd_dlib_fn *fns, size_t n, int *loaded,
		 const char *step, struct cordon_error *err)
{
	int r = 0;

	pthread_mutex_lock(&lock);
	if (!*loaded) {
		r = load(soname, fns, n, step, err);
		*loaded = r == 0;
	}
	pthread_mutex_unlock(&lock);
	return r;
}
