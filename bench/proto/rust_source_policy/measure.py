"""Equivalence and speed of the Rust source_policy prototype against ``detectors.source_policy``.

``python bench/proto/rust_source_policy/measure.py --tree /tmp/rsp_head
[--so-dir /tmp/rust_source_policy_build] [--events 10000] [--rounds 7] [--fuzz 6000]
[--out bench/proto/rust_source_policy/results/measure.json]``

Needs the extension built first (``sh bench/proto/build.sh rust_source_policy``). One process.
Steps:

1. Tables: ``str.isspace`` and ``str.lower`` against the extension's character tables,
   for every code point.
2. Equivalence, per event, ``create_detector("source_policy")(event)`` against the
   wrapper's Detections (all fields), on: the bundled traffic
   (``stream.demo.generate(N, seed=7)``, parsed with the pipeline's limits as
   ``bench/perf/detector_costs.py`` does) and its degraded phase; the labelled sets under
   /work/shared/datasets the pii prototype used, with their passages (or, for sets without
   any, the query) as chunks whose policy alternates quote_only / no_use (otherwise the
   detector would skip them all); seeded synthetic events that copy, quote, single-quote
   and report chunk text, with non-ASCII, and hostile ones (20,000-character texts, 300
   single quotes, 100 cues, 40 chunks of 20,000 characters, ...). Non-default options
   too. Per text, the ported helpers against the Python ones: ``words``, ``word_span``,
   ``blank_quoted``, the ``_SINGLE_QUOTED`` matches, ``_blank_verbatim_single_quotes``
   and ``_reported_clauses``.
3. Speed, side by side, order rotating and reversing each round: CPU time
   (``time.process_time``) and wall time around a whole pass over freshly parsed events
   (the parse is not timed): the Python detector, the Rust wrapper, the Rust function
   alone, the pipeline's detector loop (all detectors) and the same loop with
   source_policy swapped for the wrapper, a no-op; then the same detector variants on
   the subset of events where the detector does real work (a non-summarize chunk and a
   response). Medians over rounds, in us/event. Every object timed has first been
   through the equivalence sets (hostile ones included).
"""

# ruff: noqa: RUF001 - the synthetic texts use look-alike characters on purpose

from __future__ import annotations

import collections
import itertools
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench/proto: the shared measuring module
import measuring  # noqa: E402

# --------------------------------------------------------------------------- events


def _event(eid: str, query: str, response: str, chunks: list[tuple[str, str, str]]) -> bytes:
    data = {
        "event_id": eid,
        "query": query,
        "response": response,
        "retrieved_context": [{"id": i, "content": c, "policy": p} for i, c, p in chunks],
    }
    return json.dumps(data).encode()


def _dataset_raws() -> dict[str, list[bytes]]:
    """The labelled sets' texts as events: response, and passages (or the query) as chunks
    with policy quote_only (even rows) or no_use (odd rows)."""
    named = {  # set: (name here, event id prefix, chunk id)
        "ragtruth": ("ragtruth (passage as chunk)", "rt", "c0"),
        "halueval_general": ("halueval general (query as chunk)", "hg", "q"),
        "halueval_qa": ("halueval qa (knowledge as chunk)", "hq", "k"),
    }
    out: dict[str, list[bytes]] = {}
    for name, samples in measuring.labelled_samples().items():
        stem = name.removeprefix("xstest_")
        label, prefix, cid = named.get(name, (f"xstest {stem} (prompt as chunk)", "xs", "p"))
        out[label] = [
            _event(
                f"{prefix}-{s.row}" + (f"-{s.field}" if name == "halueval_qa" else ""),
                s.query,
                s.response,
                [
                    (
                        cid,
                        s.query if s.passage is None else s.passage,
                        "quote_only" if (s.row + s.answer) % 2 == 0 else "no_use",
                    )
                ],
            )
            for s in samples
        ]
    return out


