"""The demo world's text as data: the YAML phrase banks under ``stream/demo/phrases/``.

``load("earnings")`` parses ``phrases/earnings.yaml`` once (cached) and returns the same
mapping on every later call, so the generator reads its banks at dictionary speed. The
files ship as package data (pyproject ``[tool.setuptools.package-data]``).

- ``companies``: the eight invented listed companies (:mod:`stream.demo.financials`);
- ``earnings``: chunks, queries, facts and reject-type requests of ``earnings-qa``;
- ``issues``: the eight support issues (:mod:`stream.demo.it_support`);
- ``it_support``: customers, people, case text, KB sections, queries of ``it-support``;
- ``failures``: injected failures and tricky negatives (:mod:`stream.demo.failures`);
- ``golden``: the canary questions, references and wrong answers (:mod:`stream.demo.golden`).

The mappings are shared: callers read them and never change them.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml

__all__ = ["BANKS", "load"]

BANKS = ("companies", "earnings", "issues", "it_support", "failures", "golden")

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def load(name: str) -> dict[str, Any]:
    """The phrase bank `name` (one of :data:`BANKS`), parsed once."""
    if name not in BANKS:
        raise ValueError(f"unknown phrase bank {name!r}; one of {', '.join(BANKS)}")
    text = resources.files("stream.demo").joinpath("phrases", f"{name}.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.load(text, Loader=_Loader)
    return data
