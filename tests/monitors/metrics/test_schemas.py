"""Judge output models give strict JSON schemas: closed objects, all keys required, bounds."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from monitors.metrics.case_aware import CaseAwareVerdict
from monitors.metrics.citations import CitationAccuracyVerdict
from monitors.metrics.correctness import HolisticVerdict
from monitors.metrics.correctness_analytic import Statements, StatementVerdicts
from monitors.metrics.dece import Criteria, DeceVerdict
from monitors.metrics.source_policy import SourcePolicyVerdict
from monitors.metrics.tonality import TonalityVerdict
from monitors.metrics.triad import (
    AnswerRelevanceVerdict,
    ContextRelevanceVerdict,
    FaithfulnessVerdict,
)

MODELS: list[type[BaseModel]] = [
    FaithfulnessVerdict,
    ContextRelevanceVerdict,
    AnswerRelevanceVerdict,
    CaseAwareVerdict,
    CitationAccuracyVerdict,
    SourcePolicyVerdict,
    HolisticVerdict,
    Statements,
    StatementVerdicts,
    Criteria,
    DeceVerdict,
    TonalityVerdict,
]
SCORE_FIELDS = {"score", "relevance"}


def _objects(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if "properties" in node:
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node).union(*(_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_keys(v) for v in node))
    return set()


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_schema_is_strict(model: type[BaseModel]) -> None:
    schema = model.model_json_schema()
    objects = _objects(schema)
    assert objects
    for obj in objects:
        assert obj["type"] == "object"
        assert obj["additionalProperties"] is False
        assert set(obj["required"]) == set(obj["properties"])  # strict mode: no optional keys
        for name, prop in obj["properties"].items():
            if name in SCORE_FIELDS:
                assert (prop["type"], prop["minimum"], prop["maximum"]) == ("number", 0, 1)
    assert "default" not in _keys(schema)  # OpenAI strict mode rejects defaults
    assert "maxLength" not in _keys(schema)  # nor string lengths; arrays use maxItems


def test_arrays_are_bounded() -> None:
    for model in (FaithfulnessVerdict, ContextRelevanceVerdict, CitationAccuracyVerdict):
        schema = model.model_json_schema()
        arrays = [
            p
            for o in _objects(schema)
            for p in o["properties"].values()
            if p.get("type") == "array"
        ]
        assert arrays and all(isinstance(a["maxItems"], int) for a in arrays)


def test_enums_are_closed() -> None:
    schema = FaithfulnessVerdict.model_json_schema()
    verdict = schema["$defs"]["ClaimCheck"]["properties"]["verdict"]
    assert verdict["enum"] == ["supported", "contradicted", "unsupported"]


def test_models_reject_extra_keys_bad_scores_and_bad_verdicts() -> None:
    with pytest.raises(ValidationError):
        AnswerRelevanceVerdict.model_validate({"justification": "x", "score": 0.5, "extra": 1})
    with pytest.raises(ValidationError):
        AnswerRelevanceVerdict.model_validate({"justification": "x", "score": -0.01})
    with pytest.raises(ValidationError):
        AnswerRelevanceVerdict.model_validate({"justification": "x"})
    with pytest.raises(ValidationError):
        FaithfulnessVerdict.model_validate(
            {
                "claims": [{"claim": "c", "verdict": "maybe", "evidence_chunk_id": None}],
                "justification": "",
            }
        )
    crit = {"justification": "j", "score": 0.5}
    data = dict.fromkeys(CaseAwareVerdict.model_fields, crit)
    CaseAwareVerdict.model_validate(data)
    with pytest.raises(ValidationError):
        CaseAwareVerdict.model_validate({k: v for k, v in data.items() if k != "hallucination"})
