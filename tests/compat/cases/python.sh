#!/usr/bin/env bash
# CPython's own regression tests (Debian's libpython3.X-testsuite) for the modules a sandbox can
# break: processes, signals, sockets, terminals, files and their locks, threads, archives.
# Prints each test case and its outcome (pass, skipped, failure, error).
set -u
export LC_ALL=C
modules=(test_os test_subprocess test_socket test_signal test_posix test_shutil test_tempfile
	test_threading test_asyncio test_pty test_select test_mmap test_fcntl test_tarfile
	test_zipfile test_venv)
# Debian's testsuite package does not ship test_sqlite3: sqlite.py covers sqlite3 instead
/usr/bin/python3 -m test -j2 --timeout 600 --junit-xml results.xml "${modules[@]}" >regrtest.log 2>&1
echo "regrtest: exit $?"
# what went wrong, for the suite's diagnostics
grep -E 'failed|crashed|[Tt]imeout|[Kk]illed|Error' regrtest.log | head -20 >&2
(
/usr/bin/python3 - results.xml <<'PY'
import sys
import xml.etree.ElementTree as ET

for case in ET.parse(sys.argv[1]).iter("testcase"):
    name = case.get("name", "").removeprefix("test.")
    if not name:  # regrtest names no test whose subtests failed
        print("a test with failing subtests")
        continue
    outcome = next((c.tag for c in case if c.tag in ("skipped", "failure", "error")), "pass")
    print(f"{name}: {outcome}")
PY
) | sort
