"""Broker outage mid-stream: the sidecar stays alive and observable, then resumes by itself.

A dedicated embedded broker on a fixed port is stopped while the sidecar consumes:
/healthz and /metrics keep answering, /readyz turns 503 within a bound, the log stays
quiet (no reconnect flood), and a broker started again on the same address is consumed
from without restarting the sidecar. The embedded broker keeps data in memory only, so
the restarted broker has lost every topic: the test recreates the topics (as a real
broker would have kept them) and asserts resume, not replay.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from stream.demo import EmbeddedBroker, free_port
from stream.runtime.fleet_topics import ensure_fleet_topics
from stream.runtime.kafka_config import ensure_topics
from stream.runtime.settings import KafkaSettings
from tests.conftest import SidecarProcess, Topics, consume_all, produce, sample
from tests.stream.runtime.faults import engine_env, get, score_ids, valid_messages, wait_for

pytestmark = pytest.mark.broker

OUTAGE_S = 15.0
READY_BOUND_S = 15.0  # lag/broker probe every 5 s + a 5 s probe timeout, with slack
OUTAGE_LOG_LINES = 40  # unthrottled, aiokafka alone logs > 20 lines a second


def _recreate_topics(bootstrap: str, topics: Topics) -> None:
    k = KafkaSettings(
        bootstrap_servers=bootstrap, input_topic=topics.input, dlq_topic=topics.dlq,
        scores_topic=topics.scores, alarms_topic=topics.alarms, state_topic=topics.state,
        observations_topic=topics.observations,
    )  # fmt: skip
    asyncio.run(ensure_topics(k))
    asyncio.run(ensure_fleet_topics(k))


def test_broker_outage_keeps_serving_and_resumes(tmp_path: Path) -> None:
    port = free_port()
    broker = EmbeddedBroker(port=port).start()
    topics = Topics.unique()
    sc = SidecarProcess(broker.bootstrap_servers, topics, engine_env())
    second: EmbeddedBroker | None = None
    try:
        messages = valid_messages(300)
        before, probe = messages[:100], messages[100:250]
        sc.start(tmp_path)
        produce(broker.bootstrap_servers, topics.input, before)
        sc.wait_consumed(len(before))
        assert sc.log is not None

        broker.stop()
        down_at = time.monotonic()
        log_mark = len(sc.output().splitlines())
        unready_after = wait_for(lambda: get(sc.url + "/readyz")[0] == 503, READY_BOUND_S)
        assert unready_after is not None, "readyz stayed 200 with the broker gone"
        _, body = get(sc.url + "/readyz")
        assert json.loads(body) == {"ready": False, "reason": "broker unreachable"}
        # alive and observable all along the outage
        while time.monotonic() - down_at < OUTAGE_S:
            assert get(sc.url + "/healthz")[0] == 200
            assert get(sc.url + "/metrics")[0] == 200
            m = sc.metrics()
            assert sample(m, "ragpulse_ready") == 0
            assert sample(m, "ragpulse_event_loop_lag_seconds") < 1.0  # the loop is not stuck
            time.sleep(1.0)
        assert sc.proc is not None and sc.proc.poll() is None
        outage_lines = sc.output().splitlines()[log_mark:]
        assert len(outage_lines) <= OUTAGE_LOG_LINES, "\n".join(outage_lines[-50:])
        assert any("broker unreachable" in line for line in outage_lines)

        second = EmbeddedBroker(port=port).start()
        back_at = time.monotonic()
        _recreate_topics(second.bootstrap_servers, topics)
        # the first events again (same keys, same partitions) push the new log's offsets past
        # the positions the sidecar had reached; they are recognised as duplicates
        produce(second.bootstrap_servers, topics.input, before)
        produce(second.bootstrap_servers, topics.input, probe)
        want = len(before) + len(probe)

        def scored_all() -> bool:
            return sample(sc.metrics(), "ragpulse_events_total", outcome="scored") >= want

        recovered = wait_for(scored_all, 90, every=0.25)
        assert recovered is not None, sc.output()[-4000:]
        recovery_s = time.monotonic() - back_at
        ready_again = wait_for(lambda: get(sc.url + "/readyz")[0] == 200, 20)
        assert ready_again is not None
        m = sc.metrics()
        assert sample(m, "ragpulse_events_total", outcome="scored") == want  # no double count
        dupes = sample(m, "ragpulse_events_total", outcome="duplicate")
        assert dupes <= len(before)

        cards = score_ids(consume_all(second.bootstrap_servers, topics.scores, len(probe)))
        probe_ids = {json.loads(raw)["event_id"] for _, raw in probe}
        assert probe_ids <= set(cards), f"{len(probe_ids - set(cards))} probe events not scored"
        assert sc.terminate() == 0, sc.output()[-3000:]
        assert sum("broker reachable again" in line for line in sc.output().splitlines()) == 1
        print(
            f"\nbroker outage: {OUTAGE_S:.0f}s; readyz false after {unready_after:.1f}s; "
            f"{len(outage_lines)} log lines during the outage; consumption resumed and all "
            f"{len(probe)} new events scored {recovery_s:.1f}s after the broker came back; "
            f"{dupes:.0f} replayed events counted as duplicates"
        )
    finally:
        sc.kill()
        broker.stop()
        if second is not None:
            second.stop()
