"""Seeded, deterministic, realistic RAG traffic with ground truth (for the demo and benchmarks).

``generate(n, seed, phase, start_index)`` yields :class:`Generated` messages: the exact
Kafka value (JSON event bytes, or a deliberately malformed message), the Kafka key
(conversation id), the event id and the ground truth: the failure modes injected into
that event (vocabulary of DESIGN.md / the detectors) or the malformed kind.

Two services are simulated, about half each: ``earnings-qa`` (questions over filings of
invented companies) and ``it-support`` (cases answered from KB articles); ~30% of
conversations have 2-4 turns. Failure modes are injected at low rates in the
``baseline`` phase, below the ceilings of the generated alert rules (healthy traffic does
not page: PII leaks ~0.35 % of a service's turns against 1 %, every other mode ~3 % or
less against 5 %, malformed messages 0.5 % against the 1 % dead-letter ceiling); the
``degraded`` phase (prompt ``v1.5-degraded``) raises false
rejections (x4), training-cutoff excuses (x3), invented identifiers (x4) and PII leaks
(x100: the prompt lost its redaction step, 20-30 % of answers leak, which pages on the
default `pii-free` SLO) and lowers answer quality. About 1.25 % of messages (both phases)
are golden/canary replays
(:mod:`stream.demo.golden`): a fixed canary question with ``labels.expected_answer``,
answered wrongly in ~12 % of replays (~35 % when degraded); each replaces a single-turn
conversation whose turn would have been clean, so every other message and every
failure-mode count stay as they were. Which failure an index gets is decided by a
low-discrepancy (Weyl) sequence over the message index, so rates are stable over any
window; everything
else comes from ``random.Random`` instances seeded by (seed, phase, block, ...), so
output is byte-identical across runs and any window ``start_index..start_index+n`` is
the same as in one long run. Timestamps are a fixed epoch plus 2.4 s per index.

Truth semantics: ``false_rejection`` / ``false_acceptance`` are only listed on events
that carry ``labels.expected_behavior`` (refusals on unlabelled events and correct
refusals carry no truth); ``pii_leak`` means a value absent from query and context;
clean turns also hold tricky negatives (quoted quote-only text, hedged non-advice,
reported guidance, PII-like values taken from the sources, non-Luhn order numbers).

Layout: this module plans the stream (which index is malformed, which failure mode it
gets, how indices group into conversations) and serialises events; a conversation's
turns come from :mod:`stream.demo.failures` (injection) over the two worlds
(:mod:`stream.demo.earnings`, :mod:`stream.demo.it_support`), whose text is YAML data
under ``stream/demo/phrases/`` (:mod:`stream.demo.phrases`).

Known limits: the text is template-based (tens of templates per slot, eight companies,
eight IT issues), so an n-gram model would find it repetitive; a conversation stays
inside one 128-message block, so follow-up turns arrive within ~5 minutes; answers are
not judged for faithfulness beyond "numbers and identifiers come from the sources".
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import IO, Any, Literal

from stream.contract.failure_modes import FAILURE_MODES
from stream.demo.conversation import new_conv, order, timestamp
from stream.demo.draft import Rng
from stream.demo.earnings import topics as earnings_topics
from stream.demo.failures import turn
from stream.demo.golden import golden_turn
from stream.demo.malformed import MALFORMED_KINDS, malformed_message

__all__ = [
    "FAILURE_MODES",
    "MALFORMED_KINDS",
    "Generated",
    "generate",
    "write_dataset",
    "write_jsonl",
    "write_truth",
]

Phase = Literal["baseline", "degraded"]


@dataclass(frozen=True)
class Generated:
    """One Kafka message and its ground truth."""

    raw: bytes
    key: bytes | None
    event_id: str | None
    truth: list[str]
    malformed: str | None


BLOCK = 128
PHI = (math.sqrt(5) - 1) / 2
SQRT2 = math.sqrt(2) - 1
SQRT3 = math.sqrt(3) - 1
#: share of message indices offered to a canary replay, per phase; an offer is taken when
#: the index is a single-turn conversation whose turn would be clean, so that replays are
#: about 1.25 % of messages in both phases (the degraded phase has fewer clean turns)
GOLDEN_RATE = {"baseline": 0.04, "degraded": 0.11}  # degraded: fewer clean candidates

# Per-domain probability of each injection "mode" (baseline). Modes without a failure:
# unl_refusal (refusal on an unlabelled answerable query), reject_ok (correct refusal).
# Keep every failure mode's share of a service's turns well below its alert ceiling
# (exporters/rules.py FailureModeAlert: pii_leak 1 %, most others 5 %), so that only the
# degraded phase alerts (tests/stream/demo/test_traffic.py checks every 1,000-turn window).
RATES: dict[str, dict[str, float]] = {
    "earnings": {
        "fr": 0.024,
        "unl_refusal": 0.010,
        "reject_ok": 0.050,
        "fa": 0.022,
        "cutoff": 0.026,
        "advice": 0.030,
        "prediction": 0.030,
        "pdr": 0.016,
        "pii": 0.003,
        "citation": 0.024,
        "invented": 0.0,
        "no_use": 0.021,
        "quote_para": 0.026,
    },
    "it": {
        "fr": 0.024,
        "unl_refusal": 0.010,
        "reject_ok": 0.050,
        "fa": 0.022,
        "cutoff": 0.016,
        "advice": 0.0,
        "prediction": 0.0,
        "pdr": 0.030,
        "pii": 0.002,
        "citation": 0.020,
        "invented": 0.032,
        "no_use": 0.021,
        "quote_para": 0.018,
    },
}
# x100 PII: the degraded prompt dropped its redaction step (20-30 % of answers leak), a burn
# of 10-15x the default 98 % `pii-free` SLO's budget, which pages (docs/slo.md)
DEGRADED_X = {"fr": 4.0, "unl_refusal": 4.0, "cutoff": 3.0, "invented": 4.0, "pii": 100.0}


# ---------------------------------------------------------------------------- public API
def generate(
    n: int,
    seed: int = 7,
    phase: Phase = "baseline",
    start_index: int = 0,
    malformed_rate: float = 0.005,
) -> Iterator[Generated]:
    """Yield messages start_index .. start_index+n-1 of the (seed, phase) stream."""
    if phase not in ("baseline", "degraded"):
        raise ValueError(f"unknown phase {phase!r}")
    if n < 0 or start_index < 0 or not 0.0 <= malformed_rate < 1.0:
        raise ValueError("n and start_index must be >= 0 and malformed_rate in [0, 1)")
    end = start_index + n
    block = start_index // BLOCK
    while block * BLOCK < end:
        for index, item in _block(seed, phase, block, malformed_rate):
            if start_index <= index < end:
                yield item
        block += 1


def write_jsonl(
    path_or_stream: str | os.PathLike[str] | IO[Any], items: Iterable[Generated]
) -> int:
    """Write one message per line (raw bytes + newline); returns the number of lines."""
    if isinstance(path_or_stream, str | os.PathLike):
        with open(path_or_stream, "wb") as fh:
            return write_jsonl(fh, items)
    out = getattr(path_or_stream, "buffer", path_or_stream)
    count = 0
    for item in items:
        out.write(item.raw + b"\n")
        count += 1
    return count


def write_truth(
    path_or_stream: str | os.PathLike[str] | IO[Any],
    items: Iterable[Generated],
    first_line: int = 1,
) -> int:
    """Write the ground truth as JSONL: {"line", "event_id", "failure_modes", "malformed"}."""
    if isinstance(path_or_stream, str | os.PathLike):
        with open(path_or_stream, "wb") as fh:
            return write_truth(fh, items, first_line)
    out = getattr(path_or_stream, "buffer", path_or_stream)
    count = 0
    for count, item in enumerate(items, 1):
        out.write(_truth_line(first_line + count - 1, item))
    return count


def write_dataset(
    events: str | os.PathLike[str], truth: str | os.PathLike[str], items: Iterable[Generated]
) -> int:
    """Write the events file and its truth file in one pass (for generators)."""
    count = 0
    with open(events, "wb") as ev, open(truth, "wb") as tr:
        for count, item in enumerate(items, 1):
            ev.write(item.raw + b"\n")
            tr.write(_truth_line(count, item))
    return count


def _truth_line(line: int, item: Generated) -> bytes:
    rec = {
        "line": line,
        "event_id": item.event_id,
        "failure_modes": item.truth,
        "malformed": item.malformed,
    }
    return json.dumps(rec, separators=(",", ":")).encode() + b"\n"


# ---------------------------------------------------------------------------- planning
def _frac(x: float) -> float:
    return x - math.floor(x)


def _offset(seed: int, phase: str, salt: str) -> float:
    h = hashlib.blake2b(f"{salt}:{seed}:{phase}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2**64


def _malformed_kind(seed: int, phase: str, index: int, rate: float) -> str | None:
    v = _frac(index * SQRT2 + _offset(seed, phase, "bad"))
    if v >= rate:
        return None
    return MALFORMED_KINDS[min(int(v / rate * len(MALFORMED_KINDS)), len(MALFORMED_KINDS) - 1)]


def _mode(seed: int, phase: str, index: int, domain: str) -> str:
    u = _frac(index * PHI + _offset(seed, phase, "mode"))
    acc = 0.0
    for mode, rate in RATES[domain].items():
        acc += rate * (DEGRADED_X.get(mode, 1.0) if phase == "degraded" else 1.0)
        if u < acc:
            return mode
    return "clean"


def _golden_domain(seed: int, phase: str, index: int, conv_seed: str) -> str | None:
    """The domain of the canary replay that takes message `index`, or None.

    A replay replaces a single-turn conversation whose turn would have been clean, in
    the same domain: every other conversation, and every failure-mode count, is the same
    as without replays. Which candidates are taken is a third Weyl sequence."""
    if _frac(index * SQRT3 + _offset(seed, phase, "golden")) >= GOLDEN_RATE[phase]:
        return None
    domain = new_conv(random.Random(conv_seed)).domain  # a copy: the conversation's draws
    return domain if _mode(seed, phase, index, domain) == "clean" else None


def _golden(seed: int, phase: str, index: int, domain: str) -> Generated:
    rng = random.Random(f"golden:{seed}:{phase}:{index}")
    event, conv, _wrong = golden_turn(rng, domain, phase)
    event_id = f"evt-{phase[0]}{seed}-{index:07d}"
    conv_id = f"canary-{phase[0]}{seed}-{index:07d}"
    ev = {"event_id": event_id, "timestamp": timestamp(seed, phase, index), **event}
    ev["conversation_id"], ev["turn_index"] = conv_id, 0
    raw = json.dumps(order(ev, conv), ensure_ascii=False, separators=(",", ":"))
    return Generated(raw.encode(), conv_id.encode(), event_id, [], None)


@lru_cache(maxsize=4)  # callers that page through the stream in small windows
def _block(seed: int, phase: str, block: int, malformed_rate: float) -> list[tuple[int, Generated]]:
    rng = random.Random(f"plan:{seed}:{phase}:{block}")
    indices = range(block * BLOCK, (block + 1) * BLOCK)
    out: list[tuple[int, Generated]] = []
    good: list[int] = []
    for i in indices:
        kind = _malformed_kind(seed, phase, i, malformed_rate)
        if kind:
            raw, conv_id, event_id = malformed_message(seed, phase, i, kind)
            out.append((i, Generated(raw, conv_id.encode(), event_id, [], kind)))
        else:
            good.append(i)
    sizes: list[int] = []
    left = len(good)
    while left:
        size = min(left, 1 if rng.random() < 0.7 else rng.randint(2, 4))
        sizes.append(size)
        left -= size
    times = []
    for c, size in enumerate(sizes):
        t, gap = rng.random(), rng.uniform(0.02, 0.25)
        times += [(t + k * gap, c, k) for k in range(size)]
    times.sort()
    slots: list[list[int]] = [[] for _ in sizes]
    for i, (_, c, _k) in zip(good, times, strict=True):
        slots[c].append(i)
    for c, idx in enumerate(slots):
        conv_seed = f"conv:{seed}:{phase}:{block}:{c}"
        if len(idx) == 1 and (domain := _golden_domain(seed, phase, idx[0], conv_seed)):
            out.append((idx[0], _golden(seed, phase, idx[0], domain)))
            continue
        crng = random.Random(conv_seed)
        conv_id = f"conv-{phase[0]}{seed}-{block:05d}-{c:02d}"
        out += _conversation(crng, seed, phase, conv_id, idx)
    out.sort(key=lambda x: x[0])
    return out


def _conversation(
    rng: Rng, seed: int, phase: str, conv_id: str, idx: list[int]
) -> list[tuple[int, Generated]]:
    conv = new_conv(rng)
    if conv.domain == "earnings":
        topics = rng.sample(earnings_topics(), len(idx))
    else:
        first = rng.choices(("fix", "cause", "fixed"), (0.7, 0.15, 0.15))[0]
        rest = [t for t in ("followup", "logs", "fixed", "cause") if t != first]
        topics = [first, *rng.sample(rest, len(idx) - 1)]
    history: list[dict[str, str]] = []
    out = []
    for k, (index, topic) in enumerate(zip(idx, topics, strict=True)):
        mode = _mode(seed, phase, index, conv.domain)
        event, truth = turn(rng, conv, phase, mode, topic, k, history)
        event_id = f"evt-{phase[0]}{seed}-{index:07d}"
        ev = {"event_id": event_id, "timestamp": timestamp(seed, phase, index), **event}
        ev["conversation_id"], ev["turn_index"] = conv_id, k
        ev = order(ev, conv)
        raw = json.dumps(ev, ensure_ascii=False, separators=(",", ":")).encode()
        out.append((index, Generated(raw, conv_id.encode(), event_id, sorted(set(truth)), None)))
        history = [
            *history,
            {"role": "user", "content": ev["query"]},
            {"role": "assistant", "content": ev["response"]},
        ]
    return out
