"""Survey for a full port: do all six detectors' RE2 patterns compile with the `regex` crate?

``python bench/proto/rust_pii/patterns_check.py [--so-dir /tmp/rust_pii_build] [--tree PATH]
[--out /tmp/rust_pii_patterns.json]``

Records every pattern RE2 compiles while the pipeline's detectors are built and run on
200 bundled events (``re2._Regexp`` wrapped before ``detectors`` is imported), plus every
declared ``PatternSpec`` of the pipeline's shared scanner (the one-pass sets, and the
``prefilter`` ones that scan.py screens with RE2's FilteredRE2). Each is translated to
the `regex` crate's dialect (``translate``: RE2's ASCII-only ``\\d \\s \\w \\b`` spelled out,
RE2-literal ``[ & ~`` inside classes escaped, escapes of non-meta punctuation dropped)
and compiled by the extension's ``compile_check`` (bytes API, Unicode on) with the
crate's default 10 MiB program cap and with 256 MiB; the per-field sets likewise
(``set_check``). Then each pattern's spans, RE2's (``detectors.regex._ascii_spans`` on the
UTF-8 bytes) against the crate's (``find_spans``), on every text of the 200 events.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

_META = set("\\.+*?()|[]{}^$#&-~")  # what regex-syntax 0.6 accepts after a backslash
_OUT_CLASS = {
    "d": "[0-9]", "D": "[^0-9]",
    "s": "[\\t\\n\\f\\r ]", "S": "[^\\t\\n\\f\\r ]",
    "w": "[0-9A-Za-z_]", "W": "[^0-9A-Za-z_]",
    "b": "(?-u:\\b)", "B": "(?-u:\\B)",
    "C": "(?s-u:.)",
}  # fmt: skip
_IN_CLASS = {
    "d": "0-9", "D": "[^0-9]",
    "s": "\\t\\n\\f\\r ", "S": "[^\\t\\n\\f\\r ]",
    "w": "0-9A-Za-z_", "W": "[^0-9A-Za-z_]",
}  # fmt: skip


def translate(rx: str) -> str:
    """RE2 syntax -> regex-crate syntax with RE2's meaning for Perl classes and \\b."""
    out: list[str] = []
    i, n = 0, len(rx)
    in_class = False
    class_start = -1
    while i < n:
        c = rx[i]
        if c == "\\" and i + 1 < n:
            e = rx[i + 1]
            table = _IN_CLASS if in_class else _OUT_CLASS
            if e in table:
                out.append(table[e])
            elif e.isalnum() or e in _META:
                # \x.., \p{..}, \n, \t, \A, \z, \Q (unsupported: left for the compiler)
                out.append(c + e)
            else:
                out.append(e)  # an escaped non-meta punctuation: the plain character
            i += 2
            continue
        if in_class:
            if c == "[" and rx.startswith("[:", i):
                end = rx.find(":]", i + 2)
                if end > 0:
                    out.append(rx[i : end + 2])
                    i = end + 2
                    continue
            if (
                c == "]"
                and i > class_start + 1
                and not (i == class_start + 2 and rx[class_start + 1] == "^")
            ):
                in_class = False
                out.append(c)
            elif c in "[&~":
                out.append("\\" + c)
            else:
                out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            class_start = i
        out.append(c)
        i += 1
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--so-dir", default="/tmp/rust_pii_build")
    ap.add_argument("--tree", type=Path, default=ROOT)
    ap.add_argument("--out", type=Path, default=Path("/tmp/rust_pii_patterns.json"))
    args = ap.parse_args(argv)
    for p in (str(HERE.parent), str(args.tree.resolve()), str(HERE), args.so_dir):
        sys.path.insert(0, p)  # HERE.parent: bench/proto, the shared measuring module

    import re2

    compiled: list[tuple[str, bool]] = []
    orig = re2._Regexp

    class _Recording(orig):  # type: ignore[misc, valid-type]
        def __init__(self, pattern: Any, options: Any) -> None:
            p = pattern.decode() if isinstance(pattern, bytes) else pattern
            compiled.append((p, bool(options.case_sensitive)))
            super().__init__(pattern, options)

    re2._Regexp = _Recording  # before detectors.regex reads it

    import ragpulse_pii
    from measuring import make_pipeline, parse_all, traffic

    pipeline = make_pipeline()
    events = parse_all(traffic(200), pipeline.limits)
    scanner = pipeline.scanner
    for e in events:
        scan = scanner.scan()
        for d in pipeline.detectors:
            scanner.run(d, e, scan)

    specs = [(d.name, s) for d in scanner.detectors for s in d.patterns]
    items: dict[tuple[str, bool], dict[str, Any]] = {}
    for name, spec in specs:
        key = (spec.regex, spec.case_sensitive)
        items.setdefault(key, {"sources": set(), "prefilter": spec.prefilter})
        items[key]["sources"].add(f"{name} PatternSpec")
    for pattern, cs in compiled:
        items.setdefault((pattern, cs), {"sources": set(), "prefilter": False})
        items[(pattern, cs)]["sources"].add("compiled by RE2")

    from detectors.regex import _ascii_spans, compile_pattern

    texts = []  # every text of the events (response, query, chunks, ...): spans compared
    for e in events:
        texts += [e.response, e.query] + [c.content for c in e.retrieved_context]
        texts += [m.content for m in e.history] + [c.text or "" for c in e.citations]
    datas = [t.encode() for t in texts]

    rows = []
    for (pattern, cs), info in items.items():
        rust = translate(pattern)
        if not cs:
            rust = f"(?i:{rust})"
        ok, err, secs = ragpulse_pii.compile_check(rust, 10 << 20)
        ok_big, err_big, secs_big = (ok, err, secs)
        if not ok:
            ok_big, err_big, secs_big = ragpulse_pii.compile_check(rust, 256 << 20)
        same_spans = None
        if ok_big:
            prog = compile_pattern(pattern, cs)
            want = [[tuple(sp[0]) for sp in _ascii_spans(prog, d, 1000)] for d in datas]
            got = ragpulse_pii.find_spans(rust, texts, 1000)
            same_spans = sum(w == g for w, g in zip(want, got, strict=True))
        rows.append(
            {
                "texts": len(texts),
                "texts_same_spans": same_spans,
                "chars": len(pattern),
                "case_sensitive": cs,
                "prefilter": info["prefilter"],
                "sources": sorted(info["sources"]),
                "ok_10mib": ok,
                "error_10mib": err[:300],
                "compile_s": secs,
                "ok_256mib": ok_big,
                "error_256mib": err_big[:300],
                "compile_s_256mib": secs_big,
                "pattern_head": pattern[:120],
            }
        )

    sets = []
    for field, fs in scanner._fields.items():
        members = []
        for gid in fs.set_ids:
            spec = scanner._spec[gid]
            rx = translate(spec.regex)
            members.append(rx if spec.case_sensitive else f"(?i:{rx})")
        if not members:
            continue
        t0 = time.perf_counter()
        ok, err, secs = ragpulse_pii.set_check(members, 10 << 20)
        if not ok:
            ok2, err2, secs2 = ragpulse_pii.set_check(members, 256 << 20)
        else:
            ok2, err2, secs2 = ok, err, secs
        sets.append(
            {
                "field": field,
                "patterns": len(members),
                "prefiltered": len(fs.filter_ids),
                "ok_10mib": ok,
                "error_10mib": err[:300],
                "compile_s": secs,
                "ok_256mib": ok2,
                "error_256mib": err2[:300],
                "compile_s_256mib": secs2,
                "wall_s": time.perf_counter() - t0,
            }
        )
        print(f"[set] {sets[-1]}", file=sys.stderr)

    summary = {
        "patterns": len(rows),
        "from_specs": sum(any("PatternSpec" in s for s in r["sources"]) for r in rows),
        "prefilter_specs": sum(r["prefilter"] for r in rows),
        "ok_10mib": sum(r["ok_10mib"] for r in rows),
        "ok_256mib": sum(r["ok_256mib"] for r in rows),
        "max_chars": max(r["chars"] for r in rows),
        "median_chars": statistics.median(r["chars"] for r in rows),
        "compile_s_total": sum(r["compile_s_256mib"] for r in rows),
        "texts_per_pattern": len(texts),
        "patterns_same_spans_on_all_texts": sum(r["texts_same_spans"] == len(texts) for r in rows),
        "patterns_differing": [
            {"head": r["pattern_head"], "same": r["texts_same_spans"], "sources": r["sources"]}
            for r in rows
            if r["texts_same_spans"] is not None and r["texts_same_spans"] != len(texts)
        ],
        "errors": sorted(
            {
                r["error_256mib"].splitlines()[-1] if r["error_256mib"] else ""
                for r in rows
                if not r["ok_256mib"]
            }
        ),
    }
    print(json.dumps(summary, indent=1))
    args.out.write_text(json.dumps({"summary": summary, "sets": sets, "patterns": rows}, indent=1))
    print(f"written {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
