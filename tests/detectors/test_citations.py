"""Citation validity: markers vs `citations` vs retrieved chunks."""

from __future__ import annotations

import time
from typing import Any

from detectors.base import create_detector
from detectors.citations import CitationDetector, normalize_marker
from stream.contract.events import Event, EventLimits

CTX = [
    {"id": "c1", "content": "alpha"},
    {"id": "c2", "content": "beta"},
    {"id": "secret", "content": "gamma", "policy": "no_use"},
]


def _event(response: str, citations: list[dict[str, Any]] | None = None, **extra: Any) -> Event:
    data: dict[str, Any] = {"event_id": "e1", "query": "q", "response": response}
    data["retrieved_context"] = extra.pop("retrieved_context", CTX)
    data["citations"] = citations or []
    data.update(extra)
    limits = EventLimits(max_text_chars=200_000)
    return Event.model_validate(data, context={"limits": limits})


def _cats(response: str, citations: list[dict[str, Any]] | None = None, **kw: Any) -> list[str]:
    return sorted(d.category for d in CitationDetector()(_event(response, citations, **kw)))


def test_registered_and_categories() -> None:
    det = create_detector("citations")
    assert isinstance(det, CitationDetector)
    assert det.name == "citations"
    assert set(det.categories) == {
        "dangling_marker",
        "unknown_source",
        "no_use_citation",
        "uncited_citation",
    }


def test_normalize_marker_forms() -> None:
    assert {normalize_marker(m) for m in ("[1]", "1", " [^1] ", "^1")} == {"1"}
    assert normalize_marker("[Doc-7]") == "doc-7"


def test_valid_citations_are_silent() -> None:
    cits = [{"marker": "[1]", "source_id": "c1"}, {"marker": "2", "source_id": "c2"}]
    assert _cats("Restart it [1]. Then check logs [2].", cits) == []


def test_dangling_marker_with_span() -> None:
    response = "Restart it [1]. Then check logs [2]."
    hits = CitationDetector()(_event(response, [{"marker": "1", "source_id": "c1"}]))
    assert [h.category for h in hits] == ["dangling_marker"]
    hit = hits[0]
    assert hit.failure_mode == "invalid_citation"
    assert hit.span is not None
    assert response[hit.span[0] : hit.span[1]] == "[2]"


def test_group_range_footnote_and_named_markers() -> None:
    cits = [
        {"marker": "1", "source_id": "c1"},
        {"marker": "[^2]", "source_id": "c2"},
        {"marker": "[doc-7]", "source_id": "c1"},
    ]
    assert _cats("A [1, 2]. B[^2]. C [doc-7].", cits) == []
    hits = CitationDetector()(_event("See [1-3] and [doc-8].", cits))
    dangling = sorted(h.evidence for h in hits if h.category == "dangling_marker")
    assert dangling == [
        "marker [3] has no citation entry",
        "marker [doc-8] has no citation entry",
    ]


def test_unknown_source_and_no_use_citation() -> None:
    cits = [
        {"marker": "1", "source_id": "nope"},
        {"marker": "2", "source_id": "secret"},
        {"marker": "3"},
    ]
    hits = CitationDetector()(_event("X [1]. Y [2]. Z [3].", cits))
    by_cat = {h.category: h for h in hits}
    assert sorted(by_cat) == ["no_use_citation", "unknown_source"]
    assert all(h.failure_mode == "invalid_citation" for h in hits)
    assert len([h for h in hits if h.category == "unknown_source"]) == 2
    assert by_cat["no_use_citation"].span == (9, 12)


def test_unknown_source_skipped_without_context() -> None:
    cits = [{"marker": "1", "source_id": "anything"}]
    assert _cats("Fine [1].", cits, retrieved_context=[]) == []


def test_uncited_citation_is_informational() -> None:
    cits = [{"marker": "[1]", "source_id": "c1"}, {"marker": "[2]", "source_id": "c2"}]
    hits = CitationDetector()(_event("Only one [1].", cits))
    assert [(h.category, h.failure_mode, h.span) for h in hits] == [
        ("uncited_citation", None, None)
    ]


def test_not_markers_links_checkboxes_indexing_code() -> None:
    response = "\n".join(
        [
            "See [the docs](https://example.com/a) and [docs][ref].",
            "- [ ] todo",
            "- [x] done",
            "Use arr[1] or matrix[0][2] or cfg_1[12][3].",
            "Inline `items[4]` and `[5]` are code.",
            "```python",
            "print(values [6])",
            "```",
            "Scores lie in [0, 1] or [0.5, 2.5]; quoted [sic] text; [optional] args.",
        ]
    )
    assert _cats(response) == []


def test_declared_marker_counts_even_after_a_word() -> None:
    cits = [{"marker": "1", "source_id": "c1"}]
    # "service[1]" would read as indexing, but "1" is a declared marker: no uncited.
    assert _cats("Restart the service[1].", cits) == []


def test_no_markers_and_no_citations_is_empty() -> None:
    assert _cats("Plain answer with no brackets at all.") == []
    assert _cats("A list: [a, b] and x[1].") == []


def test_adversarial_100kb_is_fast() -> None:
    unit = "arr[1] [2, 3] [^4] [a](b) `[5]` [1-40] [[[ ]]] [x] [doc-9 "
    response = (unit * (100_000 // len(unit) + 1))[:100_000]
    cits = [{"marker": str(i), "source_id": f"c{i}"} for i in range(1, 40)]
    event = _event(response, cits)
    det = CitationDetector()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        det(event)
        best = min(best, time.perf_counter() - t0)
    assert best < 0.05, f"{best * 1000:.1f} ms"
