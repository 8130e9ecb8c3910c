#!/usr/bin/env python3
# gen-cordon-h.py - make cordon.h(3) from include/cordon.h, at build time: the page is the header
# (its comments as prose, its declarations as code, its "--- group ---" comments as sections),
# so that the manual of the library is always the API it documents.
# Usage: gen-cordon-h.py HEADER OUTPUT VERSION
import re
import sys


def esc(s):
    """Text for troff: backslashes, hyphens kept literal, no control line."""
    s = s.replace("\\", "\\e").replace("-", "\\-")
    if s.startswith((".", "'")):
        s = "\\&" + s
    return s


def comment_lines(block):
    """The text lines of a /* ... */ block (its markers removed)."""
    out = []
    for i, line in enumerate(block):
        line = line.rstrip()
        if line.endswith("*/"):
            line = line[:-2].rstrip()
        if i == 0:
            line = line[2:]
            line = line[1:] if line.startswith(" ") else line
        else:
            line = re.sub(r"^\s*\*", "", line, count=1)
            line = line[1:] if line.startswith(" ") else line
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    return out


def prose(lines):
    """A comment's lines as paragraphs, bullets (" - ") and examples (indented)."""
    out, mode = [], None
    for line in lines:
        if not line.strip():
            if mode == "code":
                out.append(".EE\n.RE")
            mode = None
            continue
        if line.startswith(" - "):
            if mode == "code":
                out.append(".EE\n.RE")
            out.append(".IP \\(bu 2")
            out.append(esc(line[3:].strip()))
            mode = "bullet"
        elif mode == "bullet" and line.startswith("   "):
            out.append(esc(line.strip()))
        elif line.startswith("  "):
            if mode != "code":
                out.append(".PP\n.RS\n.EX")
            out.append(esc(line[2:]))
            mode = "code"
        else:
            if mode not in ("text",):
                if mode == "code":
                    out.append(".EE\n.RE")
                out.append(".PP")
            out.append(esc(line.strip()))
            mode = "text"
    if mode == "code":
        out.append(".EE\n.RE")
    return out


def blocks(text):
    """The header as ('comment', lines) and ('code', lines) blocks, blank lines between them
    dropped. A comment starting a line starts a block; one after code on a line stays code."""
    lines = text.split("\n")
    i, res = 0, []
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("/*") and not line.startswith((" ", "\t")):
            j = i
            while "*/" not in lines[j]:
                j += 1
            res.append(("comment", lines[i:j + 1]))
            i = j + 1
        elif not line.strip():
            res.append(("blank", []))
            i += 1
        else:
            code = []
            depth = 0
            while i < len(lines) and (lines[i].strip() or depth > 0) and not (
                    depth == 0 and lines[i].startswith("/*")):
                if not lines[i].startswith('extern "C"'):
                    depth += lines[i].count("{") - lines[i].count("}")
                code.append(lines[i])
                i += 1
            res.append(("code", code))
    return res


SKIP = re.compile(r"^(#ifndef CORDON_H|#define CORDON_H|#endif|#ifdef __cplusplus|}$|"
                  r"extern \"C\" \{|#define CORDON_PUBLIC|#include <)")


def unmark(code):
    """Declarations without CORDON_PUBLIC, their continuation lines moved left as much."""
    out, shift = [], False
    for ln in code:
        ln = ln.expandtabs(8)
        if ln.startswith("CORDON_PUBLIC "):
            ln = ln[len("CORDON_PUBLIC "):]
            shift = True
        elif shift and ln.startswith(" " * len("CORDON_PUBLIC ")):
            ln = ln[len("CORDON_PUBLIC "):]
        else:
            shift = False
        shift = shift and not ln.rstrip().endswith(";")
        out.append(ln)
    return out


def main():
    src, dst, version = sys.argv[1:4]
    text = open(src).read()
    bl = blocks(text)
    # the first comment is the license, the second the header's own description
    comments = [k for k, (kind, _) in enumerate(bl) if kind == "comment"]
    top = comment_lines(bl[comments[1]][1])
    name_line = top[0].rstrip(".")  # "cordon.h - ...", a whatis line
    out = [
        ".\\\" Generated from include/cordon.h by man/gen-cordon-h.py: edit the header.",
        '.TH CORDON.H 3 "" "cordon %s" "Library Functions Manual"' % version,
        ".SH NAME",
        esc(name_line.split(" - ", 1)[0]) + " \\- " + esc(name_line.split(" - ", 1)[1]),
        ".SH LIBRARY",
        "libcordon (\\fI\\-lcordon\\fR; \\fBpkg\\-config \\-\\-cflags \\-\\-libs cordon\\fR)",
        ".SH SYNOPSIS",
        ".nf",
        ".B #include <cordon.h>",
        ".fi",
        ".SH DESCRIPTION",
    ]
    out += prose(top[1:])
    out.append(".SH API")
    out.append(".SS the sandbox, its configuration and its run")
    for kind, lines in bl[comments[1] + 1:]:
        if kind == "comment":
            cl = comment_lines(lines)
            m = re.match(r"^--- (.*?)(?: ---)?$", cl[0]) if cl else None
            if m:
                out.append(".SS " + esc(m.group(1)))
                cl = cl[1:]
            if cl:
                out += prose(cl)
        elif kind == "code":
            code = unmark([ln for ln in lines if not SKIP.match(ln) or ln.startswith("\t")])
            if code:
                out.append(".PP\n.RS\n.EX")
                out += [esc(ln) for ln in code]
                out.append(".EE\n.RE")
    out += [
        ".SH SEE ALSO",
        ".BR cordon (1),",
        ".BR cordon\\-serve (1),",
        ".BR cordon\\-policy (5),",
        ".BR pkg\\-config (1)",
    ]
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


main()
