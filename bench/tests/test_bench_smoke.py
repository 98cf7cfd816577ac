"""The benchmark harness keeps working (seconds): one raw and one pipeline stage on the
real broker, and the section runner's skip of a missing module. Not a measurement."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from bench.__main__ import SECTIONS, run_section
from bench.perf.kafkabench import dataset, produce
from stream.demo import EmbeddedBroker
from tests.support.sidecar import ROOT as REPO

pytestmark = pytest.mark.broker


def _stage(*args: str) -> dict:  # type: ignore[type-arg]
    out = subprocess.run(
        [sys.executable, "-m", "bench.perf.stages", *args],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    result: dict = json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[type-arg]
    return result


def test_dataset_copies_get_unique_event_ids() -> None:
    ids = [json.loads(v).get("event_id") for _, v in dataset(30, pool=10) if v[:1] == b"{"]
    ids = [i for i in ids if i is not None]
    assert len(ids) == len(set(ids)) >= 25


def test_raw_and_pipeline_stages_count_every_event(broker: EmbeddedBroker) -> None:
    topic = "smoke.in"
    asyncio.run(produce(broker.bootstrap_servers, topic, 60))
    base = ["--bootstrap", broker.bootstrap_servers, "--topic", topic, "--n", "60"]
    raw = _stage("--stage", "json", *base)
    assert raw["events"] == 60 and raw["events_per_s"] > 0
    full = _stage("--stage", "pipeline", "--engine", "aiokafka", *base)
    assert full["events"] == 60 and full["events_per_cpu_s"] > 0


def test_a_missing_section_module_is_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    assert "throughput" in SECTIONS and "economy" in SECTIONS
    assert run_section("not_there", 1, True, []) == 0
    assert "skipped" in capsys.readouterr().out
