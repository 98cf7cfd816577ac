"""Identifier integrity: identifiers in the response that no input mentions.

Finds error codes, hex codes, versions, paths, commands and KB / ticket ids in the
response (declared to the shared RE2 scan: one pass) and flags each one whose normalised
form (lowercased, ``\\`` read as ``/``, trailing punctuation and a version's ``v``
dropped) is not a substring of the normalised sources: query, history, case subject /
description / metadata values, and retrieved chunks: their content, ``id``, ``source``,
``title`` and metadata values (failure mode
``invented_identifier``; category = kind). One hit per distinct identifier.

Kinds: ``error_code`` (ERR_CONN_4021, E1234, ORA-12154, LNK2019, ECONNREFUSED, and
separated shapes: ERR 4012, Error 1603, E-2207, ERR-SYNC-4102), ``hex_code``
(0x80070005), ``version`` (v2.3, 1.2.3, 4.18.0-rc1: two dots or a ``v``), ``path``
(/etc/nginx/nginx.conf, ~/.config/x, C:\\Windows\\System32), ``command`` (in
`backticks`, on ``$ `` lines, in shell code fences, or in prose after run / execute /
type / enter with a well-known CLI name: the command head and its flags are compared,
e.g. ``pip`` and ``--force-reinstall``; for a product CLI that is not a standard tool
also its first sub-command, as a whole word: ``vaultctl key`` is not grounded by
``vaultctl keys``), ``kb_id`` (KB0012345, KB-1234, KB 4471, INC0012345, CVE-2024-1234,
JIRA-style ABC-1234, multi-segment KB-00-5512 / KB-STOR-0412, each taken whole).

Separators: an ``error_code`` or ``kb_id`` not found as a substring is looked for once
more with its letter and digit runs joined by nothing, ``-``, ``_`` or a space, as a
whole word ("error" = "err"): ``ERR 4012`` is grounded by ``ERR-4012``, ``kb0012345``
by ``KB-0012345``, but ``KB-00-5512`` is not grounded by ``KB-00-5521``.

Limits: numbers in prose (amounts, percentages, years, ``HTTP 503``, ``error 404``,
``3.5``) are not identifiers and are never flagged; a single letter and a space
(``E 2207``) is not an identifier; dates like 2024.01.15, IPv4 addresses and dotted
phone numbers (858.289.9657, 1.858.289.9657: a version never has the 3-3-4 digit
shape) are not versions; a substring match counts as grounded (``2.3.1`` is grounded
by ``12.3.1``); a command's later sub-commands and arguments are not compared; for
bounded time on hostile text at most ``max_matches`` (200) matches per pattern are read
and ``max_identifiers`` (100) distinct identifiers checked per event.
"""

from __future__ import annotations

from collections.abc import Iterable

from detectors._identifiers_patterns import (
    _KIND,
    _PATTERNS,
    _PRIORITY,
    _PROSE_STOP,
    _SEPARATED_KINDS,
    _SHELL_LANGS,
)
from detectors._identifiers_sources import _grounded_separated, _Sources
from detectors._identifiers_text import _LEAD, _TRAIL, _ascii_probe, _command, _keep, _norm
from detectors.base import Detection, register_detector
from detectors.lexical import fenced_blocks, inline_code
from detectors.regex import iter_matches
from detectors.scan import Detector, PatternSpec, Scan
from stream.contract.events import Event

__all__ = ["KINDS", "IdentifierDetector"]

KINDS = ("error_code", "hex_code", "version", "path", "command", "kb_id")
FAILURE = "invented_identifier"