# --------------------------------------------------------------------------- synthetic


def _split(text: str) -> list[str]:
    return text.split()


_VOCAB = _split(
    "margin revenue growth buyback dividend surplus cash shareholder return rate quarter "
    "forecast guidance board chair officer market capital expense policy contract clause "
    "customer refund warranty shipment delivery region europe asia pricing supply demand "
    "inflation interest loan credit risk audit report compliance security privacy data "
    "model system network server outage incident response team plan review budget cost "
    "improve increase decrease reduce expand keep hold raise cut announce expect remain "
    "strong weak stable higher lower next last annual record total net gross operating"
)
_STOPS = _split("the a an and of to in on for with that this is was will be it its by as at")
_NON_ASCII = [
    "é",
    "Ünïcödé",
    "naïve",
    "ΣΟΦΙΑ",
    "ΟΔΟΣ",
    "σοφός",
    "İSTANBUL",
    "STRAßE",
    "ß",
    "中文",
    "日本語のテキスト",
    "\u1c89x",
    "\ua7cbq",
    "\U00010d50",
    "Ⅻ",
    "٣٤",
    "²",
    "x\u0345",
    "\U0001f600",
    "\u00a0",
    "\u2028",
    "\u3000",
    "\x1c",
    "\x1f",
    "\x0b",
    "\u2009",
    "\u200b",
    "\ue000",
    "…",
    "—",
    "–",
    "·",
    "•",
    "¡",
    "¿",
    "ǅ",
    "Ａｂｃ",
    "ﬁnance",
]
_SPEAKERS = ["the CFO", "She", "the chair", "Mr. Lee", "the board", "Analysts", "it"]
_CUES = [
    "said",
    "said that",
    "says,",
    "stated that",
    "noted",
    "told reporters",
    "told the press that",
    "explained",
    "stressed that",
    "emphasised",
    "warned",
    "assured investors",
    "signalled",
    "described it as",
    "put it",
    "reported",
    "announced",
    "SAID",
]
_OPEN_CLOSE = [
    ('"', '"'),
    ("\u201c", "\u201d"),
    ("\u00ab", "\u00bb"),
    ("\u201e", "\u201c"),
    ("'", "'"),
    ("\u2018", "\u2019"),
    ("'", "\u2019"),
    ("(", ")"),
    ("", ""),
]


def _chunk_text(rng: random.Random, n_sent: int) -> str:
    sents = []
    for _ in range(n_sent):
        ws = []
        for _ in range(rng.randint(5, 18)):
            r = rng.random()
            if r < 0.3:
                ws.append(rng.choice(_STOPS))
            elif r < 0.33:
                ws.append(str(rng.randint(0, 999)))
            elif r < 0.36:
                ws.append(rng.choice(_NON_ASCII))
            else:
                w = rng.choice(_VOCAB)
                if rng.random() < 0.15:
                    w += rng.choice(["s", "es", "ed", "ing"])
                ws.append(w)
        s = " ".join(ws)
        if rng.random() < 0.2:
            s = s.replace(" ", rng.choice([", ", " - ", " (", ") ", "'s ", "’s "]), 1)
        sents.append(s[:1].upper() + s[1:] + rng.choice([".", "!", "?", ";", ":", ".\n"]))
    return " ".join(sents)


def _mutate(rng: random.Random, words_: list[str]) -> list[str]:
    out = []
    for w in words_:
        r = rng.random()
        if r < 0.05:
            continue
        if r < 0.1:
            w = w.upper()
        elif r < 0.15 and w.isalpha():
            w = w + rng.choice(["s", "ing", "ed"])
        elif r < 0.18:
            w = rng.choice(_VOCAB)
        out.append(w)
    return out


