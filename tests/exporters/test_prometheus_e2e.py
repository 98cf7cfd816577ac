"""End to end, nothing mocked: `ragpulse demo` -> a real Prometheus -> a real Alertmanager.

`ragpulse demo` (its embedded Kafka-protocol broker, the bundled traffic, the real sidecar
with the default embedded judge) is scraped every second by Debian's `prometheus`, which
evaluates the rules of `ragpulse rules export` every second and sends alerts to Debian's
`prometheus-alertmanager`, which routes them to a webhook receiver on loopback. Every query
of `ragpulse dashboards export` is then sent to that Prometheus as Grafana would send it.

Timeline (about 100 s): the demo replays 100 events/s of healthy traffic (prompt v1.4) for
60 s, then switches to the degraded prompt version v1.5-degraded (more refusals, training
cutoff excuses and invented identifiers). The tests run in file order on one stack:

1. the rules load and are healthy, and nothing is pending or firing while the traffic is
   healthy (from the first rule evaluation after the sidecar is ready and scraped until the
   demo switches);
2. after the switch, RagpulseDriftAlarm and RagpulseFailureModeRateHigh for v1.5-degraded
   fire;
3. Alertmanager delivers them to the webhook with the runbook URL and the service and
   prompt_version labels;
4. every dashboard panel query returns data, except the documented `EXEMPT` ones;
5. the drift annotation marks the alarms' raise (each stream's gauge is exported at 0 from
   the stream's first event, so the raise is a change);
6. the default `pii-free` SLO (99 % of turns leak no PII) pages (RagpulseErrorBudgetBurn,
   severity page) for both services after the switch (the degraded prompt leaks PII in
   20-30 % of turns), Alertmanager delivers the page with `slo`, `service` and the runbook
   URL, and the SLO was evaluated and under budget in the healthy phase.

Settings (one YAML file for the demo, `rules export` and `dashboards export`): every alert's
`for` is 5 s; the failure-mode and dead-letter alerts use a 30 s window and judge a ratio only
on at least 1,000 events per window (the defaults are 10m / 15m and 100). At 100 events/s
(about 50 per service) a window then holds about 1,500 turns per service, and the bundled
traffic's healthy rates stay below every ceiling in every such window (see
tests/stream/demo/test_traffic.py `test_baseline_rates_stay_below_the_alert_ceilings`).
Thresholds, severities and the drift detectors keep their defaults. The SLOs are the
defaults, their windows and periods scaled by `alerts.slo_burn.time_scale` = 1/60 (the 1h/5m
page reads 1m/5s, the 3d/6h ticket 72m/6m, the 30d period 12h; burn factors unchanged).

Judge: the default embedded judge, as `make demo` runs it (no network; at this rate it
takes most of one core, and its bounded queue sheds load rather than slowing the detector
path), so the judge panels, the gate and score series and their alerts are exercised too.
The traffic's golden/canary replays carry `labels.expected_answer` and are judged with
sampler reason `reference`; with the embedded judge's default metrics `ragpulse demo` adds
`answer_correctness_analytic` and compound weights (stream/demo/run.py `demo_settings`), so
the reference-based row has data too, except dece_f2 (LLM judges only).
With `judge.type: none` every judge panel would have to be exempt.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from exporters.rules import AlertSettings
from stream.demo import free_port
from tests.conftest import REPO
from tests.exporters.promstack import (
    Alertmanager,
    GrafanaTime,
    Prometheus,
    Server,
    WebhookReceiver,
    grafana_expr,
    panel_targets,
    wait_until,
)

pytestmark = pytest.mark.broker

RATE = 100  # events/s the demo replays
DEGRADE_AFTER = 60  # s of healthy traffic before the degraded prompt version
DEMO_MAX_S = 300  # the demo stops by itself after this, whatever happens to the test
FOR = "5s"  # every alert's `for`
WINDOW, MIN_EVENTS = "30s", 1000  # failure-mode and dead-letter alerts
SLO_SCALE = 1 / 60  # alerts.slo_burn.time_scale: every SLO window and period / 60
NAMESPACE = "ragpulse-e2e"  # a target label, as a ServiceMonitor would attach it
RUNBOOK = "https://runbooks.example.com/ragpulse/runbook.md"
HEALTHY, DEGRADED = "v1.4", "v1.5-degraded"
SWITCH_LINE = "demo: switching traffic to the degraded phase"
#: failure-mode rates the degraded phase raises (stream/demo/traffic.py DEGRADED_X)
DRIFTING = {
    "refusal",
    "false_rejection",
    "training_cutoff_excuse",
    "invented_identifier",
    "pii_leak",
}
#: (service, failure_mode) alerts the degraded version must fire: invented identifiers x4
#: (it-support ~10 % of turns) and training-cutoff excuses x3 (earnings-qa ~7.5 %), both far
#: above the 5 % ceiling; false_rejection (~11 %) sits too close to its 10 % one to require
MUST_FIRE = {("it-support", "invented_identifier"), ("earnings-qa", "training_cutoff_excuse")}

#: dashboard queries with no data in the demo, (panel title, refId) -> why; also listed in
#: docs/dashboards.md ("Checked against a real Prometheus")
EXEMPT: dict[tuple[str, str], str] = {
    ("Judge error ratio", "A"): "needs a judge_error outcome; the embedded judge does not fail",
    **{
        ("Reference severity bands: dece_f2", ref): "dece needs an LLM judge (the golden/canary "
        "turns' answer_correctness and answer_f1 come from the embedded judge)"
        for ref in "ABCD"
    },
    ("Tonality mean (1h)", "A"): "tonality needs an LLM judge and guidelines",
    **{
        ("Self-consistency flip rate (1h)", ref): "the embedded judge is deterministic: it is"
        " never asked twice (tests/exporters/test_judge_health_e2e.py and the llama.cpp test"
        " export these)"
        for ref in "AB"
    },
    ("Judge error ratio (health)", "A"): "needs a judge_error outcome; the embedded judge"
    " does not fail",
}


def e2e_settings() -> dict[str, Any]:
    """The ragpulse config of the test: every alert section's `for` shortened (sections added
    later included), two windows and minimum counts shortened, defaults elsewhere."""
    alerts: dict[str, Any] = {"runbook_base_url": RUNBOOK}
    for name, fld in AlertSettings.model_fields.items():
        section = fld.annotation
        if (
            isinstance(section, type)
            and issubclass(section, BaseModel)
            and ("for_duration" in section.model_fields)
        ):
            alerts[name] = {"for_duration": FOR}
    for name in ("failure_modes", "dead_letters"):
        alerts[name].update(window=WINDOW, min_events=MIN_EVENTS)
    alerts["slo_burn"]["time_scale"] = SLO_SCALE
    return {"server": {"host": "127.0.0.1"}, "judge": {"backend": "embedded"}, "alerts": alerts}


def ragpulse(env: dict[str, str], *args: str | Path) -> None:
    cmd = [sys.executable, "-m", "stream.cli", *map(str, args)]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def describe(alerts: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"  {a['state']:8} {a['labels'].get('alertname')} {a['labels']} value={a.get('value')}"
        for a in alerts
    )


@dataclass
class Stack:
    tmp: Path
    rule_file: dict[str, Any]
    dashboard: dict[str, Any]
    demo: Server
    prometheus: Prometheus
    alertmanager: Alertmanager
    webhook: WebhookReceiver
    started: float  # unix time Prometheus was up
    cache: dict[str, Any] = field(default_factory=dict)

    def diagnostics(self) -> str:
        try:
            alerts = describe(self.prometheus.alerts())
        except Exception as exc:  # diagnostics only
            alerts = f"  (cannot read alerts: {exc})"
        logs = [s.output() for s in (self.prometheus.server, self.alertmanager.server) if s]
        return "\n".join([self.demo.output(6000), *logs, "Prometheus alerts now:", alerts])

    def switched(self) -> bool:
        assert self.demo.alive() or SWITCH_LINE in self.demo.text(), self.diagnostics()
        return SWITCH_LINE in self.demo.text()

    def degraded_alerts(self) -> list[dict[str, Any]]:
        """Waits (once: a failure is remembered) until the degraded phase fires its alerts;
        the firing alerts."""
        if "degraded" not in self.cache:
            try:
                wait_until("the switch to the degraded phase", self.switched, DEGRADE_AFTER + 90)
                self.cache["degraded"] = wait_until(
                    f"RagpulseDriftAlarm and RagpulseFailureModeRateHigh{{prompt_version="
                    f"{DEGRADED}}} firing",
                    functools.partial(_degraded_firing, self.prometheus),
                    timeout=120,
                    detail=self.diagnostics,
                )
            except AssertionError as exc:
                self.cache["degraded"] = exc
        if isinstance(self.cache["degraded"], AssertionError):
            raise self.cache["degraded"]
        return list(self.cache["degraded"])


def _degraded_firing(prom: Prometheus) -> list[dict[str, Any]] | None:
    firing = [a for a in prom.alerts() if a["state"] == "firing"]
    drift = [
        a
        for a in firing
        if a["labels"]["alertname"] == "RagpulseDriftAlarm" and a["labels"]["metric"] in DRIFTING
    ]
    modes = {
        (a["labels"]["service"], a["labels"]["failure_mode"])
        for a in firing
        if a["labels"]["alertname"] == "RagpulseFailureModeRateHigh"
        and a["labels"]["prompt_version"] == DEGRADED
    }
    return firing if drift and modes >= MUST_FIRE else None


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("prometheus-e2e")
    config, rules, board = tmp / "ragpulse.yaml", tmp / "rules.yaml", tmp / "dashboard.json"
    config.write_text(yaml.safe_dump(e2e_settings(), sort_keys=False))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    env["PYTHONUNBUFFERED"] = "1"  # the demo's switch line reaches its log at once
    ragpulse(env, "--config", config, "rules", "export", "--output", rules)
    ragpulse(env, "--config", config, "dashboards", "export", "--output", board)
    servers: list[Any] = []  # stopped in reverse order, whatever happens
    try:
        webhook = WebhookReceiver().start()
        servers.append(webhook)
        alertmanager = Alertmanager(tmp / "alertmanager", webhook.url).start()
        servers.append(alertmanager)
        port = free_port()
        demo_args = ["--config", str(config), "demo", "--rate", str(RATE)]
        demo_args += ["--degrade-after", str(DEGRADE_AFTER), "--duration", str(DEMO_MAX_S)]
        demo = Server(
            "ragpulse demo",
            [sys.executable, "-m", "stream.cli", *demo_args, "--port", str(port)],
            tmp / "demo.log",
            env=env,
            cwd=REPO,
        ).start()
        servers.append(demo)
        prometheus = Prometheus(
            tmp / "prometheus",
            targets=[f"127.0.0.1:{port}"],
            rule_files=[rules],
            alertmanagers=[alertmanager.address],
            target_labels={"namespace": NAMESPACE},
        ).start()
        servers.append(prometheus)
        yield Stack(
            tmp=tmp,
            rule_file=yaml.safe_load(rules.read_text()),
            dashboard=json.loads(board.read_text()),
            demo=demo,
            prometheus=prometheus,
            alertmanager=alertmanager,
            webhook=webhook,
            started=time.time(),
        )
    finally:
        for server in reversed(servers):
            server.stop()


def _rule_names(groups: list[dict[str, Any]]) -> list[str]:
    return [r.get("alert") or r.get("record") or r["name"] for g in groups for r in g["rules"]]


def _assert_rules_healthy(prom: Prometheus) -> None:
    bad = [
        f"{r['name']}: health={r.get('health')} lastError={r.get('lastError')!r}"
        for r in prom.rules()
        if r.get("health") != "ok" or r.get("lastError")
    ]
    assert bad == [], "rules not healthy:\n" + "\n".join(bad)


def test_rules_load_healthy_and_nothing_fires_on_healthy_traffic(stack: Stack) -> None:
    prom = stack.prometheus
    exported = _rule_names(stack.rule_file["groups"])
    wait_until(
        "Prometheus to load the exported rules",
        lambda: _rule_names(prom.groups()) == exported,
        timeout=30,
        detail=lambda: f"exported {exported}\nloaded {_rule_names(prom.groups())}",
    )

    def ready() -> bool:
        assert stack.demo.alive(), "the demo exited\n" + stack.diagnostics()
        return bool(
            prom.query("max(ragpulse_ready) == 1")
            and prom.query('sum(ragpulse_events_total{outcome="consumed"}) > 0')
        )

    # start-up is not the healthy phase: before the consumer joins its group ragpulse_ready
    # is 0 and before the first scrape no ragpulse series exists (RagpulseNotReady and
    # RagpulseNoEvents may be pending then); watch from the evaluations after both are seen
    wait_until(
        "the sidecar ready and consuming, as scraped by Prometheus",
        ready,
        timeout=90,
        detail=stack.diagnostics,
    )
    time.sleep(3)  # three rule evaluations
    # the ratio alerts judge only windows with enough events: make sure they did
    armed = (
        f"count(sum by (service) (increase(ragpulse_scored_events_total{{prompt_version="
        f'"{HEALTHY}"}}[{WINDOW}])) >= {MIN_EVENTS}) == 2\nand on ()\n'
        f'sum(increase(ragpulse_events_total{{outcome="consumed"}}[{WINDOW}])) >= {MIN_EVENTS}'
    )
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    polls = armed_polls = 0
    deadline = time.monotonic() + DEGRADE_AFTER + 60
    while not stack.switched():
        assert time.monotonic() < deadline, "the demo did not switch\n" + stack.diagnostics()
        for alert in prom.alerts():
            seen.setdefault((alert["state"], json.dumps(alert["labels"], sort_keys=True)), alert)
        polls += 1
        armed_polls += bool(prom.query(armed))
        time.sleep(1)
    stack.cache["switched_at"] = time.time()  # within a second of the switch
    assert seen == {}, (
        f"alerts pending or firing on healthy traffic ({polls} polls):\n"
        + describe(list(seen.values()))
        + "\n"
        + stack.diagnostics()
    )
    assert armed_polls >= 10, (
        f"the failure-mode and dead-letter alerts had {MIN_EVENTS} events per {WINDOW} window in"
        f" only {armed_polls} of {polls} polls of the healthy phase\n{stack.diagnostics()}"
    )
    _assert_rules_healthy(prom)


def test_degraded_version_fires_drift_and_failure_mode_alerts(stack: Stack) -> None:
    firing = stack.degraded_alerts()
    # nothing about the healthy version (its traffic stopped, its windows emptied)
    everything = stack.prometheus.alerts()
    healthy = [a for a in everything if a["labels"].get("prompt_version") == HEALTHY]
    assert healthy == [], describe(everything)
    modes = [a for a in firing if a["labels"]["alertname"] == "RagpulseFailureModeRateHigh"]
    for alert in modes:
        labels = alert["labels"]
        assert labels["namespace"] == NAMESPACE and labels["job"] == "ragpulse", labels
        assert labels["prompt_version"] == DEGRADED, describe(firing)
        assert labels["severity"] == ("page" if labels["failure_mode"] == "pii_leak" else "ticket")
        assert alert["annotations"]["runbook_url"] == f"{RUNBOOK}#ragpulsefailuremoderatehigh"
        assert float(alert["value"]) > 0.05 or labels["failure_mode"] == "pii_leak", alert
    drift = [a for a in firing if a["labels"]["alertname"] == "RagpulseDriftAlarm"]
    assert drift and all(a["labels"]["service"] == "all" for a in drift), describe(firing)
    # raised by the degraded traffic: the sidecar logs each raise after the switch
    log = stack.demo.text()
    raised = [m.start() for m in re.finditer(r"drift alarm raised: (\w+)", log)]
    assert raised and min(raised) > log.index(SWITCH_LINE), log[-6000:]
    _assert_rules_healthy(stack.prometheus)


def _delivered(
    webhook: WebhookReceiver, alertname: str, **labels: str
) -> list[dict[str, Any]] | None:
    found = [
        (payload, alert)
        for payload in webhook.payloads()
        for alert in payload["alerts"]
        if alert["labels"]["alertname"] == alertname
        and all(alert["labels"].get(k) == v for k, v in labels.items())
        and alert["status"] == "firing"
    ]
    return [{"payload": p, "alert": a} for p, a in found] or None


def test_alertmanager_delivers_pages_with_runbook_service_and_prompt_version(
    stack: Stack,
) -> None:
    stack.degraded_alerts()
    hook = stack.webhook
    for alertname, labels in [
        ("RagpulseFailureModeRateHigh", {"prompt_version": DEGRADED}),
        ("RagpulseDriftAlarm", {}),
    ]:
        got = wait_until(
            f"Alertmanager to deliver {alertname} {labels} to the webhook",
            functools.partial(_delivered, hook, alertname, **labels),
            timeout=60,
            detail=lambda: json.dumps(hook.payloads(), indent=1)[-4000:] + stack.diagnostics(),
        )
        payload, alert = got[0]["payload"], got[0]["alert"]
        assert payload["status"] == "firing" and payload["receiver"] == "webhook", payload
        assert alert["annotations"]["runbook_url"] == f"{RUNBOOK}#{alertname.lower()}", alert
        assert alert["annotations"]["summary"] and alert["annotations"]["description"], alert
        assert alert["labels"]["service"] and alert["labels"]["namespace"] == NAMESPACE, alert
        assert alert["labels"]["severity"] in {"page", "ticket"}, alert
        if alertname == "RagpulseFailureModeRateHigh":
            assert alert["labels"]["service"] in {"earnings-qa", "it-support"}, alert
            assert alert["labels"]["prompt_version"] == DEGRADED, alert
            assert payload["groupLabels"]["prompt_version"] == DEGRADED, payload
    # the runbook the URLs point at has those sections
    runbook = (REPO / "docs" / "runbook.md").read_text(encoding="utf-8")
    anchors = {h.lower() for h in re.findall(r"^## (\w+)\s*$", runbook, flags=re.M)}
    assert {"ragpulsefailuremoderatehigh", "ragpulsedriftalarm"} <= anchors


def _variables(stack: Stack, when: GrafanaTime) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The dashboard's template variables as Grafana resolves them: each query variable's
    options from its label_values() (earlier variables substituted), and the value of each
    on its default "All" (its allValue)."""
    values: dict[str, str] = {}
    options: dict[str, list[str]] = {}
    for var in stack.dashboard["templating"]["list"]:
        if var["type"] != "query":
            continue
        m = re.fullmatch(r"label_values\((.+), (\w+)\)", var["query"])
        assert m, var["query"]
        selector = grafana_expr(m.group(1), values, when)
        options[var["name"]] = stack.prometheus.label_values(
            m.group(2), selector, when.start, when.end
        )
        assert var["current"]["value"] == "$__all" and var["allValue"], var
        values[var["name"]] = var["allValue"]
    return values, options


