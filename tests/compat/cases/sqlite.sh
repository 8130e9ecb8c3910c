#!/usr/bin/env bash
# sqlite3 (Python's module and Debian's sqlite3 shell) in the workdir: WAL mode with its shared
# memory file, memory-mapped reads, four processes writing at once under SQLite's file locks,
# a writer killed mid-transaction and the database recovered, an online backup.
set -u
export LC_ALL=C
/usr/bin/python3 - <<'PY'
import multiprocessing as mp
import os
import signal
import sqlite3
import time

DB = "compat.db"

def connect():
    c = sqlite3.connect(DB, timeout=60)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA mmap_size=1048576")
    return c

def writer(n):
    c = connect()
    for i in range(200):
        with c:
            c.execute("INSERT INTO t VALUES (?, ?)", (n, i))
    c.close()

def hang():
    c = connect()
    c.execute("BEGIN IMMEDIATE")
    c.execute("INSERT INTO t VALUES (99, 0)")
    os.kill(os.getpid(), signal.SIGSTOP)

if __name__ == "__main__":
    c = connect()
    print("journal:", c.execute("PRAGMA journal_mode").fetchone()[0])
    c.execute("CREATE TABLE t (w INTEGER, i INTEGER)")
    c.commit()
    procs = [mp.Process(target=writer, args=(n,)) for n in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    print("writers:", [p.exitcode for p in procs])
    print("rows:", c.execute("SELECT COUNT(*), COUNT(DISTINCT w) FROM t").fetchone())
    p = mp.Process(target=hang)
    p.start()
    while not os.path.exists(DB + "-wal") or os.waitpid(p.pid, os.WNOHANG | os.WUNTRACED)[0] == 0:
        time.sleep(0.01)
    os.kill(p.pid, signal.SIGKILL)
    p.join()
    print("killed writer:", p.exitcode)
    print("after recovery:", c.execute("SELECT COUNT(*) FROM t WHERE w = 99").fetchone()[0])
    with c:
        c.execute("INSERT INTO t VALUES (5, 0)")
    print("integrity:", c.execute("PRAGMA integrity_check").fetchone()[0])
    b = sqlite3.connect("backup.db")
    c.backup(b)
    print("backup rows:", b.execute("SELECT COUNT(*) FROM t").fetchone()[0])
PY
echo "python: exit $?"
if command -v sqlite3 >/dev/null; then
	sqlite3 backup.db 'PRAGMA integrity_check; SELECT w, COUNT(*) FROM t GROUP BY w;'
	echo "sqlite3 shell: exit $?"
fi
