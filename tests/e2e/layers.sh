#!/bin/sh
# layers.sh - the layers of src/ hold (issue 29): every `#include "..."` of a
# source file goes to its own folder or to one its folder stands on, in the
# order base <- io <- json <- cpu | gpu | pftrace <- repair <- the engine
# (src/*.c: main, merge, filter, crosscheck).  batch/ stands on base/, io/
# and json/ (the bounds of one value, json/docsplit.h, over its scan; the
# engine uses that scan, batchscan.c and batchread.c, for the crosscheck);
# cuptirec/, the collector, stands apart: of the rest it takes three leaves that include
# nothing of the project, base/optname.h and base/optnum.h, which all three
# programs' command lines share, and base/fdio.h, the write-all loop
# (ALLOWED_FILES; their .c
# files are compiled into cuptirec and its libraries, so a wider allowance
# would pull the merge's code into a library loaded into the profiled
# process).  The breaks known today are listed below as exceptions, each naming
# its issue, so the check passes now and fails on any new upward or sideways
# include, and on an exception that is no longer needed.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to read the includes"

tcase "every #include in src/ follows the layers (or is a listed exception)"
python3 - "$srcdir/src" >"$tmp/out" 2>&1 <<'EOF' || fail "$(cat "$tmp/out")"
import os, re, sys

SRC = sys.argv[1]
# folder -> the folders it may include (besides itself); "top" is src/*.[ch]
ALLOWED = {
    "base": set(),
    "io": {"base"},
    "json": {"base", "io"},
    "cpu": {"base", "io", "json"},
    "gpu": {"base", "io", "json"},
    "pftrace": {"base", "io", "json"},
    "repair": {"base", "io", "json", "cpu", "gpu"},
    "batch": {"base", "io", "json"},
    "top": {"base", "io", "json", "cpu", "gpu", "pftrace", "repair", "batch"},
    "cuptirec": set(),
}
# folder -> single files below it that it may include besides: leaves, each
# including no project header (checked below), so nothing comes with them
ALLOWED_FILES = {
    "cuptirec": {"base/optname.h", "base/optnum.h", "base/fdio.h"},
}
# (file, include) pairs that break the layers today; remove one when it is fixed
EXCEPTIONS = set()  # none left (issue 29 moved the last, cm_evout, into json/)
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

def folder(rel):
    return rel.split("/")[0] if "/" in rel else "top"

bad, seen = [], set()
for d, _, files in os.walk(SRC):
    for f in sorted(files):
        if not f.endswith((".c", ".h")):
            continue
        path = os.path.join(d, f)
        rel = os.path.relpath(path, SRC)
        with open(path, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = INC.match(line)
                if not m or m.group(1) == "config.h":
                    continue
                inc = m.group(1)
                # as the compiler looks: beside the file first, then src/
                beside = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
                target = beside if os.path.exists(os.path.join(SRC, beside)) else inc
                a, b = folder(rel), folder(target)
                if (rel, target) in EXCEPTIONS:
                    seen.add((rel, target))
                elif target in ALLOWED_FILES.get(a, set()):
                    pass
                elif a != b and b not in ALLOWED.get(a, set()):
                    bad.append("src/%s:%d: %s (%s) includes %s (%s)" % (rel, n, rel, a, target, b))
# a file allowed alone must stay a leaf: its .h and .c include no project header
for leaf in sorted(set().union(*ALLOWED_FILES.values())):
    for f in (leaf, leaf[:-2] + ".c"):
        if not os.path.exists(os.path.join(SRC, f)):
            continue
        with open(os.path.join(SRC, f), encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = INC.match(line)
                if m and m.group(1) not in ("config.h", os.path.basename(leaf), leaf):
                    bad.append("src/%s:%d: %s is allowed alone as a leaf, but includes %s" % (f, n, f, m.group(1)))
for rel, target in sorted(EXCEPTIONS - seen):
    bad.append("exception no longer needed, remove it: %s -> %s" % (rel, target))
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

finish
