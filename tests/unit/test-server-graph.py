#!/usr/bin/env python3
# test-server-graph.py [SRC_SERVER_DIR] - the files of src/server call each other without a
# circle, in the order its README writes at its top. TAP.
#
# The graph is read from the includes: each x.c but main.c declares what it offers in its own
# x.h, so "x.c or x.h includes y.h" is "x calls (or uses the types of) y", and a call without the
# include does not compile (-Werror: no implicit declarations). A node is a file's stem (x for
# x.c and x.h); a header without a .c (a type shared by several files) is a node of its own.
#
# Checks: each .c but main.c has its own header; no .c includes another .c; no circle (one is
# named with the includes that make it); README.md's order names every node once; every
# include goes to a node before the includer in that order; every .c has its line in README.md
# ("- x.c...") with "runs in"; nothing defined in src/server is named cd_*/CD_* (src/base's).
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '..', '..', 'src', 'server')
n = 0


def result(ok, what, lines=()):
    global failed, n
    n += 1
    print(('ok %d - ' if ok else 'not ok %d - ') % n + what)
    for line in lines:
        print('  # ' + line)
    if not ok:
        failed = True


failed = False
names = sorted(f for f in os.listdir(src) if f.endswith('.c') or f.endswith('.h'))
nodes = sorted({f[:-2] for f in names})
# edges[a][b]: the files of a that include b.h
edges = {a: {} for a in nodes}
c_includes = []
for f in names:
    text = open(os.path.join(src, f)).read()
    for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        base = os.path.basename(inc)
        if base.endswith('.c'):
            c_includes.append('%s includes %s' % (f, inc))
        if not base.endswith('.h') or base not in names or base[:-2] == f[:-2]:
            continue  # src/base's, cordon.h, or its own header
        edges[f[:-2]].setdefault(base[:-2], []).append(f)

missing = [f for f in names if f.endswith('.c') and f != 'main.c' and f[:-2] + '.h' not in names]
result(not missing, 'every .c of src/server but main.c has its own header',
       ['%s: no %s.h' % (f, f[:-2]) for f in missing])
result(not c_includes, 'no file includes a .c file', c_includes)


def why(a, b):
    files = edges[a][b]
    return '%s %s %s.h' % (' and '.join(files), 'include' if len(files) > 1 else 'includes', b)


# a circle: depth-first, the path on the stack when an edge goes back into it
cycles, state, stack = [], {}, []


def visit(a):
    state[a] = 'open'
    stack.append(a)
    for b in sorted(edges[a]):
        if state.get(b) == 'open':
            loop = stack[stack.index(b):] + [b]
            cycles.append(' -> '.join(loop) + ' (' +
                          '; '.join(why(x, y) for x, y in zip(loop, loop[1:])) + ')')
        elif b not in state:
            visit(b)
    stack.pop()
    state[a] = 'done'


for a in nodes:
    if a not in state:
        visit(a)
result(not cycles, 'no circle among the files of src/server',
       ['circle: ' + c for c in cycles])

# README.md: the order, the first fenced block after a line starting "Order"; each line: the nodes
# of a floor, bottom to top, separated by commas, then two spaces and what the floor is
readme = open(os.path.join(src, 'README.md')).read()
m = re.search(r'^Order\b.*?\n```\n(.*?)\n```', readme, re.M | re.S)
order = []
for line in (m.group(1).split('\n') if m else []):
    lm = re.match(r'\s*([a-z_0-9]+(?:, [a-z_0-9]+)*)(\s{2,}.*)?$', line)
    order += lm.group(1).split(', ') if lm else ['(unreadable line: %s)' % line.strip()]
dup = sorted({x for x in order if order.count(x) > 1})
unknown = [x for x in order if x not in nodes]
absent = [x for x in nodes if x not in order]
result(m and not dup and not unknown and not absent,
       "README.md's order names every file of src/server once",
       (['no "Order" line followed by a fenced block'] if not m else []) +
       ['twice: ' + x for x in dup] + ['no such file: ' + x for x in unknown] +
       ['not in the order: ' + x for x in absent])
pos = {x: i for i, x in enumerate(order)}
up = ['%s, above %s in the order' % (why(a, b), a) for a in nodes for b in sorted(edges[a])
      if a in pos and b in pos and pos[b] > pos[a]]
result(m and not up, "every file calls only the files before it in README.md's order", up)

# an item of README's list starts with its files ("- x.c, x.h: ..."), its lines after the first
# indented by two spaces
undocumented = [f for f in names if f.endswith('.c') and not re.search(
    r'^- (?:[a-z_0-9]+\.[ch], )*%s[,:](?:.|\n  )*?[Rr]uns\s+in' % re.escape(f), readme, re.M)]
result(not undocumented, 'every .c has its line in README.md, with where it runs',
       ['%s: no "- %s ... runs in: ..." entry' % (f, f) for f in undocumented])
# the server's own names are srv_*/SRV_* (README.md "Names"): cd_* and CD_* are src/base's
defined = []
for f in names:
    text = re.sub(r'/\*.*?\*/', '', open(os.path.join(src, f)).read(), flags=re.S)
    for line in text.split('\n'):
        d = (re.match(r'#\s*define\s+(CD_\w+|cd_\w+)', line) or
             re.match(r'(?:struct|enum|union)\s+(cd_\w+)\s*\{', line) or
             re.match(r'[A-Za-z_][\w \t*]*?\b(cd_\w+)\s*\(', line) or
             re.match(r'typedef\b.*\b(cd_\w+)\s*;', line))
        if d:
            defined.append('%s: %s' % (f, d.group(1)))
result(not defined, 'src/server defines no cd_/CD_ name (its own are srv_/SRV_)', defined)
print('1..%d' % n)
sys.exit(1 if failed else 0)
