"""The report: figures as data rendered to PNG + PDF, series builders, the HTML page and claims files; one
interval per quantity (card, table and figure print the same Estimate), claim/figure links, the headline's
states (not run, untested), claims.md sections, and legible figures (dpi, text size, no overlapping ticks)."""

from __future__ import annotations

import dataclasses
import json
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from learnability import stats
from learnability.claims import (
    AllOf,
    Choice,
    Claim,
    Contrast,
    Control,
    Evidence,
    Frame,
    Mean,
    Obs,
    Rate,
    Trend,
    Units,
    above,
    evaluate,
    no_control,
)
from learnability.report import render
from learnability.report.html import (
    MIN_SCALE,
    build_report,
    cell_text,
    completeness,
    headline,
    machines_text,
    robustness_text,
    verdict_text,
)
from learnability.report.panels import Figure, Histogram, Matrix, Panel, Series, Table, mean_series
from learnability.report.study_report import StudyReport
from learnability.stats import Estimate


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


def _claim():
    obs = [Obs(u, 1.0, group="ok") for u in range(10)]
    return Claim(
        slug="runs-finish", title="runs finish", statement="every run finishes",
        paper_statement="all runs finish",
        # the strict filter drops a run: an alternative that changes the evidence (robust needs one)
        evidence=lambda results, choices: Evidence(obs[: 9 if choices["filter"] == "strict" else 10]),
        rule=Rate("ok", above(0.5, 0.6), what="finished fraction"), units=Units("seed"),
        control=no_control("a bookkeeping claim"), choices=(Choice("filter", "none", ("strict",)),),
    )  # fmt: skip


def _claim_result():
    return evaluate(_claim(), None, "demo", "quick")


