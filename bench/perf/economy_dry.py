"""Dry mode of the economy benchmark: the JSON a competent judge would answer.

The counting proxy (`bench.perf.llm_server.CountingProxy`) answers each chat request with
`canned_replies(events)(tag, request)`, so every framework walks its normal call sequence
without the model generating: RAGAS's statement extraction returns one statement per
response sentence (its NLI call then sees them), all verdicts are positive, and ragpulse
gets a minimal object valid against the schema it sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from stream.contract.events import Event

__all__ = ["canned_replies", "minimal_instance"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def minimal_instance(schema: dict[str, Any], node: Any = None) -> Any:
    """A small value that validates against `schema` (objects with every required
    property, empty arrays, the first enum value, numbers at their maximum or 1)."""
    node = schema if node is None else node
    if "$ref" in node:
        return minimal_instance(schema, schema["$defs"][node["$ref"].rsplit("/", 1)[-1]])
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            options = [o for o in node[key] if o.get("type") != "null"] or node[key]
            return minimal_instance(schema, options[0])
    if "enum" in node:
        return node["enum"][0]
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties", {})
        return {k: minimal_instance(schema, v) for k, v in props.items()}
    if kind == "array":
        return [minimal_instance(schema, node["items"])] * int(node.get("minItems", 0))
    if kind in ("number", "integer"):
        return node.get("maximum", 1)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "ok"


def canned_replies(events: list[Event]) -> Callable[[str, dict[str, Any]], str]:
    """Dry mode: the JSON a competent judge would answer, so each framework goes through
    its normal call sequence (RAGAS's NLI call sees one statement per response sentence)."""

    def reply(tag: str, request: dict[str, Any]) -> str:
        if tag.startswith("ragas/"):
            event = events[int(tag.split("/")[1])]
            sents = [s for s in _SENTENCE_END.split(event.response.strip()) if s][:20]
            text = json.dumps(request)
            if "NLIStatementOutput" in text:
                verdicts = [{"statement": x, "reason": "stated in the context", "verdict": 1}
                            for x in sents]  # fmt: skip
                return json.dumps({"statements": verdicts})
            if "StatementGeneratorOutput" in text:
                return json.dumps({"statements": sents})
            if "AnswerRelevanceOutput" in text:
                return json.dumps({"question": event.query, "noncommittal": 0})
            return json.dumps({"reason": "useful for the answer", "verdict": 1})
        schema = (request.get("response_format") or {}).get("schema") or {}
        return json.dumps(minimal_instance(schema) if schema else {})

    return reply
