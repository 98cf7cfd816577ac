"""The generated Grafana dashboard: valid for the SDK's typed model, structurally sound for
Grafana, every PromQL expression parsed by the real `promtool`, and the key panels compute
the right numbers on synthetic series (promtool's PromQL engine)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models import prometheus as prom_model

from exporters.dashboard import DRIFT_ANNOTATION_EXTRAS, render_dashboard
from exporters.dashboard_panels import REFERENCE_PANEL_METRICS
from exporters.prometheus import PromFamilies
from exporters.rules import AlertSettings, render_rule_groups
from exporters.slo_settings import DEFAULT_SLOS, SloSpec
from monitors.evaluation.reference_summary import REFERENCE_METRICS
from stream.runtime.sampler import SAMPLED_REASONS

DS = {"type": "prometheus", "uid": "${datasource}"}
CONCRETE = {
    "namespace": "rag",
    "job": "ragpulse",
    "service": "it-support",
    "model": "gpt-4.1-mini",
    "prompt_version": "v1.4",
    "metric": "faithfulness",
}
SETTINGS = [AlertSettings(), AlertSettings(aggregate_by=[])]


def promtool(*args: str | Path) -> str:
    exe = shutil.which("promtool")
    assert exe, "promtool not found: apt-get install prometheus"
    proc = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def panels(board: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in board["panels"] if p["type"] != "row"]


def queries(board: dict[str, Any]) -> dict[str, str]:
    """Every PromQL expression of the dashboard by a readable name: panel targets, the drift
    annotation and the selectors inside the variables' label_values()."""
    out = {f"panel {p['id']} {t['refId']}": t["expr"] for p in panels(board) for t in p["targets"]}
    for a in board["annotations"]["list"]:
        if "expr" in a:
            out[f"annotation {a['name']}"] = a["expr"]
    for v in board["templating"]["list"]:
        if v["type"] == "query":
            m = re.fullmatch(r"label_values\((.+), (\w+)\)", v["query"])
            assert m, v["query"]
            out[f"variable {v['name']}"] = m.group(1)
    return out


def substitute(expr: str, values: dict[str, str]) -> str:
    expr = expr.replace("$__rate_interval", "5m")
    return re.sub(r"\$\{?(\w+)\}?", lambda m: values[m.group(1)], expr)


@pytest.mark.parametrize("alerts", SETTINGS, ids=["default", "no-aggregate-labels"])
def test_dashboard_round_trips_through_the_sdk_typed_model(alerts: AlertSettings) -> None:
    register_default_plugins()  # typed decoding of panel options and Prometheus queries
    board = render_dashboard(alerts)
    model = dm.Dashboard.from_json(board)
    for panel in model.panels or []:
        if isinstance(panel, dm.Panel):
            assert panel.targets and all(
                isinstance(t, prom_model.Dataquery) for t in panel.targets
            ), panel.title
    again = json.loads(json.dumps(model, cls=JSONEncoder))
    expected = json.loads(json.dumps(board))
    drift = next(a for a in expected["annotations"]["list"] if a["name"] == "Drift alarm changes")
    assert {k: drift.pop(k) for k in DRIFT_ANNOTATION_EXTRAS} == DRIFT_ANNOTATION_EXTRAS
    assert again == expected


@pytest.mark.parametrize("alerts", SETTINGS, ids=["default", "no-aggregate-labels"])
def test_layout_ids_and_datasource_references(alerts: AlertSettings) -> None:
    board = render_dashboard(alerts)
    assert board["uid"] == "ragpulse" and board["schemaVersion"] >= 39
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids)) and all(isinstance(i, int) and i > 0 for i in ids)
    cells: set[tuple[int, int]] = set()
    for p in board["panels"]:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["w"] > 0 and g["x"] + g["w"] <= 24 and g["h"] > 0, p["title"]
        mine = {
            (x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])
        }
        assert not cells & mine, f"{p['title']} overlaps another panel"
        cells |= mine
    rows = [p for p in board["panels"] if p["type"] == "row"]
    assert [r["title"].split(":")[0] for r in rows] == [
        "Quality SLOs",
        "Stream",
        "Detectors",
        "Judge metrics, gates and drift",
        "Reference-based quality (golden / labelled turns)",
        "Judge",
        "Judge health",
    ]
    for p in panels(board):
        assert p["datasource"] == DS, p["title"]
        assert p["title"] and p["description"], p["id"]
        refs = [t["refId"] for t in p["targets"]]
        assert len(refs) == len(set(refs)) and all(refs), p["title"]
        assert all(t["datasource"] == DS and t["expr"] for t in p["targets"]), p["title"]


