"""The report: figures as data rendered to PNG + PDF, series builders, the HTML page and claims files."""

from __future__ import annotations

import json

import pytest

from learnability.claims import (
    Choice,
    Claim,
    Evidence,
    Obs,
    Rate,
    Units,
    above,
    evaluate,
    no_control,
)
from learnability.report import render
from learnability.report.html import build_report, headline
from learnability.report.panels import Figure, Histogram, Matrix, Panel, Series, Table, mean_series
from learnability.report.study_report import StudyReport


def test_mean_series_summarises_per_x_in_numeric_order():
    s = mean_series([(10, 1.0), (4, 2.0), (4, 4.0), (2, 5.0)])
    assert s.x == [2, 4, 10] and s.y == [5.0, 3.0, 1.0]
    assert s.lo[1] < 3.0 < s.hi[1]  # two values: a t interval
    r = mean_series([(1, 1.0), (1, 0.0), (1, 1.0)], rate=True)
    assert 0.0 <= r.lo[0] < r.y[0] < r.hi[0] <= 1.0  # Wilson, clipped to [0, 1]


def test_unlabelled_axes_are_refused():
    with pytest.raises(ValueError, match="label"):
        Panel("t", "", "y")


def test_every_panel_kind_renders_to_png_and_pdf(tmp_path):
    fig = Figure(
        "demo",
        "every kind",
        [
            Panel("lines", "n (bits)", "value", series=[mean_series([(1, 1.0), (2, 2.0), (2, 2.5)], "a")],
                  hlines=[(1.5, "chance")], logx=True),
            Panel("bars", "group", "rate", series=[Series("x", [0], [0.5], [0.4], [0.6], kind="bar")], xticks=[0]),
            Panel("hist", "k/N", "density", histograms=[Histogram("h", [0.1, 0.2, 0.2, 0.9])]),
            Panel("heat", "key", "query", matrix=Matrix([[0.0, 1.0], [1.0, 0.0]], "weight")),
            Panel("empty", "x", "y", note="no converged runs"),
        ],
    )  # fmt: skip
    out = render.save(fig, tmp_path, "study")
    assert out.png.stat().st_size > 1000 and out.pdf.read_bytes()[:4] == b"%PDF"
    assert out.png.name == "study_demo.png"


def _claim_result():
    obs = [Obs(u, 1.0, group="ok") for u in range(10)]
    claim = Claim(
        slug="runs-finish", title="runs finish", statement="every run finishes",
        paper_statement="all runs finish",
        # the strict filter drops a run: an alternative that changes the evidence (robust needs one)
        evidence=lambda results, choices: Evidence(obs[: 9 if choices["filter"] == "strict" else 10]),
        rule=Rate("ok", above(0.5, 0.6), what="finished fraction"), units=Units("seed"),
        control=no_control("a bookkeeping claim"), choices=(Choice("filter", "none", ("strict",)),),
    )  # fmt: skip
    return evaluate(claim, None, "demo", "quick")


def test_report_embeds_figures_and_writes_claims(tmp_path):
    fig = render.save(
        Figure(
            "line",
            "a line",
            [Panel("p", "n (bits)", "v", series=[Series("s", [1, 2], [1.0, 2.0])])],
        ),
        tmp_path / "figures",
        "demo",
    )
    claim = _claim_result()
    report = StudyReport(
        study="demo", title="Demo study", paper="Someone 2024", protocol_note="own protocol",
        scale="quick", claims=[claim], figures=[fig], tables=[Table("t", ["a", "b"], [[1, 2.0]])],
        notes=["a note"], run_counts={"demo/x": {"ok": 3}}, seconds=1.5,
    )  # fmt: skip
    page = build_report([report], tmp_path).read_text()
    assert "data:image/png;base64," in page and "Demo study" in page and "finished fraction" in page
    (row,) = json.loads((tmp_path / "claims.json").read_text())
    assert (
        row["id"] == "demo/runs-finish" and row["verdict"] == "reproduced" and row["robust"] is True
    )
    assert "demo/runs-finish" in (tmp_path / "claims.md").read_text()
    assert headline([report])["reproduced"] == {"total": 1, "robust": 1, "fragile": 0}


def test_claims_json_is_strict_json_even_with_nan(tmp_path):
    claim = _claim_result()
    claim.details["nan"] = float("nan")
    build_report([StudyReport("demo", "D", "P", "", "quick", [claim])], tmp_path)
    text = (tmp_path / "claims.json").read_text()
    assert "NaN" not in text and json.loads(text)[0]["details"]["nan"] is None
