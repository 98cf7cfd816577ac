"""The identifiers detector's pattern table (:mod:`detectors.identifiers`).

``_PATTERNS`` (pattern id, kind, RE2 pattern), declared to the shared scan; each id's
kind and priority (earlier wins on overlap), the kinds grounded up to separators, the
words that end a command written in prose and the code-fence languages that are shells.
"""

from __future__ import annotations

__all__ = [
    "_KIND",
    "_PATTERNS",
    "_PRIORITY",
    "_PROSE_STOP",
    "_SEPARATED_KINDS",
    "_SHELL_LANGS",
]

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
_SHELL_LANGS_WORDS = "bash sh shell console zsh terminal powershell ps1 pwsh cmd bat"
_SHELL_LANGS = frozenset(_SHELL_LANGS_WORDS.split())
