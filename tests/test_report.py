"""The report: statistics helpers against known values, figures saved as PNG+PDF, the HTML page."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from learnability.errors import UserError
from learnability.report import build_report
from learnability.report.figures import (
    finish,
    fit_line,
    get,
    group_by,
    new_figure,
    plot_series,
    series,
    summarise,
    wilson_interval,
)
from learnability.studies.base import ClaimResult, FigureSink, StudyReport, Table


def test_summary_matches_t_interval_by_hand():
    s = summarise([1.0, 2.0, 3.0])
    # std = 1, t(2) = 4.303, half-width = 4.303 / sqrt(3)
    assert s.mean == 2.0 and s.n == 3
    assert s.ci_high - s.mean == pytest.approx(4.303 / math.sqrt(3))


def test_summary_drops_non_finite_values():
    s = summarise([1.0, float("nan"), float("inf"), 3.0])
    assert s.n == 2 and s.mean == 2.0


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=50))
def test_interval_contains_the_mean(values):
    s = summarise(values)
    assert s.ci_low <= s.mean + 1e-6 and s.mean - 1e-6 <= s.ci_high


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-3)
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)


@given(st.floats(-5, 5), st.floats(-5, 5))
def test_fit_line_recovers_an_exact_line(slope, intercept):
    xs = np.arange(6.0)
    fit = fit_line(xs, slope * xs + intercept)
    assert fit.slope == pytest.approx(slope, abs=1e-8)
    assert fit.intercept == pytest.approx(intercept, abs=1e-8)


def _record(n, seed, value):
    return SimpleNamespace(config={"task": {"n": n}, "seed": seed}, metrics={"m": {"v": value}})


def test_series_groups_and_summarises_records():
    records = [_record(n, s, n * 10 + s) for n in (10, 4, 2) for s in range(3)]
    data = series(records, "config.task.n", "metrics.m.v")
    xs, ys = data[None]
    assert xs == [2, 4, 10]
    assert [y.mean for y in ys] == [21.0, 41.0, 101.0]
    assert [key for (key,) in group_by(records, "config.task.n")] == [2, 4, 10]
    assert get(records[0], "metrics.m.missing", "d") == "d"


def test_unlabelled_axes_are_refused():
    _fig, (ax,) = new_figure()
    with pytest.raises(UserError):
        finish(ax, "", "y")


def test_report_embeds_figures_and_writes_claims(tmp_path):
    sink = FigureSink(tmp_path / "figures", "demo")
    fig, (ax,) = new_figure()
    plot_series(ax, series([_record(n, 0, n) for n in (1, 2, 3)], "config.task.n", "metrics.m.v"))
    finish(ax, "n (bits)", "value")
    record = sink.add("line", fig, "a line")
    assert record.png.stat().st_size > 1000 and record.pdf.read_bytes()[:4] == b"%PDF"
    claim = ClaimResult("c1", "paper says", "measured 1.0 [0.9, 1.1] (n=3)", "reproduced", "quick")
    report = StudyReport(
        study="demo", title="Demo study", paper="Someone 2024", protocol_note="own protocol",
        scale="quick", claims=[claim], figures=sink.figures,
        tables=[Table("t", ["a", "b"], [[1, 2]])], notes=["a note"],
        run_counts={"demo/x": {"ok": 3}}, seconds=1.5,
    )  # fmt: skip
    path = build_report([report], tmp_path)
    page = path.read_text()
    assert "data:image/png;base64," in page and "Demo study" in page and "reproduced" in page
    claims = json.loads((tmp_path / "claims.json").read_text())
    assert claims[0]["claim"] == "c1" and claims[0]["study"] == "demo"
    assert "| demo | c1 | reproduced |" in (tmp_path / "claims.md").read_text()


def test_claim_verdict_is_validated():
    with pytest.raises(UserError):
        ClaimResult("c", "p", "m", "maybe", "quick")  # type: ignore[arg-type]