def test_report_links_figures_and_writes_claims(tmp_path):
    fig = render.save(
        Figure(
            "line",
            "a line",
            [Panel("p", "n (bits)", "v", series=[Series("s", [1, 2], [1.0, 2.0])])],
            claims=("runs-finish",),
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
    assert "Demo study" in page and "finished fraction" in page
    # the figure is embedded (the page stands alone), its PNG and PDF files linked beside it, shown
    # inside the claim's card
    assert 'src="data:image/png;base64,' in page and 'data-file="figures/demo_line.png"' in page
    assert 'href="figures/demo_line.png"' in page and 'href="figures/demo_line.pdf"' in page
    card = page[page.index('id="claim-demo-runs-finish"') :]
    card = card[: card.index("</article>")]
    assert 'id="fig-demo-line"' in card and "figures/demo_line.png" in card
    figure = page[page.index('id="fig-demo-line"') :]
    assert re.search(r"href=[\"']#claim-demo-runs-finish", figure[: figure.index("</figure>")])
    (row,) = json.loads((tmp_path / "claims.json").read_text())
    assert (
        row["id"] == "demo/runs-finish" and row["verdict"] == "reproduced" and row["robust"] is True
    )
    assert row["figures"] == ["line"]
    assert "demo/runs-finish" in (tmp_path / "claims.md").read_text()
    assert headline([report])["reproduced"] == {
        "total": 1,
        "robust": 1,
        "fragile": 0,
        "untested": 0,
        "n/a": 0,
    }


def test_claims_json_is_strict_json_even_with_nan(tmp_path):
    claim = _claim_result()
    claim.details["nan"] = float("nan")
    build_report([StudyReport("demo", "D", "P", "", "quick", [claim])], tmp_path)
    text = (tmp_path / "claims.json").read_text()
    assert "NaN" not in text and json.loads(text)[0]["details"]["nan"] is None


# -- one interval per quantity -------------------------------------------------------------------------------
def _solves(acc: list[float], chance: float = 0.1):
    """The random study's solve rule on synthetic accuracies: a Mean above a band and a Contrast
    against the chance line, each accuracy bounded to [0, 1]."""
    obs = [Obs(seed, a, group="random") for seed, a in enumerate(acc)]
    obs += [Obs(seed, chance, group="chance") for seed in range(len(acc))]
    labels = {"random": "random width 64", "chance": "chance line"}
    rule = AllOf(
        (
            Mean("random", above(0.8, 0.9), what="accuracy", labels=labels, bounds=(0.0, 1.0)),
            Contrast("random", "chance", above(0.1, 0.2), what="accuracy", labels=labels,
                     bounds=(0.0, 1.0)),
        )
    )  # fmt: skip
    claim = Claim(
        slug="solves", title="solves it", statement="s", paper_statement="p",
        evidence=lambda results, choices: Evidence(obs), rule=rule, units=Units("seed", 2),
        control=Control("chance line", group="chance"), choices=(Choice("metric", "test", ("fresh",)),),
    )  # fmt: skip
    return evaluate(claim, None, "demo", "quick")


def _bar(panel, label):
    (s,) = [s for s in panel.series if s.label == label]
    return Estimate(s.y[0], s.lo[0], s.hi[0], 0)


def test_a_perfect_accuracy_is_drawn_as_the_interval_the_card_prints():
    # accuracies of exactly 1.0 are not successes out of 2 trials: no Wilson whisker down to 0.34
    c = _solves([1.0, 1.0])
    bar = _bar(c.panel, "random width 64")
    assert (bar.value, bar.lo, bar.hi) == (1.0, 1.0, 1.0)
    assert "random width 64: accuracy 1 (n=2)" in c.measured


def test_card_table_and_figure_show_the_same_numbers(tmp_path):
    c = _solves([0.99, 0.995, 0.998])
    part = c.details["rule"]["part1"]["mean"]
    est = Estimate(part["value"], part["lo"], part["hi"], part["n"])
    assert est == stats.mean_ci([0.99, 0.995, 0.998], (0.0, 1.0)) and est.lo < est.value < est.hi
    bar = _bar(c.panel, "random width 64")  # the figure's data
    assert (bar.value, bar.lo, bar.hi) == (est.value, est.lo, est.hi)
    chance = _bar(c.panel, "chance line")
    control = c.details["rule"]["part2"]["control"]
    assert (chance.value, chance.lo, chance.hi) == (control["value"], control["lo"], control["hi"])
    report = StudyReport(
        "demo", "Demo", "P", "", "quick", [c], tables=[Table("accuracy", ["task", "random"],
        [["solves", est]])],
    )  # fmt: skip
    report.figures.append(
        render.save(Figure("claim_solves", "its panel", [c.panel]), tmp_path / "figures", "demo")
    )
    c.figure = "claim_solves"
    page = build_report([report], tmp_path).read_text()
    card = page[page.index('id="claim-demo-solves"') :]
    card = card[: card.index("</article>")]
    table = page[page.index("<h3>accuracy</h3>") :]
    printed = est.fmt()  # "0.994 [0.985, 1] (n=3)"
    assert printed in card and printed in table[: table.index("</table>")]
    assert cell_text(est) == printed
    (row,) = json.loads((tmp_path / "claims.json").read_text())
    assert row["details"]["rule"]["part1"]["mean"]["lo"] == pytest.approx(est.lo)


def test_rule_panels_draw_their_band_and_control():
    c = _solves([0.99, 0.995, 0.998])
    labels = [s.label for s in c.panel.series]
    assert labels == ["random width 64", "chance line"]
    # each part's band sits over the bar it judges: the mean's at 0.8-0.9, the contrast's at chance + 0.1-0.2
    spans = sorted((round(s.lo, 6), round(s.hi, 6), s.over) for s in c.panel.spans)
    assert spans == [(0.2, 0.3, "random width 64"), (0.8, 0.9, "random width 64")]
    assert any("chance line + 0.2" in s.label for s in c.panel.spans)
    trend = Trend("f", above(0.0, 0.5), controls=("c",), control_band=above(0.0, 0.1))
    obs = [Obs(u, 2.0 * x + u, x=x, group="f") for u in range(3) for x in (1, 2, 3)]
    obs += [Obs(u, 0.1 * x, x=x, group="c") for u in range(3) for x in (1, 2, 3)]
    panel = trend.panel(Frame(obs), "t")
    names = [s.label for s in panel.series]
    assert names[:2] == ["f", "c"] and any("slope 2" in n for n in names)
    assert any("band edge: slope 0.5" in n for n in names)


# -- headline, states, claims.md -----------------------------------------------------------------------------
def _variant(c, **fields):
    out = dataclasses.replace(c)
    for k, v in fields.items():
        setattr(out, k, v)
    return out


def test_headline_counts_not_run_and_untested_apart_from_inconclusive(tmp_path):
    base = _claim_result()
    not_run = _variant(
        base, id="demo/ablation", title="ablation", verdict="not run", robust=None,
        measured="not run at this scale: the ablation needs the paper's width",
    )  # fmt: skip
    undecided = _variant(base, id="demo/u", title="u", verdict="inconclusive", robust=None,
                         qualifier="units")  # fmt: skip
    outside = _variant(base, id="demo/o", title="o", verdict="not reproduced", robust=None,
                       qualifier="outside regime")  # fmt: skip
    fragile = _variant(base, id="demo/f", title="f", verdict="reproduced", robust=False,
                       robustness_summary={"effective": 3, "agree": 2, "no_op": 1, "not_evaluated": 0})  # fmt: skip
    report = StudyReport(
        "demo", "Demo", "P", "", "quick", [base, not_run, undecided, outside, fragile]
    )
    counts = headline([report])
    assert counts["not run"] == {"total": 1, "robust": 0, "fragile": 0, "untested": 0, "n/a": 1}
    assert counts["inconclusive"] == {
        "total": 1,
        "robust": 0,
        "fragile": 0,
        "untested": 0,
        "n/a": 1,
    }
    assert counts["not reproduced — outside regime"]["untested"] == 1
    assert counts["not reproduced"]["total"] == 0  # counted apart from negatives inside the regime
    assert counts["reproduced"]["robust"] == 1 and counts["reproduced"]["fragile"] == 1
    assert verdict_text(undecided) == "inconclusive — units"
    assert verdict_text(outside) == "not reproduced — outside regime"
    assert verdict_text(not_run) == "not run at this scale"
    assert robustness_text(fragile) == (
        "fragile: 1 of 3 effective alternatives give another verdict (1 no-op)"
    )
    robust = _variant(
        fragile, robust=True, robustness_summary={"effective": 2, "agree": 2, "no_op": 1}
    )
    assert (
        robustness_text(robust)
        == "robust: the verdict holds under all 2 effective alternatives (1 no-op)"
    )
    page = build_report([report], tmp_path).read_text()
    card = page[page.index('id="claim-demo-ablation"') :]
    card = card[: card.index("</article>")]
    assert "not run at this scale" in card and "0 seed" not in card and "not measured" not in card
    assert "robustness" not in card  # a claim that never ran has nothing to be robust about


def test_a_claim_that_restates_others_counts_apart_and_its_card_says_which(tmp_path):
    # a sum of two claims' values on the same runs is not a third piece of evidence
    norm = _variant(
        _claim_result(), id="demo/norm", title="norm", verdict="reproduced", robust=True
    )
    blowup = _variant(norm, id="demo/blowup", title="blowup")
    frontier = _variant(norm, id="demo/frontier", title="frontier",
                        restates=["demo/norm", "demo/blowup"])  # fmt: skip
    report = StudyReport("demo", "Demo", "P", "", "quick", [norm, blowup, frontier])
    counts = headline([report])
    assert counts["reproduced"]["total"] == 2
    assert counts["not independent"] == {
        "total": 1,
        "robust": 1,
        "fragile": 0,
        "untested": 0,
        "n/a": 0,
    }
    assert verdict_text(frontier) == "reproduced"  # its own verdict stays on its card
    page = build_report([report], tmp_path).read_text()
    card = page[page.index('id="claim-demo-frontier"') :]
    card = card[: card.index("</article>")]
    assert "built from demo/norm, demo/blowup on the same runs: not independent evidence" in card
    assert "**restates:** built from demo/norm" in (tmp_path / "claims.md").read_text()
    row = json.loads((tmp_path / "claims.json").read_text())
    rows = row["claims"] if isinstance(row, dict) else row
    assert [r["restates"] for r in rows if r["id"] == "demo/frontier"] == [
        ["demo/norm", "demo/blowup"]
    ]


def test_restates_must_name_other_claims():
    with pytest.raises(ValueError, match="restates"):
        dataclasses.replace(_claim(), restates="norm")  # a text, not a tuple of slugs
    with pytest.raises(ValueError, match="restates"):
        dataclasses.replace(_claim(), restates=(_claim().slug,))
    from learnability.errors import UserError
    from learnability.studies import Plan, Study
    from learnability.studies.loader import check_declaration

    mine = dataclasses.replace(_claim(), slug="frontier", restates=("norm", "runs-finish"))
    study = Study("mine", "t", "p", "n", {"quick": Plan("quick", None)}, lambda p: [],
                  lambda p: [_claim(), mine])  # fmt: skip
    with pytest.raises(UserError, match=r"restates \['norm'\], which are not claims of this study"):
        check_declaration(study, study.plans["quick"], "mine.py")


def test_incomplete_stored_runs_are_said_in_the_headline(tmp_path):
    report = StudyReport("demo", "Demo", "P", "", "quick", [_claim_result()],
                         run_counts={"demo/a": {"ok": 4}, "demo/b": {"ok": 1, "failed": 1}})  # fmt: skip
    assert completeness(report) == "1 stored run(s) did not finish ok"
    report.expected_runs = {"demo/a": 4, "demo/b": 5}  # what the reliability branch records
    assert completeness(report).startswith(
        "incomplete: 6 of 9 planned runs stored (demo/b: 2 of 5)"
    )
    page = build_report([report], tmp_path).read_text()
    assert "incomplete: 6 of 9 planned runs stored" in page
    assert "incomplete: 6 of 9" in (tmp_path / "claims.md").read_text()


def test_claims_md_is_one_short_section_per_claim(tmp_path):
    a = _variant(_claim_result(), scale_note="Quick scale: width 32. Seeds 3 (paper 10). Own part.")
    b = _variant(
        a, id="demo/other", title="other", scale_note="Quick scale: width 32. Seeds 3 (paper 10)."
    )
    build_report([StudyReport("demo", "Demo", "P", "", "quick", [a, b])], tmp_path)
    md = (tmp_path / "claims.md").read_text()
    assert md.count("### ") == 2 and "### runs finish" in md and "### other" in md
    assert md.count("Quick scale: width 32. Seeds 3 (paper 10).") == 1  # the shared preamble once
    assert "Own part." in md
    assert max(len(line) for line in md.splitlines() if not line.startswith("|")) <= 100
    section = md[md.index("### runs finish") :].split("### ")[1]
    for field in ("**measured:**", "**control:**", "**rule:**", "**reproduced**"):
        assert field in section


# -- rendering ----------------------------------------------------------------------------------------------
def test_figures_are_high_resolution_with_legible_text(tmp_path):
    fig = Figure("three", "c", [Panel(f"p{i}", "n", "y", series=[Series("s", [1, 2], [1.0, 2.0])])
                                 for i in range(3)])  # fmt: skip
    out = render.save(fig, tmp_path, "s")
    assert out.dpi >= 150 and out.columns == 3 and out.min_text_pt >= render.TEXT_PT
    assert out.width_px == pytest.approx(3 * render.PANEL_WIDTH * out.dpi, rel=0.1)
    # at the report's smallest display scale the smallest text is still >= 9 pt
    assert out.min_text_pt * MIN_SCALE >= 9.0


def _visible_boxes(axis):
    return [t.get_window_extent() for t in axis.get_ticklabels(which="both")
            if t.get_visible() and t.get_text()]  # fmt: skip


def test_log_tick_labels_never_overlap():
    xs = [2**k for k in range(3, 15)]  # 8 ... 16384, one tick per width
    panel = Panel("widths", "width", "KL", series=[Series("s", xs, [1 / x for x in xs])],
                  logx=True, logy=True, xticks=[float(x) for x in xs])  # fmt: skip
    narrow = Panel("narrow", "n", "y", series=[Series("s", [20, 30, 40, 60], [0.2, 0.3, 0.25, 0.5])],
                   logx=True, logy=True)  # fmt: skip
    fig, _ = render.build(Figure("logs", "c", [panel, narrow]))
    try:
        fig.canvas.draw()  # as saving does: the layout runs again, the thinned ticks stay put
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                boxes = _visible_boxes(axis)
                assert len(boxes) >= 2
                for i, a in enumerate(boxes):
                    for b in boxes[i + 1 :]:
                        assert not a.overlaps(b)
    finally:
        plt.close(fig)


def test_bars_are_named_on_their_axis_not_in_a_legend():
    c = _solves([0.99, 0.995, 0.998])
    fig, _ = render.build(Figure("bars", "c", [c.panel]))
    try:
        (ax,) = fig.axes
        names = [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()]
        assert names == ["random width 64", "chance line"]
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert not any(n in legend for n in names)  # the legend explains the bands only
    finally:
        plt.close(fig)


def test_named_categories_keep_the_panel_order_and_lines_follow_it():
    buckets = ["1-8", "9-16", "17-32"]
    series = Series("acc", ["17-32", "1-8", "9-16"], [0.5, 0.9, 0.8])  # e.g. sorted as strings
    fig, _ = render.build(Figure("b", "c", [Panel("p", "length bucket", "accuracy", series=[series],
                                                  categories=buckets)]))  # fmt: skip
    try:
        (ax,) = fig.axes
        assert [t.get_text() for t in ax.get_xticklabels()] == buckets
        (line,) = ax.get_lines()
        assert list(line.get_xdata()) == [0, 1, 2] and list(line.get_ydata()) == [0.9, 0.8, 0.5]
    finally:
        plt.close(fig)


def test_bounded_means_are_not_rates():
    # two seeds at accuracy 1.0: a mean of 1 with no spread (bounded), a Wilson 2/2 only for outcomes
    acc = mean_series([(64, 1.0), (64, 1.0), (16, 0.4), (16, 0.9)], bounds=(0.0, 1.0))
    assert (acc.y[1], acc.lo[1], acc.hi[1]) == (1.0, 1.0, 1.0)
    assert acc.lo[0] == 0.0 and acc.hi[0] == 1.0  # the t interval of two values, cut to [0, 1]
    learned = mean_series([(64, 1.0), (64, 1.0)], rate=True)
    assert learned.lo[0] == pytest.approx(stats.wilson(2, 2)[0]) and learned.hi[0] == 1.0


def test_a_compound_rule_on_one_axis_draws_every_part_and_the_control():
    # a BestFit and a Trend with a control, both of y on x: one panel with the rival curve and the control
    from learnability.claims import BestFit

    obs = [Obs(u, 0.5 * x + 0.01 * u, x=x, group="model") for u in range(4) for x in (4, 6, 8, 10)]
    obs += [Obs(u, 0.1 * x, x=x, group="shuffle") for u in range(4) for x in (4, 6, 8, 10)]
    rule = AllOf((
        BestFit("model", "line", {"line": lambda x: x, "log": np.log}, x="N", y="log K"),
        Trend("model", above(0.0, 0.1), x="N", y="log K", controls=("shuffle",),
              control_band=above(0.0, 0.1)),
    ))  # fmt: skip
    labels = [s.label for s in rule.panel(Frame(obs), "t").series]
    assert labels[0] == "model" and "shuffle" in labels
    assert any(lb.startswith("line (expected)") for lb in labels)
    assert any(lb.startswith("log (rival)") for lb in labels)
    assert any(lb.startswith("band edge") for lb in labels)


def test_adaptive_verdicts_are_labelled_in_the_list_and_on_the_card(tmp_path):
    base = _claim_result()
    adaptive = _variant(
        base, id="demo/a", title="a", adaptive={
            "method": "group-sequential", "rounds": 1, "units_added": 6,
            "fixed_sample_verdict": "inconclusive", "level": 0.9875,
        },
    )  # fmt: skip
    page = build_report([StudyReport("demo", "Demo", "P", "", "quick", [base, adaptive])], tmp_path)
    html = page.read_text()
    listing = html[html.index('id="all-claims"') :]
    listing = listing[: listing.index("</table>")]
    assert (
        listing.count("adaptive (+6 seeds per sweep); fixed-sample: inconclusive") == 1
    )  # only the adaptive one
    card = html[html.index('id="claim-demo-a"') :]
    assert "reached by adaptive replication (group-sequential: 1 round(s), 6 unit(s) added)" in card


def test_the_report_says_where_the_judged_runs_trained(tmp_path):
    # one machine: named with its run count; two: named both, and the reader is told what it means
    a = StudyReport(
        "a", "A", "P", "", "quick", [_claim_result()], machines={"Xeon · torch 2.13": 5}
    )
    b = StudyReport(
        "b", "B", "P", "", "quick", [], machines={"EPYC · torch 2.13": 2, "Xeon · torch 2.13": 1}
    )
    assert machines_text([a]) == "runs trained on: Xeon · torch 2.13 (5 runs)"
    both = machines_text([a, b])
    assert both.startswith(
        "runs trained on: Xeon · torch 2.13 (6 runs); EPYC · torch 2.13 (2 runs)"
    )
    assert "more than one machine" in both
    assert (
        machines_text([StudyReport("c", "C", "P", "", "quick", [])])
        == "runs trained on: no runs stored"
    )
    build_report([a, b], tmp_path)
    assert "EPYC · torch 2.13 (2 runs)" in (tmp_path / "report.html").read_text()
    assert "more than one machine" in (tmp_path / "claims.md").read_text()


# -- #35 item 7: figures once, embedded, laid out, distinct, with gaps; claims.md as Markdown ---------------
def _shared_figure_report(tmp_path):
    """Two claims naming one figure, and a figure no claim names."""
    a = _claim_result()
    b = _variant(a, id="demo/other", title="other claim")
    figures = [
        render.save(Figure(name, f"figure {name}", [Panel(name, "n", "y", series=[Series("s", [1, 2], [1.0, 2.0])])],
                           claims=claims), tmp_path / "figures", "demo")
        for name, claims in (("shared", ("runs-finish", "other")), ("alone", ()))
    ]  # fmt: skip
    return StudyReport("demo", "Demo", "P", "", "quick", [a, b], figures=figures)


def test_each_figure_image_appears_once_and_later_claims_refer_to_it(tmp_path):
    page = build_report([_shared_figure_report(tmp_path)], tmp_path).read_text()
    images = re.findall(r"<img [^>]*>", page)
    sources = [re.search(r'src="([^"]*)"', i).group(1) for i in images]  # type: ignore[union-attr]
    files = [re.search(r'data-file="([^"]*)"', i).group(1) for i in images]  # type: ignore[union-attr]
    assert len(images) == 2 and len(set(sources)) == 2 and sorted(files) == [
        "figures/demo_alone.png", "figures/demo_shared.png"
    ]  # fmt: skip
    first = page[page.index('id="claim-demo-runs-finish"') :]
    first = first[: first.index("</article>")]
    second = page[page.index('id="claim-demo-other"') :]
    second = second[: second.index("</article>")]
    assert 'data-file="figures/demo_shared.png"' in first and "<img" not in second
    assert "href='#fig-demo-shared'" in second and "href='#claim-demo-runs-finish'" in second
    assert page.count('id="fig-demo-shared"') == 1
    # the figure still links back to both claims it is evidence for
    figure = page[page.index('id="fig-demo-shared"') :]
    figure = figure[: figure.index("</figure>")]
    assert "#claim-demo-runs-finish" in figure and "#claim-demo-other" in figure


def test_report_html_embeds_its_images_and_keeps_the_files(tmp_path):
    out = tmp_path / "report"
    report = _shared_figure_report(out)
    page = build_report([report], out).read_text()
    sources = re.findall(r"<img\b[^>]*?\bsrc=[\"']([^\"']*)", page)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources), [
        s[:40] for s in sources if not s.startswith("data:")
    ]
    import base64

    embedded = {base64.b64decode(s.split(",", 1)[1]) for s in sources}
    assert embedded == {f.png.read_bytes() for f in report.figures}  # the PNG files, byte for byte
    for f in report.figures:  # the files stay, linked from each caption
        assert f.png.exists() and f.pdf.exists()
        assert f'href="figures/{f.png.name}"' in page and f'href="figures/{f.pdf.name}"' in page


_LAYOUT_SHAPES = {  # the shapes of the studies' busiest figures
    # volume init: 12 scheme/variant series beside their 12 histograms (a 12-entry shared legend)
    "volume_init": lambda: [
        Panel(
            "constant functions",
            "string length N",
            "fraction of models that are constant",
            series=[
                mean_series(
                    [(n, (n * k) % 3 / 2) for n in (4, 6, 8, 10, 12)],
                    f"scheme {k} (variant {k % 3})",
                )
                for k in range(12)
            ],
            ylim=(-0.02, 1.02),
        ),
        Panel(
            "acceptance rate, N = 12",
            "fraction of strings accepted",
            "density",
            histograms=[
                Histogram(
                    f"scheme {k} (variant {k % 3})",
                    [0.1 * k % 1, 0.5, 0.7],
                    [i / 20 for i in range(21)],
                )
                for k in range(12)
            ],
        ),
    ],
    # random subspace: 2 × 2 panels, ten long labels shared by all
    "random_subspace": lambda: [
        Panel(
            task,
            "layer (0 = embedding output, excluded from the claim)",
            "variance fraction, top 10",
            series=[
                mean_series([(layer, 0.1 * k) for layer in (0, 1, 2)], f"{cond}: {what}")
                for k, (cond, what) in enumerate(
                    (c, w)
                    for c in ("random", "fully trained")
                    for w in (
                        "PCs",
                        "neurons",
                        "PCs at init",
                        "neurons at init",
                        "isotropic null of its shape",
                    )
                )
            ],
            ylim=(0, 1.02),
        )
        for task in ("modular addition", "needle", "decimal addition", "parentheses")
    ],
    # one panel whose legend (to its right) is taller than the panel
    "tall_right_legend": lambda: [
        Panel(
            "one panel",
            "x",
            "y",
            series=[
                Series(f"a rather long series label number {k}", [1, 2], [k, k + 1.0])
                for k in range(14)
            ],
        )
    ],
    # panels with legends of their own, one much taller than its panel
    "own_legends": lambda: [
        Panel(
            "many",
            "x",
            "y",
            series=[Series(f"series {k} with a label", [1, 2], [k, k + 1.0]) for k in range(14)],
        ),
        Panel(
            "few", "x", "y", series=[Series("other", [1, 2], [1.0, 2.0])], hlines=[(1.5, "chance")]
        ),
        Panel("heat", "key", "query", matrix=Matrix([[0.0, 1.0], [1.0, 0.0]], "attention weight")),
    ],
}


@pytest.mark.parametrize("shape", sorted(_LAYOUT_SHAPES))
def test_figures_lay_out_without_warnings_or_collapsed_panels(shape, tmp_path):
    figure = Figure(
        shape, "c", _LAYOUT_SHAPES[shape](), ncols=2 if shape == "random_subspace" else None
    )
    import warnings

    with warnings.catch_warnings():
        # "constrained_layout not applied" and the like fail the test
        warnings.simplefilter("error")
        out = render.save(figure, tmp_path, "s")
        fig, _ = render.build(figure)
        try:
            fig.canvas.draw()
            for ax in fig.axes:
                if ax.get_visible() and ax.get_label() != "<colorbar>":
                    box = ax.get_window_extent()
                    # every panel keeps most of its own size, whatever its legend
                    height, width = box.height / fig.dpi, box.width / fig.dpi
                    assert height >= 0.6 * render.PANEL_HEIGHT, (shape, height)
                    assert width >= 0.6 * render.PANEL_WIDTH, (shape, width)
        finally:
            plt.close(fig)
    assert out.height_px > 0


def _lines(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def test_a_line_breaks_where_its_series_was_not_measured():
    full = Series("measured everywhere", [8, 16, 32, 64], [0.1, 0.2, 0.3, 0.4])
    holed = Series(
        "not run at 32", [8, 16, 64], [0.5, 0.6, 0.8], lo=[0.4, 0.5, 0.7], hi=[0.6, 0.7, 0.9]
    )
    fit = Series("fitted line", [8, 64], [0.0, 1.0], kind="dashed")
    fig, _ = render.build(Figure("gaps", "c", [Panel("p", "width", "acc", series=[full, holed, fit], logx=True),
                                               Panel("q", "width", "acc", series=[holed], xticks=[8, 16, 32, 64])]))  # fmt: skip
    try:
        lines = _lines(fig.axes[0])
        x, y = (np.asarray(v, dtype=float) for v in lines["not run at 32"].get_data())
        gap = int(np.flatnonzero(np.isnan(y))[0])
        assert 16 < x[gap] < 64 and np.isfinite(y[:gap]).all() and np.isfinite(y[gap + 1 :]).all()
        assert not np.isnan(np.asarray(lines["measured everywhere"].get_ydata(), dtype=float)).any()
        fitted = np.asarray(
            lines["fitted line"].get_ydata(), dtype=float
        )  # a curve, not measurements
        assert not np.isnan(fitted).any()
        # the panel's ticks name the x grid: a series alone on the panel breaks at 32 too
        assert np.isnan(
            np.asarray(_lines(fig.axes[1])["not run at 32"].get_ydata(), dtype=float)
        ).any()
        # 64 is left alone: its band has no width there, so its interval is a whisker
        (whisker,) = fig.axes[1].containers
        assert whisker.has_yerr
    finally:
        plt.close(fig)


def _look(line):
    return (line.get_color(), line.get_linestyle(), line.get_marker())


def test_every_labelled_series_of_a_panel_has_its_own_style():
    from matplotlib.colors import to_rgb

    from learnability.report.panels import Ref

    # more than the palette's ten colours
    twelve = [Series(f"s{k}", [1, 2, 3], [k, k + 1.0, k + 2.0]) for k in range(12)]
    given = [Series("a", [1, 2], [1.0, 2.0], kind="dashed", color="grey"),
             Series("b", [1, 2], [2.0, 3.0], kind="dashed", color="grey")]  # fmt: skip
    # the sparse-XOR one-step panel: two marks of the same role (c = 1 and c*) beside a control line
    marks = Panel("one step", "log10 c", "fraction", series=[Series("judged", [0, 1], [0.2, 0.9])],
                  vlines=[(0.0, "c = 1"), (0.5, "c* = 10^0.5")], hlines=[(0.0, "control")])  # fmt: skip
    fig, _ = render.build(Figure("styles", "c", [Panel("many", "x", "y", series=twelve),
                                                 Panel("given", "x", "y", series=given), marks]))  # fmt: skip
    try:
        for ax in fig.axes[:3]:
            looks = [_look(line) for line in ax.get_lines() if not line.get_label().startswith("_")]
            assert len(looks) == len(set(looks)), looks
        assert len(fig.axes[0].get_lines()) == 12
    finally:
        plt.close(fig)
    # the one-step panel as drawn: per-d dashed curves beside the control's dashed line take no
    # colour a reader could take for the control's
    one_step = Panel("success", "log10 c", "fraction", series=[
        Series("judged", [0, 1, 2], [0.1, 0.8, 0.9]),
        *(Series(f"d={d}", [0, 1, 2], [0.0, 0.7, 0.8], kind="dashed") for d in (16, 64, 256))],
        hlines=[Ref(0.0, "control: the same draws before the step", "control")],
        vlines=[(0.0, "c = 1"), (2.0, "c* = 10^2")])  # fmt: skip
    fig, _ = render.build(Figure("one_step", "c", [one_step]))
    try:
        lines = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
        looks = [_look(line) for line in lines]
        assert len(looks) == len(set(looks)), looks
        control = to_rgb(render._REF_STYLE["control"]["color"])
        for line in lines[:4]:  # the series
            assert np.linalg.norm(np.subtract(to_rgb(line.get_color()), control)) >= 0.2, line
    finally:
        plt.close(fig)
    # sensitivity's dynamics: two grey runs beside a grey dotted plateau line, the runs named in the
    # first panel's legend only and drawn alike in every panel
    runs = [Series(f"seed {k} (never fit)", [0, 20, 40], [1.0, 0.5, 0.2], kind="dashed", color="grey",
                   legend=i == 0) for k in (0, 1) for i in (0,)]  # fmt: skip
    panels = [Panel(f"p{i}", "steps", "y", series=[dataclasses.replace(r, legend=i == 0) for r in runs],
                    hlines=[(0.2, "plateau (loss ≥ 0.2)")] if i == 0 else []) for i in range(2)]  # fmt: skip
    fig, _ = render.build(Figure("dynamics", "c", panels))
    try:
        first, second = fig.axes[:2]
        looks = [_look(line) for line in first.get_lines()]  # two runs and the plateau line
        assert len(looks) == 3 and all(
            a[1] != b[1] or not np.allclose(to_rgb(a[0]), to_rgb(b[0]), atol=0.2)
            for i, a in enumerate(looks) for b in looks[i + 1 :]
        ), looks  # fmt: skip
        assert [_look(line) for line in second.get_lines()] == looks[:2]
        assert second.get_legend() is None  # the runs are named once, in the first panel
    finally:
        plt.close(fig)
    # one label, one style across a figure's panels (a legend shared by them means one thing)
    same = [Panel(f"p{i}", "x", "y", series=[Series(lb, [1, 2], [1.0, 2.0]) for lb in order])
            for i, order in enumerate((("u", "v"), ("v", "u")))]  # fmt: skip
    fig, _ = render.build(Figure("alike", "c", same))
    try:
        first, second = (_lines(ax) for ax in fig.axes[:2])
        assert _look(first["u"]) == _look(second["u"]) and _look(first["v"]) == _look(second["v"])
    finally:
        plt.close(fig)


def test_claims_md_is_markdown_without_html_entities(tmp_path):
    c = _variant(
        _claim_result(), title="a < b & c|d", measured="x <b>not bold</b> &amp; a*b*c, d_model [1]"
    )
    build_report([StudyReport("demo", "Demo & co", "P", "", "quick", [c])], tmp_path)
    md = (tmp_path / "claims.md").read_text()
    assert not re.search(r"&(#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);", md.replace(r"\&amp;", "")), md
    # nothing in the title Markdown would read as markup but the pipe: it stays plain
    assert "### a < b & c\\|d" in md
    assert r"x \<b>not bold\</b> \&amp; a\*b\*c, d_model \[1\]" in md  # escaped the Markdown way
