"""The ``earnings-qa`` world: questions over the filings of invented companies.

:func:`earnings_draft` builds one clean turn: the retrieved chunks (10-Q / 10-K sections,
earnings-call transcripts, press releases, and sometimes a quote-only analyst note or
cautionary statement and a no-use internal IR note), the query and the answer's facts,
copied from the company-quarter's figures (:mod:`stream.demo.financials`). The text comes
from ``phrases/earnings.yaml``; this module holds the structure and the order of draws.
"""

from __future__ import annotations

from typing import Any

from stream.demo.draft import Draft, Rng, Seg, chunk, fill, finish_chunks, pick
from stream.demo.financials import Company, companies, financials
from stream.demo.phrases import load

__all__ = ["earnings_draft", "topics"]


def topics() -> list[str]:
    """The question topics (revenue, margin, guidance, segments, risks, capital, eps)."""
    names: list[str] = load("earnings")["topics"]
    return names


def _f(templates: list[str], v: dict[str, str]) -> list[str]:
    return [t.format(**v) for t in templates]


def _period_chunk_id(v: dict[str, str], page: int) -> str:
    doc = "10q" if v["doc"] == "10-Q" else "10k"
    tail = f"{v['fy']}q{v['q']}" if doc == "10q" else v["fy"]
    return f"{v['slug']}-{doc}-{tail}-p{page}"


def _filing_source(v: dict[str, str]) -> str:
    return f"{v['slug'].upper()}_{v['doc']}_{v['period_short'].replace(' ', '_')}.pdf"


def _chunk(
    rng: Rng, kind: str, v: dict[str, str], score: float
) -> tuple[dict[str, Any], list[str]]:
    """One earnings chunk of `kind` (``phrases/earnings.yaml`` chunks); returns it with its
    key sentences."""
    bank = load("earnings")
    spec = bank["chunks"][kind]
    page = rng.randint(8, 64)
    call_id = f"{v['slug']}-call-{v['fy']}q{v['q']}-s{rng.randint(2, 40)}"
    call_src = f"{v['slug']}_q{v['q']}_fy{v['fy']}_earnings_call.txt"
    pr_id = f"{v['slug']}-8k-ex991-{v['fy']}q{v['q']}-p{rng.randint(1, 9)}"
    pr_src = f"{v['slug']}_8-K_ex99-1_q{v['q']}_fy{v['fy']}.htm"
    broker = pick(rng, bank["banks"])
    vv = dict(v, analyst=pick(rng, bank["analysts"]), bank=broker["name"], page=str(page))
    vv["ir_first"] = v["ir"].split()[0]
    policy: str = spec.get("policy", "summarize")
    if kind == "fls":  # usually quote-only, sometimes an ordinary filing section
        policy = "quote_only" if rng.random() < 0.8 else "summarize"
    if "tails" in spec:  # guidance: what happened to the full-year range
        vv["tail"] = spec["tails"][v["action"]].format(**vv)
    req = _f(spec["req"], vv)
    if "shuffled" in spec:  # risk factors, in a random order
        order = list(range(len(spec["shuffled"])))
        rng.shuffle(order)
        req += [spec["shuffled"][i].format(**vv) for i in order]
    pool = _f(spec["pool"], vv) + (_f(bank["filler"][spec["filler"]], vv) if spec["filler"] else [])
    text = fill(rng, spec["header"].format(**vv), req, pool, sep=spec.get("sep", " "))
    source = spec["source"]
    if source == "filing":
        cid, src = _period_chunk_id(v, page), _filing_source(v)
    elif source == "call":
        cid, src = call_id, call_src
    elif source == "press":
        cid, src = pr_id, pr_src
    elif source == "analyst":
        slug = broker["slug"]
        cid = f"{slug}-note-{v['slug']}-{v['fy']}q{v['q']}"
        src = f"research/{slug}/{v['tk'].lower()}_{v['fy']}q{v['q']}.pdf"
    elif source == "internal":
        cid = f"ir-internal-{v['slug']}-{v['fy']}q{v['q']}-{rng.randint(1, 9)}"
        period = v["period_short"].replace(" ", "_").lower()
        src = f"sharepoint/ir/qa-prep/{v['slug']}_{period}.docx"
    else:  # pragma: no cover - a phrase-bank error
        raise ValueError(f"chunk {kind!r}: unknown source {source!r}")
    return chunk(cid, text, src, score, policy), req


def _facts(topic: str, v: dict[str, str], ids: dict[str, str], rng: Rng, short: bool) -> list[Seg]:
    facts = [
        Seg(pick(rng, fact["say"]).format(**v), ids.get(fact["chunk"]))
        for fact in load("earnings")["facts"][topic]
    ]
    keep = 1 if short else rng.randint(2, 3)
    return facts[:keep]


