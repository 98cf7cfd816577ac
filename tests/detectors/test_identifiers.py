"""Identifier integrity: identifiers in the response that no input mentions."""

from __future__ import annotations

import time
from typing import Any

import pytest

from detectors.base import create_detector
from detectors.identifiers import KINDS, IdentifierDetector
from stream.contract.events import Event, EventLimits


def _event(response: str, **extra: Any) -> Event:
    data: dict[str, Any] = {
        "event_id": "e1",
        "query": extra.pop("query", "help"),
        "response": response,
    }
    data.update(extra)
    limits = EventLimits(max_text_chars=200_000, max_chunk_chars=200_000)
    return Event.model_validate(data, context={"limits": limits})


def _found(response: str, **extra: Any) -> list[tuple[str, str]]:
    hits = IdentifierDetector()(_event(response, **extra))
    assert all(h.failure_mode == "invented_identifier" for h in hits)
    assert all(h.span is not None for h in hits)
    ev = _event(response, **extra)
    return [(h.category, ev.response[h.span[0] : h.span[1]]) for h in hits if h.span]


def test_registered_and_categories() -> None:
    det = create_detector("identifiers")
    assert isinstance(det, IdentifierDetector)
    assert det.categories == KINDS
    assert IdentifierDetector(kinds=["path", "version"]).categories == ("version", "path")
    with pytest.raises(ValueError, match="unknown identifier kinds"):
        IdentifierDetector(kinds=["nope"])


@pytest.mark.parametrize(
    ("ident", "kind"),
    [
        ("ERR_CONN_4021", "error_code"),
        ("E1234", "error_code"),
        ("ORA-12154", "error_code"),
        ("ECONNREFUSED", "error_code"),
        ("0x80070005", "hex_code"),
        ("v2.3.1", "version"),
        ("4.18.0-rc1", "version"),
        ("1.2.3", "version"),
        ("/etc/nginx/nginx.conf", "path"),
        ("~/.config/app", "path"),
        ("C:\\Windows\\System32\\drivers", "path"),
        ("KB0012345", "kb_id"),
        ("KB-1234", "kb_id"),
        ("INC0012345", "kb_id"),
        ("PAY-1234", "kb_id"),
        ("CVE-2021-44228", "kb_id"),
    ],
)
def test_invented_identifier_is_flagged(ident: str, kind: str) -> None:
    assert _found(f"The fix: see {ident}.") == [(kind, ident)]


@pytest.mark.parametrize(
    ("ident", "kind"),
    [
        ("ERR_CONN_4021", "error_code"),
        ("0x80070005", "hex_code"),
        ("v2.3.1", "version"),
        ("/etc/nginx/nginx.conf", "path"),
        ("KB0012345", "kb_id"),
    ],
)
def test_grounded_identifier_is_silent_case_and_punctuation(ident: str, kind: str) -> None:
    src = f"Customer saw ({ident.lower()}), twice."
    assert _found(f"Indeed {ident.upper()}.", query=src) == []
    # grounded by a chunk, the history, or the case
    assert _found(f"Indeed {ident}.", retrieved_context=[{"id": "c", "content": src}]) == []
    assert _found(f"Indeed {ident}.", history=[{"role": "user", "content": src}]) == []
    assert _found(f"Indeed {ident}!", case={"subject": "s", "metadata": {"code": ident}}) == []


def test_version_v_prefix_and_windows_separators_normalised() -> None:
    assert _found("Upgrade to v2.3.1 now.", query="running 2.3.1") == []
    resp = "Open C:\\Windows\\System32\\drivers\\etc\\hosts today."
    assert _found(resp, query="file c:/windows/system32/drivers/etc/hosts") == []


def test_numbers_in_prose_are_not_identifiers() -> None:
    response = (
        "It costs $1,234.56 (about 3.5% more than in 2024), took 45 minutes, HTTP 503 "
        "came back at 10:30 on 2024-01-15 and 2024.01.15; Python 3.11 and 15.01.2024; "
        "the server is 10.0.0.1. Use UTF-8, SHA-256 or COVID-19 data; see RFC 7231."
    )
    assert _found(response) == []


def test_commands_compare_head_and_flags() -> None:
    ctx = [{"id": "c", "content": "Run kubectl rollout restart with --timeout=30s."}]
    ok = "Run `kubectl rollout restart deployment/api --timeout=60s`."
    assert _found(ok, retrieved_context=ctx) == []
    bad = "Then `kubectl delete pod x --force` and `pip install -U --force-reinstall y`."
    hits = IdentifierDetector()(_event(bad, retrieved_context=ctx))
    assert [h.category for h in hits] == ["command", "command"]
    assert "--force" in hits[0].evidence
    assert "pip" in hits[1].evidence and "--force-reinstall" in hits[1].evidence


