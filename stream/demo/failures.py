"""Failure injection: one turn of a conversation, clean or with an injected failure mode.

:func:`turn` drafts the clean turn (:func:`stream.demo.conversation.draft`) and then,
by `mode`, turns it into a false rejection or acceptance, a training-cutoff excuse,
financial advice, a price prediction, a personal-data request, a PII leak, a copied no-use
note, a quote-only paraphrase, an invented identifier or an invalid citation, and returns
the event fields with the ground truth. Clean turns get tricky negatives: text that looks
like a failure to a naive rule but is not one. The phrases come from
``phrases/failures.yaml``.
"""

from __future__ import annotations

from typing import Any

from stream.demo.conversation import CITE_STYLE, Conv, draft, envelope, feedback, labels
from stream.demo.draft import Draft, Rng, Seg, pick
from stream.demo.phrases import load
from stream.demo.pii import pii_sentence
from stream.demo.render import break_citation, invent, render

__all__ = ["turn"]


def turn(
    rng: Rng, conv: Conv, phase: str, mode: str, topic: str, k: int, history: list[dict[str, str]]
) -> tuple[dict[str, Any], list[str]]:
    bank = load("failures")
    degraded = phase == "degraded"
    truth: list[str] = []
    reject: str | None = None
    if mode in ("reject_ok", "fa"):
        reject = "policy" if rng.random() < 0.6 else "no_context"
    labelled = rng.random() < 0.5
    if mode in ("fr", "fa"):
        labelled = True
    elif mode == "unl_refusal":
        labelled = False
    partial = reject is None and rng.random() < (0.3 if mode == "fr" else 0.12)
    need: set[str] = set()
    if mode == "no_use":
        need.add("no_use")
    if mode == "quote_para":
        need.add("quote_only")
    cite_variant = ""
    if mode == "citation":
        cite_variant = pick(rng, ("dangling", "dangling", "unknown", "no_use"))
        if cite_variant == "no_use":
            need.add("no_use")
    short = rng.random() < (0.5 if degraded else 0.15)
    d = draft(rng, conv, topic, k, reject, partial, frozenset(need), short)
    if mode == "fa" and d.reject_kind == "insider":  # answering would paraphrase a no-use note
        d = draft(rng, conv, topic, k, None, False, frozenset(need), short)
        reject, mode, labelled = None, "clean", rng.random() < 0.5
    hist_text = "\n".join(m["content"] for m in history)
    sources = d.sources_text(hist_text)
    v = d.vars
    style, marker_pos = CITE_STYLE[conv.model]
    if rng.random() < (0.3 if degraded else 0.08) and mode != "citation":
        style = "none"
    pre: list[Seg] = []
    post: list[Seg] = []
    intro = d.intro
    body = list(d.body)
    refusal: str | None = None
    failed = mode not in ("clean", "unl_refusal", "reject_ok")

    if mode in ("fr", "unl_refusal"):
        refusal = _refusal(rng, d)
        if mode == "fr":
            truth.append("false_rejection")
    elif mode == "reject_ok":
        refusal = d.refusal
    elif mode == "fa":
        truth.append("false_acceptance")
        body = list(d.accept)
        intro = pick(rng, bank["accept_intros"]["earnings" if d.domain == "earnings" else "it"])
        if d.reject_kind == "price":
            post.append(Seg(_prediction(rng, v)))
            truth.append("price_prediction")
        elif d.reject_kind == "advice" and rng.random() < 0.5:
            post.append(Seg(pick(rng, bank["advice"]).format(**v)))
            truth.append("financial_advice")
        elif d.reject_kind == "other_customer" and rng.random() < 0.15:  # rare: a pii_leak
            post.append(Seg(pii_sentence(rng, d, sources, it_only_contact=True)))
            truth.append("pii_leak")
    elif mode == "cutoff":
        truth.append("training_cutoff_excuse")
        if rng.random() < 0.4:
            excuse = pick(rng, bank["cutoff_refusals"]).format(topic=d.topic)
            refusal = excuse + pick(rng, bank["refusal_tails"])
            if labelled and not d.reject:
                truth.append("false_rejection")
        else:
            extra = bank["cutoff_market" if d.domain == "earnings" else "cutoff_it"]
            cav = pick(rng, extra if rng.random() < 0.4 else bank["cutoff_caveats"]).format(**v)
            pre.append(Seg(cav))
            if rng.random() < 0.5:
                intro = ""
    elif mode == "advice":
        truth.append("financial_advice")
        post.append(Seg(pick(rng, bank["advice"]).format(**v)))
    elif mode == "prediction":
        truth.append("price_prediction")
        post.append(Seg(_prediction(rng, v)))
    elif mode == "pdr":
        truth.append("personal_data_request")
        own = d.domain == "earnings" and rng.random() < 0.6  # about the user's own holdings
        s = Seg(pick(rng, bank["personal_data_requests" + ("_earnings" if own else "")]))
        (pre if rng.random() < 0.3 else post).append(s)
    elif mode == "pii":
        truth.append("pii_leak")
        s = Seg(pii_sentence(rng, d, sources))
        if body and not d.steps and rng.random() < 0.4:
            body.insert(rng.randint(0, len(body)), s)
        else:
            post.append(s)
    elif mode == "no_use":
        truth.append("no_use_copy")
        cid, sent, _ = pick(rng, d.no_use)
        lead = pick(rng, bank["no_use_leads"])
        s = Seg(lead + (sent[0].lower() + sent[1:] if lead else sent))
        if body and not d.steps and rng.random() < 0.5:
            body.insert(rng.randint(0, len(body)), s)
        else:
            post.append(s)
    elif mode == "quote_para":
        truth.append("quote_only_paraphrase")
        cid, sent, who = pick(rng, d.quote_only)
        post.append(
            Seg(
                _near_verbatim(rng, sent, who),
                cid if rng.random() < 0.5 and style != "none" else None,
            )
        )
    elif mode == "invented":
        truth.append("invented_identifier")
    elif mode == "citation":
        truth.append("invalid_citation")

    if refusal is None and mode != "fa":  # tricky negatives: they carry no truth
        intro = _tricky_negatives(rng, d, mode, labelled, post) or intro
    if d.partial_note and refusal is None and mode != "fa":
        post.append(Seg(d.partial_note))
    if mode == "reject_ok" and d.domain == "earnings" and d.reject == "policy" and d.body:
        body = list(d.body)
    elif refusal is not None:
        body = []

    if refusal is not None:
        pieces = [Seg(refusal)] + ([] if mode != "reject_ok" else body)
        response, citations = render(rng, pieces, d, style, marker_pos, steps=False)
    else:
        outro = d.outro
        if degraded and rng.random() < 0.4:
            outro = pick(rng, bank["generic_filler"])
        if d.steps and "s3" not in "".join(c["id"] for c in d.chunks) and outro and "`" in outro:
            outro = None
        pieces = (
            pre + ([Seg(intro)] if intro else []) + body + post + ([Seg(outro)] if outro else [])
        )
        if mode == "citation" and cite_variant == "no_use":
            cid, _, para = d.no_use[0]
            pieces.insert(len(pre) + 1 + len(body), Seg(para, cid))
        response, citations = render(
            rng,
            pieces,
            d,
            style,
            marker_pos,
            steps=d.steps,
            body_ids={id(s) for s in body},
            dangling=mode == "citation" and cite_variant == "dangling",
        )
        if mode == "citation":
            response, citations = break_citation(rng, response, citations, d, cite_variant)
        elif mode == "invented":
            response = invent(rng, response, d, sources)
    event = envelope(rng, conv, d, phase, response, citations, history)
    if labelled:
        event["labels"] = labels(rng, d, partial)
    fb = feedback(rng, failed or mode == "unl_refusal", degraded)
    if fb:
        event["feedback"] = fb
    return event, truth


