"""The failure modes a scorecard's `failure_modes` can name (docs/detectors.md), in order."""

from __future__ import annotations

__all__ = ["FAILURE_MODES"]

FAILURE_MODES: tuple[str, ...] = (
    "training_cutoff_excuse",
    "false_rejection",
    "false_acceptance",
    "financial_advice",
    "price_prediction",
    "personal_data_request",
    "pii_leak",
    "invalid_citation",
    "invented_identifier",
    "no_use_copy",
    "quote_only_paraphrase",
)
