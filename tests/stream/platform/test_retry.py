from __future__ import annotations

import itertools
import subprocess
import sys

from aiokafka.errors import KafkaConnectionError, UnknownTopicOrPartitionError

from stream.platform.retry import Backoff, classify, register_transient


class _HTTPError(Exception):
    def __init__(self, status: int) -> None:
        self.response = type("R", (), {"status_code": status})()


def test_classify() -> None:
    import stream.runtime.kafka_retry  # noqa: F401  (registers Kafka's transient errors)

    assert classify(KafkaConnectionError()) == "retry"
    assert classify(TimeoutError()) == "retry"
    assert classify(UnknownTopicOrPartitionError()) == "retry"  # retriable Kafka error
    assert classify(_HTTPError(429)) == "rate_limit"
    assert classify(_HTTPError(503)) == "retry"
    assert classify(_HTTPError(400)) == "give_up"
    assert classify(ValueError("bad config")) == "give_up"


def test_backoff_grows_caps_and_is_zeroed_in_tests(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert Backoff.scale == 0.0  # the autouse fixture
    assert set(itertools.islice(Backoff().delays(), 5)) == {0.0}
    monkeypatch.setattr(Backoff, "scale", 1.0)
    delays = list(itertools.islice(Backoff(initial_s=1, max_s=8, jitter=0).delays(), 6))
    assert delays == [1, 2, 4, 8, 8, 8]
    jittered = list(itertools.islice(Backoff(initial_s=10, max_s=10, jitter=0.2).delays(), 50))
    assert all(8 <= d <= 12 for d in jittered) and len(set(jittered)) > 1


class _Flaky(Exception):
    retriable = True


class _FlakyNot(_Flaky):
    retriable = False


def test_a_registered_family_is_retried_and_nothing_is_imported() -> None:
    class Lost(Exception):
        pass

    assert classify(Lost()) == "give_up"
    register_transient(Lost, when_flagged=(_Flaky,))
    register_transient(Lost)  # idempotent
    assert classify(Lost()) == "retry"
    assert classify(_Flaky()) == "retry" and classify(_FlakyNot()) == "give_up"
    code = (
        "import sys, stream.platform.retry, stream.platform.heap; print(sorted(m for m in ("
        "'aiokafka', 'httpx', 'pydantic', 'faust') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
