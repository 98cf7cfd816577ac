"""Per-detector CPU on the pipeline path: an older tree against this one, side by side.

``python -m bench.perf.detector_costs --base PATH [--tree PATH] [--rounds 5]
[--events 3000] [--out bench/results/detector_costs.json]``

Two child processes, each with ``PYTHONPATH`` set to one tree (``--base``: an older
copy of the repo, e.g. made with ``git worktree add``; ``--tree``: this checkout by
default), measure one pass at a time on request. Each child builds
``Pipeline(load_settings(), PromFamilies…)`` with dedupe off and feeds the bundled traffic
(``stream.demo.generate(events, seed=7)``) through it:

* ``whole``: ``pipeline.process(raw)`` per event (fresh parse each time, the real path),
  CPU time per event;
* ``detectors``: the pipeline's detector loop alone (``scanner.scan()``, then
  ``scanner.run(det, event, scan)`` for each detector in order) over freshly parsed
  events (the parse is not timed);
* per detector: the same loop with that one detector only, so its share of the shared
  screening (the texts it asks about) is charged to it; the sum is a little above
  ``detectors``, where the screening of the response is shared.

CPU time (``time.process_time``) around whole passes: a clock read per call costs
microseconds here.

After a warm-up pass, the parent asks for every measurement on both trees back to back
(order alternating by round) for ``--rounds`` rounds and keeps the medians: the machine
is shared, so only side-by-side numbers are compared. It also checks that both trees
give the same detections on the traffic (a SHA-256 of every event's detections).

``--detectors-only``: the base is a scratch copy of ``--tree`` with ``detectors/`` from
``--base``, so work elsewhere in the tree (parsing, pipeline) does not count.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "results" / "detector_costs.json"


def parse_valid(raws: list[bytes], limits: Any) -> list[Any]:
    """`raws` parsed as the pipeline parses them (with its `limits`), the invalid ones
    dropped: fresh events, as the detectors get them."""
    from stream.contract.events import InvalidEvent, parse_event

    out = []
    for raw in raws:
        try:  # noqa: SIM105 - the pipeline's own loop shape
            out.append(parse_event(raw, limits))
        except InvalidEvent:
            pass
    return out


def _child(events: int) -> None:
    from exporters.prometheus import PromFamilies
    from stream.demo import generate
    from stream.runtime.pipeline import Pipeline
    from stream.runtime.settings import load_settings

    settings = load_settings()
    metrics = PromFamilies.with_label_caps(settings.labels.max_values, settings.labels.allow)
    pipeline = Pipeline(settings, metrics)
    pipeline.dedupe.size = 0
    raws = [g.raw for g in generate(events, seed=7)]
    limits = pipeline.limits
    names = [d.name for d in pipeline.detectors]
    scanner = pipeline.scanner
    clock = time.process_time  # CPU time: the machine is shared, wall time is not ours

    def parsed() -> list[Any]:
        return parse_valid(raws, limits)

    def loop(dets: list[Any]) -> tuple[float, str]:
        events = parsed()  # fresh events, as the pipeline gets them; not timed
        gc.collect()  # the parse's garbage is not charged to the detectors
        t0 = clock()
        found = []
        for event in events:
            scan = scanner.scan()
            for det in dets:
                found.append(scanner.run(det, event, scan))
        spent = clock() - t0
        digest = hashlib.sha256()
        for ds in found:
            digest.update(repr([d.to_dict() for d in ds]).encode())
        return spent / len(events) * 1e6, digest.hexdigest()

    def whole() -> float:
        gc.collect()
        t0 = clock()
        for raw in raws:
            pipeline.process(raw)
        return (clock() - t0) / len(raws) * 1e6

    loop(pipeline.detectors)  # warm-up: compiles, RE2 DFA caches
    whole()
    _, sha = loop(pipeline.detectors)
    print(json.dumps({"names": names, "events": len(raws), "scored": len(parsed()), "sha": sha}))
    sys.stdout.flush()
    for line in sys.stdin:  # one measurement per request: "<i>" (a detector), "all", "whole"
        what = line.strip()
        if what == "whole":
            got = whole()
        elif what == "all":
            got = loop(pipeline.detectors)[0]
        else:
            got = loop([pipeline.detectors[int(what)]])[0]
        print(json.dumps(got))
        sys.stdout.flush()


class _Child:
    """A measuring child process on one tree, asked for one pass at a time."""

    def __init__(self, tree: Path, events: int) -> None:
        argv = ["detector_costs", "--child", "--events", str(events)]
        # this file run inside the other tree (which may not have it): imports from there
        me = str(Path(__file__).resolve())
        run = f"runpy.run_path({me!r}, run_name='__main__')"
        script = f"import runpy, sys; sys.argv = {argv!r}; {run}"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONPATH": str(tree)},
            cwd=tree,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.info: dict[str, Any] = json.loads(self._line())

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"measuring child exited with {self.proc.wait()}")
        return line

    def ask(self, what: str) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(what + "\n")
        self.proc.stdin.flush()
        return float(json.loads(self._line()))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--base", type=Path, help="the older tree (a copy or git worktree)")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the tree to compare (this one)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--events", type=int, default=3000)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--detectors-only",
        action="store_true",
        help="compare only detectors/: the base is a copy of --tree with --base's detectors/",
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.events)
        return 0
    if args.base is None:
        ap.error("--base is required")
    trees = {"base": args.base.resolve(), "tree": args.tree.resolve()}
    scratch = None
    if args.detectors_only:  # the rest of the code (parse, pipeline) is the same on both
        scratch = tempfile.TemporaryDirectory(prefix="detector-costs-")
        hybrid = Path(scratch.name) / "base"
        skip = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info")
        shutil.copytree(trees["tree"], hybrid, ignore=skip)
        shutil.rmtree(hybrid / "detectors")
        shutil.copytree(trees["base"] / "detectors", hybrid / "detectors", ignore=skip)
        trees["base"] = hybrid
    children = {k: _Child(t, args.events) for k, t in trees.items()}
    names = children["tree"].info["names"]
    if children["base"].info["names"] != names:
        raise SystemExit("the trees enable different detectors")
    kinds = [*map(str, range(len(names))), "all", "whole"]
    got: dict[str, dict[str, list[float]]] = {k: {w: [] for w in kinds} for k in trees}
    for r in range(args.rounds):
        for w in kinds:  # side by side: each measurement on both trees, order alternating
            for key in trees if r % 2 == 0 else reversed(trees):
                got[key][w].append(children[key].ask(w))
        print(
            f"round {r + 1}: detectors base {got['base']['all'][-1]:.1f} "
            f"tree {got['tree']['all'][-1]:.1f} us/event",
            file=sys.stderr,
        )
    for child in children.values():
        child.close()
    if scratch is not None:
        scratch.cleanup()

    def summary(key: str) -> dict[str, Any]:
        med = {w: round(statistics.median(v), 2) for w, v in got[key].items()}
        return {
            "us_per_event": {n: med[str(i)] for i, n in enumerate(names)},
            "detectors_us_per_event": med["all"],
            "whole_us_per_event": med["whole"],
            "runs": {
                names[int(w)] if w.isdigit() else w: [round(x, 2) for x in v]
                for w, v in got[key].items()
            },
        }

    before, after = summary("base"), summary("tree")
    shas = {k: c.info["sha"] for k, c in children.items()}
    b_us, a_us = before["us_per_event"], after["us_per_event"]
    speed = {n: round(b_us[n] / max(a_us[n], 1e-9), 2) for n in names}
    speed["detectors"] = round(
        before["detectors_us_per_event"] / after["detectors_us_per_event"], 2
    )
    speed["whole"] = round(before["whole_us_per_event"] / after["whole_us_per_event"], 2)
    result = {
        "what": "CPU us/event on the pipeline path, medians of side-by-side rounds",
        "events": children["tree"].info["events"],
        "scored": children["tree"].info["scored"],
        "rounds": args.rounds,
        "base": str(args.base.resolve()),
        "detectors_only": args.detectors_only,
        "tree": str(trees["tree"]),
        "same_detections": shas["base"] == shas["tree"],
        "detections_sha256": shas,
        "before": before,
        "after": after,
        "speedup": speed,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'detector':<16}{'before':>10}{'after':>10}{'x':>7}")
    for n in names:
        b, a = before["us_per_event"][n], after["us_per_event"][n]
        print(f"{n:<16}{b:>10.1f}{a:>10.1f}{speed[n]:>7.2f}")
    for label, k in (("detectors", "detectors_us_per_event"), ("whole", "whole_us_per_event")):
        print(f"{label:<16}{before[k]:>10.1f}{after[k]:>10.1f}{speed[label]:>7.2f}")
    print(f"same detections: {result['same_detections']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