def _response(rng: random.Random, chunks: list[str]) -> str:
    parts = []
    for _ in range(rng.randint(1, 8)):
        src = rng.choice(chunks).split() if chunks else []
        kind = rng.random()
        if src and kind < 0.55:
            k = rng.randint(2, min(24, len(src)))
            i = rng.randint(0, len(src) - k)
            piece = src[i : i + k]
            if rng.random() < 0.3:
                piece = _mutate(rng, piece)
            text = " ".join(piece)
            o, c = rng.choice(_OPEN_CLOSE)
            lead = rng.choice(["", " ", "(", "- ", "— ", ": ", "\n", "\n> ", "x"])
            if rng.random() < 0.3:
                text = f"{rng.choice(_SPEAKERS)} {rng.choice(_CUES)} {o}{text}{c}"
            else:
                text = f"{lead}{o}{text}{c}"
            parts.append(text + rng.choice(["", ".", ". ", "! ", "? ", ",", "\n", "\n\n", " -"]))
        elif src and kind < 0.75:
            k = rng.randint(5, min(30, len(src)))
            i = rng.randint(0, len(src) - k)
            piece = _mutate(rng, src[i : i + k])
            cue = rng.choice(_CUES)
            if rng.random() < 0.3:
                lead = rng.choice(
                    ["According to the report,", "In her own words,", "As the CEO put it,"]
                )
                parts.append(f"{lead} {' '.join(piece)}.")
            else:
                parts.append(f"{rng.choice(_SPEAKERS)} {cue} {' '.join(piece)}.")
        else:
            parts.append(_chunk_text(rng, rng.randint(1, 3)))
    sep = rng.choice([" ", " ", "\n", "\n\n"])
    return sep.join(parts)


def _fuzz_raws(rng: random.Random, n: int) -> list[bytes]:
    out = []
    for i in range(n):
        k = rng.randint(1, 4)
        chunks = []
        for j in range(k):
            content = _chunk_text(rng, rng.randint(1, 8))
            policy = rng.choice(["quote_only", "quote_only", "no_use", "summarize"])
            cid = f"doc-{i}-{j}" if rng.random() < 0.8 else "ĩd-" + "x" * 70 + f"-{i}-{j}"
            chunks.append((cid, content, policy))
        response = _response(rng, [c for _, c, _ in chunks])
        out.append(_event(f"fz-{i}", "q", response, chunks))
    return out


_TOKENS = [
    "'", "\u2018", "\u2019", '"', "\u201c", "\u201d", "\u00ab", "\u00bb", "\u201e", ">", "\n",
    "\n\n", "\n>", "\n> ", " ", " ", " ", " ", "said", "said that", "according to", "told us",
    ",", ".", ". ", "! ", "? ", "the CFO", "in her words,", "as he put it,", "-", "(", ")",
    ":", "\u2014", "\u2013", "\ue000", "\t", "\x0c", "\x0b", "'s", "\u2019s",
]  # fmt: skip


def _dense_raws(rng: random.Random, n: int) -> list[bytes]:
    """Responses and chunks drawn from quote marks, cue words, sentence ends, line breaks,
    blockquote marks and words (ASCII and not): the quote, blanking and clause logic at
    high density."""
    out = []
    words_ = _VOCAB[:40] + _NON_ASCII
    for i in range(n):
        size = rng.choice([20, 60, 200, 800, 3000])
        toks = []
        for _ in range(size):
            toks.append(rng.choice(_TOKENS) if rng.random() < 0.45 else rng.choice(words_))
        resp = "".join(
            t if t.strip() == "" or t in {"\n", "\n\n"} else t + rng.choice(["", " "]) for t in toks
        )
        chunks = []
        for j in range(rng.randint(1, 3)):
            if rng.random() < 0.5 and len(resp) > 20:  # part of the response, unquoted
                a = rng.randint(0, len(resp) - 10)
                content = resp[a : a + rng.randint(10, 2000)]
            else:
                content = " ".join(rng.choice(words_) for _ in range(rng.randint(5, 400)))
            chunks.append(
                (f"d{i}-{j}", content, rng.choice(["quote_only", "no_use", "quote_only"]))
            )
        out.append(_event(f"dense-{i}", "q", resp[:20000], chunks))
    return out


