#!/usr/bin/env python3
"""jsoncmp A B: exit 0 when two JSON documents (gzip detected) hold the same values.

Values compare as Python compares what json.load gives, with two refinements:
a boolean never equals a number, and NaN equals NaN.  Object members compare
without regard to order, except the top-level keys, whose order must match
(the merge keeps the input's member order).  On a difference, print its path
and both values and exit 1; exit 2 when a file cannot be read.
"""
import gzip
import json
import math
import sys


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def diff(a, b, path):
    if isinstance(a, bool) or isinstance(b, bool):
        return None if type(a) is type(b) and a == b else path
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return path + " (keys: %s)" % sorted(set(a) ^ set(b))
        for k in a:
            d = diff(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return path + " (length %d vs %d)" % (len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return None
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return path
    return None if a == b else path


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        a, b = load(sys.argv[1]), load(sys.argv[2])
    except (OSError, ValueError) as e:
        print("jsoncmp: %s" % e, file=sys.stderr)
        return 2
    if isinstance(a, dict) and isinstance(b, dict) and list(a) != list(b):
        print("top-level key order differs: %s vs %s" % (list(a), list(b)))
        return 1
    d = diff(a, b, "$")
    if d:
        print("differ at %s" % d)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
