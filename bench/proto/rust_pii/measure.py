"""Equivalence and speed of the Rust PII prototype against ``detectors.pii`` (one process).

``python bench/proto/rust_pii/measure.py [--so-dir /tmp/rust_pii_build] [--events 10000]
[--rounds 7] [--fuzz 20000] [--out /tmp/rust_pii_measure.json]``

Needs the extension built first (``sh bench/proto/build.sh rust_pii``). Steps:

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
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench/proto: the shared measuring module
import measuring  # noqa: E402

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

    def ev(i: int, query: str, response: str, chunks: list[str]) -> bytes:
        data = {
            "event_id": f"ds-{i}",
            "query": query,
            "response": response,
            "retrieved_context": [{"id": f"c{j}", "content": c} for j, c in enumerate(chunks)],
        }
        return json.dumps(data).encode()

    return {
        name: [
            ev(s.row, s.query, s.response, [] if s.passage is None else [s.passage])
            for s in samples
        ]
        for name, samples in measuring.labelled_samples().items()
    }


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


# --------------------------------------------------------------------------- probes


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

    pipeline = measuring.make_pipeline()
    events = measuring.parse_all(measuring.traffic(events_n), pipeline.limits)
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

    events = measuring.parse_all(raws, limits)
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
    ap = measuring.arguments(
        (__doc__ or "").splitlines()[0],
        "/tmp/rust_pii_build",
        20000,
        Path("/tmp/rust_pii_measure.json"),
    )
    ap.add_argument("--skip-rss", action="store_true")
    ap.add_argument("--rss-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rss_child:
        measuring.setup(HERE, args.so_dir, args.tree.resolve())
        _rss_child(args.rss_child, args.events)
        return 0
    _, pipeline, result = measuring.begin(HERE, args, "ragpulse_pii")

    from wrapper import RustPiiDetector

    from detectors import create_detector

    parse_all = measuring.parse_all
    limits = pipeline.limits
    det = create_detector("pii")
    rdet = RustPiiDetector()
    core = rdet.core
    raws = measuring.traffic(args.events)
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
            _compare("demo baseline seed 7", parse_all(raws, limits), pairs, det.find, core.find),
        ]
        degraded = measuring.traffic(args.events, phase="degraded")
        equiv.append(
            _compare(
                "demo degraded seed 7", parse_all(degraded, limits), pairs, det.find, core.find
            )
        )
        for name, ds_raws in _dataset_raws().items():
            equiv.append(_compare(name, parse_all(ds_raws, limits), pairs, det.find, core.find))
        fuzz = parse_all(_fuzz_raws(random.Random(7), args.fuzz), limits)
        equiv.append(
            _compare("synthetic fuzz + hostile", fuzz, pairs + opt_pairs, det.find, core.find)
        )
        result["equivalence"] = equiv

    if not args.skip_speed:
        result["dfa_thrash_probe"] = _thrash_probe(raws[:3000], limits)
        each = measuring.per_event
        other_screens = {
            "rust_core_none": each(unscreened.core.detect),
            "rust_core_counts": each(counted.core.detect),
            "rust_core_set_never_renewed": each(big_set.core.detect),
            "rust_core_set_2mib_renewed_1000": each(small_set.core.detect),
        }
        # all_detectors_with_rust_pii: pii's patterns stay in the shared response screening
        variants = measuring.passes(pipeline, det, rdet, "pii", other_screens)
        result["speed"] = measuring.speed(raws, limits, variants, args.rounds)
        print("\nmedians over rounds")
        measuring.print_medians(result["speed"])

    if not args.skip_rss:  # fresh processes, one per detector build
        result["rss_probe"] = _rss_probe(args.tree.resolve(), args.so_dir, args.events)

    args.out.write_text(json.dumps(result, indent=1))
    print(f"written {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
