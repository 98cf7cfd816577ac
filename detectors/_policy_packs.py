"""The policy detector's pack files (:mod:`detectors.policy`).

A pack file's schema (:class:`PolicyPack`, :class:`PackPattern`: pydantic models, every
regex checked by RE2), the splicing of its ``defs`` into patterns and negations
(:func:`_splice`, :func:`_expand_defs`), and :func:`load_pack`, which reads a YAML file
and raises :class:`PackError` naming the file and the field (:func:`_describe`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from detectors.regex import compile_pattern
from stream.contract.errors import RagpulseError

__all__ = [
    "PackError",
    "PackPattern",
    "PolicyPack",
    "Re2Pattern",
    "_describe",
    "_expand_defs",
    "_re2",
    "_splice",
    "load_pack",
]

_NAME = r"^[a-z][a-z0-9_]{0,63}$"


class PackError(RagpulseError, ValueError):
    """A policy pack file that cannot be loaded; the message names the file and field."""


def _re2(value: str) -> str:
    compile_pattern(value)  # ValueError naming the pattern when RE2 rejects it
    return value


Re2Pattern = Annotated[str, Field(min_length=1), AfterValidator(_re2)]


class PackPattern(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_NAME)
    regex: Re2Pattern
    description: str = ""


def _splice(where: str, value: Any, defs: dict[str, str]) -> Any:
    """``value`` with every ``<<name>>`` replaced by ``(?:defs[name])``."""
    if not isinstance(value, str):
        return value
    out: list[str] = []
    rest = value
    while (i := rest.find("<<")) >= 0 and (j := rest.find(">>", i + 2)) >= 0:
        name = rest[i + 2 : j]
        if name not in defs:
            raise ValueError(f"{where}: unknown def <<{name}>> (defined: {sorted(defs)})")
        out += [rest[:i], f"(?:{defs[name]})"]
        rest = rest[j + 2 :]
    return "".join(out) + rest


def _expand_defs(data: dict[str, Any]) -> dict[str, Any]:
    """Splice ``defs`` into patterns and negations; a def may use the defs above it."""
    raw = data.get("defs") or {}
    if not isinstance(raw, dict):
        raise ValueError("defs: must be a mapping of name -> RE2 fragment")
    defs: dict[str, str] = {}
    for name, frag in raw.items():
        if not isinstance(frag, str):
            raise ValueError(f"defs.{name}: must be a string")
        defs[str(name)] = frag = _splice(f"defs.{name}", frag, defs)
        try:
            compile_pattern(frag)
        except ValueError as exc:
            raise ValueError(f"defs.{name}: {exc}") from None
    patterns = data.get("patterns")
    if isinstance(patterns, list):
        patterns = [
            {**p, "regex": _splice(f"patterns.{i}.regex (id {p.get('id')!r})", p["regex"], defs)}
            if isinstance(p, dict) and "regex" in p
            else p
            for i, p in enumerate(patterns)
        ]
    out = {**data, "defs": defs, "patterns": patterns}
    for key in ("negations", "negations_after"):
        if isinstance(data.get(key), list):
            out[key] = [_splice(f"{key}.{i}", n, defs) for i, n in enumerate(data[key])]
    return out


class PolicyPack(BaseModel):
    """One pack file. `name` is the Prometheus `category` label value of its hits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_NAME)
    description: str = Field(min_length=1)
    failure_mode: str = Field(pattern=_NAME)
    defs: dict[str, str] = Field(default_factory=dict)  # already spliced into patterns
    patterns: list[PackPattern] = Field(min_length=1)
    negations: list[Re2Pattern] = Field(default_factory=list)
    negations_after: list[Re2Pattern] = Field(default_factory=list)
    applies_to: Literal["response", "query", "both"] = "response"

    @model_validator(mode="before")
    @classmethod
    def _defaults_and_defs(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if data.get("failure_mode") is None and "name" in data:
            data = {**data, "failure_mode": data["name"]}
        return _expand_defs(data)

    @model_validator(mode="after")
    def _unique_ids(self) -> PolicyPack:
        seen: set[str] = set()
        for i, pattern in enumerate(self.patterns):
            if pattern.id in seen:
                raise ValueError(f"patterns.{i}.id: duplicate pattern id {pattern.id!r}")
            seen.add(pattern.id)
        return self


def _describe(data: dict[str, Any], exc: ValidationError) -> str:
    parts: list[str] = []
    for err in exc.errors(include_url=False, include_input=False)[:5]:
        loc = [str(p) for p in err["loc"]]
        if not loc:  # a pack-level check: the message names the field itself
            parts.append(err["msg"].removeprefix("Value error, "))
            continue
        where = ".".join(loc)
        patterns = data.get("patterns")
        if len(loc) >= 2 and loc[0] == "patterns" and loc[1].isdigit():
            i = int(loc[1])
            if isinstance(patterns, list) and i < len(patterns) and isinstance(patterns[i], dict):
                where += f" (id {patterns[i].get('id')!r})"
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def load_pack(path: str | Path) -> PolicyPack:
    """Read and validate one pack file; raises :class:`PackError` naming file and field."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PackError(f"policy pack {path}: cannot read: {exc}") from None
    except yaml.YAMLError as exc:
        raise PackError(f"policy pack {path}: invalid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise PackError(f"policy pack {path}: top level must be a mapping with name, patterns…")
    try:
        return PolicyPack.model_validate(data)
    except ValidationError as exc:
        raise PackError(f"policy pack {path}: {_describe(data, exc)}") from None
