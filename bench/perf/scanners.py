"""The shared scan's matcher: RE2 sets vs Hyperscan, and the detectors' RE2 memory.

``python -m bench.perf.scanners [--base PATH] [--out bench/results/scanners.json]``

Candidates over the response patterns every enabled detector declares (policy packs,
pii, identifiers, refusal): ``re2_per_detector`` (one ``re2.Set`` per detector: the old
path), ``re2_union`` (one ``re2.Set`` over all of them: detectors/scan.py) and
``hyperscan`` (one Hyperscan database, block mode, single-match, no SOM; patterns it
cannot compile stay in an RE2 set). Each is measured in a fresh process: compile
time, RSS delta after compile and after scanning the traffic, per-event scan CPU on
the bundled traffic (stream.demo.generate(3000, seed=7)) and per-text CPU on 100 KB
hostile inputs. ``--base`` also measures an older checkout (a git worktree) for the
policy detector's and the whole default pipeline's RSS.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HOSTILE = {
    "policy_frames": "you should buy the I recommend buying it's a good time to the stock will ",
    "policy_moves": "Put a third of your savings into ",
    "refusal": "I'm sorry to hear that I can't stress enough the provided documents do ",
    "pii": "4242 4242 4242 4241 x 415-555-01 a.b.c@d 000-12-3456 ",
    "identifiers": "ERR {i} KB {i} E-{i} KB-00-{i} Run sudo systemctl restart a{i} and ",
}
OUT = Path(__file__).resolve().parents[1] / "results" / "scanners.json"


def _rss() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0


def _responses() -> list[str]:
    from stream.contract.events import InvalidEvent, parse_event
    from stream.demo import generate

    out = []
    for g in generate(3000, seed=7):
        with contextlib.suppress(InvalidEvent):
            out.append(parse_event(g.raw).response)
    return out


def _declared() -> dict[str, list[Any]]:
    from stream.runtime.components import build_detectors
    from stream.runtime.settings import Settings

    out: dict[str, list[Any]] = {}
    for det in build_detectors(Settings()):
        specs = [s for s in getattr(det, "patterns", ()) if "response" in s.fields]
        if specs:
            out[det.name] = specs
    return out


def _re2_set(specs: list[Any]) -> Any:
    import re2

    from detectors.regex import set_options

    s = re2._re2.Set(re2._Anchor.UNANCHORED, set_options())
    for spec in specs:
        rx = spec.regex if spec.case_sensitive else f"(?i:{spec.regex})"
        s.Add(rx.encode())
    s.Compile()
    return lambda data: len(s.Match(data))


def _hyperscan(specs: list[Any]) -> tuple[Any, list[str]]:
    import hyperscan as hs

    def flags(spec: Any) -> int:
        f = hs.HS_FLAG_UTF8 | hs.HS_FLAG_SINGLEMATCH | hs.HS_FLAG_ALLOWEMPTY
        return f if spec.case_sensitive else f | hs.HS_FLAG_CASELESS

    ok, failed = [], []
    for spec in specs:  # which ones Hyperscan rejects (one by one: it stops at the first)
        try:
            hs.Database().compile(expressions=[spec.regex.encode()], ids=[0], flags=[flags(spec)])
            ok.append(spec)
        except hs.error:
            failed.append(spec)
    db = hs.Database()
    db.compile(
        expressions=[s.regex.encode() for s in ok],
        ids=list(range(len(ok))),
        flags=[flags(s) for s in ok],
    )
    rest = _re2_set(failed) if failed else (lambda data: 0)

    def scan(data: bytes) -> int:
        hits: list[int] = []
        db.scan(data, match_event_handler=lambda i, *_: hits.append(i))
        return len(hits) + rest(data)

    return scan, [s.id for s in failed]


def child_matcher(kind: str) -> dict[str, Any]:
    specs_by_det = _declared()
    texts = [t.encode() for t in _responses()]
    hostile = {
        k: ("".join(u.format(i=i) for i in range(3000)) if "{i}" in u else u * 3000)[:100_000]
        for k, u in HOSTILE.items()
    }
    from detectors.regex import release_memory

    release_memory()
    r0, t0 = _rss(), time.perf_counter()
    fallback: list[str] = []
    if kind == "re2_per_detector":
        sets = [_re2_set(specs) for specs in specs_by_det.values()]
        scanners = sets
    elif kind == "re2_union":
        scanners = [_re2_set([s for specs in specs_by_det.values() for s in specs])]
    else:
        one, fallback = _hyperscan([s for specs in specs_by_det.values() for s in specs])
        scanners = [one]
    compile_s = time.perf_counter() - t0
    release_memory()
    r1 = _rss()
    for data in texts[:200]:  # warm the DFA caches
        for scan in scanners:
            scan(data)
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        for data in texts:
            for scan in scanners:
                scan(data)
        best = min(best, (time.process_time() - t) / len(texts) * 1e6)
    hostile_us = {}
    for name, text in hostile.items():
        data = text.encode()
        t = time.process_time()
        for scan in scanners:
            scan(data)
        hostile_us[name] = round((time.process_time() - t) * 1e6)
    return {
        "patterns": sum(map(len, specs_by_det.values())),
        "compile_s": round(compile_s, 3),
        "rss_after_compile_mib": round(r1 - r0, 1),
        "rss_after_traffic_mib": round(_rss() - r0, 1),
        "scan_us_per_event": round(best, 2),
        "hostile_100kb_us": hostile_us,
        "fallback_to_re2": fallback,
    }


def child_memory(kind: str) -> dict[str, Any]:
    """RSS of one built policy detector, or of the default pipeline (judges off)."""
    from stream.contract.events import parse_event
    from stream.runtime.pipeline import Pipeline
    from stream.runtime.settings import Settings

    texts = _responses()
    r0 = _rss()
    run: Any
    if kind == "policy":
        from detectors import create_detector

        det = create_detector("policy")
        run = det
    else:
        pipe = Pipeline(Settings(), run_drift=False)
        pipe.dedupe.size = 0
        run = pipe.process
    r1 = _rss()
    for i, text in enumerate(texts):
        raw = json.dumps({"event_id": f"m{i}", "query": "q", "response": text})
        run(parse_event(raw) if kind == "policy" else raw)
    return {"built_mib": round(r1 - r0, 1), "after_traffic_mib": round(_rss() - r0, 1)}


def _child(root: str, *args: str) -> dict[str, Any]:
    """This file run in a fresh interpreter with `root`'s code first on the path."""
    code = (
        f"import sys, runpy; sys.path.insert(0, {root!r}); sys.argv = ['x', *{list(args)!r}]; "
        f"runpy.run_path({__file__!r}, run_name='__main__')"
    )
    env = {"PYTHONPATH": root, "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--base", help="an older checkout to measure memory against")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if args.child:
        what, kind = args.child
        res = child_matcher(kind) if what == "matcher" else child_memory(kind)
        print(json.dumps(res))
        return
    here = str(Path(__file__).resolve().parents[2])
    result: dict[str, Any] = {"matchers": {}, "memory": {}}
    kinds = ["re2_per_detector", "re2_union"]
    if importlib.util.find_spec("hyperscan") is not None:  # not a dependency: pip install it
        kinds.append("hyperscan")
    for kind in kinds:
        result["matchers"][kind] = _child(here, "--child", "matcher", kind)
        print(kind, result["matchers"][kind], flush=True)
    roots = {"after": here} | ({"before": args.base} if args.base else {})
    for label, root in roots.items():
        for kind in ("policy", "pipeline"):
            res = _child(root, "--child", "memory", kind)
            result["memory"][f"{kind}_{label}"] = res
            print(kind, label, res, flush=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
