"""The identifiers detector's fast paths answer as the plain ones they stand for."""

from __future__ import annotations

import random

import pytest

import detectors.identifiers as ident
from detectors._identifiers_patterns import _PATTERNS
from detectors._identifiers_sources import _TO_ASCII, _has_word, _Sources, _sources
from detectors._identifiers_text import _LEAD, _TRAIL, _ascii_probe, _norm
from detectors.identifiers import IdentifierDetector
from detectors.lexical import _INLINE_CODE
from detectors.regex import compile_pattern, iter_matches
from stream.contract.events import Event, EventLimits

PIECES = ["a", "B", "k", "K", "i", "I", "v", "V", "1", "0", " ", "-", "_", "/", "//", "\\"]
PIECES += ["\n", "`", "\u0130", "\u212a", "\u03a3", "\u00e9", "\u2014", "\u017f", "kb-1"]
PIECES += ["sbctl diag", "SBCTL Diag", "x.y", "\u00e9sbctl diag"]


def _text(rnd: random.Random, n: int) -> str:
    return "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, n)))


def _event(rnd: random.Random, **fields: object) -> Event:
    chunks = [{"id": f"c{i}", "content": _text(rnd, 30)} for i in range(rnd.randint(0, 4))]
    data: dict[str, object] = {"event_id": "e1", "query": _text(rnd, 10), "response": "r"}
    data |= {"retrieved_context": chunks, **fields}
    return Event.model_validate(data, context={"limits": EventLimits(max_text_chars=500_000)})


def test_only_the_listed_characters_lower_to_anything_ascii() -> None:
    others = "".join(c for c in map(chr, range(0x80, 0x110000)) if c not in _TO_ASCII)
    lowered = others.lower().encode("utf-8", "surrogatepass")
    assert lowered.translate(None, bytes(range(0x80, 0x100))) == b""
    assert all(any(ch.isascii() for ch in c.lower()) for c in _TO_ASCII)


def test_cmd_inline_is_lexicals_inline_code_pattern() -> None:
    """identifiers finds backticked commands with `lexical.inline_code`: the same pattern."""
    assert next(r for p, _, r in _PATTERNS if p == "cmd_inline") == _INLINE_CODE._pattern


def test_patterns_match_the_ascii_probe_as_the_text() -> None:
    pieces = ["KB", "kb", "Kb-", "b", "1234", "CVE-2024-", "INC", "ERR", "Error ", "E", "E-", "0x"]
    pieces += ["ABC-", "v", "1", "12", "4.", ".", "-rc1", "_", "/", "~/", "./", "C:\\", "\\\\"]
    pieces += [" ", "\n", "\t", "$ ", "Run ", "sudo ", "kubectl ", "--x", "=", "(", "`", "'"]
    pieces += ["?", "#", "\u212a", "x\u212ab-1234", "\u00e9", "\u2014", "\u00a0", "\u0130"]
    pieces += ["\u0660", "\U0001f600"]
    rnd = random.Random(5)
    compiled = [(compile_pattern(regex, True), pid) for pid, _, regex in _PATTERNS]
    for _ in range(1500):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 30)))
        probe = _ascii_probe(text)
        assert len(probe) == len(text) and (probe == text or probe.isascii())
        for pattern, pid in compiled:
            for group in range(pattern.groups + 1):
                want = [(s, e, len(g)) for s, e, g in iter_matches(pattern, text, 50, group)]
                got = [(s, e, len(g)) for s, e, g in iter_matches(pattern, probe, 50, group)]
                assert got == want, (pid, text)


def test_sources_answer_as_the_normalised_text() -> None:
    rnd = random.Random(7)
    for _ in range(400):
        event = _event(rnd)
        joined = _sources(event)
        for _ in range(10):
            part = _text(rnd, 3)
            raw = part.strip().strip(_TRAIL).lstrip(_LEAD)
            key = _norm(part).replace("//", "/")
            version = raw.lstrip("vV"), _norm(part).lstrip("v").replace("//", "/")
            for limit in (1, 2, 50):
                sources = _Sources(event)
                assert sources.has_word(key.strip(), limit) == _has_word(joined, key.strip(), limit)
            for raw_key, norm_key in ((raw, key), version):
                assert _Sources(event).grounded(norm_key, raw_key) == (norm_key in joined), part
                assert (norm_key in _Sources(event)) == (norm_key in joined), part
            assert _Sources(event).text == joined


class _PlainSources:
    """The sources as the normalised joined text only (what the fast paths stand for)."""

    def __init__(self, event: Event) -> None:
        self.text = _sources(event)

    def grounded(self, key: str, raw: str) -> bool:
        return key in self.text

    def has_word(self, words: str, limit: int = 50) -> bool:
        return _has_word(self.text, words, limit)


@pytest.mark.parametrize(("identifiers", "matches"), [(100, 200), (3, 2)])
def test_detector_finds_what_the_plain_lookups_find(
    identifiers: int, matches: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    words = ["`sbctl diag --upload`", "$ kubectl get pods -n x\n", "run pip install --user y"]
    words += ["/etc/x/y.conf", "C:\\Win\\x", "v2.3.1", "KB0012345", "ERR 4012", "\u212a", "\u0130"]
    words += ["\u2014", " ", "\n", "`vaultctl KEY rotate --all`", "VaultCtl key", "E-2207"]
    words += ["C:\\Us\u00e9rs\\x?", "kb-1234\u00e9", "?"]
    rnd = random.Random(11)
    detector = IdentifierDetector(max_identifiers=identifiers, max_matches=matches)
    events = []
    for _ in range(600):
        mixed = [*words, *PIECES]
        response = "".join(rnd.choice(mixed) for _ in range(rnd.randint(1, 25)))
        context = [{"id": "c", "content": "".join(rnd.choice(mixed) for _ in range(40))}]
        events.append(_event(rnd, response=response, retrieved_context=context))
    fast = [detector(e) for e in events]
    monkeypatch.setattr(ident, "_Sources", _PlainSources)
    monkeypatch.setattr(ident, "_ascii_probe", lambda text: text)
    assert [detector(e) for e in events] == fast
    assert any(fast) and not all(fast)
