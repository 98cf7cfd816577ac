"""Sidecar mode through the worked example: a RAG service chart with ragpulse as a subchart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import helm_python as helm
import pytest

from tests.helm.manifests import (
    CHART,
    NATIVE_SIDECAR_K8S_VERSIONS,
    RELEASE,
    example_chart,
    kinds,
    notes,
    one,
    ragpulse_container,
    render,
    validate_all,
)


def _pod(docs: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = one(docs, "Deployment")
    assert deployment["metadata"]["name"] == f"{RELEASE}-rag-service"
    return deployment["spec"]["template"]


def test_example_runs_ragpulse_as_a_native_sidecar(example: helm.Chart) -> None:
    docs = render(example)
    validate_all(docs, NATIVE_SIDECAR_K8S_VERSIONS)
    assert kinds(docs) == [
        "ConfigMap",
        "ConfigMap",
        "Deployment",
        "PodMonitor",
        "PrometheusRule",
        "Service",
    ]
    spec = _pod(docs)["spec"]
    assert [c["name"] for c in spec["containers"]] == ["app"]
    assert [c["name"] for c in spec["initContainers"]] == ["ragpulse"]
    sidecar = ragpulse_container(spec)
    assert sidecar["restartPolicy"] == "Always"
    assert sidecar["securityContext"]["readOnlyRootFilesystem"] is True
    assert sidecar["securityContext"]["runAsNonRoot"] is True
    config_volume = next(v for v in spec["volumes"] if v["name"] == "ragpulse-config")
    config_maps = [d for d in docs if d["kind"] == "ConfigMap" and "config.yaml" in d["data"]]
    assert config_volume["configMap"]["name"] == config_maps[0]["metadata"]["name"]
    assert "group_id: ragpulse-support-assistant" in config_maps[0]["data"]["config.yaml"]


def test_sidecar_probes_never_gate_the_rag_service_by_default(example: helm.Chart) -> None:
    """Only liveness: a readiness probe would take the RAG pods out of their Service when
    Kafka is down; a startup probe on a native sidecar would hold back the RAG container."""
    sidecar = ragpulse_container(_pod(render(example))["spec"])
    assert "readinessProbe" not in sidecar
    assert "startupProbe" not in sidecar
    assert sidecar["livenessProbe"]["httpGet"]["path"] == "/healthz"
    opt_in = {"ragpulse": {"sidecar": {"readinessProbe": True, "startupProbe": True}}}
    sidecar = ragpulse_container(_pod(render(example, opt_in))["spec"])
    assert sidecar["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert sidecar["startupProbe"]["httpGet"]["path"] == "/healthz"


def test_classic_sidecar_is_a_second_container(example: helm.Chart) -> None:
    docs = render(example, {"ragpulse": {"sidecar": {"native": False}}})
    validate_all(docs)
    spec = _pod(docs)["spec"]
    assert "initContainers" not in spec
    assert [c["name"] for c in spec["containers"]] == ["app", "ragpulse"]
    assert "restartPolicy" not in ragpulse_container(spec)


@pytest.mark.parametrize(("native", "grace"), [(True, 60), (False, 30)])
def test_pod_grace_period_covers_the_ragpulse_drain(
    example: helm.Chart, native: bool, grace: int
) -> None:
    """Native sidecars stop after the app inside one grace period: 30 s app + 30 s ragpulse."""
    docs = render(example, {"ragpulse": {"sidecar": {"native": native}}})
    assert _pod(docs)["spec"]["terminationGracePeriodSeconds"] == grace


def test_pod_monitor_selects_exactly_the_pods_with_the_sidecar(example: helm.Chart) -> None:
    docs = render(example)
    template = _pod(docs)
    monitor = one(docs, "PodMonitor")
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= template["metadata"]["labels"].items()
    assert selector == {"ragpulse.io/sidecar": RELEASE}
    endpoint = monitor["spec"]["podMetricsEndpoints"][0]
    ports = {p["name"] for p in ragpulse_container(template["spec"])["ports"]}
    assert endpoint["port"] in ports and endpoint["path"] == "/metrics"


def test_ragpulse_config_change_rolls_the_rag_pods(example: helm.Chart) -> None:
    def checksum(values: dict[str, Any]) -> str:
        return str(
            _pod(render(example, values))["metadata"]["annotations"]["checksum/ragpulse-config"]
        )

    changed = {"ragpulse": {"config": {"log_level": "DEBUG"}}}
    assert checksum({}) != checksum(changed)


def test_sidecar_mode_renders_no_workload_of_its_own(chart: helm.Chart) -> None:
    docs = render(chart, {"mode": "sidecar"})
    assert kinds(docs) == ["ConfigMap"]
    assert "Sidecar mode" in notes(chart, {"mode": "sidecar"})
    with pytest.raises(helm.HelmError, match=r"monitoring\.podMonitor"):
        render(chart, {"mode": "sidecar", "monitoring": {"serviceMonitor": {"enabled": True}}})


def test_sidecar_templates_refuse_standalone_mode(example: helm.Chart) -> None:
    with pytest.raises(helm.HelmError, match=r"set ragpulse\.mode=sidecar"):
        render(example, {"ragpulse": {"mode": "standalone"}})


def test_native_sidecar_on_kubernetes_before_1_29_fails_clearly(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Rendering cannot pick the Kubernetes version here, lint can; Helm's lint mode only
    logs a template's `fail` (to the Go logger on stderr) where an install aborts."""
    message = "sidecar.native needs Kubernetes >= 1.29 (this cluster: v1.28.0)"
    with example_chart(tmp_path):
        chart_dir = tmp_path / "helm" / "examples" / "rag-service"
        capfd.readouterr()
        helm.lint(chart_dir, kube_version="v1.28.0")
        assert message in capfd.readouterr().err
        helm.lint(chart_dir, {"ragpulse": {"sidecar": {"native": False}}}, kube_version="v1.28.0")
        helm.lint(chart_dir, kube_version="v1.29.0")
        assert "sidecar.native needs" not in capfd.readouterr().err


def test_example_chart_lints_clean(tmp_path: Path) -> None:
    with example_chart(tmp_path):
        report = helm.lint(tmp_path / "helm" / "examples" / "rag-service", strict=True)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


def test_example_depends_on_the_current_chart_version(example: helm.Chart) -> None:
    with helm.Chart.load(CHART) as ragpulse:
        (dependency,) = example.dependencies
        assert dependency["name"] == "ragpulse"
        assert dependency["version"] == ragpulse.version