def test_every_dashboard_query_returns_data(stack: Stack) -> None:
    stack.degraded_alerts()  # both phases, drift alarms and judged turns are in the TSDB
    prom = stack.prometheus
    when = GrafanaTime(start=stack.started, end=time.time())
    values, options = _variables(stack, when)
    assert {k: v for k, v in options.items() if not v} == {}, "variables without options"
    assert options["namespace"] == [NAMESPACE] and options["job"] == ["ragpulse"], options
    assert {HEALTHY, DEGRADED} <= set(options["prompt_version"]), options
    empty, exempt_with_data, keys = [], [], set()
    for panel, target in panel_targets(stack.dashboard):
        key = (panel["title"], target["refId"])
        keys.add(key)
        repeat = panel.get("repeat")
        runs = [{**values, repeat: v} for v in options[repeat]] if repeat else [values]
        for run in runs:
            expr = grafana_expr(target["expr"], run, when)
            if target.get("instant"):
                data = [r for r in prom.query(expr, at=when.end) if r.get("value")]
            else:
                data = [r for r in prom.query_range(expr, when.start, when.end, when.step_s)]
                data = [r for r in data if r.get("values")]
            if key in EXEMPT:
                if data:
                    exempt_with_data.append(key)
            elif not data:
                empty.append(f"{panel['title']} [{target['refId']}]: {expr}")
    assert empty == [], "dashboard queries without data:\n" + "\n".join(empty)
    assert set(EXEMPT) <= keys, f"stale EXEMPT entries: {set(EXEMPT) - keys}"
    assert exempt_with_data == [], f"exempt queries that now have data: {exempt_with_data}"


