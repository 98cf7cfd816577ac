"""Malformed Kafka messages: what a broken producer really sends.

:func:`malformed_message` builds message ``index`` of kind ``invalid_json`` (truncated,
trailing comma, a Python repr), ``invalid_utf8`` (latin-1 text, stray bytes),
``wrong_types``, ``missing_field`` or ``oversized`` (a runaway generation loop) from a
clean single-turn event, so the sidecar's dead-letter path sees realistic input.
"""

from __future__ import annotations

import json
import random

from stream.demo.conversation import new_conv, order, timestamp
from stream.demo.draft import pick
from stream.demo.earnings import topics
from stream.demo.failures import turn

__all__ = ["MALFORMED_KINDS", "malformed_message"]

MALFORMED_KINDS = ("invalid_json", "invalid_utf8", "wrong_types", "missing_field", "oversized")


def malformed_message(
    seed: int, phase: str, index: int, kind: str
) -> tuple[bytes, str, str | None]:
    """Message `index` of the (seed, phase) stream as a `kind` of malformed message:
    (raw value, conversation id, event id or None when the id is what is missing)."""
    rng = random.Random(f"bad:{seed}:{phase}:{index}")
    conv_id = f"conv-{phase[0]}{seed}-x{index:07d}"
    conv = new_conv(rng)
    topic = pick(rng, topics()) if conv.domain == "earnings" else "fix"
    event, _ = turn(rng, conv, phase, "clean", topic, 0, [])
    event_id: str | None = f"evt-{phase[0]}{seed}-{index:07d}"
    ev = order(
        {
            "event_id": event_id,
            "timestamp": timestamp(seed, phase, index),
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
    return raw, conv_id, event_id
