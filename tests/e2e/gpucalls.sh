#!/bin/sh
# gpucalls.sh - no call circle among the files of src/gpu (issue 29): the
# file-level call graph, read from the built objects with nm (a file calls
# another when it uses a symbol the other defines), has no cycle.  The
# stage stands in layers (drawn at the top of src/gpu/gpuconv.c): the
# object's life and setters over the stages (digest, plan, render, rows,
# annotations, scan), over the rules they share (gpurules.c, gpufield.c,
# gpucut.c), over the leaves (records, tables, Kineto's formulas).  A call
# back up makes a circle, which this check names with the symbols that
# close it.  And each part of struct cm_gpu is written only by its owner.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to walk the call graph"
need nm "to read the objects' symbols"

tcase "the files of src/gpu call each other without a circle"
python3 - "$srcdir/src/gpu" src/gpu >"$tmp/out" 2>&1 <<'EOF' || fail "$(cat "$tmp/out")"
import glob, os, re, subprocess, sys

srcdir, builddir = sys.argv[1], sys.argv[2]
# libtool puts the objects of the library in .libs (PIC) or beside the .lo
objs = {}
for o in glob.glob(os.path.join(builddir, ".libs", "*.o")) + glob.glob(os.path.join(builddir, "*.o")):
    name = re.sub(r"^lib\w+_la-", "", os.path.basename(o)[:-2])
    objs.setdefault(name, o)
sources = {os.path.basename(c)[:-2] for c in glob.glob(os.path.join(srcdir, "*.c"))}
missing = sorted(s for s in sources if s not in objs and not s.startswith("cbid_table"))
if missing:
    print("no object for %s in %s: build first" % (", ".join(missing), builddir))
    sys.exit(1)

defined, used = {}, {}
for name, o in sorted(objs.items()):
    out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            used.setdefault(name, set()).add(f[1])
        elif len(f) == 3 and f[1] in "TDBRGSVW":
            defined[f[2]] = name
calls = {n: {} for n in objs}
for n, syms in used.items():
    for s in syms:
        t = defined.get(s)
        if t and t != n:
            calls[n].setdefault(t, []).append(s)

# Tarjan's strongly connected components: a component of two or more files
# is a circle
index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in sorted(calls[v]):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        comps.append(sorted(comp))
for v in sorted(calls):
    if v not in index:
        visit(v)
bad = [c for c in comps if len(c) > 1]
for c in bad:
    print("these files of src/gpu call each other in a circle: %s" % ", ".join(c))
    for a in c:
        for b in c:
            if b in calls[a]:
                print("  %s -> %s (%s)" % (a, b, ", ".join(sorted(calls[a][b]))))
sys.exit(1 if bad else 0)
EOF

# struct cm_gpu is in the parts each phase owns (gpuconv_int.h); a part is
# written only in the files of its owner (and gpuconv.c, which makes and
# frees the object).  The files that read the plan (the render, the rows,
# the rules but gpu_extent) see the object as const, which the compiler
# checks; this looks at the others' assignments, increments and table puts.
# gpusplit.c and gpusplitout.c (--split) own what they swap: a group's records
# (win), its plan and its annotation spans are made cm_gpu's own while the
# group is selected; gpusplitdeal.c, the deal, fills the plan's table of the
# syncs' waits that every group's render reads.
tcase "each part of struct cm_gpu is written only by the files that own it"
python3 - "$srcdir/src/gpu" >"$tmp/out" 2>&1 <<'EOF' || fail "$(cat "$tmp/out")"
import glob, os, re, sys
src = sys.argv[1]
OWNERS = {
    "win": {"gpuconv", "gpudigest", "gpuscan", "gpujoin", "gpusplit", "gpusplitout"},
    "cpu": {"gpuconv"},
    "ann": {"gpuconv", "gpuanns", "gpusplit", "gpusplitout"},
    "link": {"gpuconv", "gpujoin", "gpuscan", "gpuplan"},
    "plan": {"gpuconv", "gpuplan", "gpurules", "gpusplit", "gpusplitdeal", "gpusplitout"},
}
ref = r"(?:\bg|->g)->(win|cpu|ann|link|plan)\.(\w+)"
pats = [
    re.compile(ref + r"(?:\[[^\]]*\])?(?:\.\w+)*\s*(?:=(?!=)|\+=|-=|\|=|&=|\+\+|--)"),
    re.compile(r"(?:\+\+|--)\s*" + ref),
    re.compile(r"\bcm_(?:idmap|hmap|idkeys)_(?:put|add|free)\(\s*" + ref),
]
bad = []
for path in sorted(glob.glob(os.path.join(src, "*.c"))):
    name = os.path.basename(path)[:-2]
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        for p in pats:
            for m in p.finditer(line):
                part, field = m.group(1), m.group(2)
                if name not in OWNERS[part]:
                    bad.append("src/gpu/%s.c:%d: writes g->%s.%s; only %s may" % (name, n, part, field, ", ".join(sorted(OWNERS[part]))))
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

finish
