"""The `deflection` stage where it runs: the sidecar's pipeline and its metrics, a real
`ragpulse run` on the session broker, `ragpulse score` (a real subprocess) and `ragpulse
eval` (docs/detectors.md "deflection")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from exporters import PromFamilies
from stream.cli import main
from stream.runtime.pipeline import Pipeline
from stream.runtime.settings import Settings
from tests.conftest import Topics, consume_all, produce, sample

LECTURE = (
    "It's important to remember that sharing passwords puts the whole team at risk. Security"
    " rules exist to protect everyone, so please respect them."
)
NOT_PUBLIC = "That information is confidential and is not shared outside the finance team."
ANSWER = (
    "To export your invoices, open Billing > History, select the months and click Export CSV."
    " The file arrives by email within 10 minutes."
)
ENABLED = "refusal,policy,pii,citations,identifiers,source_policy,deflection"


def _event(event_id: str, response: str, expected: str | None = "answer") -> dict[str, object]:
    ev: dict[str, object] = {"event_id": event_id, "query": "How do I export invoices?",
                             "response": response, "service": "billing-qa"}  # fmt: skip
    if expected:
        ev["labels"] = {"expected_behavior": expected}
    return ev


def test_the_pipeline_counts_it_as_its_own_detector() -> None:
    prom = PromFamilies()
    pipeline = Pipeline(Settings(detectors={"enabled": ENABLED.split(",")}), prom)
    value = prom.registry.get_sample_value
    hits = {"detector": "deflection", "category": "deflection"}
    assert value("ragpulse_detector_hits_total", hits) == 0  # declared at start
    card = pipeline.process(json.dumps(_event("e1", LECTURE)).encode()).scorecard
    assert card is not None
    assert [d["detector"] for d in card["detections"]] == ["deflection"]
    assert card["failure_modes"] == ["false_rejection"]
    assert pipeline.process(json.dumps(_event("e2", ANSWER)).encode()).scorecard["detections"] == []
    assert value("ragpulse_detector_hits_total", hits) == 1
    fm = {"failure_mode": "false_rejection", "service": "billing-qa", "prompt_version": "unknown"}
    assert value("ragpulse_failure_modes_total", fm) == 1


def test_off_by_default_in_the_pipeline() -> None:
    pipeline = Pipeline(Settings())
    card = pipeline.process(json.dumps(_event("e1", LECTURE)).encode()).scorecard
    assert card is not None and card["detections"] == []


def test_ragpulse_score_reports_it(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    events = (_event("a", LECTURE), _event("b", ANSWER), _event("c", NOT_PUBLIC, expected=None))
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    env["RAGPULSE_DETECTORS__ENABLED"] = ENABLED
    proc = subprocess.run(
        [sys.executable, "-m", "stream.cli", "score", "-i", str(src), "-o", "-"],
        capture_output=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    cards = {c["event_id"]: c for c in map(json.loads, proc.stdout.decode().splitlines())}
    assert cards["a"]["failure_modes"] == ["false_rejection"]
    assert cards["a"]["detections"][0]["evidence"].startswith("score 0.")
    assert cards["b"]["detections"] == []
    (hit,) = cards["c"]["detections"]
    assert (hit["category"], hit["failure_mode"]) == ("deflection", None)


def test_ragpulse_eval_counts_its_false_rejections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "in.jsonl"
    events = (_event("a", LECTURE), _event("b", ANSWER), _event("c", NOT_PUBLIC))
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    counts = {}
    for enabled in ("refusal", ENABLED):
        monkeypatch.setenv("RAGPULSE_DETECTORS__ENABLED", enabled)
        out = tmp_path / f"report-{len(enabled)}.json"
        assert main(["eval", "-i", str(src), "--judge", "none", "-o", str(out)]) in (0, 3)
        report = json.loads(out.read_text())
        counts[enabled] = report["failure_modes"].get("false_rejection", {}).get("count", 0)
    assert counts == {"refusal": 0, ENABLED: 2}


def test_a_real_sidecar_runs_it_and_exports_its_hits(
    sidecar_factory, topics: Topics, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    sc = sidecar_factory(topics, RAGPULSE_DETECTORS__ENABLED=ENABLED).start(tmp_path)
    events = [_event("a", LECTURE), _event("b", ANSWER), _event("c", NOT_PUBLIC, expected=None)]
    produce(sc.bootstrap, topics.input, [(None, json.dumps(e).encode()) for e in events])
    sc.wait_consumed(3)
    deadline = time.monotonic() + 30
    m = sc.metrics()
    while time.monotonic() < deadline and sample(m, "ragpulse_events_total", outcome="scored") < 3:
        time.sleep(0.2)
        m = sc.metrics()
    hits = sample(m, "ragpulse_detector_hits_total", detector="deflection", category="deflection")
    assert hits == 2
    cards = {json.loads(r.value)["event_id"]: json.loads(r.value)
             for r in consume_all(sc.bootstrap, topics.scores, 3)}  # fmt: skip
    assert cards["a"]["failure_modes"] == ["false_rejection"]
    assert cards["b"]["detections"] == []
    assert sc.stop() == 0
