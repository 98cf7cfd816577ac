"""Self-consistency: the shuffled second view of a turn and the comparison of two verdicts."""

from __future__ import annotations

from monitors.judges.consistency import SHUFFLED_CHUNKS, Pair, compare, shuffled
from stream.contract.schema import Event


def _event(n: int, event_id: str = "e-1") -> Event:
    chunks = [{"id": f"c{i}", "content": f"chunk {i}"} for i in range(n)]
    return Event.model_validate(
        {"event_id": event_id, "query": "q", "response": "r", "retrieved_context": chunks}
    )


def test_the_shown_chunks_are_reordered_never_changed_and_the_same_for_the_same_turn() -> None:
    for n in (2, 3, 5, 12, 20):
        for event_id in ("a", "b", "c", "d"):
            event = _event(n, event_id)
            again = shuffled(event)
            ids = [c.id for c in event.retrieved_context]
            new = [c.id for c in again.retrieved_context]
            head = min(n, SHUFFLED_CHUNKS)
            assert sorted(new[:head]) == sorted(ids[:head]) and new[head:] == ids[head:]
            assert new != ids, (n, event_id)
            assert [c.id for c in shuffled(event).retrieved_context] == new
    one = _event(1)
    assert shuffled(one) is one


def test_a_pair_flips_only_across_the_floor() -> None:
    assert Pair(0.8, 0.6, 0.7).flip and not Pair(0.8, 0.75, 0.7).flip
    assert Pair(0.2, 0.7, 0.7).flip and Pair(0.25, 0.75, 0.7).abs_diff == 0.5
    pairs = compare({"a": 0.9, "b": 0.1}, {"a": 0.4}, lambda m: 0.5)
    assert list(pairs) == ["a"] and pairs["a"].to_dict() == {
        "first": 0.9, "second": 0.4, "abs_diff": 0.5, "flip": True,
    }  # fmt: skip
