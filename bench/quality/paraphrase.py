"""Deterministic meaning-preserving rewrites of a text, for the rewrite-consistency check.

The rewriter is product code now (`ragpulse qualify` uses it):
:mod:`monitors.evaluation.rewrites` documents the three kinds (``reorder``,
``synonyms``, ``both``); this module re-exports it for the bench scripts.
"""

from __future__ import annotations

from monitors.evaluation.rewrites import KINDS, SYNONYMS, paraphrase

__all__ = ["KINDS", "SYNONYMS", "paraphrase"]
