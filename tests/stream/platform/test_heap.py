"""glibc heap tuning and trimming (stream.platform.heap) and the `heap` settings."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from stream.platform.heap import trim_heap, tune_heap
from stream.runtime.settings import ConfigError, load_settings

_GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


def test_tune_and_trim_take_effect_on_glibc() -> None:
    assert _GLIBC, "CI runs on Debian (glibc): these settings must do something there"
    code = (
        "from stream.platform.heap import tune_heap, trim_heap\n"
        "assert tune_heap(2, 0) is True\n"
        "assert tune_heap(0, 1 << 20) is True\n"
        "big = [bytearray(200_000) for _ in range(500)]\n"  # ~100 MB of heap, then freed
        "del big\n"
        "print(trim_heap())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() in ("True", "False")  # malloc_trim ran (True: pages released)


def test_nothing_asked_is_nothing_done() -> None:
    assert tune_heap(0, 0) is True  # every setting left to glibc
    assert isinstance(trim_heap(), bool)


def test_heap_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGPULSE_HEAP__ARENA_MAX", "4")
    monkeypatch.setenv("RAGPULSE_HEAP__TRIM_EVERY_S", "0")
    s = load_settings()
    assert (s.heap.arena_max, s.heap.trim_every_s, s.heap.mmap_threshold_bytes) == (4, 0.0, 0)


def test_a_bad_heap_setting_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGPULSE_HEAP__MMAP_THRESHOLD_BYTES", str(64 << 20))
    with pytest.raises(ConfigError, match=r"heap\.mmap_threshold_bytes"):
        load_settings()
