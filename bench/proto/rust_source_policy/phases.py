"""Where the Rust source_policy time goes: phase timers of a ``--features prof`` build.

Build the profiling copy beside the measured one (without options, ``bench/proto/build.sh``
builds without timers)::

    TARGET=/tmp/rsp_prof_target OUT=/tmp/rsp_prof_build \\
        sh bench/proto/build.sh rust_source_policy --features prof
    python bench/proto/rust_source_policy/phases.py --tree /tmp/rsp_head \\
        --so-dir /tmp/rsp_prof_build

Runs ``core.detect`` over freshly parsed real-work events of the traffic (a non-summarize
chunk and a response), ``--passes`` times, and prints the microseconds per event in each
phase (the timers themselves cost ~25 ns each, so the total is a little above the
measured build).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PHASES = [
    "chunk filter + attribute reads (Python objects, UTF-8)",
    "chunk words",
    "whole response side (words, vocabulary)",
    "outside side (blank_quoted, verbatim single quotes, words, vocabulary)",
    "n-gram checks",
    "reported-speech clauses (_ATTRIBUTION)",
    "reported-speech test",
    "detect total",
]


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--so-dir", default="/tmp/rsp_prof_build")
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "phases.json")
    args = ap.parse_args()
    for p in (str(HERE.parent), str(args.tree.resolve()), str(HERE), args.so_dir):
        sys.path.insert(0, p)  # HERE.parent: bench/proto, the shared measuring module
    import ragpulse_source_policy as mod
    from measure import _has_work
    from measuring import make_pipeline, parse_all, traffic
    from wrapper import RustSourcePolicyDetector

    limits = make_pipeline().limits
    raws = traffic(args.events)
    real_raws = [raw for raw in raws if _has_work(raw, limits)]
    detect = RustSourcePolicyDetector().core.detect
    for e in parse_all(real_raws, limits):  # warm-up
        detect(e)
    cpu_s = 0.0
    before = mod.prof_stats()
    for _ in range(args.passes):
        real = parse_all(real_raws, limits)  # fresh events: no cached UTF-8 copies
        t0 = time.process_time()
        for e in real:
            detect(e)
        cpu_s += time.process_time() - t0
    cpu = cpu_s / len(real) / args.passes * 1e6
    after = mod.prof_stats()
    per = {
        name: (b - a) / 1e3 / len(real) / args.passes
        for name, a, b in zip(PHASES, before, after, strict=True)
    }
    if not any(per.values()):
        print("the extension was not built with --features prof", file=sys.stderr)
        return 1
    for name, us in per.items():
        print(f"{us:6.2f} us/event  {name}")
    print(f"{cpu:6.2f} us/event  CPU, whole loop (process_time)")
    out = {"real_work_events": len(real), "passes": args.passes, "us_per_event": per, "cpu_us": cpu}
    args.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
