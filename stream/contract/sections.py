"""The two shapes every settings section is made of.

- :class:`Section`: a block of named settings; an unknown key is an error.
- :class:`Component`: a component picked by name from a registry, with its options beside
  the name, ``{type: name, ...options}``; a bare ``name`` is short for ``{type: name}``.
  Detectors (``detectors.enabled``), the judge (``judge.backend``), judge metrics
  (``judge.metrics``) and drift detectors (``drift.rate_detectors`` ...) all take it.

:func:`deprecated_key` is the one way an old key is still read for a release: it warns
(``FutureWarning``, shown by default) naming the key and what to write instead.
"""

from __future__ import annotations

import warnings
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

__all__ = [
    "COMPONENT_SCHEMA",
    "Component",
    "ComponentDict",
    "ComponentSpec",
    "Section",
    "deprecated_key",
]


class Section(BaseModel):
    """A settings block: unknown keys are refused (the error names them)."""

    model_config = ConfigDict(extra="forbid")


class Component(BaseModel):
    """``{type: name, ...options}``: a registered component and its keyword options."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(min_length=1, max_length=128, description="registered name")

    @property
    def options(self) -> dict[str, Any]:
        """The keyword options (every key but `type`)."""
        return dict(self.model_extra or {})

    def with_type(self, name: str) -> Component:
        """The same options under another registered name."""
        return Component(type=name, **self.options)

    def with_options(self, **options: Any) -> Component:
        """These options over the present ones."""
        return Component(type=self.type, **{**self.options, **options})


def _coerce(value: Any) -> Any:
    return {"type": value} if isinstance(value, str) else value


#: the JSON schema of one component (Helm values): a name, or {type: name, ...options}
COMPONENT_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "minLength": 1, "maxLength": 128},
        {
            "type": "object",
            "properties": {"type": {"type": "string", "minLength": 1, "maxLength": 128}},
            "required": ["type"],
            "additionalProperties": True,
        },
    ]
}

#: a component as a settings field accepts it: `name` or `{type: name, ...options}`
ComponentSpec = Annotated[Component, BeforeValidator(_coerce), WithJsonSchema(COMPONENT_SCHEMA)]


def _coerce_dict(value: Any) -> Any:
    value = _coerce(value)
    if isinstance(value, dict) and not isinstance(value.get("type"), str):
        raise ValueError("a component is a name or {type: name, ...options}")
    return value


#: the same shape kept as a plain mapping, for specs that are stored as data (drift
#: detectors: the spec is part of a stream's snapshot)
ComponentDict = Annotated[
    dict[str, Any], BeforeValidator(_coerce_dict), WithJsonSchema(COMPONENT_SCHEMA)
]


def deprecated_key(old: str, new: str) -> None:
    """Warn once per call site that `old` is read as `new` for one more release."""
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release: write {new}",
        FutureWarning,
        stacklevel=2,
    )
