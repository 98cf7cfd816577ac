"""Admin actions (bearer token from a Secret, optional own port) and the NetworkPolicy."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest

from stream.runtime.settings import load_settings
from tests.helm.manifests import (
    CHART,
    NATIVE_SIDECAR_K8S_VERSIONS,
    RELEASE,
    kinds,
    notes,
    one,
    ragpulse_container,
    render,
    validate_all,
)

FAKE_TOKEN = "t0ken-Do-Not-Render-9c2e41f7"
TOKEN_SECRET = {"existingSecret": "ragpulse-credentials", "adminTokenKey": "admin-token"}
OPS = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ops"}}}]


def _admin(port: int | None = None, **values: Any) -> dict[str, Any]:
    admin: dict[str, Any] = {"enabled": True}
    if port is not None:
        admin["port"] = port
    return {"config": {"server": {"admin": admin}}, "secrets": TOKEN_SECRET, **values}


def _env(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    return {e["name"]: e for e in ragpulse_container(pod)["env"]}


# ------------------------------------------------------------------ admin token
def test_admin_is_off_by_default_and_renders_no_token(chart: helm.Chart) -> None:
    docs = render(chart)
    assert "RAGPULSE_SERVER__ADMIN__TOKEN" not in _env(docs)
    assert "enabled: false" in one(docs, "ConfigMap")["data"]["config.yaml"]
    assert "Admin actions" not in notes(chart)


def test_admin_token_comes_from_a_secret_key_ref(chart: helm.Chart) -> None:
    docs = render(chart, _admin())
    validate_all(docs)
    env = _env(docs)["RAGPULSE_SERVER__ADMIN__TOKEN"]
    assert env == {
        "name": "RAGPULSE_SERVER__ADMIN__TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "ragpulse-credentials", "key": "admin-token"}},
    }
    assert "Secret" not in kinds(docs)
    assert "token" not in one(docs, "ConfigMap")["data"]["config.yaml"]
    # a Secret of its own for the token (e.g. when the Kafka one is managed elsewhere)
    own = render(chart, _admin(secrets={"adminTokenSecret": "rp-admin", "adminTokenKey": "t"}))
    ref = _env(own)["RAGPULSE_SERVER__ADMIN__TOKEN"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "rp-admin", "key": "t"}


def test_admin_on_the_metrics_port_adds_no_port(chart: helm.Chart) -> None:
    docs = render(chart, _admin())
    container = ragpulse_container(one(docs, "Deployment")["spec"]["template"]["spec"])
    assert [p["name"] for p in container["ports"]] == ["ragpulse-http"]
    text = notes(chart, _admin())
    assert "served on port 9108, the metrics port" in text
    assert "jsonpath='{.data.admin-token}'" in text and "Authorization: Bearer $TOKEN" in text


def test_separate_admin_port_is_a_container_port_but_not_on_the_service(chart: helm.Chart) -> None:
    docs = render(chart, _admin(9109))
    validate_all(docs)
    container = ragpulse_container(one(docs, "Deployment")["spec"]["template"]["spec"])
    assert {"name": "ragpulse-admin", "containerPort": 9109, "protocol": "TCP"} in container[
        "ports"
    ]
    # the Service carries /metrics only: an action must reach every pod, not one of them
    assert [p["name"] for p in one(docs, "Service")["spec"]["ports"]] == ["http-metrics"]
    # probes stay on the metrics port
    assert container["livenessProbe"]["httpGet"]["port"] == "ragpulse-http"
    assert "served on port 9109, a listener of their own on 127.0.0.1" in notes(chart, _admin(9109))


def test_rendered_admin_config_plus_secret_env_is_accepted_by_ragpulse(
    chart: helm.Chart, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in [k for k in os.environ if k.startswith("RAGPULSE_")]:
        monkeypatch.delenv(key)
    path = tmp_path / "config.yaml"
    path.write_text(one(render(chart, _admin(9109)), "ConfigMap")["data"]["config.yaml"])
    monkeypatch.setenv("RAGPULSE_SERVER__ADMIN__TOKEN", FAKE_TOKEN)  # what the secretKeyRef sets
    admin = load_settings(path).server.admin
    assert (admin.enabled, admin.port, admin.host) == (True, 9109, "127.0.0.1")
    assert admin.token is not None and admin.token.get_secret_value() == FAKE_TOKEN


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"config": {"server": {"admin": {"enabled": True}}}},
            "config.server.admin.enabled needs a bearer token: set secrets.adminTokenKey",
        ),
        (
            {"config": {"server": {"admin": {"token": FAKE_TOKEN}}}},
            "config.server.admin.token must not be set in values",
        ),
        (
            {"secrets": {"adminTokenKey": "admin-token"}},
            "set secrets.adminTokenSecret (or secrets.existingSecret)",
        ),
        (
            _admin(9108),
            "config.server.admin.port must differ from config.server.port",
        ),
        (
            {"mode": "sidecar", "config": {"server": {"admin": {"enabled": True}}}},
            "config.server.admin.enabled needs a bearer token",
        ),
    ],
)
def test_admin_misconfigurations_fail_the_render(
    chart: helm.Chart, values: dict[str, Any], message: str
) -> None:
    with pytest.raises(helm.HelmError) as info:
        render(chart, values)
    assert message in str(info.value)
    assert FAKE_TOKEN not in str(info.value)


def test_admin_token_may_come_from_extra_env(chart: helm.Chart) -> None:
    ref = {"secretKeyRef": {"name": "vault-synced", "key": "token"}}
    values = {
        "config": {"server": {"admin": {"enabled": True}}},
        "extraEnv": [{"name": "RAGPULSE_SERVER__ADMIN__TOKEN", "valueFrom": ref}],
    }
    assert _env(render(chart, values))["RAGPULSE_SERVER__ADMIN__TOKEN"]["valueFrom"] == ref


def test_schema_checks_the_admin_and_network_policy_values(chart: helm.Chart) -> None:
    for values, message in [
        ({"config": {"server": {"admin": {"enabled": "yes"}}}}, "/config/server/admin/enabled"),
        ({"config": {"server": {"admin": {"port": 0}}}}, "/config/server/admin/port"),
        ({"networkPolicy": {"enable": True}}, "additional properties 'enable' not allowed"),
        ({"networkPolicy": {"admin": {"from": {}}}}, "/networkPolicy/admin/from"),
    ]:
        with pytest.raises(helm.HelmValuesError) as info:
            render(chart, values)
        assert message in str(info.value), values


# ------------------------------------------------------------------ NetworkPolicy
def test_network_policy_is_off_by_default(chart: helm.Chart, example: helm.Chart) -> None:
    assert "NetworkPolicy" not in kinds(render(chart))
    assert "NetworkPolicy" not in kinds(render(chart, {"mode": "sidecar"}))
    assert "NetworkPolicy" not in kinds(render(example))


def test_notes_warn_when_admin_actions_are_open_to_the_pod_network(chart: helm.Chart) -> None:
    warning = "admin actions are reachable from every pod in the cluster"
    assert warning in notes(chart, _admin())  # shared metrics port, no policy
    assert warning in notes(chart, _admin(9109, config={"server": {"admin": {
        "enabled": True, "port": 9109, "host": "0.0.0.0"}}}))  # fmt: skip
    assert warning not in notes(chart, _admin(9109))  # own listener on loopback
    assert warning not in notes(chart, _admin(networkPolicy={"enabled": True}))
    assert warning not in notes(chart)  # admin off


def test_network_policy_lets_only_the_monitoring_namespace_scrape(chart: helm.Chart) -> None:
    docs = render(chart, {"networkPolicy": {"enabled": True}})
    validate_all(docs)
    policy = one(docs, "NetworkPolicy")
    pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= pod_labels.items()
    assert policy["spec"]["policyTypes"] == ["Ingress"]  # egress (Kafka, a judge) untouched
    assert policy["spec"]["ingress"] == [
        {
            "ports": [{"port": 9108, "protocol": "TCP"}],
            "from": [
                {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
                    }
                }
            ],
        }
    ]


def test_network_policy_namespace_is_configurable(chart: helm.Chart) -> None:
    def peers(metrics: dict[str, Any]) -> list[dict[str, Any]]:
        docs = render(chart, {"networkPolicy": {"enabled": True, "metrics": metrics}})
        validate_all(docs)
        return list(one(docs, "NetworkPolicy")["spec"]["ingress"][0]["from"])

    by_name = {"matchLabels": {"kubernetes.io/metadata.name": "kube-prometheus"}}
    assert peers({"namespace": "kube-prometheus"}) == [{"namespaceSelector": by_name}]
    assert peers({"namespace": ""}) == [{"namespaceSelector": {}}]  # every namespace


def test_network_policy_selectors_are_configurable(chart: helm.Chart) -> None:
    prometheus = {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}
    values = {
        "config": {"server": {"port": 9200}},
        "networkPolicy": {
            "enabled": True,
            "metrics": {
                "namespaceSelector": {"matchLabels": {"team": "observability"}},
                "podSelector": prometheus,
            },
            "extraIngress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/24"}}]}],
        },
    }
    docs = render(chart, values)
    validate_all(docs)
    ingress = one(docs, "NetworkPolicy")["spec"]["ingress"]
    # one peer with both selectors: Prometheus pods *in* the matching namespaces
    assert ingress[0] == {
        "ports": [{"port": 9200, "protocol": "TCP"}],
        "from": [
            {
                "namespaceSelector": {"matchLabels": {"team": "observability"}},
                "podSelector": prometheus,
            }
        ],
    }
    assert ingress[1] == {"from": [{"ipBlock": {"cidr": "10.0.0.0/24"}}]}


def test_network_policy_admin_port_only_from_the_admin_peers(chart: helm.Chart) -> None:
    closed = render(chart, _admin(9109, networkPolicy={"enabled": True}))
    validate_all(closed)
    ports = [r["ports"][0]["port"] for r in one(closed, "NetworkPolicy")["spec"]["ingress"]]
    assert ports == [9108]  # no rule for 9109: nobody reaches it over the network
    assert "from nobody over the network" in notes(
        chart, _admin(9109, networkPolicy={"enabled": True})
    )

    opened = render(chart, _admin(9109, networkPolicy={"enabled": True, "admin": {"from": OPS}}))
    validate_all(opened)
    ingress = one(opened, "NetworkPolicy")["spec"]["ingress"]
    assert ingress[1] == {"ports": [{"port": 9109, "protocol": "TCP"}], "from": OPS}
    assert "monitoring" in str(ingress[0]["from"]) and "ops" not in str(ingress[0]["from"])


def test_network_policy_admin_peers_on_the_shared_port(chart: helm.Chart) -> None:
    docs = render(chart, _admin(networkPolicy={"enabled": True, "admin": {"from": OPS}}))
    validate_all(docs)
    ingress = one(docs, "NetworkPolicy")["spec"]["ingress"]
    assert ingress[1] == {"ports": [{"port": 9108, "protocol": "TCP"}], "from": OPS}
    # admin peers without admin actions: no rule
    docs = render(chart, {"networkPolicy": {"enabled": True, "admin": {"from": OPS}}})
    assert len(one(docs, "NetworkPolicy")["spec"]["ingress"]) == 1


def test_sidecar_mode_renders_no_policy_and_says_why(chart: helm.Chart) -> None:
    values = {"mode": "sidecar", "networkPolicy": {"enabled": True}}
    assert kinds(render(chart, values)) == ["ConfigMap"]
    text = notes(chart, values)
    assert "none rendered in sidecar mode" in text
    assert 'include "ragpulse.sidecar.networkPolicyIngress" .Subcharts.ragpulse' in text


def test_example_policy_includes_the_ragpulse_rules(example: helm.Chart) -> None:
    values = {
        "networkPolicy": {"enabled": True},
        "ragpulse": {
            "config": {"server": {"admin": {"enabled": True, "port": 9109}}},
            "secrets": TOKEN_SECRET,
            "networkPolicy": {"admin": {"from": OPS}},
        },
    }
    docs = render(example, values)
    validate_all(docs, NATIVE_SIDECAR_K8S_VERSIONS)
    policy = one(docs, "NetworkPolicy")
    assert policy["metadata"]["name"] == f"{RELEASE}-rag-service"
    template = one(docs, "Deployment")["spec"]["template"]
    assert (
        policy["spec"]["podSelector"]["matchLabels"].items()
        <= template["metadata"]["labels"].items()
    )
    ingress = policy["spec"]["ingress"]
    assert [r["ports"][0]["port"] for r in ingress] == [8080, 9108, 9109]
    assert "from" not in ingress[0]  # the stand-in app takes its callers from anywhere
    assert ingress[2]["from"] == OPS
    sidecar = ragpulse_container(template["spec"])
    assert "RAGPULSE_SERVER__ADMIN__TOKEN" in {e["name"] for e in sidecar["env"]}


def test_chart_lints_clean_with_admin_and_network_policy() -> None:
    for values in (
        _admin(9109, networkPolicy={"enabled": True, "admin": {"from": OPS}}),
        {"mode": "sidecar", "networkPolicy": {"enabled": True}},
    ):
        report = helm.lint(CHART, values, strict=True)
        assert report["errors"] == [], values
        assert [m for m in report["messages"] if m["severity"] >= 2] == [], values
