"""The synthetic traffic generator: determinism, validity, rates, sizes, conversations and
that its ground truth is honest (clean turns are clean, injected turns show their failure).

The checks below use Python's `re` on generated text on purpose: they are an oracle for
the generator, independent of (and stricter than) the RE2 detectors.
"""

from __future__ import annotations

import collections
import io
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from exporters.rules import AlertSettings
from stream.contract.events import InvalidEvent, parse_event
from stream.demo import (
    FAILURE_MODES,
    MALFORMED_KINDS,
    Generated,
    generate,
    write_dataset,
    write_jsonl,
    write_truth,
)

N = 3000
EXPECTED_REASON = {
    "invalid_json": "invalid_json",
    "invalid_utf8": "invalid_utf8",
    "wrong_types": "invalid_event",
    "missing_field": "invalid_event",
    "oversized": "field_too_large",
}


def luhn_ok(digits: str) -> bool:
    """The Luhn check, written here rather than imported: an oracle for the generator."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


@pytest.fixture(scope="module")
def baseline() -> list[Generated]:
    return list(generate(N, seed=7))


@pytest.fixture(scope="module")
def degraded() -> list[Generated]:
    return list(generate(N, seed=7, phase="degraded"))


def _valid(items: list[Generated]) -> list[tuple[Generated, dict[str, Any]]]:
    return [(it, json.loads(it.raw)) for it in items if it.malformed is None]


def _rates(items: list[Generated]) -> dict[str, float]:
    valid = [it for it in items if it.malformed is None]
    counts = collections.Counter(m for it in valid for m in it.truth)
    return {m: counts[m] / len(valid) for m in FAILURE_MODES}


# ------------------------------------------------------------------ determinism and ids
def test_same_arguments_give_byte_identical_output() -> None:
    first = list(generate(400, seed=11, phase="degraded"))
    second = list(generate(400, seed=11, phase="degraded"))
    assert first == second
    assert b"".join(i.raw for i in first) == b"".join(i.raw for i in second)
    other = list(generate(400, seed=12, phase="degraded"))
    assert [i.raw for i in other] != [i.raw for i in first]


def test_a_window_equals_the_same_slice_of_one_long_run() -> None:
    full = list(generate(700, seed=7))
    assert list(generate(200, seed=7, start_index=300)) == full[300:500]
    assert list(generate(1, seed=7, start_index=699)) == full[699:]
    assert list(generate(0, seed=7)) == []


def test_event_ids_are_unique_across_phases_seeds_and_windows(
    baseline: list[Generated], degraded: list[Generated]
) -> None:
    items = baseline + degraded + list(generate(500, seed=8)) + list(generate(500, start_index=N))
    ids = [i.event_id for i in items if i.event_id is not None]
    assert len(ids) == len(set(ids))
    assert all(i.event_id for i in items if i.malformed is None)


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError):
        next(generate(1, phase="chaos"))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        next(generate(1, malformed_rate=1.5))


# ------------------------------------------------------------------ validity
def test_valid_events_pass_parse_event(
    baseline: list[Generated], degraded: list[Generated]
) -> None:
    for it, _ in _valid(baseline) + _valid(degraded):
        assert b"\n" not in it.raw
        event = parse_event(it.raw)
        assert event.event_id == it.event_id
        assert it.key is not None and event.conversation_id == it.key.decode()
        assert it.truth == sorted(set(it.truth)) and set(it.truth) <= set(FAILURE_MODES)
        assert event.model_extra is not None and set(event.model_extra) <= {
            "trace_id",
            "tenant_tier",
            "region",
            "ab_bucket",
        }


def test_malformed_messages_fail_with_the_right_reason(baseline: list[Generated]) -> None:
    bad = [it for it in baseline if it.malformed is not None]
    # 0.5 % by default: half the dead-letter alert's 1 % ceiling (healthy traffic)
    assert 0.003 <= len(bad) / len(baseline) <= 0.007
    assert {it.malformed for it in bad} == set(MALFORMED_KINDS)
    for it in bad:
        assert b"\n" not in it.raw and it.truth == []
        with pytest.raises(InvalidEvent) as err:
            parse_event(it.raw)
        assert err.value.reason == EXPECTED_REASON[it.malformed or ""], (it.malformed, err.value)
        if it.malformed == "oversized":
            assert len(json.loads(it.raw)["response"]) >= 25_000


def test_malformed_rate_is_configurable() -> None:
    assert not any(it.malformed for it in generate(1000, malformed_rate=0.0))
    share = sum(1 for it in generate(1000, malformed_rate=0.2) if it.malformed) / 1000
    assert 0.17 <= share <= 0.23


# ------------------------------------------------------------------ rates
def test_every_failure_mode_appears_at_least_five_times(baseline: list[Generated]) -> None:
    counts = collections.Counter(m for it in baseline for m in it.truth)
    assert {m: counts[m] for m in FAILURE_MODES if counts[m] < 5} == {}


def test_baseline_rates_are_realistic(baseline: list[Generated]) -> None:
    rates = _rates(baseline)
    # PII leaks page at 1 % of a service's turns (RagpulseFailureModeRateHigh): a healthy
    # service stays well under it (about 0.35 % over 20,000 messages)
    assert 0.002 <= rates.pop("pii_leak") <= 0.006
    assert {m: r for m, r in rates.items() if not 0.015 <= r <= 0.04} == {}
    valid = [it for it in baseline if it.malformed is None]
    assert sum(1 for it in valid if not it.truth) / len(valid) >= 0.74


def test_degraded_phase_raises_four_rates(
    baseline: list[Generated], degraded: list[Generated]
) -> None:
    base, worse = _rates(baseline), _rates(degraded)
    assert worse["false_rejection"] >= 3.0 * base["false_rejection"]
    assert worse["training_cutoff_excuse"] >= 2.2 * base["training_cutoff_excuse"]
    assert worse["invented_identifier"] >= 3.0 * base["invented_identifier"]
    # the redaction step is gone: a PII leak in 20-30 % of turns (baseline ~0.35 %)
    assert worse["pii_leak"] >= 0.15 and worse["pii_leak"] >= 25 * base["pii_leak"]
    for mode in set(FAILURE_MODES) - {
        "false_rejection",
        "training_cutoff_excuse",
        "invented_identifier",
        "pii_leak",
    }:
        assert 0.6 <= worse[mode] / base[mode] <= 1.6, mode
    versions = {ev["prompt_version"] for _, ev in _valid(degraded)}
    assert versions == {"v1.5-degraded"}
    assert {ev["prompt_version"] for _, ev in _valid(baseline)} == {"v1.4"}


def _max_window_share(flags: list[bool], size: int) -> float:
    """The highest share of True among `size` consecutive flags."""
    window = best = sum(flags[:size])
    for i in range(size, len(flags)):
        window += flags[i] - flags[i - size]
        best = max(best, window)
    return best / size


def test_baseline_rates_stay_below_the_alert_ceilings() -> None:
    """Healthy traffic does not alert: in every 1,000 consecutive turns of a service (the
    least the end-to-end Prometheus test judges a window on; the default 10m window holds
    ~7,500 at the demo's 25 events/s) each injected failure mode's share stays below its
    RagpulseFailureModeRateHigh ceiling, and in every 1,000 consecutive messages the
    malformed share below RagpulseDeadLetterRatioHigh's. The first 6,000 messages of seed 7:
    the stream `ragpulse demo` replays from its start."""
    alerts = AlertSettings()
    ceilings = alerts.failure_modes.ceilings
    items = list(generate(6000, seed=7))
    over = {}
    for service in ("earnings-qa", "it-support"):
        turns = [it.truth for it, ev in _valid(items) if ev["service"] == service]
        for mode in FAILURE_MODES:
            share = _max_window_share([mode in t for t in turns], 1000)
            if share >= ceilings.get(mode, alerts.failure_modes.default_ceiling):
                over[(service, mode)] = share
    assert over == {}
    malformed = _max_window_share([it.malformed is not None for it in items], 1000)
    assert malformed < alerts.dead_letters.ceiling


# ------------------------------------------------------------------ shape of the traffic
def test_sizes_and_chunks(baseline: list[Generated]) -> None:
    valid = _valid(baseline)
    for _, ev in valid:
        chunks = ev["retrieved_context"]
        assert 3 <= len(chunks) <= 8
        assert all(500 <= len(c["content"]) <= 1500 for c in chunks)
        assert all(0.3 <= c["score"] <= 0.95 for c in chunks)
        assert len({c["id"] for c in chunks}) == len(chunks)
    sizes = [len(it.raw) for it, _ in valid]
    assert 4000 <= sum(sizes) / len(sizes) <= 10_000
    assert sum(1 for s in sizes if 3500 <= s <= 12_000) / len(sizes) >= 0.9


def test_services_models_labels_and_passthrough_fields(baseline: list[Generated]) -> None:
    evs = [ev for _, ev in _valid(baseline)]
    services = collections.Counter(ev["service"] for ev in evs)
    assert set(services) == {"earnings-qa", "it-support"}
    assert 0.4 <= services["earnings-qa"] / len(evs) <= 0.6
    assert 2 <= len({ev["model"] for ev in evs}) <= 3
    assert {ev["environment"] for ev in evs} == {"prod"}
    labelled = [ev for ev in evs if ev.get("labels")]
    assert 0.4 <= len(labelled) / len(evs) <= 0.6
    assert {ev["labels"]["category"] for ev in labelled} == {
        "should_answer",
        "should_answer_partial",
        "should_reject_policy",
        "should_reject_no_context",
    }
    assert all(ev["case"]["metadata"]["ticket"] for ev in evs if ev["service"] == "it-support")
    assert sum(1 for ev in evs if "trace_id" in ev) / len(evs) > 0.8
    assert sum(1 for ev in evs if ev.get("feedback")) / len(evs) > 0.03
    stamps = [datetime.fromisoformat(ev["timestamp"]) for ev in evs]
    assert stamps == sorted(stamps)


def test_multi_turn_history_is_consistent(baseline: list[Generated]) -> None:
    convs: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for it, ev in _valid(baseline):
        assert it.key == ev["conversation_id"].encode()
        convs[ev["conversation_id"]].append(ev)
    multi = [c for c in convs.values() if len(c) > 1]
    assert 0.2 <= len(multi) / len(convs) <= 0.4
    assert max(len(c) for c in convs.values()) == 4
    for turns in convs.values():
        assert [t["turn_index"] for t in turns] == list(range(len(turns)))
        assert len({t["service"] for t in turns}) == 1
        assert len({json.dumps(t.get("case"), sort_keys=True) for t in turns}) == 1
        expected: list[dict[str, str]] = []
        for t in turns:
            assert t.get("history", []) == expected
            expected = [
                *expected,
                {"role": "user", "content": t["query"]},
                {"role": "assistant", "content": t["response"]},
            ]


def test_labels_match_the_label_dependent_truth(baseline: list[Generated]) -> None:
    refusal = re.compile(r"I'm sorry|couldn't find|don't cover|not able to|unable to|can't", re.I)
    unlabelled_refusals = reject_refusals = 0
    for it, ev in _valid(baseline):
        expected = (ev.get("labels") or {}).get("expected_behavior")
        if "false_rejection" in it.truth:
            assert expected == "answer" and not ev["citations"]
        if "false_acceptance" in it.truth:
            assert expected == "reject"
        if not it.truth and refusal.search(ev["response"]) and not ev["citations"]:
            unlabelled_refusals += expected is None
            reject_refusals += expected == "reject"
    assert unlabelled_refusals >= 10 and reject_refusals >= 10


# ------------------------------------------------------------------ honest ground truth
TOKEN = re.compile(r"`[^`\n]+`|[^\s–—]*\d[^\s–—]*")  # noqa: RUF001 - dashes split ranges


def _sources(ev: dict[str, Any]) -> str:
    parts = [ev["query"], *(m["content"] for m in ev.get("history", []))]
    case = ev.get("case") or {}
    parts += [str(case.get("subject", "")), str(case.get("description", ""))]
    parts += [str(v) for v in (case.get("metadata") or {}).values()]
    parts += [c["content"] for c in ev["retrieved_context"]]
    return "\n".join(parts)


def _unsourced_tokens(ev: dict[str, Any], sources: str) -> list[str]:
    """Digit-bearing tokens and `code` spans of the response that are not in the sources."""
    text = re.sub(r"\[\d+\]", " ", ev["response"])
    text = re.sub(r"(?m)^\d+\. ", "", text)
    out = []
    for tok in TOKEN.findall(text):
        tok = tok.strip(".,;:()\"“”'!?").removesuffix("'s")
        if tok and tok not in sources:
            out.append(tok)
    return out


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _bad_citation(ev: dict[str, Any]) -> bool:
    policy = {c["id"]: c.get("policy", "summarize") for c in ev["retrieved_context"]}
    markers = {c["marker"] for c in ev["citations"]}
    if any(m not in markers for m in re.findall(r"\[\d+\]", ev["response"])):
        return True
    cited = [policy.get(c["source_id"], "missing") for c in ev["citations"]]
    return any(p in ("missing", "no_use") for p in cited)


def _pii(ev: dict[str, Any], sources: str) -> list[str]:
    text = ev["response"]
    found = [e for e in re.findall(r"[\w.+-]+@[\w-]+\.[\w.]+", text) if e not in sources]
    for m in re.findall(r"(?<![\d-])(?:\d[ -]?){13,19}(?!\d)", text):
        if luhn_ok(re.sub(r"\D", "", m)) and m.strip() not in sources:
            found.append(m)
    found += [m for m in re.findall(r"\b\d{3}-\d{2}-\d{4}\b", text) if m not in sources]
    iban = r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}"
    found += [m for m in re.findall(iban, text) if m not in sources]
    phone = r"\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b|\+\d{1,2} \d{2,3} \d{3,4} \d{4}"
    found += [m for m in re.findall(phone, text) if m not in sources]
    return found


def _copies(ev: dict[str, Any], policy: str, n: int, unquoted: bool) -> bool:
    text = ev["response"]
    if unquoted:
        text = re.sub(r"[“\"][^”\"]*[”\"]", " ", text)
    grams = _ngrams(text, n)
    return any(
        grams & _ngrams(c["content"], n)
        for c in ev["retrieved_context"]
        if c.get("policy", "summarize") == policy
    )


CUTOFF = re.compile(
    r"training|knowledge cutoff|knowledge only|real-time|browse the internet|last trained|"
    r"knowledge of .* only goes|knowledge has",
    re.I,
)
LOOSE_NUMBERS = {"price_prediction", "training_cutoff_excuse", "pii_leak", "false_acceptance"}


@pytest.mark.parametrize("phase", ["baseline", "degraded"])
def test_truth_matches_what_the_text_shows(
    phase: str, baseline: list[Generated], degraded: list[Generated]
) -> None:
    """Each injected mode is visible in the event, and absent where not injected."""
    problems: collections.Counter[str] = collections.Counter()
    for it, ev in _valid(baseline if phase == "baseline" else degraded):
        truth, src = set(it.truth), _sources(ev)
        unsourced = _unsourced_tokens(ev, src)
        checks = {
            "training_cutoff_excuse": bool(CUTOFF.search(ev["response"])),
            "invalid_citation": _bad_citation(ev),
            "pii_leak": bool(_pii(ev, src)),
            "no_use_copy": _copies(ev, "no_use", 10, unquoted=False),
            "quote_only_paraphrase": _copies(ev, "quote_only", 8, unquoted=True),
        }
        for mode, seen in checks.items():
            if (mode in truth) != seen:
                problems[mode] += 1
        if "invented_identifier" in truth:
            if not unsourced:
                problems["invented_identifier"] += 1
        elif not truth & (LOOSE_NUMBERS | {"invalid_citation"}) and unsourced:
            problems["unsourced identifier or number"] += 1
    assert dict(problems) == {}


def test_clean_turns_include_tricky_negatives(baseline: list[Generated]) -> None:
    clean = [ev for it, ev in _valid(baseline) if not it.truth]
    text = [ev["response"] for ev in clean]
    # decoy: 16-digit purchase orders from the case that fail the Luhn check
    orders = [m for t in text for m in re.findall(r"\b\d{4}-\d{4}-\d{4}-\d{4}\b", t)]
    assert orders and not any(luhn_ok(o.replace("-", "")) for o in orders)
    assert any("investment advice" in t or "recommend trades" in t for t in text)
    assert any(re.search(r"guided revenue|expects .* revenue", t) for t in text)
    assert any("“" in t or '"' in t for t in text)  # quote-only content, quoted
    no_use = [
        ev for ev in clean if any(c.get("policy") == "no_use" for c in ev["retrieved_context"])
    ]
    assert len(no_use) > 100
    assert any(ev.get("labels", {}).get("category") == "should_answer_partial" for ev in clean)


# ------------------------------------------------------------------ writers
def test_writers_produce_aligned_events_and_truth(tmp_path: Path) -> None:
    items = list(generate(300, seed=5, malformed_rate=0.05))
    events, truth = tmp_path / "events.jsonl", tmp_path / "truth.jsonl"
    assert write_jsonl(events, items) == 300
    assert write_truth(truth, items) == 300
    lines = events.read_bytes().split(b"\n")
    assert lines[-1] == b"" and lines[:-1] == [it.raw for it in items]
    records = [json.loads(x) for x in truth.read_text().splitlines()]
    assert [r["line"] for r in records] == list(range(1, 301))
    for rec, it in zip(records, items, strict=True):
        assert rec == {
            "line": rec["line"],
            "event_id": it.event_id,
            "failure_modes": it.truth,
            "malformed": it.malformed,
        }
    both_e, both_t = tmp_path / "e2.jsonl", tmp_path / "t2.jsonl"
    assert write_dataset(both_e, both_t, iter(items)) == 300
    assert both_e.read_bytes() == events.read_bytes() and both_t.read_bytes() == truth.read_bytes()
    buf = io.BytesIO()
    write_jsonl(buf, items[:10])
    text = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    write_jsonl(text, items[:10])
    text.flush()
    assert isinstance(text.buffer, io.BytesIO) and text.buffer.getvalue() == buf.getvalue()
