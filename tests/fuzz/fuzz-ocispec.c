/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-ocispec.c - libFuzzer target for cordon-runtime's config.json reader (src/oci/spec.c,
 * spec_process.c, spec_linux.c: oci_spec_parse) and its exec --process reader's parser: an
 * engine's user writes config.json (a Kubernetes pod's author, a Slurm user's bundle) and the
 * runtime may be root. Each input is a config.json. Besides the sanitizers, it abort()s when:
 *  - a refusal says no why, or its message does not start with a JSON path or "config.json";
 *  - an accepted config has no process, no args[0], a cwd or rootfs that is not absolute, an
 *    env entry without '=', or annotations whose keys and values are not there;
 *  - the floor (oci_spec_config_scratch, into a fresh cordon_config) refuses without a why.
 * The floor only opens and stats host paths the input names (as the runtime does before
 * anything starts); it is run on accepted configs only.
 * Built with -DCORDON_FUZZ_REPLAY, it has a main that replays files (replay.h).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "specdata.h"

#define FUZZ_MAX_INPUT (64 << 10)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

_printf_(1, 2) _Noreturn static void broken(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz-ocispec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void check_refusal(const struct cordon_error *err, const char *what)
{
	if (!err->msg[0])
		broken("%s refused without a why", what);
	/* "process.args: ...", "config.json: not JSON: ...", "mounts[2]: ..." */
	if (!isalpha((unsigned char)err->msg[0]) || !strchr(err->msg, ':'))
		broken("%s: \"%s\" does not name the field", what, err->msg);
}

static void check_spec(const struct oci_spec *s)
{
	const struct oci_process *p = oci_spec_process(s);
	const char *const *k, *const *v;
	size_t n;

	if (!p || !p->args || !p->args[0] || !p->env || !p->cwd || p->cwd[0] != '/')
		broken("an accepted config's process is incomplete");
	for (size_t i = 0; p->env[i]; i++)
		if (!strchr(p->env[i], '=') || p->env[i][0] == '=')
			broken("env[%zu] \"%s\" accepted", i, p->env[i]);
	if (!oci_spec_rootfs(s) || oci_spec_rootfs(s)[0] != '/')
		broken("the rootfs is not absolute");
	n = oci_spec_annotations(s, &k, &v);
	for (size_t i = 0; i < n; i++)
		if (!k[i] || !v[i] || oci_spec_annotation(s, k[i]) == NULL)
			broken("annotation %zu lost", i);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct cordon_error err = {0};
	struct cordon_config *c;
	struct oci_spec *s = NULL;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	if (oci_spec_parse("/nonexistent-bundle", (const char *)data, size, &s, &err) < 0) {
		if (s)
			broken("a refusal returned a spec");
		check_refusal(&err, "config.json");
		return 0;
	}
	check_spec(s);
	c = cordon_config_new();
	memset(&err, 0, sizeof(err));
	if (c && oci_spec_config_scratch(s, "/nonexistent-scratch", c, NULL, NULL, &err) < 0)
		check_refusal(&err, "the floor");
	cordon_config_free(c);
	oci_spec_free(s);
	return 0;
}

#ifdef CORDON_FUZZ_REPLAY
#include "replay.h"

int main(int argc, char **argv)
{
	return replay_main("fuzz-ocispec", argc, argv);
}
#endif