def test_commands_on_prompt_lines_and_shell_fences() -> None:
    response = "Try:\n$ systemctl restart nginx\n```bash\ndocker compose up --detach\n```\n"
    found = _found(response, query="nginx is down")
    assert [k for k, _ in found] == ["command", "command"]
    assert found[0][1] == "systemctl restart nginx"


def test_code_that_is_not_a_command_is_not_a_command() -> None:
    assert _found("Set `max_retries` in `config.yaml` to `true`.") == []
    assert _found('```json\n{"a": 1}\n```') == []


def test_one_hit_per_identifier_and_kinds_subset() -> None:
    response = "ERR_X_42 then err_x_42 again, and v9.9.9 and /opt/app/bin."
    assert [k for k, _ in _found(response)] == ["error_code", "version", "path"]
    hits = IdentifierDetector(kinds=["version"])(_event(response))
    assert [h.category for h in hits] == ["version"]


def test_path_inside_url_or_prose_slash_is_not_a_path() -> None:
    assert _found("See https://example.com/docs/setup and use and/or TCP/IP 24/7.") == []


def test_min_length() -> None:
    assert _found("Flag `-x` ok", query="q") == []
    det = IdentifierDetector(min_length=20)
    assert det(_event("See ERR_CONN_4021.")) == []


@pytest.mark.parametrize(
    ("unit", "count", "context"),
    [
        (  # every identifier shape, back to back
            "ERR_CONN_{i} 0x{i:08x} v1.{i}.3 /p/{i}/q KB{i:07d} `tool{i} --f{i}` "
            "1.2.3.4.5.6. C:\\a ",
            2000,
            "ERR_CONN_1 /etc/nginx/nginx.conf v2.3.1 ",
        ),
        (  # shapes with separators, and commands in prose
            "ERR {i} KB {i:05d} E-{i:04d} KB-00-{i:04d} Run sudo systemctl restart a{i} and ",
            3000,
            "ERR-4011 KB-00-5521 E-2208 kb 4470 ",
        ),
    ],
    ids=["shapes", "separated_shapes"],
)
def test_adversarial_100kb_is_fast(unit: str, count: int, context: str) -> None:
    response = "".join(unit.format(i=i) for i in range(count))[:100_000]
    ctx = [{"id": "c", "content": context * 500}]
    event = _event(response, retrieved_context=ctx)
    det = IdentifierDetector()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        hits = det(event)
        best = min(best, time.perf_counter() - t0)
    assert hits
    assert best < 0.05, f"{best * 1000:.1f} ms"


def test_corrupted_identifier_is_flagged() -> None:
    query = "We get ERR_CONN_4021 after upgrading to 4.18.0 on KB0012345"
    found = _found("ERR_CONN_4012 appears since 4.18.1; see KB0012354.", query=query)
    assert found == [
        ("error_code", "ERR_CONN_4012"),
        ("version", "4.18.1"),
        ("kb_id", "KB0012354"),
    ]


@pytest.mark.parametrize(
    "phone",
    ["858.289.9657", "465.479.5721", "1.858.289.9657", "+1.858.289.9657", "(call 858.289.9657)"],
)
def test_dotted_phone_numbers_are_not_versions(phone: str) -> None:
    assert _found(f"Call the service desk at {phone} for help.") == []


@pytest.mark.parametrize("version", ["12.40.1234", "858.28.9657", "1.2.3.4567", "3.858.289.9657"])
def test_version_near_the_phone_shape_is_still_a_version(version: str) -> None:
    assert _found(f"Upgrade to {version} first.") == [("version", version)]


@pytest.mark.parametrize(
    ("response", "kind", "ident"),
    [
        ("That is error ERR 5521 from the sync client.", "error_code", "ERR 5521"),
        ("Error 1603 means the installer failed.", "error_code", "Error 1603"),
        ("The installer stops with E-3301.", "error_code", "E-3301"),
        ("It logs ERR-SYNC-4102 on start.", "error_code", "ERR-SYNC-4102"),
        ("See KB 88213 for the steps.", "kb_id", "KB 88213"),
        ("Follow INC-2024-00931 for updates.", "kb_id", "INC-2024-00931"),
        ("The article is KB-AUTH-0042.", "kb_id", "KB-AUTH-0042"),
    ],
)
def test_separated_identifier_shapes_are_extracted_whole(
    response: str, kind: str, ident: str
) -> None:
    assert _found(response) == [(kind, ident)]


