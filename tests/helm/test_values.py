"""values.schema.json, lint, and secrets only by reference to existing Secrets."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from monitors.metrics import create_metric
from stream.runtime.settings import Settings, load_settings
from tests.helm.manifests import CHART, notes, one, ragpulse_container, render, validate_all

FAKE_SECRET = "s3cr3t-Do-Not-Render-7f1c"

SECRETS = {
    "secrets": {
        "existingSecret": "ragpulse-credentials",
        "kafkaSaslPasswordKey": "kafka-password",
        "judgeApiKeyKey": "judge-api-key",
    },
    "config": {
        "kafka": {
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_username": "ragpulse",
        }
    },
}


def test_chart_lints_clean_in_strict_mode() -> None:
    for values in ({}, {"mode": "sidecar"}, SECRETS, {"autoscaling": {"enabled": True}}):
        report = helm.lint(CHART, values, strict=True)
        assert report["errors"] == [], values
        assert [m for m in report["messages"] if m["severity"] >= 2] == [], values


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"replicaCount": "two"}, "at '/replicaCount': got string, want integer"),
        ({"mode": "sidcar"}, "at '/mode': value must be one of 'standalone', 'sidecar'"),
        (
            {"config": {"server": {"port": "http"}}},
            "at '/config/server/port': got string, want integer",
        ),
        ({"sidecar": {"nativ": True}}, "additional properties 'nativ' not allowed"),
        ({"probes": {"liveness": {"periodSeconds": 0}}}, "at '/probes/liveness/periodSeconds'"),
    ],
)
def test_schema_rejects_bad_values_with_a_readable_error(
    chart: helm.Chart, values: dict[str, Any], message: str
) -> None:
    with pytest.raises(helm.HelmValuesError) as info:
        render(chart, values)
    assert message in str(info.value)
    assert "ragpulse" in str(info.value)


def test_lint_reports_a_schema_violation() -> None:
    report = helm.lint(CHART, {"replicaCount": "two"})
    assert any("got string, want integer" in e for e in report["errors"])


def test_secrets_are_referenced_never_inlined(chart: helm.Chart) -> None:
    docs = render(chart, SECRETS)
    validate_all(docs)
    assert "Secret" not in {d["kind"] for d in docs}
    env = {
        e["name"]: e
        for e in ragpulse_container(one(docs, "Deployment")["spec"]["template"]["spec"])["env"]
    }
    assert env["RAGPULSE_KAFKA__SASL_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "ragpulse-credentials",
        "key": "kafka-password",
    }
    assert env["RAGPULSE_JUDGE__API_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "ragpulse-credentials",
        "key": "judge-api-key",
    }
    assert "value" not in env["RAGPULSE_KAFKA__SASL_PASSWORD"]


def test_no_secret_env_without_keys(chart: helm.Chart) -> None:
    env = ragpulse_container(one(render(chart), "Deployment")["spec"]["template"]["spec"])["env"]
    assert not [e for e in env if "secretKeyRef" in e.get("valueFrom", {})]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"config": {"kafka": {"sasl_password": FAKE_SECRET}}},
            "config.kafka.sasl_password must not be set",
        ),
        ({"config": {"judge": {"api_key": FAKE_SECRET}}}, "config.judge.api_key must not be set"),
        (
            {"mode": "sidecar", "config": {"kafka": {"sasl_password": FAKE_SECRET}}},
            "secrets.existingSecret",
        ),
    ],
)
def test_inline_secret_values_are_refused_without_echoing_them(
    chart: helm.Chart, values: dict[str, Any], message: str
) -> None:
    with pytest.raises(helm.HelmError) as info:
        render(chart, values)
    assert message in str(info.value)
    assert FAKE_SECRET not in str(info.value)


def test_secret_keys_need_the_secret_name(chart: helm.Chart) -> None:
    with pytest.raises(helm.HelmError, match=r"set secrets\.existingSecret"):
        render(chart, {"secrets": {"kafkaSaslPasswordKey": "password"}})


def _containers(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pods = [d["spec"]["template"]["spec"] for d in docs if d["kind"] == "Deployment"]
    return [c for pod in pods for c in pod.get("containers", []) + pod.get("initContainers", [])]


def test_secret_env_comes_only_from_secret_refs_in_every_mode(
    chart: helm.Chart, example: helm.Chart
) -> None:
    monitoring = {k: {"enabled": True} for k in ("podMonitor", "prometheusRule", "dashboard")}
    renders = [
        render(chart, {**SECRETS, **mode, "monitoring": monitoring})
        for mode in ({}, {"mode": "sidecar"}, {"autoscaling": {"enabled": True}})
    ]
    renders.append(render(example, {"ragpulse": SECRETS}))
    secret_like = ("PASSWORD", "API_KEY", "SECRET", "TOKEN")
    checked = 0
    for docs in renders:
        for container in _containers(docs):
            for env in container.get("env", []):
                if any(word in env["name"] for word in secret_like):
                    assert "value" not in env and "secretKeyRef" in env["valueFrom"], env
                    checked += 1
    assert checked == 6  # 2 variables x (standalone, autoscaled standalone, example sidecar)


def test_example_refuses_an_inline_secret_too(example: helm.Chart) -> None:
    values = {"ragpulse": {"config": {"kafka": {"sasl_password": FAKE_SECRET}}}}
    with pytest.raises(helm.HelmError) as info:
        render(example, values)
    assert "config.kafka.sasl_password must not be set" in str(info.value)
    assert FAKE_SECRET not in str(info.value)


def test_notes_warn_when_sasl_has_no_password(chart: helm.Chart) -> None:
    assert "WARNING" in notes(chart, {"config": SECRETS["config"]})
    assert "WARNING" not in notes(chart, SECRETS)


def _config(chart: helm.Chart, values: dict[str, Any] | None = None) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(
        one(render(chart, values), "ConfigMap")["data"]["config.yaml"]
    )
    return config


def test_compound_weights_and_reference_sampling_mirror_the_settings(
    chart: helm.Chart, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in [k for k in os.environ if k.startswith("RAGPULSE_")]:
        monkeypatch.delenv(key)
    default = _config(chart)
    assert default["judge"] == {"compound": {"weights": {}}}
    assert default["sampling"] == {"references": True}
    assert Settings().sampling.references and Settings().judge.compound.weights == {}
    weights = {"faithfulness": 0.45, "answer_correctness": 0.55}
    guidelines = ["Address the user formally.", "Do not promise delivery dates."]
    tonality = {"type": "tonality", "guidelines": guidelines}
    values = {"config": {"judge": {"compound": {"weights": weights},
                                   "metrics": ["rag_triad", tonality]},
                         "sampling": {"references": False}}}  # fmt: skip
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(_config(chart, values)))
    settings = load_settings(path)
    assert settings.judge.compound.weights == weights
    assert settings.judge.metrics[1].options == {"guidelines": guidelines}
    assert settings.sampling.references is False


def test_the_commented_tonality_example_is_valid_settings() -> None:
    lines = (CHART / "values.yaml").read_text().splitlines()
    start = lines.index("    # metrics:")
    block = []
    for line in lines[start:]:
        if not line.startswith("    # "):
            break
        block.append(line.replace("# ", "", 1)[4:])
    metrics = yaml.safe_load("\n".join(block))["metrics"]
    assert metrics[1]["guidelines"]
    judge = Settings.model_validate({"judge": {"metrics": metrics}}).judge
    spec = judge.metrics[1]
    tonality = create_metric(spec.type, **spec.options)
    assert tonality.guidelines == metrics[1]["guidelines"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"judge": {"compound": {"weights": {"faithfulness": -1}}}}, "compound/weights"),
        ({"judge": {"compound": {"weights": {"faithfulness": "high"}}}}, "want number"),
        ({"sampling": {"references": "yes"}}, "at '/config/sampling/references'"),
        ({"slos": [{"name": "x", "sli": "latency", "objective": 0.9}]}, "/config/slos/0/sli"),
        ({"slos": [{"name": "x", "sli": "valid_events", "objective": 99}]}, "/config/slos/0"),
    ],
)
def test_schema_checks_weights_and_references(
    chart: helm.Chart, values: dict[str, Any], message: str
) -> None:
    with pytest.raises(helm.HelmValuesError) as info:
        render(chart, {"config": values})
    assert message in str(info.value)


def test_a_canary_set_from_values_is_mounted_and_used(chart: helm.Chart, tmp_path: Path) -> None:
    from monitors.judges.canaries import load_canaries
    from stream.runtime.canary_runner import check_canaries

    jsonl = (CHART.parents[1] / "monitors" / "judges" / "canaries_default.jsonl").read_text()
    own = jsonl.splitlines()[0] + "\n"
    cm = one(render(chart, {"judgeCanaries": own}), "ConfigMap")
    assert cm["data"]["canaries.jsonl"] == own
    config = yaml.safe_load(cm["data"]["config.yaml"])
    assert config["judge"]["health"]["canaries"]["file"] == "/etc/ragpulse/canaries.jsonl"
    # as the pod sees it (the ConfigMap's keys are files in /etc/ragpulse)
    (tmp_path / "canaries.jsonl").write_text(cm["data"]["canaries.jsonl"])
    config["judge"]["health"]["canaries"]["file"] = str(tmp_path / "canaries.jsonl")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    settings = load_settings(tmp_path / "config.yaml")
    check_canaries(settings.judge.health.canaries)
    assert len(load_canaries(settings.judge.health.canaries.file).turns) == 1
    # an explicit file wins; no canaries: nothing rendered
    mine = {"judgeCanaries": own, "config": {"judge": {"health": {"canaries": {"file": "/x"}}}}}
    config = yaml.safe_load(one(render(chart, mine), "ConfigMap")["data"]["config.yaml"])
    assert config["judge"]["health"]["canaries"]["file"] == "/x"
    plain = one(render(chart), "ConfigMap")
    assert "canaries.jsonl" not in plain["data"] and "health" not in yaml.safe_load(
        plain["data"]["config.yaml"]
    ).get("judge", {})
