"""ServiceMonitor / PodMonitor, the PrometheusRule from files/ and the Grafana dashboard."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from tests.helm.manifests import (
    CHART,
    OPERATOR_KINDS,
    kinds,
    one,
    ragpulse_container,
    render,
    validate_all,
    validate_operator,
)

ALL_ON: dict[str, Any] = {
    "monitoring": {
        "serviceMonitor": {"enabled": True, "labels": {"release": "kube-prometheus-stack"}},
        "prometheusRule": {"enabled": True, "additionalRuleLabels": {"team": "search"}},
        "dashboard": {"enabled": True},
    }
}


def promtool_check(rule_file_text: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "rules.yaml"
    path.write_text(rule_file_text)
    return subprocess.run(
        ["promtool", "check", "rules", str(path)], capture_output=True, text=True, check=False
    )


def test_monitoring_is_off_by_default_and_each_part_switches_on(chart: helm.Chart) -> None:
    assert not OPERATOR_KINDS & set(kinds(render(chart)))
    docs = render(chart, ALL_ON)
    validate_all(docs)
    assert kinds(docs).count("ConfigMap") == 2
    assert {"ServiceMonitor", "PrometheusRule"} <= set(kinds(docs))
    for part in [*ALL_ON["monitoring"], "podMonitor"]:
        only = {"monitoring": {part: {"enabled": True}}}
        assert len(render(chart, only)) == len(render(chart)) + 1, part


def test_service_monitor_scrapes_the_metrics_service(chart: helm.Chart) -> None:
    docs = render(chart, ALL_ON)
    monitor, service = one(docs, "ServiceMonitor"), one(docs, "Service")
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    endpoint = monitor["spec"]["endpoints"][0]
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    assert (endpoint["path"], endpoint["interval"]) == ("/metrics", "30s")
    assert endpoint["honorLabels"] is True  # keep ragpulse's own `service` label


def test_pod_monitor_in_standalone_selects_the_deployment_pods(chart: helm.Chart) -> None:
    docs = render(chart, {"monitoring": {"podMonitor": {"enabled": True}}})
    validate_all(docs)
    template = one(docs, "Deployment")["spec"]["template"]
    monitor = one(docs, "PodMonitor")
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()
    )
    ports = {p["name"] for p in ragpulse_container(template["spec"])["ports"]}
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] in ports
    assert monitor["spec"]["podMetricsEndpoints"][0]["honorLabels"] is True


def test_prometheus_rule_carries_the_rule_file_and_passes_promtool(
    chart: helm.Chart, tmp_path: Path
) -> None:
    shipped = yaml.safe_load((CHART / "files" / "prometheus-rules.yaml").read_text())
    rule = one(render(chart, ALL_ON), "PrometheusRule")
    groups = rule["spec"]["groups"]
    assert [g["name"] for g in groups] == [g["name"] for g in shipped["groups"]]
    for got, want in zip(groups, shipped["groups"], strict=True):
        for got_rule, want_rule in zip(got["rules"], want["rules"], strict=True):
            labels = {"team": "search", **want_rule.get("labels", {})}
            assert got_rule == {**want_rule, "labels": labels}
    # alert templates ({{ $labels.metric }}) reach Prometheus untouched by Helm
    assert "{{ $labels.metric }}" in yaml.safe_dump(groups)
    result = promtool_check(yaml.safe_dump({"groups": groups}), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_rule_labels_win_over_additional_rule_labels(chart: helm.Chart) -> None:
    values = {
        "monitoring": {
            "prometheusRule": {"enabled": True, "additionalRuleLabels": {"severity": "info"}}
        }
    }
    groups = one(render(chart, values), "PrometheusRule")["spec"]["groups"]
    alerts = [r for g in groups for r in g["rules"] if "alert" in r]
    assert alerts and all(r["labels"]["severity"] in {"page", "ticket"} for r in alerts)


def _chart_copy(tmp_path: Path) -> Path:
    target = tmp_path / "ragpulse"
    shutil.copytree(CHART, target)
    return target


def test_a_broken_generated_rule_is_caught_by_promtool(tmp_path: Path) -> None:
    copy = _chart_copy(tmp_path)
    (copy / "files" / "prometheus-rules.yaml").write_text(
        "groups:\n  - name: bad\n    rules:\n      - alert: Broken\n"
        "        expr: rate(ragpulse_events_total[5m]\n"
    )
    with helm.Chart.load(copy) as broken:
        groups = one(render(broken, ALL_ON), "PrometheusRule")["spec"]["groups"]
    result = promtool_check(yaml.safe_dump({"groups": groups}), tmp_path)
    assert result.returncode != 0
    assert '"Broken": could not parse expression' in result.stdout + result.stderr


def test_a_rule_file_without_groups_fails_the_render(tmp_path: Path) -> None:
    copy = _chart_copy(tmp_path)
    rules = copy / "files" / "prometheus-rules.yaml"
    for text in ("- alert: NotAFile\n", "rules:\n  - alert: NotAFile\n", "groups: [\n"):
        rules.write_text(text)
        with (
            helm.Chart.load(copy) as broken,
            pytest.raises(helm.HelmError, match="top-level groups"),
        ):
            render(broken, ALL_ON)


def test_dashboard_config_map_is_the_shipped_json_for_the_grafana_sidecar(
    chart: helm.Chart,
) -> None:
    docs = render(chart, ALL_ON)
    dashboard = next(d for d in docs if d["kind"] == "ConfigMap" and "ragpulse.json" in d["data"])
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    shipped = json.loads((CHART / "files" / "dashboard.json").read_text())
    assert json.loads(dashboard["data"]["ragpulse.json"]) == shipped
    moved = render(chart, {"monitoring": {"dashboard": {"enabled": True, "namespace": "grafana"}}})
    namespaces = {d["metadata"]["namespace"] for d in moved if "ragpulse.json" in d.get("data", {})}
    assert namespaces == {"grafana"}


def test_invalid_dashboard_json_fails_the_render(tmp_path: Path) -> None:
    copy = _chart_copy(tmp_path)
    (copy / "files" / "dashboard.json").write_text('{"title": "ragpulse", ')
    with helm.Chart.load(copy) as broken, pytest.raises(helm.HelmError, match=r"dashboard\.json"):
        render(broken, ALL_ON)


def test_service_and_pod_monitor_together_fail(chart: helm.Chart) -> None:
    both = {"monitoring": {"serviceMonitor": {"enabled": True}, "podMonitor": {"enabled": True}}}
    with pytest.raises(helm.HelmError, match="not both"):
        render(chart, both)


def test_crd_validation_rejects_an_unknown_field(chart: helm.Chart) -> None:
    monitor = one(render(chart, {"monitoring": {"podMonitor": {"enabled": True}}}), "PodMonitor")
    validate_operator(monitor)
    monitor["spec"]["podMetricEndpoints"] = monitor["spec"].pop("podMetricsEndpoints")
    with pytest.raises(AssertionError, match="fields unknown to the CRD"):
        validate_operator(monitor)
