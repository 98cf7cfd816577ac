"""The one module that touches private attributes of faust-streaming and aiokafka.

Everything else in `stream/` reads the two libraries through their public API; what has
none is here, one small function per use, each naming the private attribute it touches
and why there is no public way. `tests/stream/runtime/test_kafka_private.py` pins the
versions this was checked against (:data:`CHECKED_VERSIONS`), checks that every attribute
in :data:`TOUCHED` still exists on the installed classes, and fails when another module
under `stream/` uses one of these names.

Upgrading faust-streaming or aiokafka: read each function below against the new
release's source (the attribute may have moved, been renamed or gained a public
replacement), run the Kafka tests (`test_engine_aiokafka.py`, `test_sidecar_kafka.py`,
`test_fetch_guard.py`, `test_faults_*.py`, `test_drift_kafka.py`), then update
:data:`CHECKED_VERSIONS`.

No import of faust here: it loads only for `engine: faust` (`test_import_floor.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiokafka import AIOKafkaClient, AIOKafkaConsumer

__all__ = [
    "CHECKED_VERSIONS",
    "TOUCHED",
    "add_gap",
    "client",
    "consumer_thread",
    "force_metadata_update",
    "guard_fetch",
    "isolation_level",
    "on_worker_consumer",
    "set_isolation_level",
]

#: the releases every function below was read against (distribution name: version)
CHECKED_VERSIONS = {"faust-streaming": "0.15.3", "aiokafka": "0.14.0"}

#: (module, class, attribute) for every private attribute touched here
TOUCHED: tuple[tuple[str, str, str], ...] = (
    ("faust.transport.consumer", "ThreadDelegateConsumer", "_thread"),
    ("faust.transport.drivers.aiokafka", "AIOKafkaConsumerThread", "_fetch_records"),
    ("faust.transport.drivers.aiokafka", "AIOKafkaConsumerThread", "_create_worker_consumer"),
    ("faust.transport.consumer", "Consumer", "_add_gap"),
    ("aiokafka", "AIOKafkaConsumer", "_client"),
    ("aiokafka", "AIOKafkaConsumer", "_isolation_level"),
)

Fetch = Callable[..., Coroutine[Any, Any, Any]]
_GUARDED = "_ragpulse_guarded"  # our mark on faust's consumer thread: wrapped once

# ---------------------------------------------------------------------------- faust


def consumer_thread(consumer: Any) -> Any | None:
    """faust's `AIOKafkaConsumerThread` behind `app.consumer` (None for another driver).

    Touches `ThreadDelegateConsumer._thread`: the thread that owns faust's aiokafka
    consumer and fetches on its own event loop; faust exposes no handle to it.
    """
    return getattr(consumer, "_thread", None)


def guard_fetch(thread: Any, wrap: Callable[[Fetch], Fetch]) -> bool:
    """Route faust's fetches through `wrap(original)`; False when already done.

    Touches `AIOKafkaConsumerThread._fetch_records(consumer, active_partitions, timeout,
    max_records)`, faust's one call into aiokafka's fetcher per poll. faust has no fetch
    hook, and a batch that does not decode raises there on every poll: the wrapper (a
    :class:`~stream.runtime.fetch_guard.FetchGuard`) is the only place to step past it.
    """
    if getattr(thread, _GUARDED, False):
        return False
    thread._fetch_records = wrap(thread._fetch_records)
    setattr(thread, _GUARDED, True)
    return True


def on_worker_consumer(thread: Any, configure: Callable[[Any], None]) -> None:
    """Call `configure(consumer)` on each aiokafka consumer faust builds, before it starts.

    Touches `AIOKafkaConsumerThread._create_worker_consumer(transport)`: faust builds the
    consumer there from its own settings and passes no extra consumer options through.
    """
    create = thread._create_worker_consumer

    def create_consumer(transport: Any) -> Any:
        consumer = create(transport)
        configure(consumer)
        return consumer

    thread._create_worker_consumer = create_consumer


async def add_gap(consumer: Any, tp: Any, first: int, last: int) -> None:
    """Offsets `first..last` (inclusive) of `tp` count as acked: committed with the next
    record acked after them.

    Touches `faust.transport.consumer.Consumer._add_gap(tp, offset_from, offset_to)`, which
    faust uses for the offsets a transaction marker or compaction leaves out; there is no
    public way to mark offsets that never reach an agent as done.
    """
    await consumer._add_gap(tp, first, last)


# ---------------------------------------------------------------------------- aiokafka


def client(consumer: AIOKafkaConsumer) -> AIOKafkaClient:
    """The consumer's cluster client (metadata, leaders, raw requests).

    Touches `AIOKafkaConsumer._client`: aiokafka offers no public way to send one raw
    Fetch request to a partition leader (`FetchGuard` reads an undecodable batch's bytes
    so) nor to reach the client's cluster metadata.
    """
    return consumer._client


def force_metadata_update(consumer: AIOKafkaConsumer) -> Any:
    """Refresh the cluster metadata now (an awaitable: True when it was updated).

    Through `AIOKafkaConsumer._client` (`AIOKafkaClient.force_metadata_update` itself is
    public): `partitions_for_topic` answers from cached metadata, and the consumer has no
    public refresh (`topics()` fetches metadata but does not update that cache).
    """
    return client(consumer).force_metadata_update()


def isolation_level(consumer: AIOKafkaConsumer) -> str:
    """`read_committed` or `read_uncommitted`, as the consumer was built.

    Touches `AIOKafkaConsumer._isolation_level`: a constructor argument aiokafka keeps
    but does not expose.
    """
    level: str = consumer._isolation_level
    return level


def set_isolation_level(consumer: AIOKafkaConsumer, level: str) -> None:
    """Set the isolation level of a consumer that has not started yet.

    Touches `AIOKafkaConsumer._isolation_level`, read by the fetcher `start()` builds:
    faust builds its consumer itself and reads committed records only in exactly-once
    mode, so `kafka.isolation_level` reaches it only here (see `on_worker_consumer`).
    """
    consumer._isolation_level = level
