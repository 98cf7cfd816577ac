"""Judge health end to end: a real `ragpulse demo` (embedded broker, steady healthy traffic)
judged by the OpenAI client against the loopback judge server, scraped by a real Prometheus
evaluating the generated rules.

The judge changes mid-run (the server starts returning shifted verdicts for the same
model name): RagpulseJudgeDrift fires from the canaries while the service's rate alarms
stay quiet (the traffic did not change). Then the judge hangs: RagpulseJudgeSilent fires.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from stream.demo import free_port
from tests.conftest import REPO
from tests.exporters.promstack import Prometheus, Server, wait_until
from tests.exporters.test_prometheus_e2e import DRIFTING, e2e_settings, ragpulse
from tests.monitors.judges.fault_server import FaultServer, ok, slow

pytestmark = pytest.mark.broker

INTERVAL_S = 0.5  # judge.health.canaries.interval_s: one round every half second
SILENCE = "20s"  # alerts.judge_silent.silence
NAMESPACE = "ragpulse-judge-e2e"
#: the swap must raise RagpulseJudgeDrift within this: 6 rounds (docs/judges.md) of 0.5 s,
#: plus Prometheus (scrape 1s, max_over_time, `for` 5s) and the CI machine's slack
DRIFT_DEADLINE_S = 60.0


@dataclass
class Stack:
    judge: FaultServer
    demo: Server
    prometheus: Prometheus

    def firing(self, name: str) -> list[dict[str, Any]]:
        return [
            a
            for a in self.prometheus.alerts()
            if a["state"] == "firing" and a["labels"]["alertname"] == name
        ]

    def diagnostics(self) -> str:
        return self.demo.output(4000) + "\n" + str(self.prometheus.alerts())

    def value(self, expr: str) -> float:
        result = self.prometheus.query(expr)
        return float(result[0]["value"][1]) if result else 0.0


def _settings(base_url: str) -> dict[str, Any]:
    s = e2e_settings()
    s["judge"] = {
        "backend": {"type": "openai", "model": "fault-judge", "base_url": base_url,
                    "timeout_s": 600.0, "max_total_s": 600.0},
        "allow_insecure_http": True,
        "metrics": ["answer_relevance"],
        "health": {"canaries": {"interval_s": INTERVAL_S, "min_hold_s": 5, "clear_after_s": 5}},
    }  # fmt: skip
    # no budget cap: a round (8 calls) every half second (the budget test is a unit test)
    s["sampling"] = {"rate": 0.05, "budget": {"calls_per_minute": None, "usd_per_hour": None}}
    s["alerts"]["judge_silent"]["silence"] = SILENCE
    return s


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("judge-health-e2e")
    judge = FaultServer().start()
    judge.default = ok({"score": 0.8, "justification": "addresses the question"})
    config, rules = tmp / "ragpulse.yaml", tmp / "rules.yaml"
    config.write_text(yaml.safe_dump(_settings(judge.base_url), sort_keys=False))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    env["PYTHONUNBUFFERED"] = "1"
    ragpulse(env, "--config", config, "rules", "export", "--output", rules)
    servers: list[Any] = []
    try:
        port = free_port()
        args = ["--config", str(config), "demo", "--rate", "50", "--degrade-after", "100000"]
        demo = Server(
            "ragpulse demo",
            [sys.executable, "-m", "stream.cli", *args, "--duration", "400", "--port", str(port)],
            tmp / "demo.log", env=env, cwd=REPO,
        ).start()  # fmt: skip
        servers.append(demo)
        prometheus = Prometheus(
            tmp / "prometheus", targets=[f"127.0.0.1:{port}"], rule_files=[rules],
            target_labels={"namespace": NAMESPACE},
        ).start()  # fmt: skip
        servers.append(prometheus)
        yield Stack(judge, demo, prometheus)
    finally:
        for server in reversed(servers):
            server.stop()
        judge.stop()


def _rounds(stack: Stack) -> float:
    return stack.value('sum(ragpulse_judge_canary_rounds_total{outcome="judged"})')


def test_a_judge_swap_raises_judge_drift_and_no_service_rate_alarm(stack: Stack) -> None:
    # 12 reference rounds, then a few more on the old judge
    wait_until("16 canary rounds judged", lambda: _rounds(stack) >= 16, 120,
               detail=stack.diagnostics)  # fmt: skip
    assert stack.firing("RagpulseJudgeDrift") == []
    swapped = time.monotonic()
    rounds_at_swap = _rounds(stack)
    stack.judge.default = ok({"score": 0.1, "justification": "does not address it"})
    firing = wait_until("RagpulseJudgeDrift firing", lambda: stack.firing("RagpulseJudgeDrift"),
                        DRIFT_DEADLINE_S, detail=stack.diagnostics)  # fmt: skip
    delay = time.monotonic() - swapped
    print(f"judge swap -> RagpulseJudgeDrift firing: {delay:.1f} s, "
          f"{_rounds(stack) - rounds_at_swap:.0f} rounds")  # fmt: skip
    assert {a["labels"]["metric"] for a in firing} == {"answer_relevance"}
    assert all(a["labels"]["judge"] == "openai:fault-judge" for a in firing)
    # the traffic did not change: no rate alarm of the service
    rate_alarms = [
        a for a in stack.firing("RagpulseDriftAlarm") if a["labels"]["metric"] in DRIFTING
    ]
    assert rate_alarms == [], rate_alarms
    # the judged-metric alarms' judge_suspect annotation finds the judge drift
    suspect = (
        f'max(ragpulse_judge_drift_alarm{{namespace="{NAMESPACE}",job="ragpulse"}}) > 0'
        ' and on () count(ragpulse_metric_score_count{metric="answer_relevance"}) > 0'
    )
    assert stack.prometheus.query(suspect), "the judge_suspect query finds nothing"


def test_a_hanging_judge_fires_judge_silent(stack: Stack) -> None:
    assert stack.firing("RagpulseJudgeSilent") == []
    stack.judge.default = slow(600)
    hung = time.monotonic()
    wait_until("RagpulseJudgeSilent firing", lambda: stack.firing("RagpulseJudgeSilent"),
               90, detail=stack.diagnostics)  # fmt: skip
    print(f"judge hangs -> RagpulseJudgeSilent firing: {time.monotonic() - hung:.1f} s")
    assert stack.value("max(ragpulse_judge_last_verdict_age_seconds)") >= 20
