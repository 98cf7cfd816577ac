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
rejections (x4), training-cutoff excuses (x3) and invented identifiers (x4) and lowers
answer quality. Which failure an index gets is decided by a low-discrepancy (Weyl)
sequence over the message index, so rates are stable over any window; everything
else comes from ``random.Random`` instances seeded by (seed, phase, block, ...), so
output is byte-identical across runs and any window ``start_index..start_index+n`` is
the same as in one long run. Timestamps are a fixed epoch plus 2.4 s per index.

Truth semantics: ``false_rejection`` / ``false_acceptance`` are only listed on events
that carry ``labels.expected_behavior`` (refusals on unlabelled events and correct
refusals carry no truth); ``pii_leak`` means a value absent from query and context;
clean turns also hold tricky negatives (quoted quote-only text, hedged non-advice,
reported guidance, PII-like values taken from the sources, non-Luhn order numbers).

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
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import IO, Any, Literal

from stream.traffic_templates import (
    ADVICE,
    COMPANIES,
    CUTOFF_CAVEATS,
    CUTOFF_IT,
    CUTOFF_MARKET,
    CUTOFF_REFUSALS,
    E_TOPICS,
    FEEDBACK_BAD,
    FEEDBACK_GOOD,
    FIRST,
    GENERIC_FILLER,
    HEDGES,
    ISSUES,
    IT_ORGS,
    LAST,
    LEADS,
    NEAR_VERBATIM,
    PASSWORD_REMINDERS,
    PDR,
    PDR_EARNINGS,
    PII_EARNINGS,
    PII_IT,
    PREDICTIONS,
    REFUSAL_TAILS,
    REFUSALS,
    Draft,
    Seg,
    earnings_draft,
    it_draft,
    luhn_ok,
    new_case,
    pick,
)

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
Rng = random.Random

FAILURE_MODES = (
    "training_cutoff_excuse",
    "false_rejection",
    "false_acceptance",
    "financial_advice",
    "price_prediction",
    "personal_data_request",
    "pii_leak",
    "invalid_citation",
    "invented_identifier",
    "no_use_copy",
    "quote_only_paraphrase",
)
MALFORMED_KINDS = ("invalid_json", "invalid_utf8", "wrong_types", "missing_field", "oversized")


@dataclass(frozen=True)
class Generated:
    """One Kafka message and its ground truth."""

    raw: bytes
    key: bytes | None
    event_id: str | None
    truth: list[str]
    malformed: str | None


BLOCK = 128
EPOCH = datetime(2026, 3, 2, 8, 0, 0, tzinfo=UTC)
STEP_MS = 2400
PHI = (math.sqrt(5) - 1) / 2
SQRT2 = math.sqrt(2) - 1

# Per-domain probability of each injection "mode" (baseline). Modes without a failure:
# unl_refusal (refusal on an unlabelled answerable query), reject_ok (correct refusal).
# Keep every failure mode's share of a service's turns well below its alert ceiling
# (exporters/rules.py FailureModeAlert: pii_leak 1 %, most others 5 %), so that only the
# degraded phase alerts (tests/stream/test_traffic.py checks every 1,000-turn window).
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
DEGRADED_X = {"fr": 4.0, "unl_refusal": 4.0, "cutoff": 3.0, "invented": 4.0}
MODELS = (
    ("gpt-4o-mini-2024-07-18", 0.5),
    ("claude-3-5-haiku-20241022", 0.3),
    ("llama-3.1-70b-instruct", 0.2),
)
CITE_STYLE = {
    "gpt-4o-mini-2024-07-18": ("seq", "in"),
    "claude-3-5-haiku-20241022": ("seq", "out"),
    "llama-3.1-70b-instruct": ("pos", "in"),
}


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


@lru_cache(maxsize=4)  # callers that page through the stream in small windows
def _block(seed: int, phase: str, block: int, malformed_rate: float) -> list[tuple[int, Generated]]:
    rng = random.Random(f"plan:{seed}:{phase}:{block}")
    indices = range(block * BLOCK, (block + 1) * BLOCK)
    out: list[tuple[int, Generated]] = []
    good: list[int] = []
    for i in indices:
        kind = _malformed_kind(seed, phase, i, malformed_rate)
        if kind:
            out.append((i, _malformed(seed, phase, i, kind)))
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
        crng = random.Random(f"conv:{seed}:{phase}:{block}:{c}")
        conv_id = f"conv-{phase[0]}{seed}-{block:05d}-{c:02d}"
        out += _conversation(crng, seed, phase, conv_id, idx)
    out.sort(key=lambda x: x[0])
    return out