def test_drift_annotation_marks_the_raise(stack: Stack) -> None:
    stack.degraded_alerts()
    when = GrafanaTime(start=stack.started, end=time.time())
    values, _ = _variables(stack, when)
    (note,) = [a for a in stack.dashboard["annotations"]["list"] if "expr" in a]
    # at the end of the range the alarms were raised less than 2m ago
    assert stack.prometheus.query(grafana_expr(note["expr"], values, when), at=when.end), note


def _slo_pages(prom: Prometheus) -> list[dict[str, Any]]:
    return [
        a
        for a in prom.alerts()
        if a["labels"]["alertname"] == "RagpulseErrorBudgetBurn"
        and a["labels"]["severity"] == "page"
        and a["state"] == "firing"
    ]


def test_degraded_phase_pages_on_the_failure_free_slo_budget(stack: Stack) -> None:
    stack.degraded_alerts()
    prom = stack.prometheus
    services = ("earnings-qa", "it-support")  # ~30 % and ~20 % of turns leak when degraded
    pages = wait_until(
        "RagpulseErrorBudgetBurn pages for pii-free, both services",
        lambda: {a["labels"]["service"]: a for a in _slo_pages(prom)
                 if a["labels"]["slo"] == "pii-free"}.keys() >= set(services)
        and _slo_pages(prom),
        timeout=120,
        detail=stack.diagnostics,
    )  # fmt: skip
    assert all(float(a["value"]) > 6 for a in pages), describe(pages)  # burn above a factor
    labels = {"slo": "pii-free", "service": "earnings-qa", "severity": "page"}
    got = wait_until(
        "Alertmanager to deliver the SLO page to the webhook",
        functools.partial(_delivered, stack.webhook, "RagpulseErrorBudgetBurn", **labels),
        timeout=60,
        detail=lambda: json.dumps(stack.webhook.payloads(), indent=1)[-4000:],
    )
    payload, alert = got[0]["payload"], got[0]["alert"]
    (stack.tmp / "slo_page_payload.json").write_text(json.dumps(payload, indent=1))
    print("Alertmanager webhook payload of the SLO page:\n" + json.dumps(payload, indent=1))
    assert alert["labels"]["severity"] == "page" and alert["labels"]["namespace"] == NAMESPACE
    assert alert["annotations"]["runbook_url"] == f"{RUNBOOK}#ragpulseerrorbudgetburn", alert
    assert float(alert["annotations"]["burn_rate"]) > 6, alert
    assert alert["annotations"]["budget_used"].endswith("%"), alert
    # the healthy phase was evaluated and under budget (test 1: nothing fired then)
    switched = stack.cache.get("switched_at", time.time())
    for service in services:
        burn = (  # the 3d/6h ticket's long window, scaled
            'ragpulse:slo_burn_rate:rate1h12m{slo="pii-free", service="' + service + '"}'
        )
        series = prom.query_range(burn, switched - 30, switched - 3, 1)
        values = [float(v) for _, v in series[0]["values"]] if series else []
        assert values and max(values) < 1, (service, values)
