"""Standalone mode: a consumer Deployment with its Service, PodDisruptionBudget and HPA."""

from __future__ import annotations

import os
from pathlib import Path

import helm_python as helm
import pytest
import yaml

from stream.runtime.settings import load_settings
from tests.helm.manifests import (
    RELEASE,
    kinds,
    notes,
    one,
    ragpulse_container,
    render,
    validate_all,
)


def test_default_values_render_a_valid_standalone_release(chart: helm.Chart) -> None:
    docs = render(chart)
    assert kinds(docs) == [
        "ConfigMap",
        "Deployment",
        "PodDisruptionBudget",
        "Service",
        "ServiceAccount",
    ]
    validate_all(docs)
    deployment = one(docs, "Deployment")
    assert deployment["spec"]["replicas"] == 1
    pod = deployment["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}


def test_container_is_locked_down_with_tmp_as_the_only_writable_path(chart: helm.Chart) -> None:
    pod = one(render(chart), "Deployment")["spec"]["template"]["spec"]
    container = ragpulse_container(pod)
    sc = container["securityContext"]
    assert sc["runAsNonRoot"] is True and sc["runAsUser"] == 10001
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    writable = [m for m in container["volumeMounts"] if not m.get("readOnly")]
    assert [m["mountPath"] for m in writable] == ["/tmp"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[writable[0]["name"]]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["FAUST_DATADIR"].startswith("/tmp/")
    assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]


def test_probes_and_port_follow_config(chart: helm.Chart) -> None:
    docs = render(chart, {"config": {"server": {"port": 9200}}})
    container = ragpulse_container(one(docs, "Deployment")["spec"]["template"]["spec"])
    assert container["ports"] == [
        {"name": "ragpulse-http", "containerPort": 9200, "protocol": "TCP"}
    ]
    paths = {
        probe: (container[probe]["httpGet"]["path"], container[probe]["httpGet"]["port"])
        for probe in ("startupProbe", "livenessProbe", "readinessProbe")
    }
    assert paths == {
        "startupProbe": ("/healthz", "ragpulse-http"),
        "livenessProbe": ("/healthz", "ragpulse-http"),
        "readinessProbe": ("/readyz", "ragpulse-http"),
    }
    service = one(docs, "Service")
    assert service["spec"]["ports"][0]["targetPort"] == "ragpulse-http"
    assert service["spec"]["publishNotReadyAddresses"] is True


@pytest.mark.parametrize(("shutdown", "grace"), [(None, 30), (45, 55), (12.5, 23)])
def test_grace_period_exceeds_the_drain_deadline(
    chart: helm.Chart, shutdown: float | None, grace: int
) -> None:
    values = {} if shutdown is None else {"config": {"shutdown_timeout_s": shutdown}}
    pod = one(render(chart, values), "Deployment")["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == grace


def test_grace_period_shorter_than_the_drain_fails(chart: helm.Chart) -> None:
    with pytest.raises(helm.HelmError, match=r"must exceed config.shutdown_timeout_s"):
        render(chart, {"terminationGracePeriodSeconds": 20})


def test_rendered_config_is_accepted_by_ragpulse_settings(
    chart: helm.Chart, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in [k for k in os.environ if k.startswith("RAGPULSE_")]:
        monkeypatch.delenv(key)
    values = {"config": {"kafka": {"bootstrap_servers": "k-0:9092,k-1:9092"}, "log_level": "DEBUG"}}
    config_map = one(render(chart, values), "ConfigMap")
    path = tmp_path / "config.yaml"
    path.write_text(config_map["data"]["config.yaml"])
    settings = load_settings(path)
    assert settings.kafka.bootstrap_servers == "k-0:9092,k-1:9092"
    assert settings.log_level == "DEBUG"
    assert settings.server.port == 9108
    assert settings.progress.readiness, "standalone: a stalled partition is not ready"


def test_stall_readiness_follows_an_explicit_value(chart: helm.Chart) -> None:
    values = {"config": {"progress": {"readiness": False, "stall_after_s": 300}}}
    config = yaml.safe_load(one(render(chart, values), "ConfigMap")["data"]["config.yaml"])
    assert config["progress"] == {"readiness": False, "stall_after_s": 300}


def test_config_change_rolls_the_pods(chart: helm.Chart) -> None:
    def checksum(values: dict[str, object]) -> str:
        template = one(render(chart, values), "Deployment")["spec"]["template"]
        return str(template["metadata"]["annotations"]["checksum/ragpulse-config"])

    assert checksum({}) != checksum({"config": {"log_level": "DEBUG"}})


def test_autoscaling_replaces_fixed_replicas(chart: helm.Chart) -> None:
    docs = render(chart, {"autoscaling": {"enabled": True, "maxReplicas": 6}})
    validate_all(docs)
    assert "replicas" not in one(docs, "Deployment")["spec"]
    hpa = one(docs, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"]["name"] == f"{RELEASE}-ragpulse"
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 6)
    target = hpa["spec"]["metrics"][0]["resource"]["target"]
    assert target == {"type": "Utilization", "averageUtilization": 70}
    assert hpa["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 300


def test_consumers_beyond_the_partition_count_fail(chart: helm.Chart) -> None:
    render(chart, {"replicaCount": 4, "inputTopicPartitions": 4})
    with pytest.raises(helm.HelmError, match=r"replicaCount \(5\) exceeds inputTopicPartitions"):
        render(chart, {"replicaCount": 5, "inputTopicPartitions": 4})
    with pytest.raises(helm.HelmError, match=r"maxReplicas \(8\) exceeds inputTopicPartitions"):
        render(
            chart, {"autoscaling": {"enabled": True, "maxReplicas": 8}, "inputTopicPartitions": 4}
        )


def test_pdb_can_be_switched_off(chart: helm.Chart) -> None:
    assert "PodDisruptionBudget" not in kinds(
        render(chart, {"podDisruptionBudget": {"enabled": False}})
    )


def test_notes_tell_where_the_metrics_are(chart: helm.Chart) -> None:
    text = notes(chart)
    assert f"http://{RELEASE}-ragpulse.observability.svc:9108/metrics" in text
    assert "port-forward svc/rp-ragpulse 9108:9108" in text


def test_extra_env_and_volumes_are_passed_through(chart: helm.Chart) -> None:
    values = {
        "extraEnv": [{"name": "RAGPULSE_LOG_LEVEL", "value": "DEBUG"}],
        "extraVolumes": [{"name": "kafka-ca", "secret": {"secretName": "kafka-ca"}}],
        "extraVolumeMounts": [{"name": "kafka-ca", "mountPath": "/etc/kafka-ca", "readOnly": True}],
    }
    docs = render(chart, values)
    validate_all(docs)
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    container = ragpulse_container(pod)
    assert {"name": "RAGPULSE_LOG_LEVEL", "value": "DEBUG"} in container["env"]
    assert "kafka-ca" in {v["name"] for v in pod["volumes"]}
    assert yaml.safe_dump(container["volumeMounts"]).count("/etc/kafka-ca") == 1