def test_template_variables() -> None:
    board = render_dashboard()
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert list(variables) == ["datasource", *CONCRETE]
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for name in CONCRETE:
        v = variables[name]
        assert v["type"] == "query" and v["datasource"] == DS
        assert v["multi"] and v["includeAll"] and v["allValue"] == ".*"
    used = {m for e in queries(board).values() for m in re.findall(r"\$\{?(\w+)", e)}
    used |= {m for p in board["panels"] for m in re.findall(r"\$(\w+)", p["title"])}
    assert used - {"__rate_interval"} <= set(variables)
    repeated = [p for p in board["panels"] if p.get("repeat")]
    assert [p["repeat"] for p in repeated] == ["metric"] and variables["metric"]["multi"]
    # service is a filter wherever the series has the label, and never where it has not
    for e in queries(board).values():
        for metric in ("ragpulse_detector_hits_total", "ragpulse_metric_score", "ragpulse_events"):
            if metric in e:
                assert "$service" not in e, e


@pytest.mark.parametrize("alerts", SETTINGS, ids=["default", "no-aggregate-labels"])
def test_every_query_parses_with_promtool(alerts: AlertSettings, tmp_path: Path) -> None:
    found = queries(render_dashboard(alerts))
    assert len(found) >= 30
    rules = [
        {"record": f"dashboard:query_{i}", "expr": substitute(expr, CONCRETE)}
        for i, expr in enumerate(found.values())
    ]
    (tmp_path / "queries.yaml").write_text(
        yaml.safe_dump({"groups": [{"name": "q", "rules": rules}]})
    )
    assert f"SUCCESS: {len(rules)} rules found" in promtool(
        "check", "rules", tmp_path / "queries.yaml"
    )


def _counter(per_min: float, steps: int = 70) -> str:
    return f"0+{per_min:g}x{steps}"


def test_key_panels_compute_the_expected_values(tmp_path: Path) -> None:
    """Evaluated by promtool with every variable at "All" (.*): failure-mode rate, judge
    mean, severity bands, judge error ratio, consumer lag, events by outcome."""
    board = render_dashboard()
    by_title = {p["title"]: p for p in panels(board)}
    every = {name: ".*" for name in CONCRETE}
    pod = 'namespace="rag", job="ragpulse", instance="a"'
    it = 'service="it-support", prompt_version="v1.4"'
    bucket = 'ragpulse_metric_score_bucket{%s, metric="faithfulness", le="%s"}'
    series = {
        f'ragpulse_scored_events_total{{{pod}, {it}, model="m"}}': _counter(240),
        f'ragpulse_failure_modes_total{{{pod}, {it}, failure_mode="false_rejection"}}': _counter(
            60
        ),
        f'ragpulse_events_total{{{pod}, outcome="consumed"}}': _counter(600),
        f'ragpulse_judge_requests_total{{{pod}, judge="local", outcome="ok"}}': _counter(180),
        f'ragpulse_judge_requests_total{{{pod}, judge="local", outcome="judge_error"}}': _counter(
            60
        ),
        f'ragpulse_judge_requests_total{{{pod}, judge="local", outcome="skipped"}}': _counter(600),
        f'ragpulse_consumer_lag{{{pod}, partition="0"}}': "3x70",
        f'ragpulse_consumer_lag{{{pod}, partition="1"}}': "5x70",
        f'ragpulse_metric_score_sum{{{pod}, metric="faithfulness"}}': _counter(360),
        f'ragpulse_metric_score_count{{{pod}, metric="faithfulness"}}': _counter(480),
        **{
            bucket % (pod, le): _counter(n)
            for le, n in [("0.3", 60), ("0.6", 120), ("0.85", 240), ("1.0", 480), ("+Inf", 480)]
        },
    }

    def expect(title: str, ref: str, samples: list[tuple[str, float]]) -> dict[str, Any]:
        target = next(t for t in by_title[title]["targets"] if t["refId"] == ref)
        return {
            "expr": substitute(target["expr"], every),
            "eval_time": "60m",
            "exp_samples": [{"labels": lbl, "value": v} for lbl, v in samples],
        }

    fm = '{failure_mode="false_rejection", prompt_version="v1.4", service="it-support"}'
    tests = [
        expect("Failure-mode rate by service / prompt version", "A", [(fm, 0.25)]),
        expect("Judge score mean (1h)", "A", [('{metric="faithfulness"}', 0.75)]),
        *[
            expect("Severity bands: $metric", ref, [("{}", v)])
            for ref, v in zip("ABCD", [1, 1, 2, 4], strict=True)
        ],
        expect("Judge error ratio", "A", [('{judge="local"}', 0.25)]),
        expect("Consumer lag", "A", [('{partition="0"}', 3), ('{partition="1"}', 5)]),
        expect("Consumer lag", "B", [("{}", 8)]),
        expect("Events/s by outcome", "A", [('{outcome="consumed"}', 10)]),
    ]
    test = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in series.items()],
                "promql_expr_test": tests,
            }
        ],
    }
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(test, sort_keys=False))
    assert "SUCCESS" in promtool("test", "rules", tmp_path / "test.yaml")


