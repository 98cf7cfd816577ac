"""The ragpulse Grafana dashboard (`ragpulse dashboards export`), built with Grafana's
foundation SDK (`grafana-foundation-sdk`, Grafana 11.6 schema) rather than hand-typed JSON.

Template variables: the Prometheus data source, one variable per deployment label of the
alerts (`AlertSettings.aggregate_by`, default namespace and job), then service, model,
prompt_version and the judge metric. Windows and threshold lines come from `AlertSettings`,
so the panels show what the alerts evaluate. The panels are data (`dashboard_rows`); docs/
dashboards.md describes each row.
"""

from __future__ import annotations

import json
from typing import Any

from grafana_foundation_sdk.builders import bargauge, stat, statetimeline, timeseries
from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus as prom
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm

from exporters.alert_settings import AlertSettings
from exporters.dashboard_judge_health import judge_health_panels
from exporters.dashboard_panels import PanelSpec, dashboard_rows

__all__ = ["DASHBOARD_UID", "build_dashboard", "render_dashboard"]

DASHBOARD_UID = "ragpulse"
DS = dm.DataSourceRef(type_val="prometheus", uid="${datasource}")
#: fields of a Prometheus annotation query that Grafana reads but the SDK model lacks
DRIFT_ANNOTATION_EXTRAS = {
    "titleFormat": "drift {{metric}} ({{detector}})",
    "textFormat": "service {{service}}: alarm raised or cleared",
    "tagKeys": "metric,detector,service",
    "step": "1m",
}


def _query(expr: str, legend: str, ref: int, instant: bool) -> prom.Dataquery:
    q = prom.Dataquery().expr(expr).legend_format(legend).ref_id(chr(ord("A") + ref))
    return (q.instant() if instant else q.range()).datasource(DS)


def _panel(spec: PanelSpec, panel_id: int) -> Any:
    builder: Any
    if spec.kind == "stat":
        builder = stat.Panel()
    elif spec.kind == "bargauge":  # current value per series (instant query), one bar each
        builder = bargauge.Panel().orientation(cm.VizOrientation.HORIZONTAL)
        last = cb.ReduceDataOptions().calcs(["lastNotNull"]).values(False)
        builder = builder.display_mode(cm.BarGaugeDisplayMode.BASIC).reduce_options(last).min(0)
    elif spec.kind == "state-timeline":
        ok = dm.ValueMappingResult(text="ok", color="green")
        alarm = dm.ValueMappingResult(text="ALARM", color="red")
        builder = statetimeline.Panel().mappings([dm.ValueMap({"0": ok, "1": alarm})])
        builder = builder.fill_opacity(70).line_width(0)
    else:
        legend = cb.VizLegendOptions().show_legend(True).display_mode(cm.LegendDisplayMode.LIST)
        builder = timeseries.Panel().legend(legend.placement(cm.LegendPlacement.BOTTOM))
        builder = builder.fill_opacity(70 if spec.percent_stack else 10)
        if spec.percent_stack:
            builder = builder.stacking(cb.StackingConfig().mode(cm.StackingMode.PERCENT))
        if spec.threshold is not None:
            steps = [dm.Threshold(None, "green"), dm.Threshold(spec.threshold, "red")]
            builder = builder.thresholds(
                db.ThresholdsConfig().mode(dm.ThresholdsMode.ABSOLUTE).steps(steps)
            ).thresholds_style(
                cb.GraphThresholdsStyleConfig().mode(cm.GraphThresholdsStyleMode.DASHED)
            )
    builder = (
        builder.id(panel_id).title(spec.title).description(spec.description).datasource(DS)
        .unit(spec.unit).span(spec.width).height(8)
    )  # fmt: skip
    if spec.bounds is not None:
        builder = builder.min(spec.bounds[0]).max(spec.bounds[1])
    if spec.repeat:
        builder = builder.repeat(spec.repeat).repeat_direction("h").max_per_row(3)
    for i, (expr, legend_format) in enumerate(spec.queries):
        instant = spec.kind in ("stat", "bargauge")
        builder = builder.with_target(_query(expr, legend_format, i, instant))
    return builder


