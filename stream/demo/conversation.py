"""A simulated conversation: who is asking what, with which model, and the event around a turn.

:func:`new_conv` picks the world (``earnings-qa`` or ``it-support``, about half each), the
model, optional extra fields and the company-quarter or support case the conversation is
about; :func:`draft` asks that world for the next clean turn. :func:`envelope`,
:func:`labels` and :func:`feedback` wrap a rendered answer into the event fields
(usage, latency, versions, golden-set labels, thumbs), :func:`order` fixes the key order
and :func:`timestamp` places message ``index`` on the stream's clock.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from stream.demo.draft import Draft, Rng, pick
from stream.demo.earnings import earnings_draft
from stream.demo.financials import Company, companies
from stream.demo.it_support import Issue, issues, it_draft, new_case
from stream.demo.phrases import load

__all__ = [
    "CITE_STYLE",
    "Conv",
    "draft",
    "envelope",
    "feedback",
    "labels",
    "new_conv",
    "order",
    "timestamp",
]

EPOCH = datetime(2026, 3, 2, 8, 0, 0, tzinfo=UTC)
STEP_MS = 2400
MODELS = (
    ("gpt-4o-mini-2024-07-18", 0.5),
    ("claude-3-5-haiku-20241022", 0.3),
    ("llama-3.1-70b-instruct", 0.2),
)
#: model -> (citation numbering: sequential or retrieval position, marker in/after sentence)
CITE_STYLE = {
    "gpt-4o-mini-2024-07-18": ("seq", "in"),
    "claude-3-5-haiku-20241022": ("seq", "out"),
    "llama-3.1-70b-instruct": ("pos", "in"),
}


@dataclass
class Conv:
    """One conversation's fixed context."""

    domain: str
    model: str
    extras: dict[str, Any]
    company: Company | None = None
    fy: int = 0
    q: int = 0
    issue: Issue | None = None
    case: dict[str, Any] | None = None


def new_conv(rng: Rng) -> Conv:
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
    conv = Conv(domain, model, extras)
    if domain == "earnings":
        conv.company = pick(rng, companies())
        conv.fy, conv.q = pick(rng, ((2025, 2), (2025, 3), (2025, 4), (2026, 1), (2026, 2)))
    else:
        conv.issue = pick(rng, issues())
        conv.case = new_case(rng, conv.issue)
    return conv


def draft(
    rng: Rng,
    conv: Conv,
    topic: str,
    k: int,
    reject: str | None,
    partial: bool,
    need: frozenset[str],
    short: bool,
) -> Draft:
    """The clean turn `k` of `conv` about `topic` (a request to reject, with `reject`)."""
    if conv.domain == "earnings":
        assert conv.company is not None
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
    assert conv.issue is not None and conv.case is not None
    return it_draft(
        rng, conv.issue, conv.case, topic, reject=reject, partial=partial, need=need, short=short
    )


#: the event's keys in the order producers write them (extras follow)
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


def order(ev: dict[str, Any], conv: Conv) -> dict[str, Any]:
    out = {k: ev[k] for k in KEY_ORDER if k in ev}
    out.update(conv.extras)
    return out


def timestamp(seed: int, phase: str, index: int) -> str:
    h = hashlib.blake2b(f"ts:{seed}:{phase}:{index}".encode(), digest_size=4).digest()
    ts = EPOCH + timedelta(milliseconds=index * STEP_MS + int.from_bytes(h, "big") % STEP_MS)
    return ts.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def labels(rng: Rng, d: Draft, partial: bool) -> dict[str, Any]:
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


def feedback(rng: Rng, failed: bool, degraded: bool) -> dict[str, Any] | None:
    if rng.random() >= (0.2 if failed else 0.1 if degraded else 0.07):
        return None
    down = rng.random() < (0.7 if failed else 0.3 if degraded else 0.12)
    fb: dict[str, Any] = {
        "thumbs": "down" if down else "up",
        "rating": pick(rng, (1, 2)) if down else pick(rng, (4, 5)),
    }
    if rng.random() < 0.4:
        fb["comment"] = pick(rng, load("failures")["feedback_bad" if down else "feedback_good"])
    return fb


def envelope(
    rng: Rng,
    conv: Conv,
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
