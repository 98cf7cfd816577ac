"""The refusal detector's pack files (:mod:`detectors.refusal`).

Reading one pack (``packs/refusal.yaml`` or a user's ``extra_patterns_file``) into its
pattern entries and vetoes (:func:`_load_pack`, which also collects its ``defs``), and
splicing ``<<name>>`` fragments into a pattern (:func:`_expand`).
"""

from __future__ import annotations

from pathlib import Path

import yaml

__all__ = ["DECLINE_CATEGORIES", "_SCOPES", "_expand", "_load_pack"]

DECLINE_CATEGORIES = ("refusal", "training_cutoff_excuse")
_SCOPES = ("lead", "any")


def _load_pack(
    path: Path, defs: dict[str, str]
) -> tuple[list[dict[str, str]], list[tuple[str, str]]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a refusal pack is a mapping with defs/patterns/vetoes")
    for name, frag in (data.get("defs") or {}).items():
        defs[str(name)] = str(frag)
    patterns: list[dict[str, str]] = []
    for item in data.get("patterns") or []:
        cat, scope = item.get("category", "refusal"), item.get("scope", "lead")
        if cat not in DECLINE_CATEGORIES or scope not in _SCOPES or not item.get("pattern"):
            raise ValueError(f"{path}: bad pattern entry {item!r}")
        patterns.append(
            {
                "id": str(item["id"]),
                "category": cat,
                "scope": scope,
                "pattern": str(item["pattern"]),
            }
        )
    vetoes = [(str(v["id"]), str(v["pattern"])) for v in data.get("vetoes") or []]
    return patterns, vetoes


def _expand(pattern: str, defs: dict[str, str], depth: int = 0) -> str:
    """Splice ``<<name>>`` fragments from ``defs`` in as non-capturing groups."""
    if depth > 5:
        raise ValueError(f"refusal pack: defs nest too deep in {pattern[:60]!r}")
    for name, frag in defs.items():
        token = f"<<{name}>>"
        if token in pattern:
            pattern = pattern.replace(token, f"(?:{_expand(frag, defs, depth + 1)})")
    if "<<" in pattern and ">>" in pattern.split("<<", 1)[1]:
        raise ValueError(f"refusal pack: unknown def in {pattern[:80]!r}")
    return pattern
