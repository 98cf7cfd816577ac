"""The HTML eval report is self-contained: tables plus the plots as embedded PNGs."""

from __future__ import annotations

import base64
import io
import re

import matplotlib.image

from exporters.report_html import render_html
from exporters.report_plots import failure_mode_plot, gate_plot, score_distribution_plot
from tests.exporters.test_report_renderers import eval_report


def test_html_embeds_three_decodable_plots() -> None:
    html = render_html(eval_report())
    images = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([^"]+)"', html)
    assert [alt for alt, _ in images] == [
        "gate pass rates", "judge score distributions", "failure modes",
    ]  # fmt: skip
    for _, data in images:
        pixels = matplotlib.image.imread(io.BytesIO(base64.b64decode(data)), format="png")
        assert pixels.shape[0] > 100 and pixels.shape[1] > 300
        assert pixels.std() > 0.05  # not a blank canvas
    assert "http://" not in html and "https://" not in html  # no external assets
    assert '<td class="fail">FAIL</td>' in html


def test_plots_are_skipped_when_there_is_nothing_to_draw() -> None:
    report = eval_report()
    report["events"], report["failure_modes"] = [], {}
    for tier in report["gates"].values():
        tier["pass_rate"] = None
    assert score_distribution_plot(report) is None
    assert failure_mode_plot(report) is None
    assert gate_plot(report) is None
    assert "<img" not in render_html(report)


def test_text_is_escaped() -> None:
    report = eval_report()
    report["input"]["path"] = "<script>x</script>.jsonl"
    html = render_html(report)
    assert "<script>" not in html and "&lt;script&gt;" in html
