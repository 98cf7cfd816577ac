"""The eval report as titled sections of text and tables, shared by Markdown and HTML."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Section", "Table", "eval_sections", "num", "pct"]

BANDS = ("severe", "moderate", "minor", "none")
GATE_NAMES = {"critical": "Critical", "quality": "Quality", "diagnostic": "Diagnostic"}


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]


@dataclass
class Section:
    title: str
    lines: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    anchor: str = ""


def pct(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.1f} %"


def num(value: Any, places: int = 3) -> str:
    return "-" if value is None else f"{float(value):.{places}f}"


def _verdict(row: Mapping[str, Any]) -> str:
    if row.get("status") == "insufficient_data":
        return "insufficient data"
    return "**REGRESSED**" if row.get("regressed") else "no significant change"


def _floors(th: Mapping[str, Any]) -> str:
    used = th.get("floors_used") or {}
    if not used:
        return f"{th['min']:g}"
    return ", ".join(f"{v:g} ({k})" for k, v in used.items())


def _gates(report: Mapping[str, Any]) -> Section:
    s = Section("Gates", anchor="gates")
    tiers = Table(["gate", "action", "evaluated", "pass rate", "floor", "status"], [])
    limits = Table(["gate", "metric", "min score (judge)", "scored", "at or above", "mean"], [])
    for gate, t in report["gates"].items():
        status = t["status"].upper() if t["status"] == "fail" else t["status"]
        name = GATE_NAMES.get(gate, gate) + (" (exit code)" if t.get("critical") else "")
        tiers.rows.append(
            [
                name,
                t["action"],
                str(t["evaluated"]),
                pct(t["pass_rate"]),
                f"≥ {pct(t['floor'])}",
                status,
            ]
        )
        for th in t["thresholds"]:
            limits.rows.append(
                [
                    gate,
                    th["metric"],
                    _floors(th),
                    str(th["scored"]),
                    pct(th.get("pass_rate")),
                    num(th.get("mean")),
                ]
            )
    s.lines.append(
        "An event passes a gate when every scored metric of the gate is at or above its "
        "minimum; the run passes when the pass rate reaches the floor."
    )
    s.tables += [tiers, limits]
    return s


def _metrics(report: Mapping[str, Any]) -> Section:
    s = Section("Judge metrics", anchor="metrics")
    t = Table(["metric", "scored", "mean", "95 % CI", *BANDS, "skipped", "judge errors"], [])
    never = [name for name, m in report["metrics"].items() if not m["scored"]]
    for name, m in report["metrics"].items():
        if not m["scored"]:
            continue
        ci = m.get("ci95")
        t.rows.append(
            [
                name,
                str(m["scored"]),
                num(m["mean"]),
                f"{num(ci[0])}-{num(ci[1])}" if ci else "-",
                *(str(m["bands"].get(b, 0)) for b in BANDS),
                str(m["skipped"]),
                str(m["judge_error"]),
            ]
        )
    if not t.rows:
        s.lines.append("No event was judged (`--judge none` or a zero sample rate).")
    else:
        s.lines.append("Severity bands: severe 0-0.30, moderate 0.31-0.60, minor 0.61-0.85, none.")
        s.tables.append(t)
    if never and t.rows:
        s.lines.append(
            "Never scored (skipped: their inputs were missing, or judge errors): "
            + ", ".join(never)
            + "."
        )
    return s


def _failure_modes(report: Mapping[str, Any]) -> Section:
    s = Section("Failure modes", anchor="failure-modes")
    t = Table(["failure mode", "events", "share of scored events"], [])
    for mode, row in report["failure_modes"].items():
        t.rows.append([mode, str(row["count"]), pct(row["share"])])
    if t.rows:
        s.tables.append(t)
    else:
        s.lines.append("No detector flagged any event.")
    return s


def _categories(report: Mapping[str, Any]) -> Section | None:
    cats = report.get("categories") or {}
    if not cats:
        return None
    s = Section("Categories (labels.category)", anchor="categories")
    overview = Table(["category", "events", "failure modes (share)", *GATE_NAMES.values()], [])
    metric_names = sorted(
        {m for c in cats.values() for m, row in c["metrics"].items() if row["scored"]}
    )
    means = Table(["category", *metric_names], [])
    for name, c in cats.items():
        modes = ", ".join(f"{m} {pct(r['share'])}" for m, r in c["failure_modes"].items())
        gates = [pct(c["gates"][g]["pass_rate"]) for g in GATE_NAMES]
        overview.rows.append([name, str(c["events"]), modes or "none", *gates])
        means.rows.append([name, *(num(c["metrics"].get(m, {}).get("mean")) for m in metric_names)])
    s.tables.append(overview)
    if metric_names:
        s.lines.append("Gate columns are pass rates; the second table holds metric means.")
        s.tables.append(means)
    return s


def _judge(report: Mapping[str, Any]) -> Section:
    j = report["judge"]
    lat = j["latency_s"]
    cells = {
        "judge": j["name"],
        "events judged": str(j["judged"]),
        **{f"{k} s": num(lat[k]) for k in ("mean", "p50", "p95")},
        "total s": num(lat["total"], 1),
        "judge calls": str(j["llm_calls"]),
        "prompt tokens": str(j["prompt_tokens"]),
        "completion tokens": str(j["completion_tokens"]),
        "cost USD": f"{j['cost_usd']:.4f}",
    }
    table = Table(list(cells), [list(cells.values())])
    return Section("Judge cost and latency", tables=[table], anchor="judge")


def _reference(report: Mapping[str, Any]) -> Section | None:
    ref = report.get("reference")
    if not ref:
        return None
    s = Section("Reference-based quality", anchor="reference")
    s.lines.append(
        f"{ref['events']} events carry a reference (`labels.expected_answer` / "
        f"`labels.required_information`); {ref['judged']} have a reference-based score. These "
        "metrics score golden/canary and reviewed turns only: their population is not the "
        "traffic's. Bands are shares of the scored turns."
    )
    regressions = (report.get("regressions") or {}).get("metrics") or {}
    t = Table(["metric", "scored", "mean", "95 % CI", *BANDS, "judge errors"], [])
    if regressions:
        t.headers.append("vs baseline")
    for name, m in ref["metrics"].items():
        ci = m.get("ci95")
        row = [name, str(m["n"]), num(m["mean"]), f"{num(ci[0])}-{num(ci[1])}" if ci else "-"]
        row += [pct(m["bands"].get(b)) for b in BANDS] + [str(m["judge_error"])]
        if regressions:
            row.append(_verdict(regressions[name]) if name in regressions else "-")
        t.rows.append(row)
    s.tables.append(t)
    return s


def _regressions(report: Mapping[str, Any]) -> Section | None:
    reg = report.get("regressions")
    if reg is None:
        return None
    s = Section("Regressions vs baseline", anchor="regressions")
    s.lines.append(
        f"Baseline: {reg['baseline_events']} events ({reg.get('baseline_created') or '?'}). "
        f"One-sided tests, {reg['correction']}, alpha {reg['alpha']}."
    )
    m = Table(["metric", "baseline", "current", "delta", "95 % CI of delta", "p (adj.)", ""], [])
    for name, r in reg["metrics"].items():
        ci = r.get("delta_ci95")
        m.rows.append(
            [
                name,
                num(r["baseline_mean"]),
                num(r["mean"]),
                num(r.get("delta")),
                f"{num(ci[0])}-{num(ci[1])}" if ci else "-",
                num(r.get("p_adjusted"), 4),
                _verdict(r),
            ]
        )
    f = Table(["share of", "baseline", "current", "delta", "p (adj.)", ""], [])
    for section, label in (("failure_modes", ""), ("gates", "failing ")):
        for name, r in reg[section].items():
            f.rows.append(
                [
                    f"{label}{name}",
                    pct(r["baseline_share"]),
                    pct(r["share"]),
                    pct(r.get("delta")),
                    num(r.get("p_adjusted"), 4),
                    _verdict(r),
                ]
            )
    s.tables += [t for t in (m, f) if t.rows]
    return s


def eval_sections(report: Mapping[str, Any]) -> list[Section]:
    found = [
        _gates(report),
        _metrics(report),
        _reference(report),
        _failure_modes(report),
        _categories(report),
        _judge(report),
        _regressions(report),
    ]
    return [s for s in found if s is not None]