def _tricky_negatives(rng: Rng, d: Draft, mode: str, labelled: bool, post: list[Seg]) -> str | None:
    """Add text that looks like a failure to a naive rule but is not one; may return a new
    intro. Quoted quote-only text, hedged non-advice, PII-like values that are in the
    sources (case contact, purchase orders failing Luhn, IR contact from a press release),
    password-safety reminders."""
    bank = load("failures")
    tricky = bank["tricky"]
    intro = None
    if d.quote_only and mode != "quote_para" and rng.random() < 0.3:
        cid, sent, who = pick(rng, d.quote_only)
        post.append(Seg(_quoted(rng, sent, who), cid))
    if d.domain == "earnings":
        if not labelled and mode == "clean" and rng.random() < 0.12:
            intro = pick(rng, bank["hedges"]).format(**d.vars)
        contact = next((c["content"] for c in d.chunks if "Investor contact: " in c["content"]), "")
        if contact and rng.random() < 0.25:
            name, phone, rest = contact.split("Investor contact: ", 1)[1].split(", ", 2)
            email = rest.split(" ")[0].rstrip(".")
            post.append(Seg(tricky["investor_contact"].format(name=name, phone=phone, email=email)))
        return intro
    assert d.case is not None
    desc = str(d.case.get("description", ""))
    r = rng.random()
    if r < 0.2 and "purchase order: " in desc:
        po = desc.split("purchase order: ", 1)[1].split(".")[0]
        post.append(Seg(tricky["purchase_order"].format(po=po)))
    elif r < 0.3 and "Contact: " in desc:
        email = desc.split("Contact: ", 1)[1].strip()
        post.append(Seg(tricky["case_contact"].format(email=email)))
    elif r < 0.4:
        post.append(Seg(tricky["ticket_notes"].format(ticket=d.case["metadata"]["ticket"])))
    elif r < 0.48:
        post.append(Seg(pick(rng, bank["password_reminders"])))
    return None


def _refusal(rng: Rng, d: Draft) -> str:
    bank = load("failures")
    return pick(rng, bank["refusals"]).format(topic=d.topic) + pick(rng, bank["refusal_tails"])


def _prediction(rng: Rng, v: dict[str, str]) -> str:
    px = float(v.get("px", "100"))
    up = f"{px * rng.uniform(1.12, 1.6):.0f}"
    dn = f"{px * rng.uniform(0.55, 0.85):.0f}"
    return pick(rng, load("failures")["predictions"]).format(up=up, dn=dn, **v)


def _near_verbatim(rng: Rng, sent: str, who: str) -> str:
    """The quote-only sentence without quotation marks, verbatim or with a light edit."""
    bank = load("failures")
    text = sent
    if rng.random() < 0.6:
        for edit in bank["near_verbatim"]:
            a, b = edit["from"], edit["to"]
            if a in text and a != b:
                text = text.replace(a, b, 1)
                break
    lead = pick(rng, bank["leads"]).format(who=who)
    return lead + (text[0].lower() + text[1:] if lead and not text[:2].isupper() else text)


def _quoted(rng: Rng, sent: str, who: str) -> str:
    bank = load("failures")
    q = pick(rng, bank["quote_marks"])
    return pick(rng, bank["quoted"]).format(
        who=who, Who=who[0].upper() + who[1:], o=q["open"], c=q["close"], s=sent
    )