def test_multi_segment_id_is_compared_whole_not_by_its_head() -> None:
    ctx = [{"id": "c", "content": "See KB-00-5521 for the printer driver rollback."}]
    assert _found("The rollback is in KB-00-5512.", retrieved_context=ctx) == [
        ("kb_id", "KB-00-5512")
    ]
    assert _found("The rollback is in KB-00-5521.", retrieved_context=ctx) == []
    ctx = [{"id": "c", "content": "Installer error E-3310 means low disk."}]
    assert _found("Installer stops with E-3301.", retrieved_context=ctx) == [
        ("error_code", "E-3301")
    ]


@pytest.mark.parametrize(
    ("response", "source"),
    [
        ("That's ERR 4012 again.", "Known issue: ERR-4012 after upgrade."),
        ("That's ERR-4012 again.", "known issue: err 4012 after upgrade"),
        ("That's ERR 4012 again.", "Known issue: ERR_4012 after upgrade."),
        ("That's error 4012 again.", "ERR-4012: token expired"),
        ("Check kb 0012345.", "KB0012345: Outlook search fix."),
        ("Check KB-0012345.", "KB0012345: Outlook search fix."),
        ("KB-00-5521 covers it.", "see kb 00 5521 for the rollback"),
        ("Code E-2207 during install.", "Install fails with E2207 on two laptops."),
    ],
)
def test_separators_and_case_are_normalised_before_grounding(response: str, source: str) -> None:
    assert _found(response, query=source) == []


@pytest.mark.parametrize(
    "response",
    [
        "It returned HTTP 503 and then error 404.",  # status codes, not identifiers
        "Upgrade to Windows 11 and Office 2021.",
        "Code E 2207 was shown.",  # a single letter and a space
        "Use SHA-256-HMAC signing and UTF-8.",
        "The ERR flag and 4012 other rows.",
    ],
)
def test_separated_near_misses_are_not_identifiers(response: str) -> None:
    assert _found(response) == []


def test_a_separated_key_is_not_grounded_across_a_word_boundary() -> None:
    # "the 2207" must not ground "E-2207" (the e of "the" is not a prefix)
    assert _found("Code E-2207 again.", query="row the 2207 shows") == [("error_code", "E-2207")]


def test_command_in_prose_and_product_cli_sub_command() -> None:
    found = _found("Run sudo systemctl restart nimbus-agent and then check it.", query="q")
    assert found == [("command", "sudo systemctl restart nimbus-agent")]
    ok = "kubectl rollout restart is the safe way"
    assert _found("Run kubectl rollout restart deployment/api now.", query=ok) == []
    assert _found("Run the installer and reboot.") == []  # not a known CLI name
    ctx = [{"id": "c", "content": "To rotate keys, run `vaultctl keys rotate --tenant <id>`."}]
    hits = IdentifierDetector()(
        _event("Run `vaultctl key rotate --tenant <id>`.", retrieved_context=ctx)
    )
    assert [h.category for h in hits] == ["command"]
    assert "vaultctl key" in hits[0].evidence
    good = "Run `vaultctl keys rotate --tenant <id>` now."
    assert _found(good, retrieved_context=ctx) == []


def _readme_event() -> dict[str, Any]:
    import json
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## The event") :]
    start = section.index("```json") + len("```json")
    return dict(json.loads(section[start : section.index("```", start)]))


def test_the_readme_example_event_is_grounded_by_its_chunk_id_and_source() -> None:
    data = _readme_event()
    event = Event.model_validate(data)
    assert IdentifierDetector()(event) == []  # KB0052210: chunk id kb0052210-s2
    for chunk in data["retrieved_context"]:
        chunk.pop("source", None)
    assert IdentifierDetector()(Event.model_validate(data)) == []  # the id alone grounds it
    for chunk in data["retrieved_context"]:
        chunk["id"] = "c1"
    hits = IdentifierDetector()(Event.model_validate(data))
    assert [(h.category, h.evidence.split()[1]) for h in hits] == [("kb_id", "KB0052210")]


@pytest.mark.parametrize(
    "chunk",
    [
        {"id": "c1", "content": "x", "source": "kb/orbitmail/KB0052210.md"},
        {"id": "c1", "content": "x", "title": "KB-0052210: SPF records"},
        {"id": "c1", "content": "x", "metadata": {"article": "kb_0052210"}},
        {"id": "KB0052210", "content": "x"},
    ],
)
def test_chunk_id_source_title_and_metadata_ground_identifiers(chunk: dict[str, Any]) -> None:
    assert _found("Per KB0052210, update the SPF record.", retrieved_context=[chunk]) == []


def test_chunk_labels_do_not_ground_a_different_identifier() -> None:
    chunk = {
        "id": "kb0052211-s2",
        "content": "x",
        "source": "kb/KB0052211.md",
        "title": "KB0052211",
    }
    assert _found("Per KB0052210, update it.", retrieved_context=[chunk]) == [
        ("kb_id", "KB0052210")
    ]