@register_detector("identifiers")
class IdentifierDetector(Detector):
    name = "identifiers"

    def __init__(
        self,
        *,
        kinds: list[str] | None = None,
        min_length: int = 3,
        max_identifiers: int = 100,
        max_matches: int = 200,
    ) -> None:
        unknown = set(kinds or ()) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown identifier kinds {sorted(unknown)}; known: {KINDS}")
        self.kinds = frozenset(kinds) if kinds is not None else frozenset(KINDS)
        self.min_length = min_length
        self.max_identifiers = max_identifiers
        self.max_matches = max_matches
        self.patterns = tuple(
            PatternSpec(pid, p, case_sensitive=True)
            for pid, kind, p in _PATTERNS
            if kind in self.kinds
        )

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(k for k in KINDS if k in self.kinds)

    def _candidates(self, scan: Scan, text: str) -> list[tuple[str, int, int, list[str]]]:
        """(kind, start, end, parts to ground): spans resolved, longest / earliest wins."""
        plain: list[tuple[int, int, int, str]] = []
        cmds: list[tuple[str, int, int, list[str]]] = []
        probe: str | None = None
        for pid in scan.matching(self, "response", text):
            kind = _KIND[pid]
            found: Iterable[tuple[int, int, str]]
            if pid == "cmd_inline":  # the same pattern as lexical's inline code
                found = [(s, e, text[s:e]) for s, e in inline_code(text, self.max_matches)]
            else:
                group = 1 if pid in ("path", "cmd_prompt", "cmd_prose") else 0
                probe = _ascii_probe(text) if probe is None else probe
                found = iter_matches(scan.compiled(self, pid), probe, self.max_matches, group)
            for _, end, ident in found:
                start = end - len(ident)
                ident = text[start:end]
                if pid == "cmd_prose":
                    toks = ident.split()
                    cut = next((i for i, t in enumerate(toks) if t in _PROSE_STOP), len(toks))
                    ident = " ".join(toks[:cut])
                    end = start + len(ident)  # single spaces: the evidence may differ
                if kind == "command":
                    parts = _command(ident.strip("`")[:500], strict=False)
                    if parts:
                        cmds.append((kind, start, end, parts))
                elif _keep(pid, ident):
                    plain.append((start, start - end, _PRIORITY[pid], kind))
        if "command" in self.kinds:
            budget = self.max_matches
            for body_start, body_end, lang in fenced_blocks(text):
                pos = body_start
                for line in text[body_start:body_end].split("\n", budget):
                    parts = _command(line[:500], strict=lang not in _SHELL_LANGS)
                    if parts:
                        cmds.append(("command", pos, pos + len(line), parts))
                    pos += len(line) + 1
                    budget -= 1
                if budget <= 0:
                    break
        out: list[tuple[str, int, int, list[str]]] = []
        last = -1
        for start, neg_len, _, kind in sorted(plain):
            if start >= last:
                end = start - neg_len
                while end > start + 1 and text[end - 1] in _TRAIL:
                    end -= 1
                out.append((kind, start, end, [text[start:end]]))
                last = start - neg_len
        return out + cmds

    def detect(self, event: Event, scan: Scan) -> list[Detection]:
        response = event.response
        if not response:
            return []
        cands = self._candidates(scan, response)
        if not cands:
            return []
        source = _Sources(event)
        verdicts: dict[str, bool] = {}
        reported: set[str] = set()
        hits: list[Detection] = []
        for kind, start, end, parts in cands:
            missing: list[str] = []
            for part in parts:
                raw = part.strip().strip(_TRAIL).lstrip(_LEAD)
                key = raw.lower().replace("\\", "/")  # _norm(part)
                if kind == "version":
                    key, raw = key.lstrip("v"), raw.lstrip("vV")
                key = key.replace("//", "/")
                if len(key) < self.min_length:
                    continue
                if key not in verdicts:
                    if len(verdicts) >= self.max_identifiers:
                        break
                    if " " in key and kind == "command":  # "head sub-command"
                        verdicts[key] = source.has_word(key)
                    else:
                        verdicts[key] = source.grounded(key, raw) or (
                            kind in _SEPARATED_KINDS and _grounded_separated(key, source.text)
                        )
                if not verdicts[key]:
                    missing.append(part)
            if not missing:
                continue
            dedupe = kind + "|" + "|".join(_norm(p) for p in missing)
            if dedupe in reported:
                continue
            reported.add(dedupe)
            if kind == "command":
                evidence = f"command `{response[start:end].strip('`')[:60]}`: not in sources: "
                evidence += ", ".join(missing)[:80]
            else:
                evidence = f"{kind} {missing[0][:100]} not in query, history, case or context"
            hits.append(Detection(self.name, kind, evidence[:160], (start, end), FAILURE))
        hits.sort(key=lambda h: h.span or (0, 0))
        return hits
