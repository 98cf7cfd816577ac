"""The per-stream stage of drift monitoring across a consumer group (docs/scaling.md).

Every replica aggregates its observations per interval (:class:`ObservationBuffer`);
the owner of a series' partition merges every replica's intervals in time order and
runs the series' drift detectors (:class:`FleetOwner`); the state is data
(:class:`SeriesRecord`), never a pickle. Kafka I/O lives in the runtime.
"""

from monitors.fleet.buffer import ObservationBuffer, producer_id
from monitors.fleet.owner import FleetOwner, OwnedSeries
from monitors.fleet.records import (
    RECORD_VERSION,
    Command,
    Observation,
    RecordError,
    decode_control_or_observation,
    encode,
    series_id,
    split_series,
)
from monitors.fleet.series import SeriesMerger, spread
from monitors.fleet.state import AlarmRecord, SeriesRecord, decode_state, encode_state

__all__ = [
    "RECORD_VERSION",
    "AlarmRecord",
    "Command",
    "FleetOwner",
    "Observation",
    "ObservationBuffer",
    "OwnedSeries",
    "RecordError",
    "SeriesMerger",
    "SeriesRecord",
    "decode_control_or_observation",
    "decode_state",
    "encode",
    "encode_state",
    "producer_id",
    "series_id",
    "split_series",
    "spread",
]
