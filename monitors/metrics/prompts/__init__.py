"""Versioned judge prompts, stored as data files, and how an event is rendered into them.

A prompt file is ``<name>.<version>.yaml`` with ``name``, ``version``, ``system`` and
``user``; the templates use ``string.Template`` placeholders (``${query}``; a literal
dollar sign is ``$$``). The prompt key ``<name>/<version>`` (``faithfulness/v1``) is the
`prompt_version` of every judge call, so a scorecard says which wording scored it.
Users can ship their own versions in a directory (metric option ``prompt_dir``).

Every piece of event text is bounded (:class:`PromptLimits`): long texts are cut with a
``[... N chars truncated]`` marker and only the first chunks are shown, so a prompt never
outgrows the judge's context window. Event text is wrapped in tags that the system
prompt declares to be data, and copies of those tags inside the text are defused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from string import Template

import yaml
from pydantic import BaseModel, ConfigDict, Field

from stream.contract.events import Chunk, Event

__all__ = [
    "Prompt",
    "PromptLimits",
    "available_prompts",
    "clip",
    "event_fields",
    "format_context",
    "load_prompt",
    "numbered",
    "reference_fields",
    "tag",
]

_TAGS = (
    "query",
    "response",
    "context",
    "chunk",
    "history",
    "case",
    "sentence",
    "item",
    "expected_answer",
    "required_information",
    "helpful_information",
    "statements",
    "criteria",
    "guidelines",
)


class PromptLimits(BaseModel):
    """Size bounds of what goes into a judge prompt (metric option ``limits``)."""

    model_config = ConfigDict(extra="forbid")

    max_text_chars: int = Field(6000, ge=100, description="query / response")
    max_chunk_chars: int = Field(2000, ge=100, description="one retrieved chunk")
    max_chunks: int = Field(12, ge=1, le=32, description="chunks shown, in retrieval order")
    max_history_messages: int = Field(6, ge=0, le=64, description="last N history messages")
    max_history_chars: int = Field(1000, ge=50, description="one history message")
    max_case_chars: int = Field(2000, ge=100, description="case subject+description+metadata")
    max_items: int = Field(40, ge=1, le=200, description="listed statements / criteria")
    max_list_chars: int = Field(
        6000, ge=100, description="one list (required information, criteria...), in total"
    )


class _PromptFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    description: str = ""
    system: str
    user: str


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    system: str
    user: str

    @property
    def key(self) -> str:
        """``faithfulness/v1``: the prompt_version of the judge call."""
        return f"{self.name}/{self.version}"

    def render(self, **fields: str) -> tuple[str, str]:
        """(system, user) with the placeholders filled; a missing field raises KeyError."""
        return Template(self.system).substitute(fields), Template(self.user).substitute(fields)


def _builtin_dir() -> Path:
    return Path(str(files(__name__)))


@lru_cache(maxsize=64)
def load_prompt(name: str, version: str = "v1", directory: str | None = None) -> Prompt:
    """The prompt ``name/version`` from `directory` if given and present there, else built in."""
    filename = f"{name}.{version}.yaml"
    candidates = [Path(directory) / filename] if directory else []
    candidates.append(_builtin_dir() / filename)
    for path in candidates:
        if path.is_file():
            data = _PromptFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
            if (data.name, data.version) != (name, version):
                raise ValueError(f"{path}: declares {data.name}/{data.version}")
            return Prompt(data.name, data.version, data.system, data.user)
    raise ValueError(f"no prompt {name}/{version}; available: {available_prompts(directory)}")


def available_prompts(directory: str | None = None) -> list[str]:
    """Keys (``name/version``) of the built-in prompts and those in `directory`."""
    dirs = [_builtin_dir()] + ([Path(directory)] if directory else [])
    keys = set()
    for d in dirs:
        for path in d.glob("*.yaml") if d.is_dir() else []:
            name, _, version = path.name.removesuffix(".yaml").rpartition(".")
            keys.add(f"{name}/{version}")
    return sorted(keys)


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} chars truncated]"


def _defuse(text: str) -> str:
    """Break copies of our delimiter tags inside event text (`</context>` -> `< /context>`)."""
    if "<" not in text:
        return text
    for name in _TAGS:
        text = text.replace(f"</{name}", f"< /{name}").replace(f"<{name}", f"< {name}")
    return text


def _attr(value: str) -> str:
    return json.dumps(_defuse(value[:120]), ensure_ascii=False)


def tag(name: str, text: str, **attrs: str) -> str:
    """``<name a="v">\\ntext\\n</name>`` with the text defused (limits are the caller's)."""
    head = "".join(f" {k}={_attr(v)}" for k, v in attrs.items())
    return f"<{name}{head}>\n{_defuse(text)}\n</{name}>"


def format_context(chunks: list[Chunk], limits: PromptLimits) -> str:
    """``<context>`` holding the first `max_chunks` chunks as ``<chunk id= policy= source=>``."""
    shown = chunks[: limits.max_chunks]
    parts = []
    for chunk in shown:
        attrs = {"id": chunk.id, "policy": chunk.policy}
        if chunk.source:
            attrs["source"] = chunk.source
        parts.append(tag("chunk", clip(chunk.content, limits.max_chunk_chars), **attrs))
    if len(chunks) > len(shown):
        parts.append(f"[{len(chunks) - len(shown)} more chunks not shown]")
    body = "\n".join(parts) if parts else "(no context)"
    return f"<context>\n{body}\n</context>"


def _history(event: Event, limits: PromptLimits) -> str:
    if limits.max_history_messages == 0 or not event.history:
        return "(no earlier turns)"
    last = event.history[-limits.max_history_messages :]
    lines = [f"{m.role[:20]}: {clip(m.content, limits.max_history_chars)}" for m in last]
    if len(event.history) > len(last):
        lines.insert(0, f"[{len(event.history) - len(last)} earlier messages not shown]")
    return "\n".join(lines)


def _case(event: Event, limits: PromptLimits) -> str:
    case = event.case
    if case is None:
        return "(no case fields)"
    lines = []
    if case.subject:
        lines.append(f"subject: {case.subject}")
    if case.description:
        lines.append(f"description: {case.description}")
    if case.metadata:
        lines.append("metadata: " + json.dumps(case.metadata, ensure_ascii=False, default=str))
    return clip("\n".join(lines), limits.max_case_chars) if lines else "(no case fields)"


def event_fields(event: Event, limits: PromptLimits) -> dict[str, str]:
    """query, response, context, history, case: bounded, tagged prompt fields."""
    return {
        "query": tag("query", clip(event.query, limits.max_text_chars)),
        "response": tag("response", clip(event.response, limits.max_text_chars)),
        "context": format_context(event.retrieved_context, limits),
        "history": tag("history", _history(event, limits)),
        "case": tag("case", _case(event, limits)),
    }


def numbered(name: str, items: list[str], limits: PromptLimits, **attrs: str) -> str:
    """``<name>`` holding ``1. item`` lines: the first `max_items` items, each clipped to
    `max_chunk_chars`, while the list stays within `max_list_chars` (the first item is
    always shown, clipped to that)."""
    lines: list[str] = []
    total = 0
    for n, text in enumerate(items[: limits.max_items], 1):
        line = f"{n}. {clip(' '.join(text.split()), limits.max_chunk_chars)}"
        if lines and total + len(line) > limits.max_list_chars:
            break
        lines.append(clip(line, limits.max_list_chars))
        total += len(line)
    if len(items) > len(lines):
        lines.append(f"[{len(items) - len(lines)} more not shown]")
    return tag(name, "\n".join(lines) if lines else "(none)", **attrs)


def reference_fields(event: Event, limits: PromptLimits) -> dict[str, str]:
    """expected_answer, required_information, helpful_information: the turn's reference
    (:mod:`stream.contract.reference`), bounded and tagged; "(none)" where absent."""
    ref = event.reference
    expected = ref.expected_answer if ref is not None else ""
    return {
        "expected_answer": tag(
            "expected_answer", clip(expected, limits.max_text_chars) or "(none)"
        ),
        "required_information": numbered(
            "required_information", list(ref.required_information) if ref else [], limits
        ),
        "helpful_information": numbered(
            "helpful_information", list(ref.helpful_information) if ref else [], limits
        ),
    }