def _retrieve(
    rng: Rng, topic: str, v: dict[str, str], need: frozenset[str]
) -> tuple[
    list[dict[str, Any]], dict[str, str], list[tuple[str, str, str]], list[tuple[str, str, str]]
]:
    """The retrieved chunks, the first chunk id per kind, quote-only and no-use sentences."""
    bank = load("earnings")
    must = list(dict.fromkeys(bank["topic_chunks"][topic]))
    specials: list[str] = []
    if "quote_only" in need or rng.random() < 0.22:
        specials.append("analyst" if "quote_only" in need or rng.random() < 0.5 else "fls")
    if "no_use" in need or rng.random() < 0.18:
        specials.append("internal")
    n_chunks = max(rng.randint(3, 8), len(must) + len(specials))
    kinds = bank["filler_kinds"]
    fillers = [pick(rng, kinds) for _ in range(n_chunks - len(must) - len(specials))]
    chunks: list[dict[str, Any]] = []
    ids: dict[str, str] = {}
    quote_only: list[tuple[str, str, str]] = []
    no_use: list[tuple[str, str, str]] = []
    for j, kind in enumerate(must + specials + fillers):
        lo, hi = (
            (0.7, 0.95)
            if j < len(must)
            else (0.45, 0.9)
            if j < len(must) + len(specials)
            else (0.3, 0.72)
        )
        for _ in range(6):
            c, req = _chunk(rng, kind, v, rng.uniform(lo, hi))
            if c["id"] not in ids.values() and all(c["id"] != x["id"] for x in chunks):
                break
        else:
            continue
        chunks.append(c)
        ids.setdefault(kind, c["id"])
        if c["policy"] == "quote_only":
            who = bank["quote_only_who"][kind]
            quote_only += [(c["id"], s, who) for s in req if len(s.split()) >= 12]
        elif c["policy"] == "no_use":
            no_use += [(c["id"], s, bank["no_use_paraphrase"]) for s in req]
    return finish_chunks(rng, chunks), ids, quote_only, no_use


def earnings_draft(
    rng: Rng,
    company: Company,
    fy: int,
    q: int,
    topic: str,
    *,
    followup: bool,
    reject: str | None,
    partial: bool,
    need: frozenset[str],
    short: bool,
) -> Draft:
    bank = load("earnings")
    v = financials(company.ticker, fy, q)
    chunks, ids, quote_only, no_use = _retrieve(rng, topic, v, need)
    others = [c.short for c in companies() if c.ticker != company.ticker]
    vq = dict(v, other=pick(rng, others))
    facts = _facts(topic, v, ids, rng, short)
    if followup and rng.random() < 0.8:
        query = pick(rng, bank["followups"][topic]).format(**vq)
    else:
        query = pick(rng, bank["queries"][topic]).format(**vq)
    subject = bank["subjects"][topic]
    d = Draft(
        "earnings",
        query,
        chunks,
        pick(rng, bank["intros"]).format(**v),
        facts,
        pick(rng, bank["outros"]),
        topic=f"{v['poss']} {subject} for {v['period_short']}",
        quote_only=quote_only,
        no_use=no_use,
        vars=dict(v, other=vq["other"]),
    )
    d.alt_ids = [_period_chunk_id(v, p) for p in (3, 71, 88)] + [
        f"{v['slug']}-call-{v['fy']}q{v['q']}-s77"
    ]
    if partial:
        gap = pick(rng, bank["partial"])
        d.query = d.query.rstrip() + gap["ask"].format(**v)
        d.partial_note = gap["note"].format(**v)
    if reject == "policy":
        req = pick(rng, bank["reject_policy"])
        kind = req["kind"]
        d.reject, d.reject_kind, d.query = "policy", kind, req["query"].format(**vq)
        d.topic = bank["policy_topics"][kind].format(**v)
        if kind == "insider":
            d.refusal = pick(rng, bank["insider_refusals"]).format(**v)
            d.accept = [Seg(bank["insider_answer"].format(**v))]
        else:
            refuse = pick(rng, bank["advice_refusals"])
            lead = pick(rng, bank["advice_refusal_leads"])
            d.refusal = (refuse + " " + lead).format(**v).strip()
            d.accept = facts[:2]
        d.body = facts[:1] if rng.random() < 0.6 else []
    elif reject == "no_context":
        req = pick(rng, bank["reject_no_context"])
        kind = req["kind"]
        d.reject, d.reject_kind, d.query = "no_context", kind, req["query"].format(**vq)
        d.topic = bank["no_context_topics"][kind].format(**vq)
        d.refusal = pick(rng, bank["no_context_refusals"]).format(**dict(v, topic=d.topic))
        d.accept = [Seg(req["answer"].format(**vq))]
        d.body = []
    return d
