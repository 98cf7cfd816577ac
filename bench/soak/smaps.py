"""Where a process's resident memory lives, from ``/proc/<pid>/smaps``.

The soak samples this to tell growth in the main heap (``[heap]``, glibc's main arena
grown by ``brk``) from anonymous mappings (glibc's thread arenas, large ``malloc`` blocks
served by ``mmap``, numpy / onnxruntime buffers) and from file-backed pages (shared
libraries, model files), which a steady process should not grow.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ARENA_BYTES", "regions"]

#: glibc reserves each thread arena as a 64 MiB mapping (HEAP_MAX_SIZE on 64-bit)
ARENA_BYTES = 64 << 20


def regions(pid: int) -> dict[str, float]:
    """Resident MiB by kind: ``heap`` ([heap]), ``anon`` (mappings with no name),
    ``stack`` ([stack] and other bracketed names), ``file`` (file-backed); and
    ``arenas``, how many anonymous mappings are arena-sized (≥ 32 MiB of address space)."""
    kb = {"heap": 0, "anon": 0, "stack": 0, "file": 0}
    arenas = 0
    kind = "anon"
    size_kb = 0
    with Path(f"/proc/{pid}/smaps").open() as fh:  # line by line: the file can be MBs long
        for line in fh:
            head = line.split(maxsplit=6)
            if not head:
                continue
            if "-" in head[0] and not head[0].endswith(":"):  # a mapping's header line
                name = head[5] if len(head) > 5 else ""
                if name == "[heap]":
                    kind = "heap"
                elif not name:
                    kind = "anon"
                elif name.startswith("["):
                    kind = "stack"
                else:
                    kind = "file"
            elif head[0] == "Size:":
                size_kb = int(head[1])
                if kind == "anon" and size_kb * 1024 >= ARENA_BYTES // 2:
                    arenas += 1
            elif head[0] == "Rss:":
                kb[kind] += int(head[1])
    out = {f"mem_{k}_mb": round(v / 1024, 2) for k, v in kb.items()}
    out["anon_arenas"] = arenas
    return out
