"""The ``it-support`` world: enterprise support cases answered from knowledge-base articles.

:func:`new_case` opens a case for one of the eight :class:`Issue` records
(``phrases/issues.yaml``); :func:`it_draft` builds one clean turn of that conversation:
the KB sections, release notes, a related article and sometimes a quote-only vendor
excerpt and a no-use internal escalation note, the query and the answer (steps, logs,
the fixed version or the cause). The text comes from ``phrases/it_support.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from stream.demo.draft import Draft, Rng, Seg, chunk, fill, finish_chunks, pick
from stream.demo.phrases import load
from stream.demo.pii import decoy_order_number

__all__ = ["Issue", "issues", "it_draft", "new_case"]


@dataclass(frozen=True)
class Issue:
    """One support issue: the error, its KB article, fix, logs and related material."""

    product: str
    slug: str
    code: str
    kb: str
    title: str
    versions: tuple[str, str]  # (affected, fixed)
    symptom: str
    cause: str
    cause_short: str
    steps: tuple[tuple[str, str], ...]  # (kb wording, answer wording)
    logs: tuple[str, ...]
    diag: str
    escalate: str
    sibling: str  # another error of the same product, for "related" KB chunks
    sibling_kb: str
    sibling_text: str
    vendor: str  # quote-only vendor or contract excerpt
    internal: str  # no-use escalation note


@cache
def issues() -> tuple[Issue, ...]:
    """The eight issues of ``phrases/issues.yaml``, in file order."""
    out = []
    for raw in load("issues")["issues"]:
        fields = dict(raw)
        fields["versions"] = (raw["versions"]["affected"], raw["versions"]["fixed"])
        fields["steps"] = tuple((s["kb"], s["answer"]) for s in raw["steps"])
        fields["logs"] = tuple(raw["logs"])
        out.append(Issue(**fields))
    return tuple(out)


def new_case(rng: Rng, it: Issue) -> dict[str, Any]:
    world = load("it_support")
    org = pick(rng, world["orgs"])
    first, last = pick(rng, world["first_names"]), pick(rng, world["last_names"])
    kind, team = pick(rng, ("LT", "WS", "SRV", "VM")), pick(rng, ("ACC", "HR", "ENG", "OPS", "FIN"))
    asset = f"{kind}-{team}-{rng.randint(100, 9999):04d}"
    date = f"2026-02-{rng.randint(10, 28):02d}"
    ticket = f"INC{rng.randint(10000, 999999):07d}"
    users = rng.randint(1, 60)
    case = world["case"]
    v = {
        "first": first,
        "last": last,
        "org": org,
        "symptom": it.symptom,
        "product": it.product,
        "code": it.code,
        "ver": it.versions[0],
        "date": date,
        "asset": asset,
        "users": users,
    }
    bits = [t.format(**v) for t in case["report"]] + [pick(rng, case["notes"])]
    if rng.random() < 0.3:
        bits.append(case["purchase_order"].format(po=decoy_order_number(rng)))
    if rng.random() < 0.25:
        bits.append(f"Contact: {first.lower()}.{last.lower()}@{org.lower().replace(' ', '')}.com")
    return {
        "subject": pick(rng, case["subjects"]).format(**v),
        "description": " ".join(b for b in bits if b),
        "metadata": {
            "product": it.product,
            "severity": pick(rng, world["severity"]),
            "ticket": ticket,
            "customer": org,
            "asset": asset,
        },
    }


@cache
def _kb_text(it: Issue) -> dict[str, Any]:
    """The KB sentences of `it` that need no draw (the same for every case of the issue)."""
    kb = load("it_support")["kb"]
    v = {
        "product": it.product,
        "code": it.code,
        "affected": it.versions[0],
        "fixed": it.versions[1],
        "cause_short": it.cause_short,
        "logs": " and ".join(it.logs),
        "diag": it.diag,
        "escalate": it.escalate,
        "sibling_kb": it.sibling_kb,
    }
    return {
        "general": [t.format(**v) for t in kb["general"]],
        "more_information": [t.format(**v) for t in kb["more_information"]],
        "release_notes": kb["release_notes"]["title"].format(**v),
        "release_notes_required": [t.format(**v) for t in kb["release_notes"]["required"]],
        "internal": kb["internal"]["title"].format(**v),
    }


def _kb_chunks(rng: Rng, it: Issue) -> dict[str, dict[str, Any]]:
    kb, text = load("it_support")["kb"], _kb_text(it)
    affected, fixed = it.versions
    hdr = f"{it.kb} — {it.title}\nApplies to: {it.product} {affected}"
    kb_src = f"kb/{it.slug}/{it.kb}.md"
    gen = text["general"]
    s1 = fill(
        rng,
        hdr + " | Section: Symptoms and cause",
        [f"Symptom: {it.symptom}.".replace("..", "."), f"Cause: {it.cause}"],
        gen,
    )
    s2 = fill(
        rng,
        hdr + " | Section: Resolution",
        ["Resolution:"] + [f"{i}. {step}" for i, (step, _) in enumerate(it.steps, 1)],
        gen,
        sep="\n",
    )
    s3 = fill(rng, hdr + " | Section: More information", text["more_information"], gen)
    rn = fill(
        rng,
        text["release_notes"],
        text["release_notes_required"],
        kb["release_notes"]["pool"],
    )
    sib = fill(rng, f"{it.sibling_kb} — {it.product}: {it.sibling}", [it.sibling_text], gen)
    vendor = kb["vendor"]
    vend = fill(rng, vendor["title"], [it.vendor.split(": ", 1)[1]], vendor["pool"])
    intl = fill(
        rng,
        text["internal"],
        [it.internal.removeprefix("Tier 2 only: ")],
        kb["internal"]["pool"],
    )
    kbn = it.kb.lower()
    return {
        "s1": chunk(f"{kbn}-s1", s1, kb_src, rng.uniform(0.78, 0.95)),
        "s2": chunk(f"{kbn}-s2", s2, kb_src, rng.uniform(0.75, 0.94)),
        "s3": chunk(f"{kbn}-s3", s3, kb_src, rng.uniform(0.55, 0.85)),
        "rn": chunk(
            f"rn-{it.slug}-{fixed}",
            rn,
            f"release-notes/{it.slug}-{fixed}.html",
            rng.uniform(0.4, 0.8),
        ),
        "sib": chunk(
            f"{it.sibling_kb.lower()}-s1",
            sib,
            f"kb/{it.slug}/{it.sibling_kb}.md",
            rng.uniform(0.3, 0.65),
        ),
        "vendor": chunk(
            f"ext-{it.slug}-ref-{rng.randint(2, 9)}",
            vend,
            f"vendor-docs/{it.slug}-reference.pdf",
            rng.uniform(0.35, 0.7),
            "quote_only",
        ),
        "internal": chunk(
            f"int-{it.slug}-escalations",
            intl,
            f"confluence/support-internal/{it.slug}-escalations.md",
            rng.uniform(0.5, 0.88),
            "no_use",
        ),
    }


_WANT = {
    "fix": ["s1", "s2"],
    "followup": ["s2", "s3"],
    "logs": ["s3"],
    "fixed": ["rn", "s3"],
    "cause": ["s1"],
}


def _answer(
    it: Issue, topic: str, ids: dict[str, str], short: bool, idents: list[str]
) -> list[Seg]:
    """The clean answer's body for `topic`; adds the identifiers it quotes to `idents`."""
    say = load("it_support")["answers"]
    v = {"diag": it.diag, "team": it.escalate, "kb": it.kb, "code": it.code}
    steps = [Seg(ans, ids.get("s2")) for _, ans in it.steps]
    if topic == "fix":
        return steps if not short else steps[:2]
    if topic == "followup":
        idents += [it.logs[0].strip("`"), it.diag.strip("`")]
        return [*steps[-1:], Seg(say["followup"].format(log=it.logs[0], **v), ids["s3"])]
    if topic == "logs":
        idents += [lg.strip("`") for lg in it.logs] + [it.diag.strip("`")]
        return [Seg(say["log"].format(log=lg), ids["s3"]) for lg in it.logs] + [
            Seg(say["bundle"].format(**v), ids["s3"])
        ]
    if topic == "fixed":
        body = [Seg(say["upgrade"].format(fixed=it.versions[1], **v), ids["rn"])]
        if not short and "s2" in ids:
            step = it.steps[1][1][0].lower() + it.steps[1][1][1:]
            body.append(Seg(say["workaround"].format(step=step, **v), ids.get("s2")))
        idents.append(it.versions[1])
        return body
    return [Seg(it.cause, ids["s1"])]


