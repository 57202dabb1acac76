#!/usr/bin/env python3
"""Writes a copy of a normfuse artifact without its variants of one access
kind (e.g. `peeled`), with the digest recomputed: the runtime then picks
among the others, with the same compiled functions. An A/B baseline for a
new variant kind that needs no second compiler build.

    tools/drop-variant-kind.py KIND IN.nfa OUT.nfa
"""
import re
import sys


def fnv1a64(data: bytes) -> int:
    h = 0xcbf29ce484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    kind, src, dst = sys.argv[1:4]
    data = open(src, "rb").read()
    cut = data.rfind(b"\ndigest fnv1a64 ")
    if cut < 0:
        sys.exit(f"error: {src}: no digest line (not a normfuse artifact)")
    body = data[:cut + 1]
    # Variant lines are text lines of the metadata, before any blob.
    pattern = re.compile(rb"\nvariant \S+ " + re.escape(kind.encode()) +
                         rb" [^\n]*")
    body, n = pattern.subn(b"", body)
    if n == 0:
        sys.exit(f"error: {src}: no '{kind}' variant")
    out = body + b"digest fnv1a64 %016x\n" % fnv1a64(body)
    open(dst, "wb").write(out)
    print(f"{dst}: {n} '{kind}' variants dropped")


if __name__ == "__main__":
    main()