def test_thresholds_and_windows_follow_the_alert_settings() -> None:
    alerts = AlertSettings.model_validate(
        {
            "consumer_lag": {"ceiling": 777},
            "judge_errors": {"ceiling": 0.3},
            "score_regression": {"window": "30m"},
            "critical_gate": {"enabled": False},
        }
    )
    by_title = {p["title"]: p for p in panels(render_dashboard(alerts))}

    def threshold(title: str) -> float | None:
        steps = by_title[title]["fieldConfig"]["defaults"].get("thresholds", {}).get("steps", [])
        return steps[-1]["value"] if steps else None

    assert threshold("Consumer lag") == 777
    assert threshold("Judge error ratio") == 0.3
    assert threshold("Gate pass ratio") is None
    assert "[30m]" in by_title["Judge score mean (30m)"]["targets"][0]["expr"]
    assert threshold("Events/s by outcome") is None


def test_drift_alarms_as_state_timeline_and_annotation() -> None:
    board = render_dashboard()
    timeline = next(p for p in panels(board) if p["type"] == "state-timeline")
    assert "ragpulse_drift_alarm" in timeline["targets"][0]["expr"]
    mapping = timeline["fieldConfig"]["defaults"]["mappings"][0]["options"]
    assert mapping["1"]["text"] == "ALARM" and mapping["0"]["text"] == "ok"
    drift = next(a for a in board["annotations"]["list"] if a["name"] == "Drift alarm changes")
    assert drift["datasource"] == DS and drift["enable"]
    assert drift["expr"].startswith(
        "max by (metric, detector, service) (changes(ragpulse_drift_alarm{"
    )
    assert drift["tagKeys"] == "metric,detector,service"
    builtin = next(a for a in board["annotations"]["list"] if a.get("builtIn") == 1)
    assert builtin["datasource"]["type"] == "grafana"


def exposed_names() -> set[str]:
    """Every series name the exporter's registry can expose (families with no child yet
    included): counters as _total, histograms as _bucket/_sum/_count, info as _info."""
    suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"],
                "info": ["_info"], "summary": ["_sum", "_count"], "gauge": [""]}  # fmt: skip
    return {
        family.name + suffix
        for family in PromFamilies().registry.collect()
        for suffix in suffixes[family.type]
    }


@pytest.mark.parametrize("alerts", SETTINGS, ids=["default", "no-aggregate-labels"])
def test_every_query_names_only_families_the_exporter_registers(alerts: AlertSettings) -> None:
    exposed = exposed_names()
    assert {"ragpulse_compound_score", "ragpulse_compound_weight"} <= exposed
    slos = [SloSpec.model_validate(d) for d in DEFAULT_SLOS]
    recorded = {
        r["record"] for g in render_rule_groups(alerts, slos)["groups"] for r in g["rules"]
        if "record" in r
    }  # fmt: skip
    for name, expr in queries(render_dashboard(alerts)).items():
        used = set(re.findall(r"\bragpulse_\w+", expr))
        rules = set(re.findall(r"\bragpulse:[\w:]+", expr))
        assert used or rules, f"{name}: {expr}"
        assert used <= exposed, f"{name} reads unregistered series {used - exposed}: {expr}"
        assert rules <= recorded, f"{name} reads series no rule records {rules - recorded}"


