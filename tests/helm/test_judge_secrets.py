"""Finding C in the chart: judge secrets come only from Secrets, never from config values.

secrets.judgeHeaders / secrets.judgeQuery map keys of existing Secrets to the judge's
secret headers and query parameters (judge.headers_from_env / query_from_env); a
credential-looking key in config.judge.options fails the render without echoing it.
"""

from __future__ import annotations

import json
from typing import Any

import helm_python as helm
import pytest

from monitors.judges.settings import looks_like_credential
from tests.helm.manifests import (
    NATIVE_SIDECAR_K8S_VERSIONS,
    one,
    ragpulse_container,
    render,
    validate_all,
)

PLANTED = "AZURE-SECRET-KEY-123-do-not-render"

HEADERS = {
    "secrets": {
        "existingSecret": "ragpulse-credentials",
        "judgeHeaders": [
            {"header": "api-key", "key": "azure-openai-key"},
            {"header": "X-Gateway-Token", "key": "gw", "secretName": "gateway"},
        ],
        "judgeQuery": [{"param": "subscription-key", "key": "apim-key"}],
    },
    "config": {"judge": {"backend": {"type": "openai", "base_url": "https://x/v1", "model": "m"}}},
}


def _env(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    return {e["name"]: e for e in ragpulse_container(pod)["env"]}


def _containers(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pods = [d["spec"]["template"]["spec"] for d in docs if d["kind"] == "Deployment"]
    found = [c for p in pods for c in p.get("containers", []) + p.get("initContainers", [])]
    return [c for c in found if c["name"] == "ragpulse"]


@pytest.mark.parametrize("where", ["standalone", "example sidecar"])
def test_secret_headers_and_query_come_from_secret_refs(
    chart: helm.Chart, example: helm.Chart, where: str
) -> None:
    if where == "standalone":
        docs = render(chart, HEADERS)
        validate_all(docs)
    else:
        docs = render(example, {"ragpulse": HEADERS})
        validate_all(docs, NATIVE_SIDECAR_K8S_VERSIONS)
    (container,) = _containers(docs)
    env = {e["name"]: e for e in container["env"]}
    assert env["RAGPULSE_JUDGE_HEADER_0"]["valueFrom"]["secretKeyRef"] == {
        "name": "ragpulse-credentials",
        "key": "azure-openai-key",
    }
    assert env["RAGPULSE_JUDGE_HEADER_1"]["valueFrom"]["secretKeyRef"] == {
        "name": "gateway",
        "key": "gw",
    }
    assert env["RAGPULSE_JUDGE_QUERY_0"]["valueFrom"]["secretKeyRef"] == {
        "name": "ragpulse-credentials",
        "key": "apim-key",
    }
    assert json.loads(env["RAGPULSE_JUDGE__HEADERS_FROM_ENV"]["value"]) == {
        "api-key": "RAGPULSE_JUDGE_HEADER_0",
        "X-Gateway-Token": "RAGPULSE_JUDGE_HEADER_1",
    }
    assert json.loads(env["RAGPULSE_JUDGE__QUERY_FROM_ENV"]["value"]) == {
        "subscription-key": "RAGPULSE_JUDGE_QUERY_0"
    }
    for name in ("RAGPULSE_JUDGE_HEADER_0", "RAGPULSE_JUDGE_HEADER_1", "RAGPULSE_JUDGE_QUERY_0"):
        assert "value" not in env[name]


def test_no_judge_secret_env_by_default(chart: helm.Chart) -> None:
    env = _env(render(chart))
    assert not [n for n in env if n.startswith(("RAGPULSE_JUDGE_", "RAGPULSE_JUDGE__"))]


def test_the_rendered_variables_are_what_ragpulse_reads(
    chart: helm.Chart, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The variables the chart renders, with the Secret values filled in, load into the
    judge's secret headers and query parameters."""
    from stream.runtime.settings import load_settings

    env = _env(render(chart, HEADERS))
    monkeypatch.setenv("RAGPULSE_JUDGE_HEADER_0", "az-value")
    monkeypatch.setenv("RAGPULSE_JUDGE_HEADER_1", "gw-value")
    monkeypatch.setenv("RAGPULSE_JUDGE_QUERY_0", "apim-value")
    for name in ("RAGPULSE_JUDGE__HEADERS_FROM_ENV", "RAGPULSE_JUDGE__QUERY_FROM_ENV"):
        monkeypatch.setenv(name, env[name]["value"])
    judge = load_settings(judge={"backend": "openai"}).judge
    headers = {k: v.get_secret_value() for k, v in judge.secret_headers().items()}
    assert headers == {"api-key": "az-value", "X-Gateway-Token": "gw-value"}
    assert judge.secret_query()["subscription-key"].get_secret_value() == "apim-value"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"extra_headers": {"api-key": PLANTED}}, "config.judge.options.extra_headers.api-key"),
        ({"api_key": PLANTED}, "config.judge.options.api_key"),
        ({"extra_headers": {"Authorization": PLANTED}}, "extra_headers.Authorization"),
        ({"extra_headers": {"Ocp-Apim-Subscription-Key": PLANTED}}, "Ocp-Apim-Subscription-Key"),
        ({"extra_query": {"subscription-key": PLANTED}}, "extra_query.subscription-key"),
        ({"extra_headers": {"X-API-KEY": PLANTED}}, "extra_headers.X-API-KEY"),
        ({"nested": {"deeper": {"client_secret": PLANTED}}}, "nested.deeper.client_secret"),
        ({"extra_headers": {"X-Session-Token": PLANTED}}, "X-Session-Token"),
        ({"extra_headers": {"X-Custom": f"Bearer {PLANTED}"}}, "extra_headers.X-Custom"),
        ({"password": PLANTED}, "config.judge.options.password"),
    ],
)
@pytest.mark.parametrize("shape", ["backend", "deprecated options"])
def test_credential_looking_options_fail_the_render_without_echoing_them(
    chart: helm.Chart, options: dict[str, Any], field: str, shape: str
) -> None:
    judge: dict[str, Any] = {"type": "openai", "options": {"model": "m", **options}}
    if shape == "backend":
        judge = {"backend": {"type": "openai", "model": "m", **options}}
        field = field.replace("config.judge.options", "config.judge.backend")
    values = {"config": {"judge": judge}}
    with pytest.raises(helm.HelmError) as info:
        render(chart, values)
    assert field in str(info.value)
    assert "secrets.judgeHeaders" in str(info.value)
    assert PLANTED not in str(info.value)


