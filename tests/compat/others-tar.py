#!/usr/bin/env python3
"""others-tar.py FILE: the archive of tar.sh, with other owners' files (no root needed)."""
import io
import sys
import tarfile

MEMBERS = [  # name, type, mode, uid, gid, data or link target
    (".", tarfile.DIRTYPE, 0o755, 0, 0, None),
    ("root-file", tarfile.REGTYPE, 0o644, 0, 0, b"root's\n"),
    ("other", tarfile.DIRTYPE, 0o2775, 1234, 5678, None),
    ("other/private", tarfile.REGTYPE, 0o600, 1234, 5678, b"secret\n"),
    ("other/tool", tarfile.REGTYPE, 0o755, 1234, 5678, b"#!/bin/sh\necho tool\n"),
    ("nobody", tarfile.REGTYPE, 0o444, 65534, 65534, b"nobody's\n"),
    ("suid", tarfile.REGTYPE, 0o4755, 0, 0, b"#!/bin/sh\n"),
    ("zeros", tarfile.REGTYPE, 0o644, 1234, 5678, bytes(1 << 20)),
    ("link", tarfile.SYMTYPE, 0o777, 1234, 5678, "other/tool"),
    ("hard", tarfile.LNKTYPE, 0o644, 0, 0, "root-file"),
]

with tarfile.open(sys.argv[1], "w", format=tarfile.GNU_FORMAT) as tar:
    for name, kind, mode, uid, gid, data in MEMBERS:
        info = tarfile.TarInfo("./" + name if name != "." else ".")
        info.type, info.mode, info.uid, info.gid = kind, mode, uid, gid
        info.mtime = 1700000000
        if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
            info.linkname = data if kind == tarfile.SYMTYPE else "./" + data
            tar.addfile(info)
        else:
            info.size = len(data or b"")
            tar.addfile(info, io.BytesIO(data) if data else None)