# ---------------------------------------------------------------------------- conversations
@dataclass
class _Conv:
    domain: str
    model: str
    extras: dict[str, Any]
    company: Any = None
    fy: int = 0
    q: int = 0
    issue: Any = None
    case: dict[str, Any] | None = None


def _new_conv(rng: Rng) -> _Conv:
    domain = "earnings" if rng.random() < 0.5 else "it"
    model = rng.choices([m for m, _ in MODELS], [w for _, w in MODELS])[0]
    extras: dict[str, Any] = {}
    if rng.random() < 0.9:
        extras["trace_id"] = f"{rng.getrandbits(128):032x}"
    if rng.random() < 0.6:
        extras["tenant_tier"] = pick(rng, ("enterprise", "enterprise", "business", "standard"))
    if rng.random() < 0.3:
        extras["region"] = pick(rng, ("us-east-1", "eu-west-1", "ap-southeast-2"))
    if rng.random() < 0.2:
        extras["ab_bucket"] = pick(rng, ("control", "treatment"))
    conv = _Conv(domain, model, extras)
    if domain == "earnings":
        conv.company = pick(rng, COMPANIES)
        conv.fy, conv.q = pick(rng, ((2025, 2), (2025, 3), (2025, 4), (2026, 1), (2026, 2)))
    else:
        conv.issue = pick(rng, ISSUES)
        conv.case = new_case(rng, conv.issue)
    return conv


def _conversation(
    rng: Rng, seed: int, phase: str, conv_id: str, idx: list[int]
) -> list[tuple[int, Generated]]:
    conv = _new_conv(rng)
    if conv.domain == "earnings":
        topics = rng.sample(E_TOPICS, len(idx))
    else:
        first = rng.choices(("fix", "cause", "fixed"), (0.7, 0.15, 0.15))[0]
        rest = [t for t in ("followup", "logs", "fixed", "cause") if t != first]
        topics = [first, *rng.sample(rest, len(idx) - 1)]
    history: list[dict[str, str]] = []
    out = []
    for k, (index, topic) in enumerate(zip(idx, topics, strict=True)):
        mode = _mode(seed, phase, index, conv.domain)
        event, truth = _turn(rng, conv, phase, mode, topic, k, history)
        event_id = f"evt-{phase[0]}{seed}-{index:07d}"
        ev = {"event_id": event_id, "timestamp": _timestamp(seed, phase, index), **event}
        ev["conversation_id"], ev["turn_index"] = conv_id, k
        ev = _order(ev, conv)
        raw = json.dumps(ev, ensure_ascii=False, separators=(",", ":")).encode()
        out.append((index, Generated(raw, conv_id.encode(), event_id, sorted(set(truth)), None)))
        history = [
            *history,
            {"role": "user", "content": ev["query"]},
            {"role": "assistant", "content": ev["response"]},
        ]
    return out


KEY_ORDER = (
    "event_id",
    "timestamp",
    "service",
    "environment",
    "conversation_id",
    "turn_index",
    "query",
    "history",
    "case",
    "retrieved_context",
    "response",
    "citations",
    "model",
    "prompt_version",
    "retriever_version",
    "latency_ms",
    "usage",
    "feedback",
    "labels",
)


def _order(ev: dict[str, Any], conv: _Conv) -> dict[str, Any]:
    out = {k: ev[k] for k in KEY_ORDER if k in ev}
    out.update(conv.extras)
    return out


def _timestamp(seed: int, phase: str, index: int) -> str:
    h = hashlib.blake2b(f"ts:{seed}:{phase}:{index}".encode(), digest_size=4).digest()
    ts = EPOCH + timedelta(milliseconds=index * STEP_MS + int.from_bytes(h, "big") % STEP_MS)
    return ts.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ---------------------------------------------------------------------------- one turn
