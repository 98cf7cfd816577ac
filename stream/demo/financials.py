"""The invented listed companies of the ``earnings-qa`` world and their quarterly figures.

:func:`companies` builds the eight :class:`Company` records from ``phrases/companies.yaml``;
:func:`financials` derives one company-quarter's facts (revenue, margins, guidance, cash,
the people and identifiers of its filings) from a RNG seeded by (ticker, year, quarter),
so every event that asks about that quarter sees the same numbers. The facts are the
``str.format`` variables of the earnings phrase banks.

All companies, products, people and figures are invented.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from stream.demo.phrases import load

__all__ = ["Company", "companies", "financials"]

ORD = ("first", "second", "third", "fourth")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
LAST_DAY = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


@dataclass(frozen=True)
class Company:
    """One invented listed company: names, segments, baseline figures, people, narrative."""

    name: str
    short: str
    poss: str
    ticker: str
    slug: str
    exchange: str
    segments: tuple[str, str, str]
    base_rev: float
    gm: float
    om: float
    shares_m: float
    price: float
    fy_end: int
    ceo: str
    cfo: str
    ir: str
    city: str
    domain: str
    drivers: tuple[str, str, str]
    headwinds: tuple[str, str]
    inputs: str
    supply_cause: str
    reg_risk: tuple[str, str]
    special_risk: tuple[str, str]
    gm_up: str
    gm_down: str
    launch: str


@cache
def companies() -> tuple[Company, ...]:
    """The eight companies of ``phrases/companies.yaml``, in file order."""
    out = []
    for raw in load("companies")["companies"]:
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
        out.append(Company(**fields))
    return tuple(out)


def _money_m(x: float) -> str:
    return f"${x:,.1f} million"


def _money_b(x: float) -> str:
    return f"${x / 1000:.2f} billion" if x >= 1000 else f"${x:,.1f} million"


def _pct(x: float) -> str:
    return f"{x:.1f}%"


@lru_cache(maxsize=512)
def financials(ticker: str, fy: int, q: int) -> dict[str, str]:
    """Facts for one company-quarter; the same for every event that asks about it."""
    c = next(x for x in companies() if x.ticker == ticker)
    r = random.Random(f"fin:{ticker}:{fy}:{q}")
    growth = round(r.uniform(-6.0, 21.0), 1)
    if abs(growth) < 0.3:
        growth = 2.4
    rev = c.base_rev * (1 + (fy - 2025) * 0.07 + q * 0.015) * r.uniform(0.96, 1.04)
    prior = rev / (1 + growth / 100)
    gm = round(c.gm + r.uniform(-2.5, 2.5), 1)
    gm_prior = round(gm - r.choice((1, 1, 1, -1)) * r.uniform(0.2, 1.9), 1)
    if gm_prior == gm:
        gm_prior = round(gm - 0.6, 1)
    bps = round(abs(gm - gm_prior) * 100)
    om = round(c.om + r.uniform(-3.0, 3.0), 1)
    om_prior = round(om - r.uniform(-1.5, 2.2), 1)
    opinc = rev * om / 100
    eps = opinc * 0.78 / c.shares_m
    eps_prior = eps / (1 + r.uniform(-0.15, 0.3))
    w = [r.uniform(0.25, 0.5) for _ in range(3)]
    segs = [rev * x / sum(w) for x in w]
    seg_g = [round(growth + r.uniform(-9, 9), 1) for _ in range(3)]
    seg_om = [round(om + r.uniform(-6, 8), 1) for _ in range(3)]
    g_lo = rev * r.uniform(1.0, 1.05)
    g_hi = g_lo * r.uniform(1.025, 1.05)
    action = r.choice(("raised", "raised", "reaffirmed", "lowered"))
    fy_lo = rev * 4 * r.uniform(1.02, 1.08)
    fy_hi = fy_lo * r.uniform(1.02, 1.04)
    shift = {"raised": 0.97, "reaffirmed": 1.0, "lowered": 1.03}[action]
    gg_lo = round(gm + r.uniform(-1.0, 0.8), 1)
    fcf = opinc * r.uniform(0.6, 1.1)
    buyback = rev * r.uniform(0.02, 0.06)
    month = c.fy_end + 3 * q - 12
    year = fy if month > 0 else fy - 1
    month = month if month > 0 else month + 12
    next_p = f"the {ORD[q]} quarter" if q < 4 else f"the first quarter of fiscal {fy + 1}"
    up = growth >= 0
    seg_names = c.segments
    v = {
        "co": c.name,
        "short": c.short,
        "poss": c.poss,
        "tk": c.ticker,
        "exch": c.exchange,
        "CO": c.name.upper(),
        "ceo": c.ceo,
        "cfo": c.cfo,
        "ir": c.ir,
        "city": c.city,
        "ceo_first": c.ceo.split()[0],
        "cfo_first": c.cfo.split()[0],
        "fy": str(fy),
        "q": str(q),
        "doc": "10-Q" if q < 4 else "10-K",
        "period": f"the {ORD[q - 1]} quarter of fiscal {fy}",
        "period_short": f"Q{q} FY{fy}",
        "period_title": f"{ORD[q - 1].title()} Quarter Fiscal {fy}",
        "prior_period": f"the {ORD[q - 1]} quarter of fiscal {fy - 1}",
        "period_end": f"{MONTHS[month - 1]} {LAST_DAY[month - 1]}, {year}",
        "next_period": next_p,
        "guide_fy": f"fiscal {fy + 1 if q == 4 else fy}",
        "rev_m": _money_m(rev),
        "rev_b": _money_b(rev),
        "rev_prior_m": _money_m(prior),
        "growth": _pct(abs(growth)),
        "up_down": "up" if up else "down",
        "growth_dir": "increase" if up else "decrease",
        "rose_fell": "rose" if up else "fell",
        "why1": c.drivers[0] if up else c.headwinds[0],
        "why2": c.drivers[1] if up else c.headwinds[1],
        "offset": c.headwinds[0] if up else c.drivers[2],
        "gm": _pct(gm),
        "gm_prior": _pct(gm_prior),
        "gm_bps": f"{bps} basis points",
        "gm_dir": "expanded" if gm > gm_prior else "contracted",
        "gm_noun": "an improvement" if gm > gm_prior else "a decline",
        "gm_reason": c.gm_up if gm > gm_prior else c.gm_down,
        "om": _pct(om),
        "om_prior": _pct(om_prior),
        "opinc_m": _money_m(opinc),
        "eps": f"${eps:.2f}",
        "eps_prior": f"${eps_prior:.2f}",
        "g_lo": _money_b(g_lo),
        "g_hi": _money_b(g_hi),
        "gg_lo": _pct(gg_lo),
        "gg_hi": _pct(gg_lo + r.choice((0.5, 1.0, 1.0, 1.5))),
        "fy_lo": _money_b(fy_lo),
        "fy_hi": _money_b(fy_hi),
        "pfy_lo": _money_b(fy_lo * shift),
        "pfy_hi": _money_b(fy_hi * shift),
        "action": action,
        "action_ing": {"raised": "raising", "reaffirmed": "reaffirming", "lowered": "lowering"}[
            action
        ],
        "fcf_m": _money_m(fcf),
        "ocf_m": _money_m(fcf * r.uniform(1.15, 1.4)),
        "buyback_m": _money_m(buyback),
        "shares_rep": f"{buyback / c.price:.1f} million",
        "auth_left": _money_b(buyback * r.uniform(6, 15)),
        "div": f"${r.choice((0.12, 0.18, 0.24, 0.31, 0.42)):.2f}",
        "cash_b": _money_b(rev * r.uniform(0.4, 1.3)),
        "debt_b": _money_b(rev * r.uniform(0.5, 1.6)),
        "fx": f"{r.uniform(0.2, 1.8):.1f}",
        "fx_verb": r.choice(("reduced", "increased")),
        "intl": str(r.randint(22, 58)),
        "conc": str(r.randint(18, 41)),
        "top_n": r.choice(("five", "ten", "three")),
        "rnd_m": _money_m(rev * r.uniform(0.04, 0.16)),
        "headcount": f"{r.randint(4, 60) * 250:,}",
        "backlog_b": _money_b(rev * r.uniform(1.1, 3.2)),
        "inputs": c.inputs,
        "supply_cause": c.supply_cause,
        "launch": c.launch,
        "reg_risk": c.reg_risk[0],
        "reg_sum": c.reg_risk[1],
        "spec_risk": c.special_risk[0],
        "spec_sum": c.special_risk[1],
        "headwind": c.headwinds[0],
        "headwind2": c.headwinds[1],
        "driver1": c.drivers[0],
        "driver2": c.drivers[1],
        "driver3": c.drivers[2],
        "px": f"{c.price:.0f}",
        "domain": c.domain,
        "slug": c.slug,
        "ir_phone": f"({r.randint(201, 989)}) {r.randint(200, 989)}-{r.randint(1000, 9999)}",
        "ir_email": f"investors@{c.domain}",
        "file_no": f"001-{r.randint(30000, 41999)}",
        "ein": f"{r.randint(20, 94)}-{r.randint(1000000, 9999999)}",
    }
    for i, name in enumerate(seg_names, 1):
        v[f"seg{i}"] = name
        v[f"seg{i}_rev"] = _money_m(segs[i - 1])
        v[f"seg{i}_prior"] = _money_m(segs[i - 1] / (1 + seg_g[i - 1] / 100))
        v[f"seg{i}_g"] = _pct(abs(seg_g[i - 1]))
        v[f"seg{i}_ud"] = "up" if seg_g[i - 1] >= 0 else "down"
        v[f"seg{i}_om"] = _pct(seg_om[i - 1])
    return v
