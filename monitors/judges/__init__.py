"""Judges for sampled turns, registered by name: `embedded` (local, default) and `openai`
(any OpenAI-compatible endpoint). Importing this package registers both; the embedded
model loads on first use."""

from monitors.judges import embedded, openai
from monitors.judges.base import (
    JUDGE_ERROR_REASONS,
    CalibratedJudge,
    EmbeddedJudge,
    JudgeCall,
    JudgeError,
    JudgeReply,
    LLMJudge,
    SupportResult,
    available_judges,
    create_judge,
    register_judge,
)
from monitors.judges.reference_alignment import Alignment, ReferenceJudge
from monitors.judges.settings import DEFAULT_METRICS, JudgeSettings

__all__ = [
    "DEFAULT_METRICS",
    "JUDGE_ERROR_REASONS",
    "Alignment",
    "CalibratedJudge",
    "EmbeddedJudge",
    "JudgeCall",
    "JudgeError",
    "JudgeReply",
    "JudgeSettings",
    "LLMJudge",
    "ReferenceJudge",
    "SupportResult",
    "available_judges",
    "create_judge",
    "embedded",
    "openai",
    "register_judge",
]
