#!/usr/bin/env python3
# test-floors.py - the maps newcomers trust, kept true: src/'s folders are floors (meson.build's
# `floors`, docs/design.md), and no file includes a header of a floor above its own or of another
# folder on its floor (the build refuses it too; this says which include, in words); the front
# ends (the folders not in `floors`: cli, server, oci) include the public API and src/base only; every
# folder's README.md lists each of its .c files and says where it runs ("Runs in:"); every src/
# file the docs, READMEs and bench's notes name is there. Each check is first shown to fail on a
# small tree that breaks it. Run by tests/run as unit/test-floors.py.
# Usage: test-floors.py [TREE] (default: this checkout).
import os
import re
import shutil
import sys
import tempfile

FRONT_ENDS_MAY = ["base"]  # besides include/ and the front end's own folder
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_floors(root):
    """The floors of meson.build, bottom first: [[folder, ...], ...]."""
    text = open(os.path.join(root, "meson.build")).read()
    m = re.search(r"^floors\s*=\s*(\[.*?\])\s*$", text, re.M | re.S)
    if not m:
        return None
    body = re.sub(r"\s+", "", m.group(1))
    return [re.findall(r"'([^']+)'", f) for f in re.findall(r"\[([^\[\]]*)\]", body)]


def folders(root):
    src = os.path.join(root, "src")
    return sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))


def headers(root):
    """Header name -> the folders holding one of that name (include/ as 'include')."""
    owner = {}
    for d in folders(root):
        for f in os.listdir(os.path.join(root, "src", d)):
            if f.endswith(".h"):
                owner.setdefault(f, []).append(d)
    for f in os.listdir(os.path.join(root, "include")):
        owner.setdefault(f, []).append("include")
    return owner


def include_problems(root, floors):
    """One line per include that goes up or sideways, or names a folder's header ambiguously."""
    level = {f: i for i, floor in enumerate(floors) for f in floor}
    owner = headers(root)
    problems = []
    for d in folders(root):
        top = d not in level
        for f in sorted(os.listdir(os.path.join(root, "src", d))):
            if not f.endswith((".c", ".h")):
                continue
            text = open(os.path.join(root, "src", d, f), errors="replace").read()
            for h in INCLUDE.findall(text):
                name = os.path.basename(h)
                where = [o for o in owner.get(name, []) if o != d]
                if name in os.listdir(os.path.join(root, "src", d)) or not where:
                    continue  # its own folder's, or generated/system
                if len(where) > 1:
                    problems.append(f"src/{d}/{f}: {name} is in {', '.join(where)}: ambiguous")
                    continue
                o = where[0]
                if o == "include":
                    continue
                if top:
                    if o not in FRONT_ENDS_MAY:
                        problems.append(f"src/{d}/{f} includes {name} from src/{o}: a front "
                                        f"end uses include/cordon.h and src/base only")
                elif o not in level:
                    problems.append(f"src/{d}/{f} includes {name} from src/{o}, a front end")
                elif level[o] > level[d]:
                    problems.append(f"src/{d}/{f} includes {name} from src/{o} (floor "
                                    f"{level[o] + 1}), above src/{d} (floor {level[d] + 1})")
                elif level[o] == level[d]:
                    problems.append(f"src/{d}/{f} includes {name} from src/{o}, on its own "
                                    f"floor ({level[d] + 1}): folders on one floor are apart")
    return problems


def readme_problems(root):
    """One line per .c file a folder's README.md does not name, or a README without 'Runs in:'."""
    problems = []
    for d in folders(root):
        path = os.path.join(root, "src", d, "README.md")
        if not os.path.exists(path):
            problems.append(f"src/{d}: no README.md")
            continue
        text = open(path).read()
        if not re.search(r"^Runs in: \S", text, re.M):
            problems.append(f"src/{d}/README.md: no 'Runs in: <process>' line")
        for f in sorted(os.listdir(os.path.join(root, "src", d))):
            if f.endswith(".c") and not re.search(r"(^|[^\w.-])" + re.escape(f) + r"($|[^\w])",
                                                   text):
                problems.append(f"src/{d}/README.md does not list {f}")
    return problems


def unlisted_floors(root, floors):
    """Folders of src/ that are neither a floor nor a front end the build knows."""
    listed = {f for floor in floors for f in floor}
    return [d for d in folders(root) if d not in listed and d not in ("cli", "server", "oci")]


def stale_paths(root):
    """src/ files the maps name (docs, READMEs, bench's notes) that do not exist."""
    import glob
    docs = (glob.glob(f"{root}/docs/*.md") + glob.glob(f"{root}/src/*/README.md") +
            glob.glob(f"{root}/bench/*.md") + glob.glob(f"{root}/tests/*/README.md") +
            [f"{root}/README.md"])
    stale = []
    for d in sorted(docs):
        for p in sorted(set(re.findall(r"\bsrc/[a-z_]+/[\w.-]+\.(?:c|h|py|def)\b", open(d).read()))):
            if not os.path.exists(os.path.join(root, p)):
                stale.append(f"{os.path.relpath(d, root)} names {p}, which is not there")
    # and the notes and documents the sources and maps point at (bench/.cache: fetched, ignored)
    code = [f for f in glob.glob(f"{root}/src/*/*.[ch]") + glob.glob(f"{root}/include/*.h")]
    for d in sorted(docs + code):
        text = open(d, errors="replace").read()
        for p in sorted(set(re.findall(r"(?<![\w./-])((?:bench|docs)/[\w.-]*\w)", text))):
            if p != "bench/.cache" and not os.path.exists(os.path.join(root, p)):
                stale.append(f"{os.path.relpath(d, root)} names {p}, which is not there")
    return stale


