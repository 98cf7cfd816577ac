"""The identifiers detector's text helpers (:mod:`detectors.identifiers`).

Normalising an identifier (:func:`_norm`), the head and flags of a command line
(:func:`_command`), the ASCII probe the patterns run on (:func:`_ascii_probe`) and the
filter that drops dates, IPv4 addresses, dotted phone numbers and non-ticket prefixes
(:func:`_keep`).
"""

from __future__ import annotations

__all__ = [
    "_HEADS",
    "_LEAD",
    "_NOT_TICKETS",
    "_PREFIXES",
    "_TRAIL",
    "_ascii_probe",
    "_command",
    "_is_date_ip_or_phone",
    "_is_flag",
    "_is_phone",
    "_keep",
    "_norm",
]

_NOT_TICKETS_WORDS = (
    "UTF UCS SHA AES DES RSA ISO IEC COVID SARS HTTP TLS SSL MD CRC FIPS PKCS IEEE ANSI RFC "
    "PEP GPT MP WPA DDR LPDDR USB PCI ECMA ES IPV TCP UDP RTX GTX XBOX COM LPT CP WIN ISBN ICD "
    "NIST SP EN DIN PS PM AM GB MB"
)
_NOT_TICKETS = frozenset(_NOT_TICKETS_WORDS.split())
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
