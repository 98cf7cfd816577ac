"""bench.soak.smaps: resident memory by kind, read from this process's own smaps."""

from __future__ import annotations

import mmap
import os
from pathlib import Path

from bench.soak.smaps import regions


def test_an_anonymous_mapping_shows_as_anon_not_heap() -> None:
    before = regions(os.getpid())
    # a private anonymous mapping, as glibc's large mallocs and arenas are (a shared one
    # shows as /dev/zero)
    block = mmap.mmap(-1, 80 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        for off in range(0, len(block), 4096):  # touch every page: make it resident
            block[off] = 1
        after = regions(os.getpid())
    finally:
        block.close()
    assert after["mem_anon_mb"] - before["mem_anon_mb"] > 75
    # not counted as heap (the heap may move a little: the test process allocates too)
    assert after["mem_heap_mb"] - before["mem_heap_mb"] < 40
    assert after["anon_arenas"] >= before["anon_arenas"] + 1  # 80 MiB of address space
    assert after["mem_file_mb"] > 1  # the interpreter and its libraries


def test_a_mapping_name_with_spaces_is_file_backed(tmp_path: Path) -> None:
    path = tmp_path / "a file (1).bin"
    path.write_bytes(b"x" * (4 << 20))
    before = regions(os.getpid())
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ) as view:
        assert sum(view[off] for off in range(0, len(view), 4096)) > 0  # fault pages in
        after = regions(os.getpid())
    assert after["mem_file_mb"] - before["mem_file_mb"] > 3.5
