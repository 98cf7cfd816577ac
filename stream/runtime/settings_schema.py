"""The settings model as one self-contained JSON Schema: for YAML editors and the Helm chart.

`ragpulse config --schema` prints it; `python helm/schema.py` writes it into the chart's
values.schema.json as `config`, so `helm install` refuses what `ragpulse run` would refuse
by name and type (a misspelt key, a value out of range) before a pod starts. What only a
validator checks (cross-field rules, registered detector names) still fails at start.

The schema is deterministic: no defaults (they depend on the machine, e.g. the temp dir,
and docs/configuration.md lists them), no titles, no `$ref` (every definition inlined, so
any JSON Schema draft Helm has shipped reads it) and no non-standard formats.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["settings_json_schema"]

_DROP = frozenset({"default", "title"})
_NON_STANDARD_FORMATS = frozenset({"path", "password"})
_DESCRIPTION = "ragpulse settings rendered verbatim as config.yaml (docs/configuration.md)"


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in seen:
            raise ValueError(f"recursive settings model {name} cannot be inlined")
        target = _inline(defs[name], defs, (*seen, name))
        rest = {k: _inline(v, defs, seen) for k, v in node.items() if k not in _DROP | {"$ref"}}
        return {**target, **rest}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP or key in ("discriminator", "$defs"):
            continue
        if key == "format" and value in _NON_STANDARD_FORMATS:
            continue
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            # keys here are setting names, not keywords: keep every one
            out[key] = {name: _inline(sub, defs, seen) for name, sub in value.items()}
        else:
            out[key] = _inline(value, defs, seen)
    return out


def settings_json_schema(model: type[BaseModel] | None = None) -> dict[str, Any]:
    """The validation-mode JSON Schema of `model` (default: Settings), every `$ref` inlined."""
    if model is None:
        from stream.runtime.settings import Settings

        model = Settings
    raw = model.model_json_schema(mode="validation")
    defs = raw.get("$defs", {})
    schema = _inline(raw, defs)
    schema["description"] = _DESCRIPTION
    schema["additionalProperties"] = False
    return schema