def _hostile_raws(rng: random.Random) -> list[bytes]:
    base = _chunk_text(rng, 40)
    big = (base + " ") * (20000 // (len(base) + 1))
    big = big[:20000]
    quotes = " ".join(f"'{w} {v}'" for w, v in zip(_VOCAB * 3, _VOCAB[::-1] * 3, strict=False))
    cues = " ".join(f"the CFO said {w} margin rate growth cash return." for w in _VOCAB[:100])
    nasty = [
        ("huge copy", big, [("a", big, "no_use"), ("b", big, "quote_only")]),
        ("huge quoted", '"' + big[:19990] + '"', [("a", big, "quote_only")]),
        ("many single quotes", quotes, [("a", " ".join(_VOCAB), "quote_only")]),
        (
            "300 single-quoted spans (MAX_QUOTES)",
            "  ".join(f"'{w} {v}'" for w, v in zip(_VOCAB * 4, _VOCAB[1:] * 4, strict=False)),
            [
                (
                    "a",
                    " ".join(f"{w} {v}" for w, v in itertools.pairwise(_VOCAB)),
                    "quote_only",
                )
            ],
        ),
        (
            "300 apostrophes then a quote",
            "don't " * 150 + "it’s " * 150 + " 'margin revenue growth' x " + " ".join(_VOCAB),
            [("a", " ".join(_VOCAB), "quote_only")],
        ),
        (
            "cue then 2000 chars",
            "Intro. The CFO said " + ("margin revenue growth " * 120) + ". End 'margin revenue'.",
            [("a", "margin revenue growth buyback " * 10, "quote_only")],
        ),
        ("many cues", cues, [("a", " ".join(_VOCAB) * 2, "quote_only")]),
        (
            "no sentence end",
            "the CFO said " + " ".join(_VOCAB * 10),
            [("a", " ".join(_VOCAB * 10), "quote_only")],
        ),
        (
            "quote lines",
            "\n".join(("> " if i % 2 else "") + " ".join(_VOCAB[i : i + 9]) for i in range(60)),
            [("a", " ".join(_VOCAB), "quote_only"), ("b", " ".join(_VOCAB), "no_use")],
        ),
        (
            "odd quotes",
            '"a b c d e f" "g h ' + " ".join(_VOCAB[:40]) + '\n\n"' + " ".join(_VOCAB[:40]),
            [("a", " ".join(_VOCAB), "quote_only")],
        ),
        (
            "barrier chars",
            "\ue000 " + " ".join(_VOCAB[:30]) + " \ue000\ue000 x",
            [("a", "\ue000 " + " ".join(_VOCAB[:30]), "quote_only")],
        ),
        ("whitespace only", "   \n\t ", [("a", "x y z", "no_use")]),
        ("punctuation only", "!!! ... ,,, ''' \"\"\" ---", [("a", "!!!", "quote_only")]),
        (
            "long single quote",
            "x '" + " ".join(_VOCAB * 4) + "' y",
            [("a", " ".join(_VOCAB * 4), "quote_only")],
        ),
        (
            "nested apostrophes",
            " ".join(f"({w}'s '{w} {w}') -'{w}'-" for w in _VOCAB[:80]),
            [("a", " ".join(f"{w} {w}" for w in _VOCAB), "quote_only")],
        ),
        (
            "sigma and friends",
            " ".join(_NON_ASCII * 20),
            [("a", " ".join(_NON_ASCII * 20), "no_use"), ("b", " ".join(_NON_ASCII), "quote_only")],
        ),
        (
            "unicode reported",
            "Ｔｈｅ CFO said " + " ".join(_NON_ASCII[:12]) + " " + " ".join(_VOCAB[:12]) + ".",
            [("a", " ".join(_NON_ASCII[:12]) + " " + " ".join(_VOCAB[:12]), "quote_only")],
        ),
        (
            "40 big chunks",
            _chunk_text(rng, 30),
            [
                (f"c{i}", (_chunk_text(rng, 200))[:20000], rng.choice(["no_use", "quote_only"]))
                for i in range(40)
            ],
        ),
    ]
    out = []
    for name, resp, chunks in nasty:
        out.append(
            _event(f"hostile-{name}", "q", resp[:20000], [(a, b[:20000], c) for a, b, c in chunks])
        )
    return out


# --------------------------------------------------------------------------- equivalence


def _diff_class(a: list[Any], b: list[Any]) -> str:
    if len(a) != len(b):
        return "different number of detections"
    for x, y in zip(a, b, strict=True):
        if x.category != y.category:
            return "category"
        if x.span != y.span:
            return "span"
        if x.evidence != y.evidence:
            return "evidence"
    return "other field"


def _compare(name: str, events: list[Any], pairs: list[tuple[Any, Any, str]]) -> dict[str, Any]:
    same = 0
    hits: collections.Counter[str] = collections.Counter()
    classes: collections.Counter[str] = collections.Counter()
    diffs = []
    real = 0
    for e in events:
        if e.response and any(c.policy != "summarize" for c in e.retrieved_context):
            real += 1
        ok = True
        for k, (py, rs, label) in enumerate(pairs):
            a, b = py(e), rs(e)
            if k == 0:
                for d in a:
                    hits[d.category] += 1
                    if "reported speech" in d.evidence:
                        hits["(of which reported speech)"] += 1
            if a != b:
                ok = False
                classes[f"{label}: {_diff_class(a, b)}"] += 1
                if len(diffs) < 20:
                    diffs.append(
                        {"event": e.event_id, "options": label, "python": repr(a), "rust": repr(b)}
                    )
        same += ok
    res = {
        "set": name,
        "events": len(events),
        "events_with_real_work": real,
        "events_identical": same,
        "detections_python_default": dict(hits),
        "difference_classes": dict(classes),
        "diffs": diffs,
    }
    print(
        f"[equiv] {name}: {same}/{len(events)} identical ({real} with work, {dict(hits)})",
        file=sys.stderr,
    )
    return res


def _helpers_check(events: list[Any], mod: Any) -> dict[str, Any]:
    """The ported helpers against the Python ones, on every response and chunk text."""
    from detectors._source_quotes import (
        _ATTRIBUTION,
        _SINGLE_QUOTED,
        MAX_QUOTES,
        _blank_verbatim_single_quotes,
        _reported_clauses,
    )
    from detectors.lexical import blank_quoted, word_span, words
    from detectors.regex import iter_matches

    counts: collections.Counter[str] = collections.Counter()
    cover: collections.Counter[str] = collections.Counter()
    bad: collections.Counter[str] = collections.Counter()
    examples: list[dict[str, Any]] = []

    def check(kind: str, a: Any, b: Any, text: str) -> None:
        counts[kind] += 1
        if a != b:
            bad[kind] += 1
            if len(examples) < 10:
                examples.append(
                    {
                        "kind": kind,
                        "text": text[:300],
                        "python": repr(a)[:300],
                        "rust": repr(b)[:300],
                    }
                )

    rng = random.Random(3)
    for e in events:
        texts = [e.response] + [c.content for c in e.retrieved_context]
        for t in texts:
            ws = words(t)
            check("words", ws, mod.py_words(t), t)
            n = len(ws)
            for first, last in ((0, 0), (0, n - 1), (n // 2, n - 1), (n - 1, n), (0, n + 3)):
                if first < 0 or last < first:
                    continue
                if rng.random() < 0.5:
                    check(
                        "word_span", word_span(t, first, last), mod.py_word_span(t, first, last), t
                    )
        raw = e.response
        blanked = blank_quoted(raw)
        check("blank_quoted", blanked, mod.py_blank_quoted(raw), raw)
        for t in (raw, blanked):
            py_m = [(s, en, g) for s, en, g in iter_matches(_SINGLE_QUOTED, t, MAX_QUOTES, group=1)]
            check("_SINGLE_QUOTED matches", py_m, mod.py_single_quoted(t), t)
        qo = [c.content for c in e.retrieved_context if c.policy == "quote_only"] or [
            c.content for c in e.retrieved_context
        ]
        outside = _blank_verbatim_single_quotes(blanked, qo)
        check("_blank_verbatim_single_quotes", outside, mod.py_blank_verbatim(blanked, qo), raw)
        clauses = _reported_clauses(raw, outside)
        check("_reported_clauses", clauses, mod.py_reported_clauses(raw, outside), raw)
        cover["responses"] += 1
        cover["response not ASCII"] += not raw.isascii()
        cover["lowered by Python's str.lower (text holds one of the left-out code points)"] += any(
            mod.py_lower_char(ch) is None for ch in raw
        )
        cover["blank_quoted changed the response"] += blanked != raw
        cover["a single-quoted span blanked as verbatim"] += outside != blanked
        n_sq = len(mod.py_single_quoted(blanked))
        cover["_SINGLE_QUOTED matches > 0"] += n_sq > 0
        cover["_SINGLE_QUOTED at MAX_QUOTES (200)"] += n_sq == MAX_QUOTES
        cover["reported clauses > 0"] += bool(clauses)
        cover["reported clause 600 chars (window limit)"] += any(b - a == 600 for a, b in clauses)
        cover["response with 50+ cue matches (MAX_CUES)"] += (
            sum(1 for _ in iter_matches(_ATTRIBUTION, raw.encode("ascii", "replace").decode(), 60))
            >= 50
        )
    return {
        "checked": dict(counts),
        "different": dict(bad),
        "examples": examples,
        "coverage": dict(cover),
    }


def _tables_check(mod: Any) -> dict[str, Any]:
    space_diff, lower_diff, lower_python = [], [], 0
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if c.isspace() != mod.py_is_space(c):
            space_diff.append(cp)
        got = mod.py_lower_char(c)
        if got is None:
            lower_python += 1
        elif got != c.lower():
            lower_diff.append(cp)
    res = {
        "isspace_differences": space_diff,
        "lower_differences": lower_diff,
        "lower_left_to_python": lower_python,
    }
    print(f"[tables] {res}", file=sys.stderr)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = measuring.arguments(
        (__doc__ or "").splitlines()[0],
        "/tmp/rust_source_policy_build",
        6000,
        HERE / "results" / "measure.json",
    )
    ap.add_argument("--dense", type=int, default=3000)
    args = ap.parse_args(argv)
    mod, pipeline, result = measuring.begin(HERE, args, "ragpulse_source_policy")

    from wrapper import RustSourcePolicyDetector

    from detectors import create_detector

    parse_all = measuring.parse_all
    limits = pipeline.limits
    det = create_detector("source_policy")
    rdet = RustSourcePolicyDetector()
    raws = measuring.traffic(args.events)

    if not args.skip_equivalence:
        result["tables"] = _tables_check(mod)
        pairs = [(det, rdet, "default")]
        options = [
            {"no_use_ngram": 3, "no_use_overlap_ngram": 6, "quote_ngram": 4, "quote_long_ngram": 2},
            {
                "quote_ngram": 2,
                "quote_long_ngram": 4,
                "min_shared": 0,
                "reported_min_words": 1,
                "reported_min_overlap": 0.3,
                "quote_min_overlap": 0.05,
            },
            {"no_use_ngram": 1, "no_use_overlap_ngram": 1, "quote_ngram": 1, "quote_long_ngram": 1},
        ]
        opt_pairs = [
            (create_detector("source_policy", **o), RustSourcePolicyDetector(**o), json.dumps(o))
            for o in options
        ]
        equiv = []
        demo = parse_all(raws, limits)
        equiv.append(_compare("demo baseline seed 7", demo, pairs + opt_pairs))
        degraded = parse_all(measuring.traffic(args.events, phase="degraded"), limits)
        equiv.append(_compare("demo degraded seed 7", degraded, pairs + opt_pairs))
        helper_events = list(demo) + list(degraded)
        for name, ds_raws in _dataset_raws().items():
            evs = parse_all(ds_raws, limits)
            equiv.append(_compare(name, evs, pairs))
            helper_events += evs
        fuzz = parse_all(_fuzz_raws(random.Random(7), args.fuzz), limits)
        equiv.append(_compare("synthetic (seeded)", fuzz, pairs + opt_pairs))
        dense = parse_all(_dense_raws(random.Random(9), args.dense), limits)
        equiv.append(_compare("synthetic dense quotes/cues (seeded)", dense, pairs + opt_pairs))
        fuzz += dense
        hostile_raws = _hostile_raws(random.Random(5))
        hostile = parse_all(hostile_raws, limits)
        res = _compare("synthetic hostile", hostile, pairs + opt_pairs)
        res["raw_events"] = len(hostile_raws)
        equiv.append(res)
        result["equivalence"] = equiv
        result["rust_fallbacks_to_python"] = rdet.fallbacks
        t0 = time.perf_counter()
        result["helpers"] = _helpers_check(helper_events + fuzz + hostile, mod)
        result["helpers"]["seconds"] = round(time.perf_counter() - t0, 1)
        print(
            f"[helpers] {result['helpers']['checked']} different: {result['helpers']['different']}",
            file=sys.stderr,
        )

    if not args.skip_speed:
        variants = measuring.passes(pipeline, det, rdet, "sp")
        result["speed"] = measuring.speed(raws, limits, variants, args.rounds)
        working = [raw for raw in raws if _has_work(raw, limits)]
        sub_variants = {
            k: variants[k] for k in ("python_det", "rust_wrapper", "rust_core", "noop_call")
        }
        result["speed_real_work_subset"] = measuring.speed(
            working, limits, sub_variants, args.rounds, warm_up=False
        )
        for label, key in (("all events", "speed"), ("real-work subset", "speed_real_work_subset")):
            print(f"\n{label}: {result[key]['events_per_pass']} events/pass")
            measuring.print_medians(result[key])
            cpu = result[key]["cpu_us_per_event"]
            ratios = [w / p for w, p in zip(cpu["rust_wrapper"], cpu["python_det"], strict=True)]
            core_r = [c / p for c, p in zip(cpu["rust_core"], cpu["python_det"], strict=True)]
            result[key]["ratio_wrapper_per_round"] = ratios
            result[key]["ratio_core_per_round"] = core_r
            print(
                f"ratio wrapper/python median {statistics.median(ratios):.3f}, "
                f"core {statistics.median(core_r):.3f}"
            )
            if "python_all_detectors" in cpu:
                saved = [
                    a - b
                    for a, b in zip(
                        cpu["python_all_detectors"],
                        cpu["all_detectors_with_rust_source_policy"],
                        strict=True,
                    )
                ]
                result[key]["pipeline_saving_per_round"] = saved
                print(
                    f"pipeline saving per round {[round(s, 2) for s in saved]}, "
                    f"median {statistics.median(saved):.2f}"
                )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"written {args.out}", file=sys.stderr)
    return 0


def _has_work(raw: bytes, limits: Any) -> bool:
    got = measuring.parse_all([raw], limits)
    return (
        bool(got)
        and bool(got[0].response)
        and any(c.policy != "summarize" for c in got[0].retrieved_context)
    )


if __name__ == "__main__":
    sys.exit(main())
