"""The process's C heap (glibc malloc): tuning for a long-running sidecar, and trimming.

Python hands every allocation above 512 bytes (raw Kafka records, fetch buffers, JSON
texts) and every C extension's allocations (RE2, onnxruntime) to malloc. glibc's defaults
suit short programs: up to 8 arenas per core (one per thread that allocates), and a
*dynamic* mmap threshold that rises to the largest block freed so far (up to 32 MiB), after
which ~1 MiB fetch buffers are carved from the heap instead of mapped and unmapped. Both
let freed memory stay resident; RSS creeps. :func:`tune_heap` caps the arenas and can fix
the threshold (which costs page faults on every large buffer: ~12 % of the detector path's
throughput, measured, so the sidecar leaves it to glibc by default); :func:`trim_heap`
returns free pages at the top and inside the heap to the OS.
Elsewhere than glibc (musl, macOS) both do nothing and return False.
"""

from __future__ import annotations

import ctypes
import sys
from functools import cache
from typing import Any

__all__ = ["trim_heap", "tune_heap"]

_M_MMAP_THRESHOLD = -3  # glibc mallopt parameters (malloc.h)
_M_ARENA_MAX = -8


@cache
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the C library already loaded into the interpreter
        libc.malloc_trim, libc.mallopt  # noqa: B018 - both exist on glibc only
    except (OSError, AttributeError):
        return None
    return libc


def tune_heap(arena_max: int, mmap_threshold: int) -> bool:
    """Cap glibc's malloc arenas at `arena_max` and fix its mmap threshold at
    `mmap_threshold` bytes (0 leaves that setting to glibc). Call it before threads start:
    arenas already made stay. True when glibc took every setting asked for."""
    libc = _libc()
    if libc is None:
        return False
    ok = True
    if arena_max > 0:
        ok = bool(libc.mallopt(_M_ARENA_MAX, int(arena_max))) and ok
    if mmap_threshold > 0:
        ok = bool(libc.mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold))) and ok
    return ok


def trim_heap() -> bool:
    """Give the heap's free pages back to the OS (glibc `malloc_trim(0)`); True when some
    memory was released."""
    libc = _libc()
    return bool(libc.malloc_trim(0)) if libc is not None else False
