"""The root of every error ragpulse raises on purpose: `except RagpulseError` catches a bad
setting, event, pack, judge reply, record or state, and nothing that is a bug.

Each subclass keeps the built-in base it had (`PackError` is still a `ValueError`,
`EmbeddedJudgeUnavailable` an `ImportError`), so existing handlers keep working.
"""

from __future__ import annotations

__all__ = ["RagpulseError"]


class RagpulseError(Exception):
    """An error ragpulse raises on purpose; its message names what was wrong and where."""
