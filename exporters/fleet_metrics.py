"""Prometheus families of the per-stream drift stage (observations, ownership, state).

Every series is known in advance (fixed outcome and reason sets), so each starts at 0.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

__all__ = ["OBSERVATION_OUTCOMES", "REJECT_REASONS", "FleetMetrics"]

#: what the owner did with an observation-topic record
OBSERVATION_OUTCOMES = (
    "merged", "late", "duplicate", "too_late", "future", "rejected", "unconfigured",
    "applied", "not_owned",
)  # fmt: skip
#: why a record (observation, command or state) was refused: RecordError / StateError reasons
REJECT_REASONS = (
    "too_large", "not_json", "schema", "version", "other_group", "inconsistent",
    "spec_mismatch", "bad_type", "bad_length", "not_finite", "out_of_range", "missing_field",
)  # fmt: skip


class FleetMetrics:
    def __init__(self, r: CollectorRegistry) -> None:
        self.observations = Counter(
            "ragpulse_observations", "Observation-topic records the series owners handled, by"
            " outcome (late: merged after their interval was released)", ["outcome"], registry=r,
        )  # fmt: skip
        self.observations_published = Counter(
            "ragpulse_observations_published", "Observation records this replica sent",
            registry=r,
        )  # fmt: skip
        self.observations_unsent = Counter(
            "ragpulse_observation_records_unsent", "Observation records that could not be"
            " sent (the broker away): those intervals are lost to the owner", registry=r,
        )  # fmt: skip
        self.observation_bytes = Counter(
            "ragpulse_observation_bytes", "Bytes of observation records this replica sent",
            registry=r,
        )  # fmt: skip
        self.observation_rejected = Counter(
            "ragpulse_observation_records_rejected", "Observation-topic records refused, by"
            " reason", ["reason"], registry=r,
        )  # fmt: skip
        self.state_rejected = Counter(
            "ragpulse_state_records_rejected", "Changelog state records refused at restore"
            " (the series starts fresh), by reason", ["reason"], registry=r,
        )  # fmt: skip
        self.state_written = Counter(
            "ragpulse_state_records_written", "Series state records written to the changelog",
            registry=r,
        )  # fmt: skip
        self.state_too_large = Counter(
            "ragpulse_state_records_too_large", "Series states not written: over"
            " kafka.max_record_bytes", registry=r,
        )  # fmt: skip
        self.owned_partitions = Gauge(
            "ragpulse_drift_owned_partitions", "Observation partitions this replica owns",
            registry=r,
        )  # fmt: skip
        self.owned_series = Gauge(
            "ragpulse_drift_owned_series", "Drift series this replica owns", registry=r
        )
        for outcome in OBSERVATION_OUTCOMES:
            self.observations.labels(outcome)
        for reason in REJECT_REASONS:
            self.observation_rejected.labels(reason)
            self.state_rejected.labels(reason)