def it_draft(
    rng: Rng,
    it: Issue,
    case: dict[str, Any],
    topic: str,
    *,
    reject: str | None,
    partial: bool,
    need: frozenset[str],
    short: bool,
) -> Draft:
    world = load("it_support")
    kbc = _kb_chunks(rng, it)
    v = {
        "code": it.code,
        "kb": it.kb,
        "product": it.product,
        "ver": it.versions[0],
        "fixed": it.versions[1],
        "team": it.escalate,
        "diag": it.diag,
        "cause_short": it.cause_short,
        "other_org": pick(rng, [o for o in world["orgs"] if o != case["metadata"]["customer"]]),
        "asset": case["metadata"]["asset"],
    }
    keys = list(_WANT[topic])
    for k in ("s1", "s2", "s3", "rn", "sib"):
        if k not in keys and rng.random() < 0.6:
            keys.append(k)
    if "quote_only" in need or rng.random() < 0.2:
        keys.append("vendor")
    if "no_use" in need or rng.random() < 0.2:
        keys.append("internal")
    while len(keys) < 3:
        keys.append(next(k for k in ("s3", "rn", "sib", "s1", "s2") if k not in keys))
    chunks = finish_chunks(rng, [kbc[k] for k in keys[:8]])
    ids = {k: kbc[k]["id"] for k in keys}
    idents = [it.code, it.kb, it.versions[0]]
    for _, ans in it.steps:
        idents += [p.split("`")[0] for p in ans.split("`")[1::2]]
    body = _answer(it, topic, ids, short, idents)
    query = pick(rng, world["queries"][topic]).format(**v)
    intro = pick(rng, world["intros"][topic]).format(**v)
    intro = intro[0].upper() + intro[1:]
    outro = pick(rng, world["outros"])
    if outro and "{diag}" in outro and "s3" not in ids:
        outro = "Let me know how it goes."
    d = Draft(
        "it",
        query,
        chunks,
        intro,
        body,
        outro.format(**v) if outro else None,
        steps=topic in ("fix", "followup", "logs"),
        case=case,
        topic=f"the {it.code} error",
        identifiers=sorted(set(idents)),
        vars=v,
    )
    d.alt_ids = [
        f"{it.kb.lower()}-s{rng.randint(4, 9)}",
        f"{it.sibling_kb.lower()}-s3",
        f"kb{rng.randint(10000, 99999):07d}-s1",
    ]
    if "vendor" in keys:
        sent = it.vendor.split(": ", 1)[1]
        d.quote_only.append((kbc["vendor"]["id"], sent, world["quote_only_who"]))
    if "internal" in keys:
        sent = it.internal.removeprefix("Tier 2 only: ")
        d.no_use.append((kbc["internal"]["id"], sent, world["no_use_paraphrase"]))
    # the escalation team is named only in s3: a response without that chunk says "the
    # escalation team" rather than naming a team no retrieved chunk mentions
    said = v if "s3" in ids else v | {"team": "the escalation team"}
    if partial:
        gap = pick(rng, world["partial"])
        d.query = d.query.rstrip() + gap["ask"]
        d.partial_note = gap["note"].format(**said)
    if reject == "policy":
        req = pick(rng, world["reject_policy"])
        kind = req["kind"]
        d.reject, d.reject_kind, d.query = "policy", kind, req["query"].format(**v)
        d.topic = world["policy_topics"][kind]
        if kind == "other_customer":
            d.refusal = pick(rng, world["other_customer_refusals"]).format(**said)
            first, last = pick(rng, world["first_names"]), pick(rng, world["last_names"])
            d.accept = [Seg(world["other_customer_answer"].format(**v, first=first, last=last))]
        else:
            d.refusal = pick(rng, world["credentials_refusals"])
            d.accept = [Seg(world["credentials_answer"])]
        d.body = []
    elif reject == "no_context":
        req = pick(rng, world["reject_no_context"])
        kind = req["kind"]
        d.reject, d.reject_kind, d.query = "no_context", kind, req["query"].format(**v)
        d.topic = world["no_context_topics"][kind]
        d.refusal = pick(rng, world["no_context_refusals"]).format(**dict(v, topic=d.topic))
        d.accept = [Seg(req["answer"].format(**v))]
        d.body = []
    return d
