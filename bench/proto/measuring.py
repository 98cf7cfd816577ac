"""What the Rust prototypes' measure.py scripts share (bench/proto/<name>/measure.py).

The tree under test on ``sys.path``; the pipeline and its event parse (the pipeline's
limits, the loop shape of ``bench/perf/detector_costs.py``); the bundled traffic and the
labelled sets under /work/shared/datasets; the timed passes and the alternating speed loop;
the run's header (date, machine, tree commit).

A script puts this folder (bench/proto) on ``sys.path`` and imports ``measuring``. Nothing
from ragpulse is imported here at import time: the imports sit inside the functions, so
they come from the tree that ``setup`` has put first on ``sys.path``.
"""

from __future__ import annotations

import argparse
import csv
import gc
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROTO = Path(__file__).resolve().parent
ROOT = PROTO.parents[1]  # the checkout this folder is in: the default tree
DATASETS = Path("/work/shared/datasets")


def arguments(description: str, so_dir: str, fuzz: int, out: Path) -> argparse.ArgumentParser:
    """The options every measure.py takes (a script adds its own)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--so-dir", default=so_dir)
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--fuzz", type=int, default=fuzz)
    ap.add_argument("--skip-equivalence", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--out", type=Path, default=out)
    ap.add_argument(
        "--tree",
        type=Path,
        default=ROOT,
        help="the ragpulse tree to import (default: this checkout; e.g. a `git archive HEAD` "
        "copy when the checkout is being edited)",
    )
    return ap


def setup(here: Path, so_dir: str, tree: Path) -> None:
    """Put the tree, the prototype's folder (wrapper.py) and the built extension first."""
    for p in (str(tree), str(here), so_dir):
        if p not in sys.path:
            sys.path.insert(0, p)


def begin(here: Path, args: argparse.Namespace, extension: str) -> tuple[Any, Any, dict[str, Any]]:
    """After parsing the options: setup, then the extension module, the pipeline and the
    result's header."""
    tree = args.tree.resolve()
    setup(here, args.so_dir, tree)
    mod = importlib.import_module(extension)
    return mod, make_pipeline(), run_header(tree, mod.__file__)


# --------------------------------------------------------------------------- events


def make_pipeline() -> Any:
    """The pipeline as configured by default, deduplication off."""
    from exporters.prometheus import Metrics
    from stream.runtime.pipeline import Pipeline
    from stream.runtime.settings import load_settings

    settings = load_settings()
    metrics = Metrics.with_label_caps(settings.labels.max_values, settings.labels.allow)
    pipeline = Pipeline(settings, metrics)
    pipeline.dedupe.size = 0
    return pipeline


def parse_all(raws: list[bytes], limits: Any) -> list[Any]:
    """The raw events parsed with the pipeline's limits; the invalid ones dropped (the
    tree's own `bench.perf.detector_costs.parse_valid`)."""
    from bench.perf.detector_costs import parse_valid

    return parse_valid(raws, limits)


def traffic(n: int, phase: str = "baseline") -> list[bytes]:
    """The first n raw messages of the bundled traffic, seed 7."""
    from stream.demo import generate

    return [g.raw for g in generate(n, seed=7, phase=phase)]


@dataclass(frozen=True)
class Sample:
    """One response of a labelled set, with the texts that came with it."""

    row: int  # the row's index in its file
    answer: int  # which of the row's responses: halueval qa has two (right, hallucinated)
    field: str  # the response's field name
    query: str
    response: str
    passage: str | None  # the row's reference passage, for the sets that have one


def labelled_samples() -> dict[str, list[Sample]]:
    """The labelled sets found under DATASETS, in this order: ragtruth, halueval_general,
    halueval_qa, xstest_<completions file>."""
    out: dict[str, list[Sample]] = {}

    def jsonl(p: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]

    def sets(
        rows: list[dict[str, Any]], query: str, answers: tuple[str, ...], passage: str | None
    ) -> list[Sample]:
        return [
            Sample(
                i,
                j,
                k,
                str(r.get(query, "")),
                str(r.get(k, "")),
                None if passage is None else str(r.get(passage, "")),
            )
            for i, r in enumerate(rows)
            for j, k in enumerate(answers)
        ]

    p = DATASETS / "ragtruth" / "ragtruth_qa_test_subset.jsonl"
    if p.exists():
        out["ragtruth"] = sets(jsonl(p), "query", ("d2",), "d1")
    p = DATASETS / "halueval" / "general_data.json"
    if p.exists():
        out["halueval_general"] = sets(jsonl(p), "user_query", ("chatgpt_response",), None)
    p = DATASETS / "halueval" / "qa_data.jsonl"
    if p.exists():
        answers = ("right_answer", "hallucinated_answer")
        out["halueval_qa"] = sets(jsonl(p), "question", answers, "knowledge")
    p = DATASETS / "xstest"
    for csv_path in sorted(p.glob("completions_*.csv")) if p.exists() else []:
        with csv_path.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        out[f"xstest_{csv_path.stem}"] = sets(rows, "prompt", ("completion",), None)
    return out


# --------------------------------------------------------------------------- speed