def test_ordinary_options_still_render(chart: helm.Chart) -> None:
    options = {
        "model": "m",
        "max_tokens": 512,
        "extra_headers": {"OpenAI-Organization": "org-1", "X-Tenant": "t"},
        "extra_query": {"api-version": "2024-10-21"},
        "prices": {"m": {"prompt_per_1k": 0.1}},
    }
    docs = render(chart, {"config": {"judge": {"backend": {"type": "openai", **options}}}})
    assert "max_tokens: 512" in one(docs, "ConfigMap")["data"]["config.yaml"]


def test_the_chart_and_ragpulse_agree_on_credential_names(chart: helm.Chart) -> None:
    names = [
        "api_key", "API-Key", "apikey", "x-api-key", "Ocp-Apim-Subscription-Key",
        "subscription-key", "Authorization", "proxy-authorization", "cookie", "password",
        "db_passwd", "client_secret", "SecretValue", "token", "X-Auth-Token", "access_token",
        "credentials", "auth", "x-auth", "key",
        "max_tokens", "model", "base_url", "api-version", "OpenAI-Organization", "timeout_s",
        "X-Tenant", "prices", "max_completion_tokens", "keyword", "monkey",
    ]  # fmt: skip
    for name in names:
        options = {"model": "m", "extra": {name: "v"}}
        try:
            render(chart, {"config": {"judge": {"options": options}}})
            refused = False
        except helm.HelmError:
            refused = True
        assert refused == looks_like_credential(name), name


def test_judge_secret_keys_need_a_secret_name(chart: helm.Chart) -> None:
    with pytest.raises(helm.HelmError, match=r"secrets\.judgeHeaders\[0\].*secretName"):
        render(chart, {"secrets": {"judgeHeaders": [{"header": "api-key", "key": "k"}]}})
    with pytest.raises(helm.HelmValuesError, match="judgeQuery"):
        render(chart, {"secrets": {"existingSecret": "s", "judgeQuery": [{"key": "k"}]}})
    with pytest.raises(helm.HelmValuesError, match="header"):
        render(
            chart,
            {"secrets": {"existingSecret": "s", "judgeHeaders": [{"header": "a b", "key": "k"}]}},
        )
