"""The `refusal` and `training_cutoff_excuse` detectors on RAGTruth and HaluEval responses.

Run from the repo root::

    python -m bench.quality.rag_refusals [--json PATH] [--examples N]

The issue asked for these detectors on responses labelled ``incorrect_refusal``.
RAGTruth defines that label in its ``quality`` field, but every row of the subset in
``../shared/datasets`` has ``quality: good`` (the subset kept no ``incorrect_refusal``
or ``truncated`` row), and HaluEval has no refusal label at all. So there is no recall
to measure. What this reports instead, through the adapters of ``bench.datasets``:

* RAGTruth QA (all 422 responses, answered with retrieved passages, none labelled an
  incorrect refusal): how many the detectors flag, with ``expected_behavior: answer``
  (so ``false_rejection`` runs too). A flag is not necessarily wrong: "the passages do
  not say" is a correct refusal when they do not; the examples are written out for
  reading.
* HaluEval general (all 2,291 ChatGPT responses, no context): how many are flagged,
  and the humans' hallucination rate among flagged and unflagged responses.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from detectors.refusal import RefusalDetector
from stream.contract.events import Event, EventLimits
from tests.support.datasets import adapt

RESULTS = Path(__file__).resolve().parents[1] / "results" / "rag_refusals.json"
CATS = ("refusal", "training_cutoff_excuse", "false_rejection")
_LIMITS = EventLimits(max_text_chars=1_000_000)


def _run(
    detector: RefusalDetector, raws: Iterable[dict[str, Any]], examples: int
) -> dict[str, Any]:
    counts = {c: 0 for c in CATS}
    halluc = {c: 0 for c in (*CATS, "none")}
    shown: list[dict[str, str]] = []
    n = bad = 0
    for raw in raws:
        labels = dict(raw["labels"]) | {"expected_behavior": "answer"}
        event = Event.model_validate(raw | {"labels": labels}, context={"limits": _LIMITS})
        hits = {d.category: d for d in detector(event)}
        n += 1
        bad += bool(labels.get("hallucinated"))
        for c in CATS:
            counts[c] += c in hits
            halluc[c] += c in hits and bool(labels.get("hallucinated"))
        if not any(c in hits for c in CATS):
            halluc["none"] += bool(labels.get("hallucinated"))
        if hits and len(shown) < examples:
            first = next(iter(hits.values()))
            shown.append(
                {
                    "event_id": event.event_id,
                    "categories": ",".join(sorted(hits)),
                    "evidence": first.evidence,
                    "response": " ".join(event.response.split())[:300],
                }
            )
    flagged = sum(counts[c] for c in ("refusal", "training_cutoff_excuse"))
    return {
        "n": n,
        "hallucinated": bad,
        "flagged": counts,
        "hallucinated_among_flagged": {c: halluc[c] for c in CATS},
        "hallucinated_among_unflagged": halluc["none"],
        "flag_events_upper_bound": flagged,
        "examples": shown,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--json", type=Path, default=RESULTS)
    ap.add_argument("--examples", type=int, default=25)
    args = ap.parse_args(argv)
    detector = RefusalDetector()
    rag = list(adapt("ragtruth", "all"))
    result = {
        "date": "2026-11-21",
        "incorrect_refusal_rows": sum(
            r["labels"].get("quality") == "incorrect_refusal" for r in rag
        ),
        "ragtruth_all": _run(detector, rag, args.examples),
        "halueval_general_all": _run(detector, adapt("halueval_general", "all"), args.examples),
    }
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