def test_reference_row_panels() -> None:
    board = render_dashboard()
    row_ids = [p["id"] for p in board["panels"] if p["type"] == "row"]
    rows = {p["id"]: p["title"] for p in board["panels"] if p["type"] == "row"}
    start = next(i for i, t in rows.items() if t.startswith("Reference-based quality"))
    end = row_ids[row_ids.index(start) + 1]
    row = {p["title"]: p for p in panels(board) if start < p["id"] < end}
    assert list(row) == [
        "Reference-based score mean (1h)", "Compound score", "Compound weights",
        *(f"Reference severity bands: {m}" for m in REFERENCE_PANEL_METRICS),
        "Reference turns judged/min", "Tonality mean (1h)",
    ]  # fmt: skip
    assert set(REFERENCE_PANEL_METRICS) <= set(REFERENCE_METRICS)
    assert "reference" in SAMPLED_REASONS
    mean = row["Reference-based score mean (1h)"]["targets"][0]["expr"]
    assert 'metric=~"answer_correctness|answer_f1|dece_f2"' in mean and "[1h]" in mean
    assert "ragpulse_metric_score_sum" in mean and "ragpulse_metric_score_count" in mean
    compound = row["Compound score"]["targets"][0]["expr"]
    assert compound.startswith("avg by (window) (ragpulse_compound_score{")
    weights = row["Compound weights"]
    assert weights["type"] == "bargauge" and weights["targets"][0]["instant"]
    assert "ragpulse_compound_weight" in weights["targets"][0]["expr"]
    assert weights["options"]["reduceOptions"]["calcs"] == ["lastNotNull"]
    turns = row["Reference turns judged/min"]["targets"][0]["expr"]
    assert "ragpulse_sampled_total{" in turns and 'reason="reference"' in turns
    assert 'metric="tonality"' in row["Tonality mean (1h)"]["targets"][0]["expr"]
    for m in REFERENCE_PANEL_METRICS:
        bands = row[f"Reference severity bands: {m}"]
        assert [t["legendFormat"] for t in bands["targets"]] == [
            "severe", "moderate", "minor", "none"
        ]  # fmt: skip
        assert all(f'metric="{m}"' in t["expr"] for t in bands["targets"])
        assert bands["fieldConfig"]["defaults"]["custom"]["stacking"]["mode"] == "percent"
    for title in ("Reference-based score mean (1h)", "Compound score", "Tonality mean (1h)"):
        defaults = row[title]["fieldConfig"]["defaults"]
        assert (defaults["min"], defaults["max"], defaults["unit"]) == (0, 1, "none"), title


def test_reference_panels_compute_the_expected_values(tmp_path: Path) -> None:
    """promtool evaluates the reference row on synthetic series of two replicas."""
    by_title = {p["title"]: p for p in panels(render_dashboard())}
    every = {name: ".*" for name in CONCRETE}
    pods = ['namespace="rag", job="ragpulse", instance="a"',
            'namespace="rag", job="ragpulse", instance="b"']  # fmt: skip
    bucket = 'ragpulse_metric_score_bucket{%s, metric="answer_correctness", le="%s"}'
    series: dict[str, str] = {}
    for pod in pods:  # per replica per minute: 240 golden turns, answer_correctness sum 180
        series[f'ragpulse_metric_score_sum{{{pod}, metric="answer_correctness"}}'] = _counter(180)
        series[f'ragpulse_metric_score_count{{{pod}, metric="answer_correctness"}}'] = _counter(240)
        for le, n in [("0.3", 60), ("0.6", 120), ("0.85", 180), ("1.0", 240), ("+Inf", 240)]:
            series[bucket % (pod, le)] = _counter(n)
        series[f'ragpulse_sampled_total{{{pod}, reason="reference"}}'] = _counter(60)
        series[f'ragpulse_sampled_total{{{pod}, reason="base"}}'] = _counter(600)
        series[f'ragpulse_compound_weight{{{pod}, metric="faithfulness"}}'] = "0.25x70"
    series[f'ragpulse_compound_score{{{pods[0]}, window="5m"}}'] = "0.7x70"
    series[f'ragpulse_compound_score{{{pods[1]}, window="5m"}}'] = "0.9x70"

    def expect(title: str, ref: str, samples: list[tuple[str, float]]) -> dict[str, Any]:
        target = next(t for t in by_title[title]["targets"] if t["refId"] == ref)
        return {
            "expr": substitute(target["expr"], every),
            "eval_time": "60m",
            "exp_samples": [{"labels": lbl, "value": v} for lbl, v in samples],
        }

    bands = "Reference severity bands: answer_correctness"
    tests = [
        expect("Reference-based score mean (1h)", "A", [('{metric="answer_correctness"}', 0.75)]),
        *[expect(bands, ref, [("{}", 2)]) for ref in "ABCD"],  # 1/s per band and replica
        expect("Reference turns judged/min", "A", [("{}", 120)]),
        expect("Compound score", "A", [('{window="5m"}', 0.8)]),
        expect("Compound weights", "A", [('{metric="faithfulness"}', 0.25)]),
    ]
    test = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in series.items()],
                "promql_expr_test": tests,
            }
        ],
    }
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(test, sort_keys=False))
    assert "SUCCESS" in promtool("test", "rules", tmp_path / "test.yaml")
