"""jsonfile.py - the JSON document at a path, plain or gzip (known by its magic
bytes, not its name): the one reader of the GPU machine's checks (check_merged.py,
check_window.py, compare_kineto.py, selftest_compare_kineto.py), each of which had
a copy of it."""
import gzip
import json


def load(path, **kw):
    """The JSON document at PATH, plain or gzip; KW goes to json.load (as
    compare_kineto.py's parse_float, which keeps each float's text)."""
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f, **kw)
