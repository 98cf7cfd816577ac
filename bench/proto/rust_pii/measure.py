"""Equivalence and speed of the Rust PII prototype against ``detectors.pii`` (one process).

``python bench/proto/rust_pii/measure.py [--so-dir /tmp/rust_pii_build] [--events 10000]
[--rounds 7] [--fuzz 20000] [--out /tmp/rust_pii_measure.json]``

Needs the extension built first (``bench/proto/rust_pii/build.sh``). Steps:

1. Equivalence on the bundled traffic (``stream.demo.generate(N, seed=7)``, parsed with
   the pipeline's limits as ``bench/perf/detector_costs.py`` does): per event,
   ``create_detector("pii")(event)`` against the wrapper's Detections; per text (the
   response and every input text the detector can read), ``PiiDetector.find`` against
   the Rust ``find`` (category, span, normalised key, evidence). The same on the
   degraded phase, on the responses/passages of the labelled sets in
   /work/shared/datasets (no PII labels there: equivalence only), and on seeded synthetic
   texts built from PII-like fragments, hostile repeats and non-ASCII neighbours, with
   non-default options too.
2. Speed, side by side, order rotating each round: CPU time (``time.process_time``) and
   wall time (``time.perf_counter``) around a whole pass over freshly parsed events (the
   parse is not timed), for: the Python detector ``det(event)``; the Rust wrapper
   (Detections); the Rust function alone (tuples): as built by default (screen="set":
   a RegexSet pass, 64 MiB lazy-DFA cache renewed every 10,000 texts), with screen="none"
   (every pattern searches every text), screen="counts" (byte-count screen), the set
   never renewed, and a 2 MiB set renewed every 1,000 texts; the pipeline's own pii detector
   through the pipeline's shared scanner (fresh scan per event, as
   detector_costs.py charges it); the pipeline's whole detector loop (all detectors), and
   the same loop with its pii detector replaced by the Rust wrapper; and a no-op
   callable (the loop's own cost). Medians over rounds, in us/event. Every detector
   object timed has first been through the equivalence sets (hostile texts included).
   Before that, a probe of regex 1.7's lazy-DFA give-up (see src/lib.rs): per screening
   mode (and RegexSet cache size), CPU per event fresh and after 20,000 synthetic and
   hostile texts went through the same object.
3. Memory: in a fresh process per detector build, VmRSS after building it, after the
   traffic, after the 20,000 synthetic/hostile texts and after the traffic again.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def _setup(so_dir: str, tree: Path) -> None:
    for p in (str(tree), str(HERE), so_dir):
        if p not in sys.path:
            sys.path.insert(0, p)


# --------------------------------------------------------------------------- helpers


def _luhn_complete(body: str) -> str:
    """`body` plus the Luhn check digit."""
    for d in "0123456789":
        digits = body + d
        total = 0
        for i, ch in enumerate(reversed(digits)):
            v = int(ch)
            if i % 2:
                v *= 2
                if v > 9:
                    v -= 9
            total += v
        if total % 10 == 0:
            return digits
    raise AssertionError


def _iban(cc: str, bban: str) -> str:
    letters = {c: str(n) for n, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 10)}
    num = "".join(letters.get(c, c) for c in bban + cc + "00")
    check = 98 - int(num) % 97
    return f"{cc}{check:02d}{bban}"


def _spaced(s: str, n: int = 4, sep: str = " ") -> str:
    return sep.join(s[i : i + n] for i in range(0, len(s), n))


def _fragments(rng: random.Random) -> list[str]:
    """PII-like values, near misses and tricky neighbours."""
    card = _luhn_complete("".join(rng.choice("0123456789") for _ in range(rng.randint(12, 18))))
    card = rng.choice("23456") + card[1:]
    card = _luhn_complete(card[:-1])
    bad_card = card[:-1] + str((int(card[-1]) + 1) % 10)
    de = _iban("DE", "".join(rng.choice("0123456789") for _ in range(18)))
    gb = _iban("GB", "NWBK" + "".join(rng.choice("0123456789") for _ in range(14)))
    area = rng.choice(["123", "000", "666", "912", "078", str(rng.randint(100, 899))])
    ssn = f"{area}-{rng.choice(['45', '00', '12'])}-{rng.choice(['6789', '0000', '1120'])}"
    return [
        card,
        _spaced(card),
        _spaced(card, 4, "-"),
        card[:4] + " " + card[4:8] + "-" + card[8:],
        bad_card,
        _spaced(bad_card),
        de,
        _spaced(de),
        _spaced(de) + " X1",
        _spaced(gb),
        gb + "ABC",
        de.lower(),
        "XX00" + "1" * 14,
        ssn,
        ssn + "-1",
        "+44 20 7946 0958",
        "+1 (415) 555-0132",
        "+49.30.1234.5678",
        "+3" + "".join(rng.choice("0123456789") for _ in range(rng.randint(5, 16))),
        "(415) 555-0132",
        "415-555-0132",
        "1-415-555-0132",
        "415.555.0132",
        "030 1234 5678",
        "06 12 34 56 78",
        "(030) 1234 5678",
        "030/1234-5678",
        "0301234567",
        "2024-01-15",
        "10.0.0.1",
        "v1.2.3",
        "j.doe@example.com",
        "J.Doe@Example.COM",
        "git@github.com:org/repo",
        "https://user@host.example.org/x",
        "a@b.c",
        "x_y+tag@sub.mail-host.co.uk",
        "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 22))),
        "".join(rng.choice("0123456789 -./") for _ in range(rng.randint(1, 22))),
    ]


_NEIGHBOURS = [
    " ",
    " ",
    " ",
    "",
    "",
    "-",
    ".",
    "/",
    "_",
    "+",
    "@",
    ":",
    "://",
    ",",
    "(",
    ")",
    "\n",
    "é",
    "\u0663",
    "\u00b2",
    "\u4e2d",
    "\u00df",
    "\u0345",
    "\u216b",
    "\u0903",
    "\u00a0",
    "a",
    "Z",
    "7",
    "0",
    "1",
    "e-mail: ",
    "call ",
    "card ",
    "IBAN ",
    "\U0001f600",
]  # non-ASCII: a letter, an Arabic-Indic digit, a superscript two, a CJK ideograph, sharp s,
# a combining mark (Other_Alphabetic), a Roman numeral (Nl), a Devanagari sign (Mc),
# a no-break space, an emoji


def _fuzz_text(rng: random.Random) -> str:
    frags = _fragments(rng)
    parts = []
    for _ in range(rng.randint(1, 12)):
        parts.append(rng.choice(_NEIGHBOURS))
        parts.append(rng.choice(frags))
    parts.append(rng.choice(_NEIGHBOURS))
    return "".join(parts)


def _hostile_texts(rng: random.Random) -> list[str]:
    """Repeats past MAX_PER_PATTERN (300), MAX_CANDIDATES (1000) and MAX_HITS (32)."""
    out = []
    for n in (40, 301, 700, 1500):
        out.append(" ".join(f"user{i}@example.com" for i in range(n)))
        out.append(" ".join(_luhn_complete(f"4{i:014d}") for i in range(n)))
        out.append(" ".join(f"{100 + i % 800:03d}-45-{1000 + i:04d}" for i in range(n)))
        out.append(", ".join(f"+44 20 7946 {i % 10000:04d}" for i in range(n)))
        mixed = []
        for _ in range(n):
            mixed.append(rng.choice(_fragments(rng)))
            mixed.append(rng.choice(_NEIGHBOURS))
        out.append(" ".join(mixed))
    out.append("4" * 5000)
    out.append("+" + "1 " * 3000)
    out.append("a" * 3000 + "@" + "b" * 3000 + ".com")
    return out


# --------------------------------------------------------------------------- events


def _pipeline() -> Any:
    from exporters.prometheus import Metrics
    from stream.runtime.pipeline import Pipeline
    from stream.runtime.settings import load_settings

    settings = load_settings()
    metrics = Metrics.with_label_caps(settings.labels.max_values, settings.labels.allow)
    pipeline = Pipeline(settings, metrics)
    pipeline.dedupe.size = 0
    return pipeline


def _parse_all(raws: list[bytes], limits: Any) -> list[Any]:
    from stream.contract.events import InvalidEvent, parse_event

    out = []
    for raw in raws:
        try:  # noqa: SIM105 - the pipeline's own loop shape
            out.append(parse_event(raw, limits))
        except InvalidEvent:
            pass
    return out


def _event_texts(event: Any) -> list[str]:
    """Every text the pii detector can read from the event (response first)."""
    texts = [event.response, event.query]
    texts += [m.content for m in event.history]
    if event.case is not None:
        texts += [event.case.subject, event.case.description]
        texts += list((event.case.metadata or {}).values())
    texts += [c.content for c in event.retrieved_context]
    texts += [c.text for c in event.citations]
    return [t for t in texts if isinstance(t, str) and t]


def _dataset_raws() -> dict[str, list[bytes]]:
    """Events from the labelled sets' texts (response + query + passages)."""
    base = Path("/work/shared/datasets")
    out: dict[str, list[bytes]] = {}

    def ev(i: int, query: str, response: str, chunks: list[str]) -> bytes:
        data = {
            "event_id": f"ds-{i}",
            "query": query,
            "response": response,
            "retrieved_context": [{"id": f"c{j}", "content": c} for j, c in enumerate(chunks)],
        }
        return json.dumps(data).encode()

    p = base / "ragtruth" / "ragtruth_qa_test_subset.jsonl"
    if p.exists():
        rows = [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
        out["ragtruth"] = [
            ev(i, str(r.get("query", "")), str(r.get("d2", "")), [str(r.get("d1", ""))])
            for i, r in enumerate(rows)
        ]
    p = base / "halueval" / "general_data.json"
    if p.exists():
        rows = [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
        out["halueval_general"] = [
            ev(i, str(r.get("user_query", "")), str(r.get("chatgpt_response", "")), [])
            for i, r in enumerate(rows)
        ]
    p = base / "halueval" / "qa_data.jsonl"
    if p.exists():
        rows = [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
        out["halueval_qa"] = [
            ev(i, str(r.get("question", "")), str(r.get(k, "")), [str(r.get("knowledge", ""))])
            for i, r in enumerate(rows)
            for k in ("right_answer", "hallucinated_answer")
        ]
    p = base / "xstest"
    for csv_path in sorted(p.glob("completions_*.csv")) if p.exists() else []:
        import csv

        with csv_path.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        out[f"xstest_{csv_path.stem}"] = [
            ev(i, str(r.get("prompt", "")), str(r.get("completion", "")), [])
            for i, r in enumerate(rows)
        ]
    return out


def _fuzz_raws(rng: random.Random, n: int) -> list[bytes]:
    """Synthetic events: fuzz responses; inputs that repeat some of the response's
    values (so ignore_if_in_context matters), case metadata with non-str values."""
    out = []
    for i in range(n):
        response = _fuzz_text(rng)

        def maybe_echo(response: str = response) -> str:
            t = _fuzz_text(rng)
            if rng.random() < 0.5:
                words = response.split()
                if words:
                    t += " " + " ".join(rng.sample(words, min(len(words), rng.randint(1, 4))))
            return t

        data: dict[str, Any] = {"event_id": f"fz-{i}", "query": maybe_echo(), "response": response}
        if rng.random() < 0.5:
            data["history"] = [
                {"role": "user", "content": maybe_echo()} for _ in range(rng.randint(0, 3))
            ]
        if rng.random() < 0.3:
            data["case"] = {
                "subject": maybe_echo() if rng.random() < 0.5 else None,
                "description": maybe_echo(),
                "metadata": {"a": maybe_echo(), "n": 5, "none": None, "l": [response]},
            }
        if rng.random() < 0.6:
            data["retrieved_context"] = [
                {"id": f"c{j}", "content": maybe_echo()} for j in range(rng.randint(0, 4))
            ]
        if rng.random() < 0.4:
            data["citations"] = [{"marker": "[1]", "text": maybe_echo()}]
        out.append(json.dumps(data).encode())
    for j, text in enumerate(_hostile_texts(rng)):
        out.append(json.dumps({"event_id": f"hx-{j}", "query": "q", "response": text}).encode())
        out.append(json.dumps({"event_id": f"hy-{j}", "query": text, "response": text}).encode())
    return out


# --------------------------------------------------------------------------- equivalence


def _compare(
    name: str, events: list[Any], pairs: list[tuple[Any, Any]], find_py: Any, find_rs: Any
) -> dict[str, Any]:
    """Per event: each (python detector, rust wrapper) pair; per text: find()."""
    same = with_hits = 0
    diffs: list[dict[str, Any]] = []
    texts_same = texts_total = 0
    text_diffs: list[dict[str, Any]] = []
    for event in events:
        ok = True
        for py_det, rs_det in pairs:
            a, b = py_det(event), rs_det(event)
            if a != b:
                ok = False
                if len(diffs) < 20:
                    diffs.append(
                        {
                            "event_id": event.event_id,
                            "options": getattr(rs_det, "label", ""),
                            "python": [d.to_dict() for d in a],
                            "rust": [d.to_dict() for d in b],
                        }
                    )
        same += ok
        with_hits += bool(pairs[0][0](event))
        for text in _event_texts(event):
            texts_total += 1
            a, b = find_py(text), find_rs(text)
            if a == b:
                texts_same += 1
            elif len(text_diffs) < 20:
                text_diffs.append({"text": text[:300], "python": a, "rust": b})
    res = {
        "set": name,
        "events": len(events),
        "events_identical": same,
        "events_with_detections_python": with_hits,
        "event_diffs": diffs,
        "texts": texts_total,
        "texts_find_identical": texts_same,
        "text_diffs": text_diffs,
    }
    print(
        f"[equiv] {name}: {same}/{len(events)} events identical "
        f"({with_hits} with detections); find() {texts_same}/{texts_total} texts identical",
        file=sys.stderr,
    )
    return res


# --------------------------------------------------------------------------- speed


def _speed(raws: list[bytes], limits: Any, variants: dict[str, Any], rounds: int) -> dict[str, Any]:
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
            events = _parse_all(raws, limits)  # fresh events, as the pipeline gets them
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


def _tree_commit(tree: Path) -> str:
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


def _vmrss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _rss_child(mode: str, events_n: int) -> None:
    """In a fresh process: VmRSS after building one pii detector (`mode`), after the
    traffic, after 20,000 synthetic + hostile texts, and after the traffic again."""
    from wrapper import RustPiiDetector

    from detectors import create_detector

    pipeline = _pipeline()
    from stream.demo import generate

    events = _parse_all([g.raw for g in generate(events_n, seed=7)], pipeline.limits)
    rng = random.Random(11)
    junk = _hostile_texts(rng) + [_fuzz_text(rng) for _ in range(20000)]
    gc.collect()
    out: dict[str, Any] = {"mode": mode, "baseline_mib": _vmrss_mib()}
    if mode == "python":
        det: Any = create_detector("pii")
        find = det.find
    else:
        det = RustPiiDetector(**json.loads(mode))
        find = det.find
    out["built_mib"] = _vmrss_mib()
    for e in events:
        det(e)
    out["after_traffic_mib"] = _vmrss_mib()
    for text in junk:
        find(text)
    out["after_junk_mib"] = _vmrss_mib()
    for e in events:
        det(e)
    out["after_traffic_again_mib"] = _vmrss_mib()
    print(json.dumps(out))


def _rss_probe(tree: Path, so_dir: str, events_n: int) -> list[dict[str, Any]]:
    modes = [
        "python",
        json.dumps({}),
        json.dumps({"screen": "set", "set_reset_every": 0}),
        json.dumps({"screen": "set", "set_dfa_size_limit": 2 << 20, "set_reset_every": 0}),
        json.dumps({"screen": "set", "set_dfa_size_limit": 2 << 20, "set_reset_every": 1000}),
        json.dumps({"screen": "none"}),
    ]
    got = []
    for mode in modes:
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--tree",
            str(tree),
            "--so-dir",
            so_dir,
            "--rss-child",
            mode,
            "--events",
            str(events_n),
        ]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
        row = json.loads(res.stdout.strip().splitlines()[-1])
        got.append(row)
        print(f"[rss] {row}", file=sys.stderr)
    return got


def _thrash_probe(raws: list[bytes], limits: Any) -> dict[str, Any]:
    """regex 1.7's lazy DFA gives up for good after 3 cache flushes: per configuration, a
    fresh object's CPU per event on the traffic, then after 20,000 synthetic + hostile texts
    went through it, then again."""
    from wrapper import RustPiiDetector

    events = _parse_all(raws, limits)
    rng = random.Random(11)
    junk = _hostile_texts(rng) + [_fuzz_text(rng) for _ in range(20000)]

    def timed(core: Any) -> float:
        t0 = time.process_time()
        for e in events:
            core.detect(e)
        return (time.process_time() - t0) / len(events) * 1e6

    out: dict[str, Any] = {"events": len(events), "junk_texts": len(junk)}
    configs = {
        "counts": {"screen": "counts"},
        "none": {"screen": "none"},
        "set 2 MiB (regex default), never renewed": {
            "screen": "set",
            "set_dfa_size_limit": 2 << 20,
            "set_reset_every": 0,
        },
        "set 64 MiB, never renewed": {
            "screen": "set",
            "set_dfa_size_limit": 64 << 20,
            "set_reset_every": 0,
        },
        "set 2 MiB, renewed every 1000 texts": {
            "screen": "set",
            "set_dfa_size_limit": 2 << 20,
            "set_reset_every": 1000,
        },
        "set 64 MiB, renewed every 10000 texts (prototype default)": {
            "screen": "set",
            "set_dfa_size_limit": 64 << 20,
            "set_reset_every": 10000,
        },
    }
    for label, kw in configs.items():
        core = RustPiiDetector(**kw).core
        timed(core)  # warm
        fresh = [timed(core) for _ in range(3)]
        for text in junk:
            core.find(text)
        after = [timed(core) for _ in range(3)]
        out[label] = {"fresh_cpu_us": fresh, "after_junk_cpu_us": after}
        print(
            f"[thrash] {label}: fresh {statistics.median(fresh):.2f}, after junk "
            f"{statistics.median(after):.2f} us/event CPU",
            file=sys.stderr,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--so-dir", default="/tmp/rust_pii_build")
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--fuzz", type=int, default=20000)
    ap.add_argument("--skip-equivalence", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("/tmp/rust_pii_measure.json"))
    ap.add_argument(
        "--tree",
        type=Path,
        default=ROOT,
        help="the ragpulse tree to import (default: this checkout; e.g. a `git archive HEAD` "
        "copy when the checkout is being edited)",
    )
    ap.add_argument("--skip-rss", action="store_true")
    ap.add_argument("--rss-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    _setup(args.so_dir, args.tree.resolve())
    if args.rss_child:
        _rss_child(args.rss_child, args.events)
        return 0

    import ragpulse_pii
    from wrapper import RustPiiDetector

    from detectors import create_detector
    from stream.demo import generate

    pipeline = _pipeline()
    limits = pipeline.limits
    det = create_detector("pii")
    rdet = RustPiiDetector()
    core = rdet.core
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": {
            "platform": platform.platform(),
            "python": sys.version.split()[0],
            "cpus": __import__("os").cpu_count(),
            "cpu_model": next(
                (
                    line.split(":", 1)[1].strip()
                    for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")
                ),
                "?",
            ),
        },
        "tree_commit": _tree_commit(args.tree.resolve()),
        "extension": ragpulse_pii.__file__,
        "tree": str(args.tree.resolve()),
        "detectors_module": __import__("detectors").__file__,
    }
    raws = [g.raw for g in generate(args.events, seed=7)]
    # the other screening modes: checked for equivalence, then timed after that
    unscreened = RustPiiDetector(screen="none")
    unscreened.label = "screen=none"  # type: ignore[attr-defined]
    counted = RustPiiDetector(screen="counts")
    counted.label = "screen=counts"  # type: ignore[attr-defined]
    big_set = RustPiiDetector(screen="set", set_reset_every=0)
    big_set.label = "screen=set, 64 MiB, never renewed"  # type: ignore[attr-defined]
    small_set = RustPiiDetector(screen="set", set_dfa_size_limit=2 << 20, set_reset_every=1000)
    small_set.label = "screen=set, 2 MiB, renewed every 1000"  # type: ignore[attr-defined]

    if not args.skip_equivalence:
        pairs = [(det, rdet), (det, unscreened), (det, counted), (det, big_set), (det, small_set)]
        # non-default options: checked on the fuzz set (where they change answers)
        options = [
            {"ignore_if_in_context": False},
            {"categories": ["phone", "email"]},
            {"categories": ["payment_card", "iban", "us_ssn"], "ignore_if_in_context": False},
        ]
        opt_pairs = []
        for opts in options:
            r = RustPiiDetector(**opts)
            r.label = json.dumps(opts)  # type: ignore[attr-defined]
            opt_pairs.append((create_detector("pii", **opts), r))
        equiv = [
            _compare("demo baseline seed 7", _parse_all(raws, limits), pairs, det.find, core.find),
        ]
        degraded = [g.raw for g in generate(args.events, seed=7, phase="degraded")]
        equiv.append(
            _compare(
                "demo degraded seed 7", _parse_all(degraded, limits), pairs, det.find, core.find
            )
        )
        for name, ds_raws in _dataset_raws().items():
            equiv.append(_compare(name, _parse_all(ds_raws, limits), pairs, det.find, core.find))
        fuzz = _parse_all(_fuzz_raws(random.Random(7), args.fuzz), limits)
        equiv.append(
            _compare("synthetic fuzz + hostile", fuzz, pairs + opt_pairs, det.find, core.find)
        )
        result["equivalence"] = equiv

    if not args.skip_speed:
        result["dfa_thrash_probe"] = _thrash_probe(raws[:3000], limits)
        pii_in_pipeline = next(d for d in pipeline.detectors if d.name == "pii")
        scanner = pipeline.scanner

        def py_det(events: list[Any]) -> None:
            for e in events:
                det(e)

        def rs_wrapper(events: list[Any]) -> None:
            for e in events:
                rdet(e)

        def rs_core(events: list[Any]) -> None:
            detect = core.detect
            for e in events:
                detect(e)

        def rs_core_unscreened(events: list[Any]) -> None:
            detect = unscreened.core.detect
            for e in events:
                detect(e)

        def rs_core_set_64mib(events: list[Any]) -> None:
            detect = big_set.core.detect
            for e in events:
                detect(e)

        def rs_core_small_set(events: list[Any]) -> None:
            detect = small_set.core.detect
            for e in events:
                detect(e)

        def rs_core_counts(events: list[Any]) -> None:
            detect = counted.core.detect
            for e in events:
                detect(e)

        def py_all_detectors_rust_pii(events: list[Any]) -> None:
            # the pipeline's loop with its pii detector replaced by the Rust wrapper (pii's
            # patterns stay in the shared response screening, which the others need anyway)
            dets = [rdet if d is pii_in_pipeline else d for d in pipeline.detectors]
            for e in events:
                scan = scanner.scan()
                for d in dets:
                    scanner.run(d, e, scan)

        def py_pipeline_pii(events: list[Any]) -> None:
            for e in events:
                scanner.run(pii_in_pipeline, e, scanner.scan())

        def py_all_detectors(events: list[Any]) -> None:
            dets = pipeline.detectors
            for e in events:
                scan = scanner.scan()
                for d in dets:
                    scanner.run(d, e, scan)

        def noop(events: list[Any]) -> None:
            f = _noop
            for e in events:
                f(e)

        variants = {
            "python_det": py_det,
            "rust_wrapper": rs_wrapper,
            "rust_core": rs_core,
            "rust_core_none": rs_core_unscreened,
            "rust_core_counts": rs_core_counts,
            "rust_core_set_never_renewed": rs_core_set_64mib,
            "rust_core_set_2mib_renewed_1000": rs_core_small_set,
            "python_pii_pipeline_scanner": py_pipeline_pii,
            "python_all_detectors": py_all_detectors,
            "all_detectors_with_rust_pii": py_all_detectors_rust_pii,
            "noop_call": noop,
        }
        events = _parse_all(raws, limits)
        for fn in variants.values():  # warm-up: compiles, RE2 DFA caches
            fn(events)
        result["speed"] = _speed(raws, limits, variants, args.rounds)
        med = result["speed"]["median_cpu_us"]
        wmed = result["speed"]["median_wall_us"]
        print("\nvariant                        CPU us/event (median)   wall us/event (median)")
        for k in variants:
            print(f"{k:30s} {med[k]:12.2f} {wmed[k]:22.2f}")

    if not args.skip_rss:  # fresh processes, one per detector build
        result["rss_probe"] = _rss_probe(args.tree.resolve(), args.so_dir, args.events)

    args.out.write_text(json.dumps(result, indent=1))
    print(f"written {args.out}", file=sys.stderr)
    return 0


def _noop(event: Any) -> list[Any]:
    return []


if __name__ == "__main__":
    sys.exit(main())
