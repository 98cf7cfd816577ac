"""Where settings come from, and what a wrong one says (docs/configuration.md).

* :class:`EnvSource`: `RAGPULSE_*` variables as pydantic-settings reads them, plus the
  comma-separated form for a list of strings (``RAGPULSE_DETECTORS__ENABLED=refusal,pii``).
* :func:`unknown_env`: a `RAGPULSE_*` variable that names no setting (a misspelled
  section such as ``RAGPULSE_SAMPLNG__RATE``) is an error, never silently ignored.
* :func:`explain`: one line per validation error, naming the field, the source it came
  from (the variable, or the YAML file) and the closest valid name when the name is
  unknown.

String operations and :mod:`difflib` only: names come from a config file or the
environment (untrusted input).
"""

from __future__ import annotations

import difflib
import json
import types
from collections.abc import Mapping
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import EnvSettingsSource

from stream.contract.sections import ComponentSpec

__all__ = ["NOT_SETTINGS", "PREFIX", "EnvSource", "bad_json_env", "explain", "unknown_env"]

PREFIX = "RAGPULSE_"
#: `RAGPULSE_*` variables that are not settings
NOT_SETTINGS = frozenset({"RAGPULSE_CONFIG", "RAGPULSE_BROKER_LOG"})


def _str_list(annotation: Any) -> bool:
    """Exactly list[str] or a list of components (`a,b` is `[{type: a}, {type: b}]`); a
    union such as `"all" | list[str]` takes its text as it is."""
    return get_origin(annotation) is list and get_args(annotation) in ((str,), (ComponentSpec,))


class EnvSource(EnvSettingsSource):
    """pydantic-settings' environment source; a list of strings may be `a,b,c`."""

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        try:
            return super().decode_complex_value(field_name, field, value)
        except ValueError:
            text = value.strip() if isinstance(value, str) else ""
            if field is not None and _str_list(field.annotation) and text[:1] not in "[{":
                return [part.strip() for part in text.split(",") if part.strip()]
            raise


def _path(name: str) -> list[str]:
    return name[len(PREFIX) :].lower().split("__")


def unknown_env(model: type[BaseModel], environ: Mapping[str, str]) -> list[str]:
    """A line per `RAGPULSE_*` variable whose first part names no top-level setting and
    looks like a setting: it has a `__`, or its name is close to one (a variable that
    judge.headers_from_env points at, like RAGPULSE_AZURE_KEY, is neither)."""
    fields = list(model.model_fields)
    named = _named_by_judge(environ)
    out = []
    for name in sorted(environ):
        if not name.upper().startswith(PREFIX) or name.upper() in NOT_SETTINGS | named:
            continue
        path = _path(name)
        if path[0] in fields:
            continue
        close = difflib.get_close_matches(path[0], fields, n=1, cutoff=0.8)
        if len(path) == 1 and not close:
            continue
        if close:
            fixed = PREFIX + "__".join([close[0], *path[1:]]).upper()
            hint = f"did you mean {'.'.join([close[0], *path[1:]])} ({fixed})?"
        else:
            hint = f"settings start with one of: {', '.join(fields)}"
        out.append(f"  {name}: no setting {path[0]!r}; {hint}")
    return out


def _named_by_judge(environ: Mapping[str, str]) -> frozenset[str]:
    """Variables that RAGPULSE_JUDGE__HEADERS_FROM_ENV / __QUERY_FROM_ENV point at."""
    names: set[str] = set()
    for var in ("RAGPULSE_JUDGE__HEADERS_FROM_ENV", "RAGPULSE_JUDGE__QUERY_FROM_ENV"):
        try:
            mapping = json.loads(environ.get(var) or "{}")
        except ValueError:
            continue
        if isinstance(mapping, dict):
            names.update(str(v).upper() for v in mapping.values())
    return frozenset(names)


def bad_json_env(field: str, environ: Mapping[str, str]) -> list[str]:
    """Lines naming the variables under top-level `field` whose value is not JSON."""
    out = []
    for name in sorted(environ):
        path = _path(name) if name.upper().startswith(PREFIX) else []
        if not path or path[0] != field.lower():
            continue
        try:
            json.loads(environ[name])
        except json.JSONDecodeError as exc:
            out.append(
                f"  {name}: not valid JSON ({exc.msg} at char {exc.pos}): a list or mapping in"
                ' an environment variable is JSON, e.g. \'["refusal", "pii"]\' or '
                '\'{"service": ["a"]}\'; a list of strings may also be comma-separated'
            )
    return out


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that holds the field at `loc` (list indexes skipped)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not isinstance(current, type):
            continue
        if not issubclass(current, BaseModel) or part not in current.model_fields:
            return None
        current = current.model_fields[part].annotation
        while get_origin(current) in (list, Union, types.UnionType):
            args = [a for a in get_args(current) if a is not type(None)]
            current = args[0] if args else None
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _env_name(loc: tuple[Any, ...], environ: Mapping[str, str]) -> str | None:
    """The variable that set the value at `loc` (or a parent of it), if one did."""
    want = [str(p).lower() for p in loc]
    for name in environ:
        if name.upper().startswith(PREFIX) and name.upper() not in NOT_SETTINGS:
            path = _path(name)
            if want[: len(path)] == path:
                return name
    return None


def _holds(data: Any, loc: tuple[Any, ...]) -> bool:
    """Whether the YAML data has a value at `loc`."""
    for part in loc:
        in_list = isinstance(data, list) and isinstance(part, int) and part < len(data)
        if not (in_list or (isinstance(data, dict) and part in data)):
            return False
        data = data[part]
    return True


def explain(
    exc: ValidationError,
    model: type[BaseModel],
    environ: Mapping[str, str],
    config_file: str | None,
    config_data: Any = None,
) -> list[str]:
    """One line per error: field, source (the variable that set it, else the file that
    holds it, else the variable to set), message, and the closest valid name."""
    lines = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        if not loc:  # a rule across fields: its message names the field first
            first = err["msg"].removeprefix("Value error, ").split(" ", 1)[0]
            parts = first.split(".")
            if len(parts) > 1 and all(p.isidentifier() for p in parts):
                loc = tuple(parts)
        dotted = ".".join(str(p) for p in loc)
        env = _env_name(loc, environ)
        if env is not None:
            source = env
        elif config_file and _holds(config_data, loc):
            source = f"in {config_file}"
        else:
            source = PREFIX + "__".join(str(p).upper() for p in loc)
        hint = ""
        if err["type"] == "extra_forbidden" and loc:
            parent = _model_at(model, loc[:-1])
            names = list(parent.model_fields) if parent is not None else []
            close = difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.6)
            if close:
                hint = f"; did you mean {'.'.join([*map(str, loc[:-1]), close[0]])}?"
        lines.append(f"  {dotted} ({source}): {err['msg']}{hint}")
    return lines
