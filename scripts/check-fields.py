#!/usr/bin/env python3
"""Checks that the table-driven decoders read fields only through their
field tables (src/core/objects/fields.h); exits 1 on any finding.

A decoder that calls a getter (want_*, str_of, int_of, enum_of) with a
literal key reads a field that has no row, so the field is missing from
the kind's OpenAPI schema (schema.c builds it from the rows) and from the
probes of tests/unit/test_fields.c. Each finding is printed with its file
and the call. The key argument must come from a row: fld_key(ROW), or a
variable set from one.

Usage: scripts/check-fields.py [ROOT]   (ROOT: the checkout)
"""
import os
import re
import sys

FILES = ["src/core/objects/objects_kueue.c", "src/core/objects/objects_ray.c",
         "src/core/objects/objects_core.c"]
# getter(ctx, map, "key" ...) and the *_of checks' key argument
GETTER = re.compile(
    r'\b(want_(?!params\b|start_params\b)\w+|str_of|enum_of)\s*\(\s*'
    r'[^,()]+,\s*[^,()]+,\s*"')
INT_OF = re.compile(r'\b(int_of)\s*\(\s*[^,()]+,\s*"')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = 0
    for rel in FILES:
        with open(os.path.join(root, rel)) as f:
            text = f.read()
        flat = re.sub(r"\s+", " ", text)
        for m in list(GETTER.finditer(flat)) + list(INT_OF.finditer(flat)):
            print("%s: %s called with a literal key (no field row): %s..." %
                  (rel, m.group(1), flat[m.start():m.start() + 70]))
            bad += 1
    if bad:
        print("%d getter call(s) bypass the field tables" % bad)
        return 1
    print("check-fields: every field read goes through a row")
    return 0


if __name__ == "__main__":
    sys.exit(main())