n = 0
failed = 0


def check(ok, desc, detail=()):
    global n, failed
    n += 1
    print(("ok" if ok else "not ok") + f" {n} - {desc}")
    if not ok:
        failed += 1
        for line in detail:
            print(f"# {line}")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def broken_tree():
    """A small tree with floors base < b, an include going up, one sideways, a README missing a
    file and one without 'Runs in:'."""
    t = tempfile.mkdtemp(prefix="test-floors.")
    write(f"{t}/meson.build", "floors = [['base'], ['b', 'c'], ['d']]\n")
    write(f"{t}/include/pub.h", "")
    write(f"{t}/src/base/README.md", "Runs in: here.\n\n- low.c: low\n")
    write(f"{t}/src/base/low.h", "")
    write(f"{t}/src/base/low.c", '#include "low.h"\n#include "high.h"\n#include "pub.h"\n')
    write(f"{t}/src/b/README.md", "Runs in: here.\n\n- high.c\n")
    write(f"{t}/src/b/high.h", "")
    write(f"{t}/src/b/high.c", '#include "low.h"\n#include "side.h"\n')
    write(f"{t}/src/c/README.md", "no line saying where\n\n- side.c\n")
    write(f"{t}/src/c/side.h", "")
    write(f"{t}/src/c/side.c", '#include "low.h"\n')
    write(f"{t}/src/d/README.md", "Runs in: here.\n\n- top.c\n")
    write(f"{t}/src/d/top.c", '#include "high.h"\n#include "low.h"\n')
    write(f"{t}/src/d/extra.c", "")
    write(f"{t}/src/cli/README.md", "Runs in: here.\n\n- main.c\n")
    write(f"{t}/src/cli/main.c", '#include "pub.h"\n#include "low.h"\n#include "high.h"\n')
    return t


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..",
                                                               "..")
    print("TAP version 13")

    # the checker against a tree that breaks each rule: it must say so, or it proves nothing
    t = broken_tree()
    try:
        fl = read_floors(t)
        check(fl == [["base"], ["b", "c"], ["d"]], "meson.build's floors are read", [repr(fl)])
        inc = include_problems(t, fl)
        check("src/base/low.c includes high.h from src/b (floor 2), above src/base (floor 1)" in inc,
              "an include going up is found and named", inc)
        check("src/b/high.c includes side.h from src/c, on its own floor (2): folders on one "
              "floor are apart" in inc, "an include sideways on one floor is found", inc)
        check("src/cli/main.c includes high.h from src/b: a front end uses include/cordon.h "
              "and src/base only" in inc, "a front end reaching past src/base is found", inc)
        check(len(inc) == 3, "includes going down, and the public API, are fine", inc)
        rd = readme_problems(t)
        check("src/d/README.md does not list extra.c" in rd, "a .c file a README misses is found",
              rd)
        check("src/c/README.md: no 'Runs in: <process>' line" in rd,
              "a README without 'Runs in:' is found", rd)
        check(len(rd) == 2, "listed files and 'Runs in:' lines are fine", rd)
        write(f"{t}/docs/design.md", "see src/base/low.c and src/b/gone.c\n")
        write(f"{t}/README.md", "")
        check(stale_paths(t) == ["docs/design.md names src/b/gone.c, which is not there"],
              "a map naming a file that is not there is found", stale_paths(t))
        write(f"{t}/src/base/low.h", "/* low.h - see docs/design.md and docs/gone.md */\n")
        check(stale_paths(t)[1:] == ["src/base/low.h names docs/gone.md, which is not there"],
              "a source's comment naming a document that is not there is found", stale_paths(t))
        write(f"{t}/src/e/README.md", "Runs in: here.\n")
        check(unlisted_floors(t, fl) == ["e"], "a folder that is on no floor is found",
              unlisted_floors(t, fl))
    finally:
        shutil.rmtree(t)

    # this tree
    fl = read_floors(root)
    check(fl is not None and len(fl) > 5, "meson.build has the floors", [repr(fl)])
    fl = fl or []
    check(not unlisted_floors(root, fl), "every folder of src/ is a floor or a front end",
          unlisted_floors(root, fl))
    inc = include_problems(root, fl)
    check(not inc, "no include goes up a floor or sideways; front ends use cordon.h and base",
          inc)
    rd = readme_problems(root)
    check(not rd, "every folder's README.md lists its .c files and says where they run", rd)
    check(not stale_paths(root), "every src/ file the docs and READMEs name is there",
          stale_paths(root))
    design = open(os.path.join(root, "docs", "design.md")).read()
    missing = [f for floor in fl for f in floor if f"| {f}" not in design and f", {f}" not in design]
    check(not missing, "docs/design.md's table of floors names every floor's folders", missing)
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
