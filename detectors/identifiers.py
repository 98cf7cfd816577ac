"""Identifier integrity: identifiers in the response that no input mentions.

Finds error codes, hex codes, versions, paths, commands and KB / ticket ids in the
response (declared to the shared RE2 scan: one pass) and flags each one whose normalised
form (lowercased, ``\\`` read as ``/``, trailing punctuation and a version's ``v``
dropped) is not a substring of the normalised sources: query, history, case subject /
description / metadata values and retrieved chunks (failure mode
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
from functools import lru_cache
from typing import Any

from detectors.base import Detection, register_detector
from detectors.lexical import fenced_blocks, inline_code
from detectors.regex import compile_pattern, iter_matches, search
from detectors.scan import PatternDetector, PatternSpec, Scan
from stream.contract.events import Event

__all__ = ["KINDS", "IdentifierDetector"]

KINDS = ("error_code", "hex_code", "version", "path", "command", "kb_id")
FAILURE = "invented_identifier"
_SEG = r"[\w.@%+\-]+"
_WIN = r"[^\\/:*?\"<>|\s]+"
_ERRNO = "CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|NOENT|ACCES|ADDRINUSE|ADDRNOTAVAIL|"
_ERRNO += "PERM|PIPE|NOTFOUND|HOSTUNREACH|NETUNREACH|NOSPC|MFILE|NOTDIR|ISDIR|NOMEM|ROFS"
#: CLI names that are commands even in prose (not "find", "make", "top", "service" …)
_PROSE_HEADS = (
    "kubectl helm docker podman git pip pip3 pipx npm npx yarn pnpm systemctl journalctl "
    "apt apt-get yum dnf brew curl wget ssh scp rsync chmod chown grep sed awk iptables az "
    "aws gcloud terraform ansible mvn gradle cargo cmake dotnet psql mysql redis-cli mongosh "
    "sqlplus openssl netstat nslookup traceroute winget choco netsh ipconfig sfc dism chkdsk "
    "certutil icacls robocopy"
)
#: words that end a command written in prose ("restart x-agent | and then check …")
_PROSE_STOP_WORDS = "and then or to from in on as if so until after before when"
_PROSE_STOP = frozenset(_PROSE_STOP_WORDS.split())
# (pattern id, kind, pattern); earlier wins when two kinds cover the same span.
_PATTERNS: list[tuple[str, str, str]] = [
    ("hex", "hex_code", r"\b0[xX][0-9A-Fa-f]{4,16}\b"),
    ("err_snake", "error_code", r"\b(?:ERR|ERROR|E)_[A-Z0-9_]*[A-Z0-9]\b"),
    ("err_digit", "error_code", r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_[A-Z]*\d[A-Z0-9]*\b"),
    (
        "err_vendor",
        "error_code",
        r"\b(?:E\d{3,6}|(?:ORA|PLS|TNS|SP2|RMAN|IMP|EXP)-\d{3,6}|AADSTS\d{4,6}|"
        r"(?:LNK|MSB|NETSDK|IDE|CS|CA|C)\d{4}|TS\d{4,5}|EAI_[A-Z]+|E(?:" + _ERRNO + r"))\b",
    ),
    (
        "kb",
        "kb_id",
        r"\b(?:(?i:kb)-?\d{4,10}|(?:INC|CHG|RITM|REQ|PRB|PTASK|SCTASK|TASK|CS|SR)\d{6,10}|"
        r"CVE-\d{4}-\d{4,7})\b",
    ),
    ("jira", "kb_id", r"\b[A-Z][A-Z0-9]{1,9}-\d{2,6}\b"),
    # separated shapes, extracted whole: "ERR 4012", "Error 1603", "E-2207", "KB 4471",
    # multi-segment "KB-00-5512" / "ERR-SYNC-4102" (not just their "KB-00" head)
    ("err_spaced", "error_code", r"\b(?:ERR|ERROR|[Ee]rror) \d{4,6}\b"),
    ("err_hyphen", "error_code", r"\bE-\d{3,6}\b"),
    ("err_multi", "error_code", r"\b(?:ERR|ERROR|E)(?:-[A-Z0-9]{1,10}){1,3}-\d{2,10}\b"),
    ("kb_spaced", "kb_id", r"\b(?:KB|kb|Kb|KBA|INC|CHG|RITM|REQ|PRB) \d{4,10}\b"),
    ("multi", "kb_id", r"\b[A-Z][A-Z0-9]{0,9}(?:-[A-Z0-9]{1,10}){1,3}-\d{2,10}\b"),
    (
        "version",
        "version",
        r"\b(?:[vV]\d+(?:\.\d+)+|\d+\.\d+\.\d+(?:\.\d+)*)(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?\b",
    ),
    (
        "path",
        "path",
        rf"(?m)(?:^|[\s(\x60\"'=:,\[<])((?:~|\.\.?)/{_SEG}(?:/{_SEG})*/?|/{_SEG}(?:/{_SEG})+/?|"
        rf"[A-Za-z]:\\{_WIN}(?:\\{_WIN})*\\?|\\\\[\w.\-]+(?:\\{_WIN})+)",
    ),
    ("cmd_inline", "command", r"`[^`\n]+`"),
    ("cmd_prompt", "command", r"(?m)^[ \t]*\$[ \t]+([^\n]+)"),
    # a command in prose, without backticks: "Run sudo systemctl restart x-agent and …";
    # only after run / execute / type / enter and only with an unambiguous CLI name
    (
        "cmd_prose",
        "command",
        r"\b(?:[Rr]un|[Ee]xecute|[Tt]ype|[Ee]nter)[ \t]+((?:sudo[ \t]+)?(?:"
        + _PROSE_HEADS.replace(" ", "|")
        + r")(?:[ \t]+[\w./:=@<>%~+-]+){1,12})",
    ),
]
_KIND = {pid: kind for pid, kind, _ in _PATTERNS}
#: kinds whose grounding ignores separators (case is ignored for every kind)
_SEPARATED_KINDS = frozenset({"error_code", "kb_id"})
_PRIORITY = {pid: i for i, (pid, _, _) in enumerate(_PATTERNS)}
_NOT_TICKETS_WORDS = (
    "UTF UCS SHA AES DES RSA ISO IEC COVID SARS HTTP TLS SSL MD CRC FIPS PKCS IEEE ANSI RFC "
    "PEP GPT MP WPA DDR LPDDR USB PCI ECMA ES IPV TCP UDP RTX GTX XBOX COM LPT CP WIN ISBN ICD "
    "NIST SP EN DIN PS PM AM GB MB"
)
_NOT_TICKETS = frozenset(_NOT_TICKETS_WORDS.split())
_SHELL_LANGS_WORDS = "bash sh shell console zsh terminal powershell ps1 pwsh cmd bat"
_SHELL_LANGS = frozenset(_SHELL_LANGS_WORDS.split())
_HEADS_WORDS = (
    "kubectl helm docker podman git pip pip3 pipx python python3 npm npx yarn pnpm node "
    "systemctl journalctl service apt apt-get yum dnf rpm brew curl wget ssh scp rsync tar "
    "chmod chown grep find sed awk kill top df du mount ufw iptables az aws gcloud terraform "
    "ansible mvn gradle go cargo make cmake dotnet java psql mysql redis-cli mongosh sqlplus "
    "nginx openssl netstat ss ping traceroute nslookup dig powershell winget choco reg sc "
    "netsh ipconfig sfc dism chkdsk certutil icacls robocopy uv poetry conda"
)
_HEADS = frozenset(_HEADS_WORDS.split())
_PREFIXES = frozenset(("$", "sudo", "env"))
_TRAIL = ".,;:!?)]}>'\"`*"
_LEAD = "([{<'\"`"


def _norm(ident: str) -> str:
    return ident.strip().strip(_TRAIL).lstrip(_LEAD).lower().replace("\\", "/")


def _is_flag(tok: str) -> bool:
    body = tok[2:] if tok.startswith("--") else tok[1:] if tok.startswith("-") else ""
    return bool(body) and body[0].isalpha()


def _command(text: str, strict: bool) -> list[str] | None:
    """Head and flags of a shell command line, or None when it does not look like one."""
    toks = text.split()
    while toks and (toks[0] in _PREFIXES or ("=" in toks[0] and toks[0][0] != "-")):
        toks = toks[1:]
    if not toks or toks[0][0] == "#":
        return None
    flags = [t.split("=", 1)[0] for t in toks if t[0] == "-" and _is_flag(t)]
    head = toks[0].lower()
    if head[0] == "-" and _is_flag(head):
        return flags
    if head in _HEADS:
        return [head, *flags]
    if strict or not flags or not head.replace("-", "").isalnum():
        return None
    # a product CLI (not a standard tool): its first sub-command is compared too, as a
    # whole word ("vaultctl key" is not grounded by "vaultctl keys")
    sub = toks[1].lower() if len(toks) > 1 else ""
    if sub[:1].isalpha() and sub.replace("-", "").isalnum():
        return [head, f"{head} {sub}", *flags]
    return [head, *flags]


def _ascii_probe(text: str) -> str:
    """`text` with each non-ASCII character as ``#``, which every pattern matches as it
    does those (RE2 reads ASCII text faster): no pattern names either (``\\w``, ``\\s``,
    ``\\b`` are ASCII; each negated class takes both), unless the text holds a ``?`` (a
    Windows path takes ``#``, not ``?``) or a KELVIN SIGN (``(?i:kb)`` matches it)."""
    if text.isascii() or "?" in text or "\u212a" in text:
        return text
    return text.encode("ascii", "replace").replace(b"?", b"#").decode("ascii")


def _is_phone(parts: list[str]) -> bool:
    """NNN.NNN.NNNN, optionally after a country code 1: a dotted (NANP) phone number."""
    if len(parts) == 4 and parts[0] == "1":
        parts = parts[1:]
    return [len(p) for p in parts] == [3, 3, 4]


def _is_date_ip_or_phone(text: str) -> bool:
    parts = text.split(".")
    if not all(p.isdigit() for p in parts):
        return False
    if _is_phone(parts):
        return True
    nums = [int(p) for p in parts]
    if len(parts) == 4:
        return all(n <= 255 for n in nums)
    if len(parts) != 3:
        return False
    if len(parts[0]) == 4:
        return 1 <= nums[1] <= 12 and 1 <= nums[2] <= 31
    return len(parts[2]) == 4 and min(nums[0], nums[1]) >= 1 and max(nums[0], nums[1]) <= 31


def _keep(pid: str, ident: str) -> bool:
    if pid in ("jira", "multi"):
        return ident.split("-", 1)[0] not in _NOT_TICKETS
    return pid != "version" or not _is_date_ip_or_phone(ident)


def _segments(key: str) -> list[str]:
    """Alphanumeric runs of a normalised key, split at separators and letter/digit changes:
    ``kb-00-5512`` -> kb, 00, 5512; ``err_conn_4021`` -> err, conn, 4021; ``e1234`` -> e, 1234."""
    out: list[str] = []
    cur = ""
    for ch in key:
        if not (ch.isascii() and ch.isalnum()):
            if cur:
                out.append(cur)
            cur = ""
        elif cur and cur[-1].isdigit() != ch.isdigit():
            out.append(cur)
            cur = ch
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def _grounded_separated(key: str, source: str) -> bool:
    """`key` found in `source` up to separators: the same segments in order, each pair
    joined by nothing, ``-``, ``_`` or a space, as a whole word (``err 4012`` is grounded
    by ``ERR-4012`` or ``err_4012``; ``kb-00-5512`` is not grounded by ``KB-00-5521``);
    "error" and "err" are one prefix. One small RE2 search, only for a key that the
    plain substring test did not find."""
    segs = _segments(key)
    if len(segs) < 2 or len(key) > 80:
        return False
    parts = ["err(?:or)?" if segs[0] in ("err", "error") else segs[0], *segs[1:]]
    pattern = _separated(r"\b" + "[-_ ]?".join(parts) + r"\b")
    return search(pattern, source)


@lru_cache(maxsize=256)
def _separated(regex: str) -> Any:
    return compile_pattern(regex)


def _has_word(source: str, words: str, limit: int = 50) -> bool:
    """`words` in `source` with no word character (or ``-``) right before or after it."""
    pos = source.find(words)
    while pos >= 0 and limit > 0:
        end = pos + len(words)
        if not _wordish(source[pos - 1 : pos]) and not _wordish(source[end : end + 1]):
            return True
        pos = source.find(words, pos + 1)
        limit -= 1
    return False


def _wordish(ch: str) -> bool:
    return bool(ch) and (ch.isalnum() or ch in "_-")


def _source_parts(event: Event) -> list[str]:
    parts = [event.query, *(m.content for m in event.history)]
    if event.case is not None:
        parts += [event.case.subject or "", event.case.description or ""]
        parts += [str(v) for v in (event.case.metadata or {}).values()]
    parts += [c.content for c in event.retrieved_context]
    return parts


def _normalize(text: str) -> str:
    return text.lower().replace("\\", "/").replace("//", "/")


def _sources(event: Event) -> str:
    """All the sources, normalised, one per line: what identifiers are looked up in."""
    return _normalize("\n".join(_source_parts(event)))


#: the only characters whose lowercase holds an ASCII character (İ -> "i̇", KELVIN SIGN -> "k")
_TO_ASCII = ("\u0130", "\u212a")
_WORD_BYTES = frozenset(b"_-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


class _Sources:
    """:func:`_sources` of one event, lowered only when a key is not in the raw text.

    Most keys are in the raw sources as they are (see :meth:`grounded`). Otherwise an
    ASCII key is looked up in the UTF-8 bytes of the joined parts with their ASCII
    letters lowered, a few times cheaper than lowering the str: no character but those
    of ``_TO_ASCII`` lowers to anything holding an ASCII character, so without them the
    ASCII runs of both texts are the same (same occurrences, in order), and for a key
    with no slash or backslash the slash rewrites change nothing (they keep slash runs).
    Anything else (and a whole word next to a non-ASCII character) takes the str.
    """

    __slots__ = ("_exact", "_joined", "_lowered", "_text")

    def __init__(self, event: Event) -> None:
        self._joined = joined = "\n".join(_source_parts(event))
        self._exact = all(c not in joined for c in _TO_ASCII)
        self._lowered: bytes | None = None
        self._text: str | None = None

    def _data(self, key: str) -> bytes | None:
        """The bytes to look `key` up in; None when only the str is exact."""
        if not self._exact or not key.isascii() or "/" in key or "\\" in key:
            return None
        if self._lowered is None:
            self._lowered = self._joined.encode("utf-8", "surrogatepass").lower()
        return self._lowered

    def __contains__(self, key: str) -> bool:
        data = self._data(key)
        return key in self.text if data is None else key.encode() in data

    def grounded(self, key: str, raw: str) -> bool:
        """``key in self`` for the normalised form `key` of `raw`: an ASCII `raw` found as
        it is in the raw sources is enough, and skips the lowering (its lowercase is then
        in the lowered sources, and the slash rewrites shorten each run of slashes in it
        as they do in the key: a run at one of its ends is only longer in the sources)."""
        return (raw.isascii() and raw in self._joined) or key in self

    def has_word(self, words: str, limit: int = 50) -> bool:
        """:func:`_has_word` on the joined sources: the same occurrences, in order."""
        data = self._data(words) if words else None
        if data is None:
            return _has_word(self.text, words, limit)
        key, size, tries = words.encode(), len(words), limit
        pos = data.find(key)
        while pos >= 0 and tries > 0:
            around = data[max(pos - 1, 0) : pos] + data[pos + size : pos + size + 1]
            if not around.isascii():  # its lowercase decides: the str answers
                return _has_word(self.text, words, limit)
            if _WORD_BYTES.isdisjoint(around):
                return True
            pos = data.find(key, pos + 1)
            tries -= 1
        return False

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = _normalize(self._joined)
        return self._text


@register_detector("identifiers")
class IdentifierDetector(PatternDetector):
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