def per_event(fn: Callable[[Any], Any]) -> Callable[[list[Any]], None]:
    """A pass calling fn(event) on every event."""

    def run(events: list[Any]) -> None:
        f = fn
        for e in events:
            f(e)

    return run


def one_detector(pipeline: Any, det: Any) -> Callable[[list[Any]], None]:
    """A pass running one detector through the pipeline's scanner, a fresh scan per event
    (as detector_costs.py charges it)."""
    scanner = pipeline.scanner

    def run(events: list[Any]) -> None:
        for e in events:
            scanner.run(det, e, scanner.scan())

    return run


def all_detectors(
    pipeline: Any, swap: tuple[Any, Any] | None = None
) -> Callable[[list[Any]], None]:
    """A pass of the pipeline's detector loop; swap=(old, new) puts `new` in `old`'s place
    (`old`'s patterns stay in the shared screening, which the others need anyway)."""
    scanner = pipeline.scanner

    def run(events: list[Any]) -> None:
        if swap is None:
            dets = pipeline.detectors
        else:
            dets = [swap[1] if d is swap[0] else d for d in pipeline.detectors]
        for e in events:
            scan = scanner.scan()
            for d in dets:
                scanner.run(d, e, scan)

    return run


def noop(event: Any) -> list[Any]:
    """A detector that finds nothing: with per_event, the loop's own cost."""
    return []


def passes(
    pipeline: Any, det: Any, rdet: Any, short: str, extra: dict[str, Any] | None = None
) -> dict[str, Callable[[list[Any]], None]]:
    """The passes both prototypes time, in this order: the Python detector `det`, the Rust
    wrapper `rdet`, the Rust function alone (``rdet.core.detect``), then `extra`, then the
    pipeline's own detector of that name through its scanner, the pipeline's detector loop,
    the same loop with the wrapper in that detector's place, and a no-op call."""
    in_pipeline = next(d for d in pipeline.detectors if d.name == rdet.name)
    return {
        "python_det": per_event(det),
        "rust_wrapper": per_event(rdet),
        "rust_core": per_event(rdet.core.detect),
        **(extra or {}),
        f"python_{short}_pipeline_scanner": one_detector(pipeline, in_pipeline),
        "python_all_detectors": all_detectors(pipeline),
        f"all_detectors_with_rust_{rdet.name}": all_detectors(pipeline, (in_pipeline, rdet)),
        "noop_call": per_event(noop),
    }


def speed(
    raws: list[bytes], limits: Any, variants: dict[str, Any], rounds: int, warm_up: bool = True
) -> dict[str, Any]:
    """CPU and wall time per event of each variant's pass over freshly parsed events (the
    parse is not timed), side by side; the order rotates each round and reverses every
    other round. warm_up: first one untimed pass of each (compiles, fills the caches)."""
    if warm_up:
        events = parse_all(raws, limits)
        for fn in variants.values():
            fn(events)
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    wall: dict[str, list[float]] = {k: [] for k in variants}
    names = list(variants)
    n_events = 0
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        if r % 2:
            order.reverse()
        for key in order:
            fn = variants[key]
            events = parse_all(raws, limits)  # fresh events, as the pipeline gets them
            n_events = len(events)
            gc.collect()
            c0, w0 = time.process_time(), time.perf_counter()
            fn(events)
            c1, w1 = time.process_time(), time.perf_counter()
            cpu[key].append((c1 - c0) / n_events * 1e6)
            wall[key].append((w1 - w0) / n_events * 1e6)
        print(
            f"[speed] round {r + 1}/{rounds}: "
            + ", ".join(f"{k} {cpu[k][-1]:.2f}" for k in names)
            + " us/event CPU",
            file=sys.stderr,
        )
    return {
        "events_per_pass": n_events,
        "rounds": rounds,
        "cpu_us_per_event": cpu,
        "wall_us_per_event": wall,
        "median_cpu_us": {k: statistics.median(v) for k, v in cpu.items()},
        "median_wall_us": {k: statistics.median(v) for k, v in wall.items()},
    }


def print_medians(res: dict[str, Any]) -> None:
    """speed()'s medians as a table on stdout."""
    med, wmed = res["median_cpu_us"], res["median_wall_us"]
    print("variant                                  CPU us/event   wall us/event")
    for k in med:
        print(f"{k:40s} {med[k]:12.2f} {wmed[k]:15.2f}")


# --------------------------------------------------------------------------- header


def tree_commit(tree: Path) -> str:
    """The tree's git HEAD, or for an exported copy the commit in its .snapshot_commit
    (write it beside a `git archive HEAD` extraction)."""
    marker = tree / ".snapshot_commit"
    if marker.exists():
        return marker.read_text().strip() + " (exported copy)"
    got = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(tree), "status", "--porcelain", "--", "detectors", "stream"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return got + (" + uncommitted changes under detectors/ or stream/" if dirty else "")


def run_header(tree: Path, extension: str) -> dict[str, Any]:
    """When, where and on what code: the first keys of a measure.py result."""
    cpu_model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": {
            "platform": platform.platform(),
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "cpu_model": cpu_model,
        },
        "tree_commit": tree_commit(tree),
        "tree": str(tree),
        "extension": extension,
        "detectors_module": __import__("detectors").__file__,
    }
