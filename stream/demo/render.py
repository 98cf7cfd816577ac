"""Rendering a drafted answer into response text and citations, and breaking them on purpose.

:func:`render` joins the answer's pieces, attaches citation markers per chunk (sequential
or by retrieval position, inside or after the sentence) and lays out steps or bullets;
with ``dangling`` it leaves a marker without an entry (``invalid_citation``).
:func:`break_citation` points a citation at a chunk that was not retrieved and
:func:`invent` corrupts an identifier so it appears nowhere in the sources
(``invented_identifier``).
"""

from __future__ import annotations

from typing import Any

from stream.demo.draft import Draft, Rng, Seg, pick

__all__ = ["break_citation", "invent", "render"]


def _attach(text: str, marker: str, pos: str) -> str:
    if pos == "in" and text.endswith("."):
        return f"{text[:-1]} {marker}."
    return f"{text} {marker}"


def render(
    rng: Rng,
    pieces: list[Seg],
    d: Draft,
    style: str,
    pos: str,
    steps: bool,
    body_ids: set[int] | None = None,
    dangling: bool = False,
) -> tuple[str, list[dict[str, Any]]]:
    """Join pieces into the response; markers per chunk (sequential or retrieval position).
    With `dangling`, one sentence gets a marker that has no citations entry (or, when
    there are two or more entries, one entry is dropped)."""
    position = {c["id"]: n for n, c in enumerate(d.chunks, 1)}
    numbers: dict[str, int] = {}
    citations: list[dict[str, Any]] = []
    texts: list[str] = []
    for p in pieces:
        text = p.text
        if p.cite and style != "none":
            if p.cite not in numbers:
                numbers[p.cite] = (
                    position.get(p.cite, len(d.chunks) + 1) if style == "pos" else len(numbers) + 1
                )
                citations.append(
                    {"marker": f"[{numbers[p.cite]}]", "source_id": p.cite, "text": text}
                )
            text = _attach(text, f"[{numbers[p.cite]}]", pos)
        texts.append(text)
    if dangling:
        if len(citations) >= 2 and rng.random() < 0.5:
            citations.pop(rng.randrange(len(citations)))
        else:
            k = max([*numbers.values(), len(d.chunks)]) + rng.randint(1, 2)
            j = rng.randrange(len(texts))
            texts[j] = _attach(texts[j], f"[{k}]", pos)
    body_ids = body_ids or set()
    as_list = steps or (d.domain == "earnings" and len(body_ids) >= 3 and rng.random() < 0.4)
    if not as_list:
        return " ".join(t for t in texts if t), citations
    lines: list[str] = []
    para: list[str] = []
    n = 0
    for p, t in zip(pieces, texts, strict=True):
        if id(p) in body_ids:
            if para:
                lines.append(" ".join(para))
                para = []
            n += 1
            lines.append(f"{n}. {t}" if steps else f"- {t}")
        else:
            if n and not para:
                lines.append("")
            para.append(t)
    if para:
        lines.append(" ".join(para))
    return "\n".join(lines), citations


def break_citation(
    rng: Rng, response: str, citations: list[dict[str, Any]], d: Draft, variant: str
) -> tuple[str, list[dict[str, Any]]]:
    """`unknown`: a citation points at a chunk id that was not retrieved. (`dangling` and
    `no_use` are produced while rendering.)"""
    if variant != "unknown":
        return response, citations
    citations = [dict(c) for c in citations]
    if not citations:  # nothing cited: cite a plausible but unretrieved chunk
        marker = "[1]"
        response = response.rstrip() + f" {marker}"
        citations.append({"marker": marker, "source_id": "", "text": response.split(". ")[0]})
    target = pick(rng, citations)
    ids = {c["id"] for c in d.chunks}
    target["source_id"] = next((a for a in d.alt_ids if a not in ids), target["source_id"] + "-x")
    return response, citations


def _corrupt(rng: Rng, ident: str) -> str:
    digits = [i for i, ch in enumerate(ident) if ch.isdigit()]
    if len(digits) >= 2 and (" " not in ident or ident[0].isdigit() or rng.random() < 0.85):
        i = pick(rng, digits)
        chars = list(ident)
        j = i + 1 if i + 1 in digits else i - 1 if i - 1 in digits else None
        if j is not None and chars[i] != chars[j] and rng.random() < 0.5:
            chars[i], chars[j] = chars[j], chars[i]
        else:
            chars[i] = str((int(chars[i]) + rng.randint(1, 8)) % 10)
        return "".join(chars)
    if " " in ident and not ident[0].isdigit():
        return ident + pick(rng, (" --force", " --all", " --purge", " --reset-all", " /force"))
    for a, b in (
        (".log", "_debug.log"),
        (".pem", ".crt"),
        (".conf", ".cfg"),
        (".ora", ".cfg"),
        ("\\logs\\", "\\log\\"),
        ("/log/", "/logs/"),
        ("/etc/", "/etc/opt/"),
    ):
        if a in ident:
            return ident.replace(a, b, 1)
    return ident + "_v2"


def invent(rng: Rng, response: str, d: Draft, sources: str) -> str:
    """Corrupt one identifier of the answer (digit swap, bumped version, invented flag or
    path) so that it appears nowhere in the sources; else add an invented one."""
    present = []
    for ident in d.identifiers:
        at = response.rfind("`" + ident)
        at = (
            at + 1
            if at >= 0
            else response.rfind(ident)
            if any(ch.isdigit() for ch in ident)
            else -1
        )
        if at >= 0:
            present.append((ident, at))
    rng.shuffle(present)
    for ident, at in present:
        for _ in range(6):
            new = _corrupt(rng, ident)
            if new != ident and new not in sources and new not in response:
                return response[:at] + new + response[at + len(ident) :]
    v = d.vars
    for _ in range(10):
        ver = v.get("fixed", "1.0.0").split(".")
        ver[-1] = str(int(ver[-1]) + rng.randint(1, 4))
        kb = f"KB00{rng.randint(10000, 99999)}"
        extra = pick(
            rng,
            (
                f"This is fully resolved in {'.'.join(ver)}.",
                f"See also {kb} for the permanent fix.",
            ),
        )
        token = extra.split()[-1].rstrip(".") if "resolved" in extra else kb
        if token not in sources:
            return response.rstrip() + " " + extra
    return response.rstrip() + " Run `resetall --deep` if nothing else works."