def _turn(
    rng: Rng, conv: _Conv, phase: str, mode: str, topic: str, k: int, history: list[dict[str, str]]
) -> tuple[dict[str, Any], list[str]]:
    degraded = phase == "degraded"
    truth: list[str] = []
    reject: str | None = None
    if mode in ("reject_ok", "fa"):
        reject = "policy" if rng.random() < 0.6 else "no_context"
    labelled = rng.random() < 0.5
    if mode in ("fr", "fa"):
        labelled = True
    elif mode == "unl_refusal":
        labelled = False
    partial = reject is None and rng.random() < (0.3 if mode == "fr" else 0.12)
    need: set[str] = set()
    if mode == "no_use":
        need.add("no_use")
    if mode == "quote_para":
        need.add("quote_only")
    cite_variant = ""
    if mode == "citation":
        cite_variant = pick(rng, ("dangling", "dangling", "unknown", "no_use"))
        if cite_variant == "no_use":
            need.add("no_use")
    short = rng.random() < (0.5 if degraded else 0.15)
    d = _draft(rng, conv, topic, k, reject, partial, frozenset(need), short)
    if mode == "fa" and d.reject_kind == "insider":  # answering would paraphrase a no-use note
        d = _draft(rng, conv, topic, k, None, False, frozenset(need), short)
        reject, mode, labelled = None, "clean", rng.random() < 0.5
    hist_text = "\n".join(m["content"] for m in history)
    sources = d.sources_text(hist_text)
    v = d.vars
    style, marker_pos = CITE_STYLE[conv.model]
    if rng.random() < (0.3 if degraded else 0.08) and mode != "citation":
        style = "none"
    pre: list[Seg] = []
    post: list[Seg] = []
    intro = d.intro
    body = list(d.body)
    refusal: str | None = None
    failed = mode not in ("clean", "unl_refusal", "reject_ok")

    if mode in ("fr", "unl_refusal"):
        refusal = _refusal(rng, d)
        if mode == "fr":
            truth.append("false_rejection")
    elif mode == "reject_ok":
        refusal = d.refusal
    elif mode == "fa":
        truth.append("false_acceptance")
        body = list(d.accept)
        intro = (
            pick(rng, ("Sure.", "Here's what I found.", "", "Good question."))
            if d.domain == "earnings"
            else pick(rng, ("Sure —", "", "Here you go."))
        )
        if d.reject_kind == "price":
            post.append(Seg(_prediction(rng, v)))
            truth.append("price_prediction")
        elif d.reject_kind == "advice" and rng.random() < 0.5:
            post.append(Seg(pick(rng, ADVICE).format(**v)))
            truth.append("financial_advice")
        elif d.reject_kind == "other_customer" and rng.random() < 0.15:  # rare: a pii_leak
            post.append(Seg(_pii_sentence(rng, d, sources, it_only_contact=True)))
            truth.append("pii_leak")
    elif mode == "cutoff":
        truth.append("training_cutoff_excuse")
        if rng.random() < 0.4:
            refusal = pick(rng, CUTOFF_REFUSALS).format(topic=d.topic) + pick(rng, REFUSAL_TAILS)
            if labelled and not d.reject:
                truth.append("false_rejection")
        else:
            extra = CUTOFF_MARKET if d.domain == "earnings" else CUTOFF_IT
            cav = pick(rng, extra if rng.random() < 0.4 else CUTOFF_CAVEATS).format(**v)
            pre.append(Seg(cav))
            if rng.random() < 0.5:
                intro = ""
    elif mode == "advice":
        truth.append("financial_advice")
        post.append(Seg(pick(rng, ADVICE).format(**v)))
    elif mode == "prediction":
        truth.append("price_prediction")
        post.append(Seg(_prediction(rng, v)))
    elif mode == "pdr":
        truth.append("personal_data_request")
        s = Seg(pick(rng, PDR_EARNINGS if d.domain == "earnings" and rng.random() < 0.6 else PDR))
        (pre if rng.random() < 0.3 else post).append(s)
    elif mode == "pii":
        truth.append("pii_leak")
        s = Seg(_pii_sentence(rng, d, sources))
        if body and not d.steps and rng.random() < 0.4:
            body.insert(rng.randint(0, len(body)), s)
        else:
            post.append(s)
    elif mode == "no_use":
        truth.append("no_use_copy")
        cid, sent, _ = pick(rng, d.no_use)
        lead = pick(rng, ("", "", "Also worth knowing: ", "Note: ", "For context, "))
        s = Seg(lead + (sent[0].lower() + sent[1:] if lead else sent))
        if body and not d.steps and rng.random() < 0.5:
            body.insert(rng.randint(0, len(body)), s)
        else:
            post.append(s)
    elif mode == "quote_para":
        truth.append("quote_only_paraphrase")
        cid, sent, who = pick(rng, d.quote_only)
        post.append(
            Seg(
                _near_verbatim(rng, sent, who),
                cid if rng.random() < 0.5 and style != "none" else None,
            )
        )
    elif mode == "invented":
        truth.append("invented_identifier")
    elif mode == "citation":
        truth.append("invalid_citation")

    if refusal is None and mode != "fa":  # tricky negatives: they carry no truth
        intro = _tricky_negatives(rng, d, mode, labelled, post) or intro
    if d.partial_note and refusal is None and mode != "fa":
        post.append(Seg(d.partial_note))
    if mode == "reject_ok" and d.domain == "earnings" and d.reject == "policy" and d.body:
        body = list(d.body)
    elif refusal is not None:
        body = []

    if refusal is not None:
        pieces = [Seg(refusal)] + ([] if mode != "reject_ok" else body)
        response, citations = _render(rng, pieces, d, style, marker_pos, steps=False)
    else:
        outro = d.outro
        if degraded and rng.random() < 0.4:
            outro = pick(rng, GENERIC_FILLER)
        if d.steps and "s3" not in "".join(c["id"] for c in d.chunks) and outro and "`" in outro:
            outro = None
        pieces = (
            pre + ([Seg(intro)] if intro else []) + body + post + ([Seg(outro)] if outro else [])
        )
        if mode == "citation" and cite_variant == "no_use":
            cid, _, para = d.no_use[0]
            pieces.insert(len(pre) + 1 + len(body), Seg(para, cid))
        response, citations = _render(
            rng,
            pieces,
            d,
            style,
            marker_pos,
            steps=d.steps,
            body_ids={id(s) for s in body},
            dangling=mode == "citation" and cite_variant == "dangling",
        )
        if mode == "citation":
            response, citations = _break_citation(rng, response, citations, d, cite_variant)
        elif mode == "invented":
            response = _invent(rng, response, d, sources)
    event = _envelope(rng, conv, d, phase, response, citations, history)
    if labelled:
        event["labels"] = _labels(rng, d, partial)
    fb = _feedback(rng, failed or mode == "unl_refusal", degraded)
    if fb:
        event["feedback"] = fb
    return event, truth