def _variable(name: str, query: str, label: str, multi: bool = True) -> db.QueryVariable:
    return (
        db.QueryVariable(name).label(label).datasource(DS).query(query)
        .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED).sort(dm.VariableSort.ALPHABETICAL_ASC)
        .multi(multi).include_all(True).all_value(".*")
        .current(dm.VariableOption(selected=True, text="All", value="$__all"))
    )  # fmt: skip


def _labels_of(metric: str, matchers: list[str], label: str) -> str:
    selector = f"{metric}{{{', '.join(matchers)}}}" if matchers else metric
    return f"label_values({selector}, {label})"


def _variables(alerts: AlertSettings) -> list[Any]:
    out: list[Any] = [db.DatasourceVariable("datasource").label("Data source").type("prometheus")]
    deploy: list[str] = []
    for lbl in alerts.aggregate_by:  # chained: namespace -> job
        out.append(_variable(lbl, _labels_of("ragpulse_build_info", deploy, lbl), lbl))
        deploy.append(f'{lbl}=~"${lbl}"')
    chain = list(deploy)
    for name in ("service", "model", "prompt_version"):
        query = _labels_of("ragpulse_scored_events_total", chain, name)
        out.append(_variable(name, query, name.replace("_", " ")))
        chain.append(f'{name}=~"${name}"')
    metric = _labels_of("ragpulse_metric_score_count", deploy, "metric")
    out.append(_variable("metric", metric, "judge metric"))
    return out


def _drift_annotation(alerts: AlertSettings) -> db.AnnotationQuery:
    matchers = [f'{lbl}=~"${lbl}"' for lbl in alerts.aggregate_by] + ['service=~"$service"']
    expr = (
        "max by (metric, detector, service) "
        f"(changes(ragpulse_drift_alarm{{{', '.join(matchers)}}}[2m])) > 0"
    )
    return (
        db.AnnotationQuery().name("Drift alarm changes").datasource(DS).enable(True)
        .icon_color("red").expr(expr)
    )  # fmt: skip


def build_dashboard(alerts: AlertSettings | None = None) -> dm.Dashboard:
    """The dashboard as the SDK's model object."""
    alerts = alerts or AlertSettings()
    builtin = (
        db.AnnotationQuery().name("Annotations & Alerts").built_in(1).hide(True).enable(True)
        .datasource(dm.DataSourceRef(type_val="grafana", uid="-- Grafana --"))
        .icon_color("rgba(0, 211, 255, 1)").type("dashboard")
        .target(db.AnnotationTarget().limit(100).match_any(False).tags([]).type("dashboard"))
    )  # fmt: skip
    board = (
        db.Dashboard("ragpulse: RAG quality and stream health").uid(DASHBOARD_UID)
        .description("ragpulse sidecar: detector hits, failure-mode rates, judge scores, "
                     "drift alarms, judge budget and Kafka consumption.")
        .tags(["ragpulse", "rag", "llm"]).editable().timezone("browser")
        .time("now-6h", "now").refresh("30s").tooltip(dm.DashboardCursorSync.CROSSHAIR)
        .annotation(builtin).annotation(_drift_annotation(alerts))
        .link(db.DashboardLink("Runbook").type(dm.DashboardLinkType.LINK)
              .url(alerts.runbook_base_url).target_blank(True))
    )  # fmt: skip
    for variable in _variables(alerts):
        board = board.with_variable(variable)
    next_id = 1
    for title, specs in [*dashboard_rows(alerts), ("Judge health", judge_health_panels(alerts))]:
        board = board.with_row(db.Row(title).id(next_id))
        next_id += 1
        for spec in specs:
            board = board.with_panel(_panel(spec, next_id))
            next_id += 1
    return board.build()


def render_dashboard(alerts: AlertSettings | None = None) -> dict[str, Any]:
    """Grafana dashboard JSON (import it, or provision it from a file / ConfigMap)."""
    board: dict[str, Any] = json.loads(json.dumps(build_dashboard(alerts), cls=JSONEncoder))
    for annotation in board["annotations"]["list"]:
        if annotation["name"] == "Drift alarm changes":
            annotation.update(DRIFT_ANNOTATION_EXTRAS)
    return board
