"""The private faust/aiokafka attributes ragpulse touches: one adapter, pinned versions.

`stream.runtime.kafka_private` is the only module under `stream/` that touches a private
attribute of faust-streaming or aiokafka. These tests fail on an upgrade of either
library (re-check the adapter, then update `CHECKED_VERSIONS`), when an attribute it
touches is gone, and when another module starts touching one.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaClient, AIOKafkaConsumer

import stream
from stream.runtime import kafka_private
from stream.runtime.kafka_private import CHECKED_VERSIONS, TOUCHED

ADAPTER = Path(kafka_private.__file__).resolve()
#: every private name the adapter touches, and the one faust name it no longer needs
PRIVATE = sorted({attr for _, _, attr in TOUCHED} | {"_crash_reason"})
#: `x._name` on anything but `self`, or `"_name"` as a string (getattr / setattr)
_USE = re.compile(
    r"(?<!self)\.(?P<attr>" + "|".join(PRIVATE) + r")\b|[\"'](?P<text>"
    + "|".join(PRIVATE) + r")[\"']"
)  # fmt: skip


@pytest.mark.parametrize("dist", sorted(CHECKED_VERSIONS))
def test_installed_versions_are_the_ones_the_adapter_was_checked_against(dist: str) -> None:
    installed = version(dist)
    assert installed == CHECKED_VERSIONS[dist], (
        f"{dist} is {installed}, but stream/runtime/kafka_private.py was checked against "
        f"{CHECKED_VERSIONS[dist]}: re-read each function there against the new release's "
        "source (the private attributes may have moved or gained a public API), run the "
        "Kafka tests, then update CHECKED_VERSIONS"
    )


def _sets_in_init(cls: type, attr: str) -> bool:
    """`attr` is an instance attribute: assigned in `__init__` of `cls` or a base."""
    for base in cls.__mro__:
        init = base.__dict__.get("__init__")
        if init is not None and re.search(rf"self\.{attr}\s*[:=]", inspect.getsource(init)):
            return True
    return False


@pytest.mark.parametrize(("module", "cls", "attr"), TOUCHED, ids=lambda v: str(v))
def test_every_private_attribute_the_adapter_touches_exists(
    module: str, cls: str, attr: str
) -> None:
    owner = getattr(importlib.import_module(module), cls)
    assert hasattr(owner, attr) or _sets_in_init(owner, attr), (
        f"{module}.{cls}.{attr} is gone: re-check stream/runtime/kafka_private.py"
    )


def test_the_private_methods_keep_the_signatures_the_adapter_calls() -> None:
    from faust.transport.consumer import Consumer
    from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread

    def params(fn: Any) -> list[str]:
        return list(inspect.signature(fn).parameters)

    fetch = params(AIOKafkaConsumerThread._fetch_records)
    assert fetch == ["self", "consumer", "active_partitions", "timeout", "max_records"]
    assert params(AIOKafkaConsumerThread._create_worker_consumer) == ["self", "transport"]
    assert params(Consumer._add_gap) == ["self", "tp", "offset_from", "offset_to"]
    # why set_isolation_level works: start() builds the fetcher from the attribute
    assert "isolation_level=self._isolation_level" in inspect.getsource(AIOKafkaConsumer.start)
    # the crash reason is public (mode's Service.crash_reason): no adapter needed
    import faust

    assert isinstance(inspect.getattr_static(faust.App, "crash_reason"), property)


def test_the_aiokafka_functions_on_a_real_consumer() -> None:
    async def check() -> None:
        consumer = AIOKafkaConsumer(
            bootstrap_servers="127.0.0.1:1", isolation_level="read_committed"
        )
        try:
            client = kafka_private.client(consumer)
            assert isinstance(client, AIOKafkaClient)
            assert callable(client.force_metadata_update) and callable(client.send)
            assert kafka_private.isolation_level(consumer) == "read_committed"
            kafka_private.set_isolation_level(consumer, "read_uncommitted")
            assert kafka_private.isolation_level(consumer) == "read_uncommitted"
        finally:
            await consumer.stop()

    asyncio.run(check())


def test_the_faust_thread_is_wrapped_once() -> None:
    class Thread:  # the shape of faust's AIOKafkaConsumerThread
        async def _fetch_records(self, *args: Any, **kwargs: Any) -> str:
            return "fetched"

        def _create_worker_consumer(self, transport: Any) -> Any:
            return type("Consumer", (), {"_isolation_level": "read_uncommitted"})()

    thread = Thread()
    calls: list[str] = []

    def wrap(fetch: kafka_private.Fetch) -> kafka_private.Fetch:
        async def guarded(*args: Any, **kwargs: Any) -> Any:
            calls.append("guarded")
            return await fetch(*args, **kwargs)

        return guarded

    assert kafka_private.guard_fetch(thread, wrap) is True
    assert kafka_private.guard_fetch(thread, wrap) is False  # already wrapped
    assert asyncio.run(thread._fetch_records(None, set())) == "fetched"
    assert calls == ["guarded"]
    kafka_private.on_worker_consumer(
        thread, lambda c: kafka_private.set_isolation_level(c, "read_committed")
    )
    assert thread._create_worker_consumer(None)._isolation_level == "read_committed"
    assert kafka_private.consumer_thread(object()) is None


def _uses(text: str) -> list[str]:
    return [m.group("attr") or m.group("text") for m in _USE.finditer(text)]


def test_the_scan_finds_private_uses_and_not_our_own_attributes() -> None:
    assert _uses("await consumer._client.force_metadata_update()") == ["_client"]
    assert _uses('getattr(app.consumer, "_thread", None)') == ["_thread"]
    assert _uses("thread._fetch_records = guarded") == ["_fetch_records"]
    assert _uses("self._thread.start(); self._client = c") == []


def test_no_other_module_under_stream_touches_these_private_names() -> None:
    root = Path(stream.__file__).resolve().parent
    found = [
        f"{path.relative_to(root.parent)}:{n}: {name}"
        for path in sorted(root.rglob("*.py"))
        if path.resolve() != ADAPTER
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for name in _uses(line)
    ]
    assert found == [], "private faust/aiokafka use outside stream/runtime/kafka_private.py"