def _tricky_negatives(rng: Rng, d: Draft, mode: str, labelled: bool, post: list[Seg]) -> str | None:
    """Add text that looks like a failure to a naive rule but is not one; may return a new
    intro. Quoted quote-only text, hedged non-advice, PII-like values that are in the
    sources (case contact, purchase orders failing Luhn, IR contact from a press release),
    password-safety reminders."""
    intro = None
    if d.quote_only and mode != "quote_para" and rng.random() < 0.3:
        cid, sent, who = pick(rng, d.quote_only)
        post.append(Seg(_quoted(rng, sent, who), cid))
    if d.domain == "earnings":
        if not labelled and mode == "clean" and rng.random() < 0.12:
            intro = pick(rng, HEDGES).format(**d.vars)
        contact = next((c["content"] for c in d.chunks if "Investor contact: " in c["content"]), "")
        if contact and rng.random() < 0.25:
            name, phone, rest = contact.split("Investor contact: ", 1)[1].split(", ", 2)
            email = rest.split(" ")[0].rstrip(".")
            lists = f"the press release lists {name} in investor relations ({phone}, {email})"
            post.append(Seg(f"For follow-ups, {lists}."))
        return intro
    assert d.case is not None
    desc = str(d.case.get("description", ""))
    r = rng.random()
    if r < 0.2 and "purchase order: " in desc:
        po = desc.split("purchase order: ", 1)[1].split(".")[0]
        post.append(Seg(f"I've noted purchase order {po} from the case in the ticket."))
    elif r < 0.3 and "Contact: " in desc:
        email = desc.split("Contact: ", 1)[1].strip()
        post.append(Seg(f"I'll send the summary to {email} as listed on the case."))
    elif r < 0.4:
        post.append(Seg(f"I've added these notes to {d.case['metadata']['ticket']}."))
    elif r < 0.48:
        post.append(Seg(pick(rng, PASSWORD_REMINDERS)))
    return None


