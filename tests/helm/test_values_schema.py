"""The chart's `config` schema is the settings model's: generated, current, and as strict."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
from pydantic import BaseModel

from stream.contract.sections import Component
from stream.runtime.settings import Settings, load_settings
from stream.runtime.settings_schema import settings_json_schema
from tests.helm.manifests import render

SCRIPT = Path(__file__).resolve().parents[2] / "helm" / "schema.py"


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("helm_schema", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sections(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every nested settings section, as a path of field names."""
    out: list[tuple[str, ...]] = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel) and ann is not Component:
            out.append((*prefix, name))
            out.extend(_sections(ann, (*prefix, name)))
    return out


def _nest(path: tuple[str, ...], leaf: dict[str, Any]) -> dict[str, Any]:
    for name in reversed(path):
        leaf = {name: leaf}
    return leaf


def test_the_shipped_schema_is_the_generated_one() -> None:
    assert _script().main(["--check"]) == 0, "stale: run python helm/schema.py"


def test_the_schema_has_no_refs_defaults_or_machine_paths() -> None:
    text = json.dumps(settings_json_schema())
    assert "$ref" not in text and '"default"' not in text and '"title"' not in text


def test_every_settings_section_is_in_the_schema() -> None:
    schema = settings_json_schema()
    sections = _sections(Settings)
    assert len(sections) >= 20  # kafka, server.admin, alerts.*, sampling.budget, ...
    for path in sections:
        node = schema
        for name in path:
            node = node["properties"][name]
        assert node["additionalProperties"] is False, path


@pytest.mark.parametrize(
    ("config", "message"),
    [
        # the tester's two: a misspelt key and an out-of-range rate
        (
            {"kafka": {"bootstrap_server": "kafka:9092"}},
            "additional properties 'bootstrap_server' not allowed",
        ),
        ({"sampling": {"rate": -1}}, "at '/config/sampling/rate'"),
        ({"samplng": {"rate": 0.5}}, "additional properties 'samplng' not allowed"),
        ({"log_level": "LOUD"}, "at '/config/log_level'"),
        ({"judge": {"headers_from_env": {"api-key": "not a name"}}}, "headers_from_env"),
        ({"server": {"port": 0}}, "at '/config/server/port'"),
    ],
)
def test_helm_refuses_what_run_refuses(
    chart: helm.Chart, config: dict[str, Any], message: str
) -> None:
    with pytest.raises(helm.HelmValuesError) as info:
        render(chart, {"config": config})
    assert message in str(info.value)


def test_a_typo_in_any_section_fails_at_install(chart: helm.Chart) -> None:
    for path in _sections(Settings):
        config = _nest(path, {"no_such_setting": 1})
        with pytest.raises(helm.HelmValuesError) as info:
            render(chart, {"config": config})
        assert "'no_such_setting' not allowed" in str(info.value), path
        with pytest.raises(Exception, match="no_such_setting"):
            Settings.model_validate(config)  # and the process says the same


def test_a_full_configuration_passes_both(chart: helm.Chart) -> None:
    # every setting at its default, as `config --print` shows it, is valid chart config
    settings = load_settings()
    data = settings.model_dump(mode="json", exclude={"kafka": {"sasl_password"}})
    data["server"]["admin"].pop("token")
    data["judge"].pop("api_key")
    data["server"]["port"] = 9108
    render(chart, {"config": data})
