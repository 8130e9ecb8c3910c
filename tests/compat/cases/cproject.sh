#!/usr/bin/env bash
# A C project from Debian's sources (TARBALL, an autotools project with gnulib) as its users
# build it: configure, make, make check. Prints each step's exit and each test's result.
set -u
export LC_ALL=C
tar -xf "$1" || exit 1
cd "$(tar -tf "$1" | head -1 | cut -d/ -f1)" || exit 1
./configure >configure.log 2>&1
echo "configure: exit $?"
make -j2 >make.log 2>&1
echo "make: exit $?"
make -j2 check >check.log 2>&1
echo "make check: exit $?"
grep -hE '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): ' check.log | sort