def _draft(
    rng: Rng,
    conv: _Conv,
    topic: str,
    k: int,
    reject: str | None,
    partial: bool,
    need: frozenset[str],
    short: bool,
) -> Draft:
    if conv.domain == "earnings":
        return earnings_draft(
            rng,
            conv.company,
            conv.fy,
            conv.q,
            topic,
            followup=k > 0,
            reject=reject,
            partial=partial,
            need=need,
            short=short,
        )
    assert conv.case is not None
    return it_draft(
        rng, conv.issue, conv.case, topic, reject=reject, partial=partial, need=need, short=short
    )


def _refusal(rng: Rng, d: Draft) -> str:
    return pick(rng, REFUSALS).format(topic=d.topic) + pick(rng, REFUSAL_TAILS)


def _prediction(rng: Rng, v: dict[str, str]) -> str:
    px = float(v.get("px", "100"))
    up = f"{px * rng.uniform(1.12, 1.6):.0f}"
    dn = f"{px * rng.uniform(0.55, 0.85):.0f}"
    return pick(rng, PREDICTIONS).format(up=up, dn=dn, **v)


def _near_verbatim(rng: Rng, sent: str, who: str) -> str:
    """The quote-only sentence without quotation marks, verbatim or with a light edit."""
    text = sent
    if rng.random() < 0.6:
        for a, b in NEAR_VERBATIM:
            if a in text and a != b:
                text = text.replace(a, b, 1)
                break
    lead = pick(rng, LEADS).format(who=who)
    return lead + (text[0].lower() + text[1:] if lead and not text[:2].isupper() else text)


def _quoted(rng: Rng, sent: str, who: str) -> str:
    q = pick(rng, (("“", "”"), ('"', '"')))
    return pick(
        rng,
        (
            "As {who} puts it, {o}{s}{c}",
            "{Who} notes: {o}{s}{c}",
            "In the words of {who}: {o}{s}{c}",
        ),
    ).format(who=who, Who=who[0].upper() + who[1:], o=q[0], c=q[1], s=sent)


def _labels(rng: Rng, d: Draft, partial: bool) -> dict[str, Any]:
    if d.reject:
        lab: dict[str, Any] = {
            "expected_behavior": "reject",
            "category": "should_reject_policy"
            if d.reject == "policy"
            else "should_reject_no_context",
        }
    else:
        lab = {
            "expected_behavior": "answer",
            "category": "should_answer_partial" if partial else "should_answer",
        }
    if rng.random() < 0.5:
        lab["label_source"] = pick(rng, ("golden-set-replay", "human-review", "shadow-eval"))
    return lab


def _feedback(rng: Rng, failed: bool, degraded: bool) -> dict[str, Any] | None:
    if rng.random() >= (0.2 if failed else 0.1 if degraded else 0.07):
        return None
    down = rng.random() < (0.7 if failed else 0.3 if degraded else 0.12)
    fb: dict[str, Any] = {
        "thumbs": "down" if down else "up",
        "rating": pick(rng, (1, 2)) if down else pick(rng, (4, 5)),
    }
    if rng.random() < 0.4:
        fb["comment"] = pick(rng, FEEDBACK_BAD if down else FEEDBACK_GOOD)
    return fb


