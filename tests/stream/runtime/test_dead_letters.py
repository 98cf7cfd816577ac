"""Dead letters keep the source record (key, bytes, headers) and always fit the cap."""

from __future__ import annotations

from stream.runtime.dead_letters import dead_letter, skipped_batch_letter
from stream.runtime.fetch_guard import SkippedBatch
from stream.runtime.pipeline import Result

BAD = Result("invalid", reason="invalid_json", detail="Expecting value")
CAP = 4096


def _size(key: bytes | None, value: bytes | None, headers: list) -> int:  # type: ignore[type-arg]
    return len(key or b"") + len(value or b"") + sum(len(k) + len(v or b"") for k, v in headers)


def test_small_record_kept_whole_with_source_headers_first() -> None:
    key, value, headers = dead_letter(
        BAD, b"conv-1", b"{not json", "in", 2, 17, [("trace", b"t-1"), ("empty", None)], CAP
    )
    assert (key, value) == (b"conv-1", b"{not json")
    assert headers[:2] == [("trace", b"t-1"), ("empty", None)]
    h = dict(headers)
    assert h["ragpulse.error.reason"] == b"invalid_json"
    assert (h["ragpulse.source.partition"], h["ragpulse.source.offset"]) == (b"2", b"17")
    assert "ragpulse.error.value_bytes" not in h


def test_value_is_cut_first_and_its_size_kept() -> None:
    big = b"x" * 10_000
    key, value, headers = dead_letter(BAD, b"k", big, "in", 0, 1, [("h", b"v")], CAP)
    h = dict(headers)
    assert key == b"k" and h["h"] == b"v" and value == big[: len(value or b"")]
    assert h["ragpulse.error.value_bytes"] == b"10000"
    assert _size(key, value, headers) <= CAP


def test_huge_key_and_headers_are_cut_so_the_letter_can_be_sent() -> None:
    """A key or headers as large as the cap would make the producer refuse the letter and
    stop the stream: the key is cut to 1 KiB, the source headers dropped and counted."""
    source = [(f"h{i}", b"y" * 500) for i in range(20)]
    key, value, headers = dead_letter(BAD, b"K" * 8000, b"{}", "in", 0, 1, source, CAP)
    h = dict(headers)
    assert key == b"K" * 1024 and h["ragpulse.error.key_bytes"] == b"8000"
    assert h["ragpulse.error.headers_dropped"] == b"20" and "h0" not in h
    assert h["ragpulse.error.reason"] == b"invalid_json"
    assert _size(key, value, headers) <= CAP


def test_skipped_batch_letter_fits_the_cap() -> None:
    skip = SkippedBatch("in", 3, 10, 14, "CorruptRecordException", "invalid CRC", b"r" * 9000)
    value, headers = skipped_batch_letter(skip, CAP)
    h = dict(headers)
    assert h["ragpulse.error.reason"] == b"undecodable_batch"
    assert (h["ragpulse.source.offset"], h["ragpulse.source.next_offset"]) == (b"10", b"14")
    assert h["ragpulse.error.value_bytes"] == b"9000"
    assert _size(None, value, headers) <= CAP
