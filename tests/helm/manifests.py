"""Render the charts with the real Helm engine (helm-python-sdk) and check the manifests.

Kubernetes objects are validated against the OpenAPI schemas that `kubernetes-validate`
ships (strict: unknown fields fail); the prometheus-operator objects against the pydantic
models that `cloudcoil.models.prometheus_operator` generates from the operator's CRDs
(a field the model drops on the round trip is a field the CRD does not know).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "helm" / "ragpulse"
EXAMPLE = REPO / "helm" / "examples" / "rag-service"
RELEASE, NAMESPACE = "rp", "observability"

# The chart's minimum (Chart.yaml kubeVersion), the first with native sidecars, the newest.
K8S_VERSIONS = ("1.25.0", "1.29.0", "1.37.0")
NATIVE_SIDECAR_K8S_VERSIONS = ("1.29.0", "1.37.0")
OPERATOR_KINDS = {"ServiceMonitor", "PodMonitor", "PrometheusRule"}

Doc = dict[str, Any]


def render(
    chart: helm.Chart, values: dict[str, Any] | None = None, name: str = RELEASE
) -> list[Doc]:
    """All objects a `helm install` of `chart` with `values` would create, in file order."""
    out = chart.render(values or {}, name=name, namespace=NAMESPACE, is_install=True)
    docs: list[Doc] = []
    for path in sorted(out):
        if path.endswith("NOTES.txt"):
            continue
        docs.extend(d for d in yaml.safe_load_all(out[path]) if d)
    return docs


def notes(chart: helm.Chart, values: dict[str, Any] | None = None) -> str:
    out = chart.render(values or {}, name=RELEASE, namespace=NAMESPACE, is_install=True)
    return next(text for path, text in out.items() if path.endswith("NOTES.txt"))


def kinds(docs: list[Doc]) -> list[str]:
    return sorted(d["kind"] for d in docs)


def one(docs: list[Doc], kind: str) -> Doc:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, got {len(found)}"
    return found[0]


def ragpulse_container(pod_spec: Doc) -> Doc:
    """The ragpulse container, wherever it sits (containers or native-sidecar initContainers)."""
    found = [
        c
        for c in pod_spec.get("containers", []) + pod_spec.get("initContainers", [])
        if c["name"] == "ragpulse"
    ]
    assert len(found) == 1, f"expected one ragpulse container, got {len(found)}"
    return found[0]


def validate_kubernetes(docs: list[Doc], versions: tuple[str, ...] = K8S_VERSIONS) -> int:
    """Validate every non-operator object against each Kubernetes version's schema."""
    checked = 0
    for doc in docs:
        if doc["kind"] in OPERATOR_KINDS:
            continue
        for version in versions:
            kubernetes_validate.validate(doc, version, strict=True)
        checked += 1
    return checked


def _operator_model(kind: str) -> Any:
    from cloudcoil.models.prometheus_operator import v1  # ~3 s import: only when needed

    return getattr(v1, kind)


def validate_operator(doc: Doc) -> None:
    """Validate a ServiceMonitor / PodMonitor / PrometheusRule against the CRD's model."""
    model = _operator_model(doc["kind"]).model_validate(doc)
    again = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert json.loads(json.dumps(doc)) == again, f"{doc['kind']}: fields unknown to the CRD"


def validate_all(docs: list[Doc], versions: tuple[str, ...] = K8S_VERSIONS) -> None:
    assert validate_kubernetes(docs, versions) > 0
    for doc in docs:
        if doc["kind"] in OPERATOR_KINDS:
            validate_operator(doc)


@contextmanager
def example_chart(tmp: Path) -> Iterator[helm.Chart]:
    """The example RAG-service chart with ragpulse resolved as a subchart, as a user gets it
    from `helm dependency update` (the file:// dependency needs no network)."""
    root = tmp / "helm"
    shutil.copytree(CHART, root / "ragpulse")
    shutil.copytree(
        EXAMPLE,
        root / "examples" / "rag-service",
        ignore=shutil.ignore_patterns("charts", "Chart.lock"),
    )
    chart_dir = root / "examples" / "rag-service"
    helm.dependency_update(chart_dir, skip_refresh=True)
    with helm.Chart.load(chart_dir) as chart:
        yield chart