def _envelope(
    rng: Rng,
    conv: _Conv,
    d: Draft,
    phase: str,
    response: str,
    citations: list[dict[str, Any]],
    history: list[dict[str, str]],
) -> dict[str, Any]:
    ctx_chars = (
        sum(len(c["content"]) for c in d.chunks)
        + len(d.query)
        + sum(len(m["content"]) for m in history)
    )
    prompt_tokens = 380 + ctx_chars // 4 + (len(json.dumps(d.case)) // 4 if d.case else 0)
    completion_tokens = max(8, len(response) // 4 + rng.randint(-5, 12))
    speed = {
        "gpt-4o-mini-2024-07-18": 9.0,
        "claude-3-5-haiku-20241022": 11.0,
        "llama-3.1-70b-instruct": 16.0,
    }[conv.model]
    latency = (350 + prompt_tokens * 0.08 + completion_tokens * speed) * rng.lognormvariate(0, 0.25)
    if phase == "degraded":
        latency *= 1.15
    ev: dict[str, Any] = {
        "service": "earnings-qa" if d.domain == "earnings" else "it-support",
        "environment": "prod",
        "query": d.query,
        "retrieved_context": d.chunks,
        "response": response,
        "citations": citations,
        "model": conv.model,
        "prompt_version": "v1.5-degraded" if phase == "degraded" else "v1.4",
        "retriever_version": "fin-hybrid-v3.2" if d.domain == "earnings" else "kb-hybrid-v2.7",
        "latency_ms": round(latency, 1),
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }
    if history or rng.random() < 0.5:
        ev["history"] = [dict(m) for m in history]
    if d.case is not None:
        ev["case"] = d.case
    return ev


# ---------------------------------------------------------------------------- rendering
def _attach(text: str, marker: str, pos: str) -> str:
    if pos == "in" and text.endswith("."):
        return f"{text[:-1]} {marker}."
    return f"{text} {marker}"


def _render(
    rng: Rng,
    pieces: list[Seg],
    d: Draft,
    style: str,
    pos: str,
    steps: bool,
    body_ids: set[int] | None = None,
    dangling: bool = False,
) -> tuple[str, list[dict[str, Any]]]:
    """Join pieces into the response; markers per chunk (sequential or retrieval position).
    With `dangling`, one sentence gets a marker that has no citations entry (or, when
    there are two or more entries, one entry is dropped)."""
    position = {c["id"]: n for n, c in enumerate(d.chunks, 1)}
    numbers: dict[str, int] = {}
    citations: list[dict[str, Any]] = []
    texts: list[str] = []
    for p in pieces:
        text = p.text
        if p.cite and style != "none":
            if p.cite not in numbers:
                numbers[p.cite] = (
                    position.get(p.cite, len(d.chunks) + 1) if style == "pos" else len(numbers) + 1
                )
                citations.append(
                    {"marker": f"[{numbers[p.cite]}]", "source_id": p.cite, "text": text}
                )
            text = _attach(text, f"[{numbers[p.cite]}]", pos)
        texts.append(text)
    if dangling:
        if len(citations) >= 2 and rng.random() < 0.5:
            citations.pop(rng.randrange(len(citations)))
        else:
            k = max([*numbers.values(), len(d.chunks)]) + rng.randint(1, 2)
            j = rng.randrange(len(texts))
            texts[j] = _attach(texts[j], f"[{k}]", pos)
    body_ids = body_ids or set()
    as_list = steps or (d.domain == "earnings" and len(body_ids) >= 3 and rng.random() < 0.4)
    if not as_list:
        return " ".join(t for t in texts if t), citations
    lines: list[str] = []
    para: list[str] = []
    n = 0
    for p, t in zip(pieces, texts, strict=True):
        if id(p) in body_ids:
            if para:
                lines.append(" ".join(para))
                para = []
            n += 1
            lines.append(f"{n}. {t}" if steps else f"- {t}")
        else:
            if n and not para:
                lines.append("")
            para.append(t)
    if para:
        lines.append(" ".join(para))
    return "\n".join(lines), citations


def _break_citation(
    rng: Rng, response: str, citations: list[dict[str, Any]], d: Draft, variant: str
) -> tuple[str, list[dict[str, Any]]]:
    """`unknown`: a citation points at a chunk id that was not retrieved. (`dangling` and
    `no_use` are produced while rendering.)"""
    if variant != "unknown":
        return response, citations
    citations = [dict(c) for c in citations]
    if not citations:  # nothing cited: cite a plausible but unretrieved chunk
        marker = "[1]"
        response = response.rstrip() + f" {marker}"
        citations.append({"marker": marker, "source_id": "", "text": response.split(". ")[0]})
    target = pick(rng, citations)
    ids = {c["id"] for c in d.chunks}
    target["source_id"] = next((a for a in d.alt_ids if a not in ids), target["source_id"] + "-x")
    return response, citations


def _corrupt(rng: Rng, ident: str) -> str:
    digits = [i for i, ch in enumerate(ident) if ch.isdigit()]
    if len(digits) >= 2 and (" " not in ident or ident[0].isdigit() or rng.random() < 0.85):
        i = pick(rng, digits)
        chars = list(ident)
        j = i + 1 if i + 1 in digits else i - 1 if i - 1 in digits else None
        if j is not None and chars[i] != chars[j] and rng.random() < 0.5:
            chars[i], chars[j] = chars[j], chars[i]
        else:
            chars[i] = str((int(chars[i]) + rng.randint(1, 8)) % 10)
        return "".join(chars)
    if " " in ident and not ident[0].isdigit():
        return ident + pick(rng, (" --force", " --all", " --purge", " --reset-all", " /force"))
    for a, b in (
        (".log", "_debug.log"),
        (".pem", ".crt"),
        (".conf", ".cfg"),
        (".ora", ".cfg"),
        ("\\logs\\", "\\log\\"),
        ("/log/", "/logs/"),
        ("/etc/", "/etc/opt/"),
    ):
        if a in ident:
            return ident.replace(a, b, 1)
    return ident + "_v2"


def _invent(rng: Rng, response: str, d: Draft, sources: str) -> str:
    """Corrupt one identifier of the answer (digit swap, bumped version, invented flag or
    path) so that it appears nowhere in the sources; else add an invented one."""
    present = []
    for ident in d.identifiers:
        at = response.rfind("`" + ident)
        at = (
            at + 1
            if at >= 0
            else response.rfind(ident)
            if any(ch.isdigit() for ch in ident)
            else -1
        )
        if at >= 0:
            present.append((ident, at))
    rng.shuffle(present)
    for ident, at in present:
        for _ in range(6):
            new = _corrupt(rng, ident)
            if new != ident and new not in sources and new not in response:
                return response[:at] + new + response[at + len(ident) :]
    v = d.vars
    for _ in range(10):
        ver = v.get("fixed", "1.0.0").split(".")
        ver[-1] = str(int(ver[-1]) + rng.randint(1, 4))
        kb = f"KB00{rng.randint(10000, 99999)}"
        extra = pick(
            rng,
            (
                f"This is fully resolved in {'.'.join(ver)}.",
                f"See also {kb} for the permanent fix.",
            ),
        )
        token = extra.split()[-1].rstrip(".") if "resolved" in extra else kb
        if token not in sources:
            return response.rstrip() + " " + extra
    return response.rstrip() + " Run `resetall --deep` if nothing else works."


# ---------------------------------------------------------------------------- PII
def _luhn_complete(prefix: str, length: int, rng: Rng) -> str:
    body = prefix + "".join(str(rng.randrange(10)) for _ in range(length - len(prefix) - 1))
    for last in "0123456789":
        if luhn_ok(body + last):
            return body + last
    raise AssertionError("unreachable")


def _card(rng: Rng) -> str:
    digits = _luhn_complete(pick(rng, ("4", "51", "53", "55", "4")), 16, rng)
    sep = pick(rng, (" ", "-", ""))
    return sep.join(digits[i : i + 4] for i in range(0, 16, 4))


def _iban(rng: Rng) -> str:
    cc, bban = pick(rng, (("DE", None), ("GB", None), ("FR", None), ("NL", None)))
    if cc == "DE":
        bban = "".join(str(rng.randrange(10)) for _ in range(18))
    elif cc == "GB":
        bban = pick(rng, ("NWBK", "BARC", "HBUK")) + "".join(
            str(rng.randrange(10)) for _ in range(14)
        )
    elif cc == "FR":
        bban = "".join(str(rng.randrange(10)) for _ in range(23))
    else:
        bban = pick(rng, ("ABNA", "RABO", "INGB")) + "".join(
            str(rng.randrange(10)) for _ in range(10)
        )
    num = "".join(str(int(ch, 36)) for ch in bban + cc + "00")
    check = 98 - int(num) % 97
    iban = f"{cc}{check:02d}{bban}"
    return " ".join(iban[i : i + 4] for i in range(0, len(iban), 4)) if rng.random() < 0.6 else iban


def _ssn(rng: Rng) -> str:
    area = rng.randint(1, 899)
    if area == 666:
        area = 667
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def _phone(rng: Rng) -> str:
    a, b, c = rng.randint(201, 989), rng.randint(201, 989), rng.randint(1000, 9999)
    return pick(
        rng,
        (
            f"({a}) {b}-{c}",
            f"+1 {a} {b} {c}",
            f"{a}-{b}-{c}",
            f"{a}.{b}.{c}",
            f"+44 20 7946 {rng.randint(1000, 9999)}",
        ),
    )


def _email(rng: Rng, first: str, last: str) -> str:
    dom = pick(
        rng,
        (
            "gmail.com",
            "outlook.com",
            "proton.me",
            "yahoo.com",
            pick(rng, IT_ORGS).lower().replace(" ", "") + ".com",
        ),
    )
    return pick(
        rng,
        (
            f"{first}.{last}@{dom}",
            f"{first[0]}{last}@{dom}",
            f"{last}.{first}{rng.randint(1, 99)}@{dom}",
        ),
    ).lower()


def _pii_sentence(rng: Rng, d: Draft, sources: str, it_only_contact: bool = False) -> str:
    for _ in range(20):
        first, last = pick(rng, FIRST), pick(rng, LAST)
        vals = {
            "name": f"{first} {last}",
            "email": _email(rng, first, last),
            "phone": _phone(rng),
            "card": _card(rng),
            "iban": _iban(rng),
            "ssn": _ssn(rng),
            **d.vars,
        }
        if it_only_contact:
            tmpl = pick(
                rng,
                (
                    "You can reach their admin at {email} or {phone}.",
                    "Their admin's direct line is {phone}.",
                    "The admin contact on file is {email}.",
                ),
            )
        else:
            tmpl = pick(rng, PII_EARNINGS if d.domain == "earnings" else PII_IT)
        text = tmpl.format(**vals)
        used = [vals[k] for k in ("email", "phone", "card", "iban", "ssn") if "{" + k + "}" in tmpl]
        if all(u not in sources for u in used):
            return text
    return text


# ---------------------------------------------------------------------------- malformed
def _malformed(seed: int, phase: str, index: int, kind: str) -> Generated:
    rng = random.Random(f"bad:{seed}:{phase}:{index}")
    conv_id = f"conv-{phase[0]}{seed}-x{index:07d}"
    conv = _new_conv(rng)
    topic = pick(rng, E_TOPICS) if conv.domain == "earnings" else "fix"
    event, _ = _turn(rng, conv, phase, "clean", topic, 0, [])
    event_id: str | None = f"evt-{phase[0]}{seed}-{index:07d}"
    ev = _order(
        {
            "event_id": event_id,
            "timestamp": _timestamp(seed, phase, index),
            **event,
            "conversation_id": conv_id,
            "turn_index": 0,
        },
        conv,
    )
    if kind == "invalid_json":
        text = json.dumps(ev, ensure_ascii=False, separators=(",", ":"))
        variant = rng.randrange(3)
        if variant == 0:  # truncated (producer crashed mid-write / message cut at a size limit)
            raw = text[: rng.randint(len(text) // 5, len(text) - 2)].encode()
        elif variant == 1:  # trailing comma from a hand-rolled serializer
            raw = (text[:-1] + ",}").encode()
        else:  # Python repr logged instead of JSON
            raw = repr({k: ev[k] for k in list(ev)[:8]}).encode()
    elif kind == "invalid_utf8":
        text = json.dumps(ev, ensure_ascii=False, separators=(",", ":"))
        variant = rng.randrange(3)
        if variant == 0:  # latin-1 encoded non-ASCII text
            text = text.replace('"query":"', '"query":"Résumé — ', 1)
            raw = text.encode("utf-8").replace("é".encode(), b"\xe9", 1)
        else:
            bad = (b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\xc0\xaf")[rng.randrange(4)]
            b = text.encode()
            at = b.find(b'"response":"') + len(b'"response":"') + rng.randint(0, 20)
            raw = b[:at] + bad + b[at:]
    elif kind == "wrong_types":
        variant = rng.randrange(6)
        if variant == 0:
            ev["query"] = rng.randint(1000, 99999)
        elif variant == 1:
            ev["retrieved_context"] = "\n\n".join(c["content"] for c in ev["retrieved_context"])
        elif variant == 2:
            ev["response"] = [ev["response"][i : i + 40] for i in range(0, len(ev["response"]), 40)]
        elif variant == 3:
            ev["citations"] = {c["marker"]: c["source_id"] for c in ev["citations"]} or {
                "[1]": "n/a"
            }
        elif variant == 4:
            ev["history"] = "user: " + ev["query"]
        else:
            ev["latency_ms"] = f"{ev['latency_ms']}ms"
        raw = json.dumps(ev, ensure_ascii=False, separators=(",", ":")).encode()
    elif kind == "missing_field":
        field = pick(rng, ("response", "response", "query", "event_id"))
        del ev[field]
        if field == "event_id":
            event_id = None
        raw = json.dumps(ev, ensure_ascii=False, separators=(",", ":")).encode()
    else:  # oversized: a runaway generation loop
        unit = ev["response"].split("\n")[0][:300] + " "
        target = rng.randint(25_000, 40_000)
        ev["response"] = (unit * (target // len(unit) + 1))[:target]
        raw = json.dumps(ev, ensure_ascii=False, separators=(",", ":")).encode()
    assert b"\n" not in raw
    return Generated(raw, conv_id.encode(), event_id, [], kind)
