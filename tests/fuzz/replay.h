/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * replay.h - a main for a fuzz target built without libFuzzer (-DCORDON_FUZZ_REPLAY): each
 * argument, a file or a directory of them, is fed to LLVMFuzzerTestOneInput() once, so that a
 * corpus (tests/fuzz/corpus/, a crash found earlier) is replayed with any compiler, sanitized or
 * not. The target's checks abort() on a broken promise; replay_main() says how many inputs ran.
 * Included by fuzz-gitconfig.c, fuzz-gitindex.c, fuzz-protectlist.c and fuzz-initspec.c;
 * tests/fuzz/run builds their replayers and runs them on the seeds before fuzzing.
 */
#pragma once

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* The whole of a regular file, in a buffer of its own size (ASan sees a read past it), or NULL */
static unsigned char *replay_read(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rbe");
	unsigned char *buf = NULL;
	struct stat st;

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    (buf = malloc(st.st_size ? (size_t)st.st_size : 1)) &&
	    fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*ret_len = buf ? (size_t)st.st_size : 0;
	return buf;
}

/* Run the target on a file, or on every file of a directory (not below): how many, or -1 */
static int replay_path(const char *path)
{
	struct stat st;
	unsigned char *buf;
	size_t len;
	DIR *d;
	int n = 0;

	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		buf = replay_read(path, &len);
		if (!buf)
			return -1;
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		return 1;
	}
	d = opendir(path);
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));) {
		char sub[4096];

		if (e->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= (int)sizeof(sub) ||
		    stat(sub, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (replay_path(sub) < 0) {
			closedir(d);
			return -1;
		}
		n++;
	}
	closedir(d);
	return n;
}

static int replay_main(const char *name, int argc, char **argv)
{
	int total = 0;

	for (int i = 1; i < argc; i++) {
		int n = replay_path(argv[i]);

		if (n < 0) {
			fprintf(stderr, "%s: cannot read %s\n", name, argv[i]);
			return 2;
		}
		total += n;
	}
	printf("%s: %d inputs replayed, no promise broken\n", name, total);
	return 0;
}
