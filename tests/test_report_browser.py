"""The report in a real browser: headless Chromium (the distribution's `chromium` package; `.ci/run`
installs it, the library never needs it) opens the report of the random study's tiny test plan, plus a
synthetic study with every claim state, and checks through the DevTools protocol (`tests/cdp.py`) that
every image loads, nothing overflows horizontally at 800 and 1400 px, every claim card reaches its
figures and every figure links back, and text is legible at its displayed size: computed font sizes
>= 12 px (9 pt) and each figure's smallest text >= 9 pt once scaled to its displayed width.

Skipped, saying why, when no browser is installed, except where LEARNABILITY_REQUIRE_BROWSER=1 (set
by `.ci/run`): there a missing browser fails.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import warnings
from pathlib import Path

import pytest

from cdp import Browser, find_chromium
from learnability.claims import (
    AllOf,
    Choice,
    Claim,
    Contrast,
    Control,
    Evidence,
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
from learnability.report.html import build_report
from learnability.report.panels import Figure, Panel, Series, Table, mean_series
from learnability.report.study_report import StudyReport
from learnability.stats import Estimate

WIDTHS = (800, 1400)
MIN_PX = 12.0  # 9 pt
MIN_PT = 9.0

CHROMIUM = find_chromium()
if CHROMIUM is None:
    if os.environ.get("LEARNABILITY_REQUIRE_BROWSER") == "1":
        pytest.fail("no Chromium installed, and LEARNABILITY_REQUIRE_BROWSER=1: `apt-get install -y chromium`",
                    pytrace=False)  # fmt: skip
    pytest.skip(
        "no Chromium on PATH (install the distribution's package: `apt-get install -y chromium`; "
        "`.ci/run` does) — the report's browser test is skipped",
        allow_module_level=True,
    )


def _synthetic(out: Path) -> StudyReport:
    """A study with each kind of claim card: bars with a band and a control, a trend with its control
    and band edge, a claim not run at this scale, one with new-style fields, a shared figure and a
    12-column table (which must fit an 800-px window)."""

    def claim(slug: str, rule, obs, control=None, figure=None) -> Claim:
        return Claim(
            slug=slug, title=f"Demo claim {slug}", statement="a statement " * 12,
            paper_statement="the paper's statement", evidence=lambda r, c: Evidence(obs), rule=rule,
            units=Units("seed", 2), control=control or no_control("synthetic"),
            choices=(Choice("metric", "test", ("fresh",)),), figure=figure,
        )  # fmt: skip

    acc = [Obs(s, 0.97 + 0.01 * s, group="random") for s in range(3)]
    acc += [Obs(s, 0.1, group="chance") for s in range(3)]
    solves = AllOf(
        (
            Mean("random", above(0.8, 0.9), what="accuracy", bounds=(0.0, 1.0)),
            Contrast("random", "chance", above(0.1, 0.2), what="accuracy", bounds=(0.0, 1.0)),
        )
    )
    trend = [Obs(u, 0.3 * x + 0.1 * u, x=x, group="parity") for u in range(3) for x in (4, 6, 8)]
    trend += [Obs(u, 0.02 * x, x=x, group="majority") for u in range(3) for x in (4, 6, 8)]
    rate = [Obs(s, float(s % 3 != 0), group="fit") for s in range(9)]
    results = [
        evaluate(claim("solves", solves, acc, Control("chance line", group="chance")), None, "demo", "quick"),
        evaluate(claim("grows", Trend("parity", above(0.0, 0.05), x="n", y="blowup",
                       controls=("majority",), control_band=above(0.0, 0.05)), trend), None, "demo", "quick"),
        evaluate(claim("fits", Rate("fit", above(0.3, 0.5)), rate, figure="shared"), None, "demo", "quick"),
        evaluate(claim("also-shared", Rate("fit", above(0.3, 0.5)), rate, figure="shared"), None, "demo", "quick"),
    ]  # fmt: skip
    not_run = dataclasses.replace(results[2], id="demo/ablation", title="Demo ablation",
                                  verdict="not run", robust=None, figure=None,
                                  measured="the ablation needs the paper's width")  # fmt: skip
    results[1].power = {"text": "3 seeds give 18% power; 9 would give 80% (≈ 14 CPU-min)"}
    results[1].robustness_summary = {"effective": 1, "agree": 1, "no_op": 0, "not_evaluated": 0}
    figures_dir = out / "figures"
    report = StudyReport("demo", "A synthetic study", "Nobody 2026", "own protocol", "quick",
                         [*results, not_run], run_counts={"demo/a": {"ok": 5, "failed": 1}})  # fmt: skip
    report.expected_runs = 9  # what the reliability branch adds to StudyReport
    for c in results:
        if c.panel is not None:
            report.figures.append(render.save(Figure(f"claim_{c.id.split('/')[1]}", "its panel", [c.panel]),
                                              figures_dir, "demo"))  # fmt: skip
            c.figure = f"claim_{c.id.split('/')[1]}"
    xs = [2**k for k in range(3, 12)]
    report.figures.append(render.save(Figure("shared", "three panels, log axes", [
        Panel(f"panel {i}", "width d_model", "KL (nats)", series=[mean_series([(x, 1 / x) for x in xs], "student")],
              hlines=[(0.01, "chance")], logx=True, logy=True, xticks=[float(x) for x in xs])
        for i in range(3)], claims=("fits",)), figures_dir, "demo"))  # fmt: skip
    report.figures.append(render.save(Figure("lonely", "no claim names it", [
        Panel("buckets", "length bucket", "accuracy", series=[Series("acc", ["≤ 8", "9–16", "17–32"], [0.9, 0.8, 0.5])])]),
        figures_dir, "demo"))  # fmt: skip
    columns = [f"column {i}" for i in range(12)]
    report.tables.append(Table("Twelve columns", columns, [[Estimate(0.994, 0.943, 1.0, 3), "reproduced",
                               "a rather long cell value without spaces_" * 2, *range(9)]]))  # fmt: skip
    return report


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    from learnability.studies import random_transformers as rt
    from learnability.studies.base import Plan
    from learnability.studies.pipeline import analyse_records
    from learnability.sweep.runner import run_sweep
    from learnability.sweep.store import Store
    from test_study_random import TINY

    root = tmp_path_factory.mktemp("browser")
    out = root / "report"
    mp = pytest.MonkeyPatch()
    mp.setenv("LEARNABILITY_CACHE", str(root / "cache"))
    plan = Plan("tiny", TINY)
    summary = run_sweep(rt.STUDY.sweeps(plan), root / "store", workers=0, progress=False)
    assert summary.failed == 0 and summary.crashed == 0, summary.failures
    store = Store(root / "store")
    records = store.records()
    store.close()
    mp.undo()
    with warnings.catch_warnings(record=True) as caught:  # every figure laid out as drawn
        warnings.simplefilter("always")
        random = analyse_records(rt.STUDY, records, plan, out / "figures")
        synthetic = _synthetic(out)
    layout = [str(w.message) for w in caught if "layout" in str(w.message).lower()]
    assert layout == [], layout
    build_report([random, synthetic], out)
    return out


@pytest.fixture(scope="module")
def browser():
    with Browser.start(CHROMIUM) as b:
        yield b


_OVERFLOW = """(() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width && (r.right > width + 0.5 || r.left < -0.5))
      wide.push(el.tagName + '.' + el.className + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
  }
  return {scroll: document.documentElement.scrollWidth, width, wide: wide.slice(0, 5)};
})()"""

_IMAGES = """Array.from(document.images).map(i => ({
  src: i.dataset.file, embedded: i.getAttribute('src').startsWith('data:image/png;base64,'),
  ok: i.complete && i.naturalWidth > 0, shown: i.clientWidth,
  natural: i.naturalWidth, dpi: Number(i.dataset.dpi), minPt: Number(i.dataset.minTextPt)}))"""

_SMALL_TEXT = """(() => {
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n;
  while ((n = walk.nextNode())) {
    if (!n.textContent.trim()) continue;
    const el = n.parentElement;
    if (el.closest('details:not([open])') && !el.closest('summary')) continue;  // not displayed
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (size < @MIN@) out.push(el.tagName + '.' + el.className + ' ' + size + 'px: ' + n.textContent.slice(0, 40));
  }
  return out.slice(0, 5);
})()""".replace("@MIN@", str(MIN_PX))

_CARDS = """Array.from(document.querySelectorAll('article.claim')).map(card => ({
  id: card.id,
  images: Array.from(card.querySelectorAll('figure img')).filter(i => i.complete && i.naturalWidth > 0)
                .map(i => i.dataset.file),
  links: Array.from(card.querySelectorAll('figcaption a[href^="#"]')).map(a => a.getAttribute('href')),
  refs: Array.from(card.querySelectorAll('.figref a[href^="#fig-"]')).map(a => a.getAttribute('href'))}))"""

# each figure element's image: the one a reference to it must reach
_FIGURES = """Object.fromEntries(Array.from(document.querySelectorAll('figure.fig[id]')).map(f => {
  const i = f.querySelector('img');
  return [f.id, i && i.complete && i.naturalWidth > 0 ? i.dataset.file : null];
}))"""

_BROKEN_ANCHORS = """Array.from(document.querySelectorAll('a[href^="#"]'))
  .map(a => a.getAttribute('href').slice(1)).filter(id => !document.getElementById(id))"""


@pytest.mark.parametrize("width", WIDTHS)
def test_report_in_a_browser(report_dir, browser, width, tmp_path):
    page = browser.page(width=width, height=900)
    page.goto((report_dir / "report.html").resolve().as_uri())
    images = page.evaluate(_IMAGES)
    assert images and all(i["ok"] for i in images), [i["src"] for i in images if not i["ok"]]
    assert all(i["embedded"] for i in images), [i["src"] for i in images if not i["embedded"]]
    drawn = [i["src"] for i in images]
    assert len(drawn) == len(set(drawn)), sorted(d for d in drawn if drawn.count(d) > 1)
    overflow = page.evaluate(_OVERFLOW)
    assert overflow["scroll"] <= overflow["width"] and not overflow["wide"], overflow
    assert page.evaluate(_SMALL_TEXT) == []
    for i in images:  # the figure's smallest text at the size it is shown
        shown_pt = i["minPt"] * i["shown"] / (i["natural"] / i["dpi"] * 96)
        assert i["dpi"] >= 150 and shown_pt >= MIN_PT, (i["src"], round(shown_pt, 2))
    assert page.evaluate(_BROKEN_ANCHORS) == []
    rows = {r["id"]: r for r in json.loads((report_dir / "claims.json").read_text())}
    cards = {c["id"]: c for c in page.evaluate(_CARDS)}
    figures = page.evaluate(_FIGURES)
    anchor = {row_id: "claim-" + row_id.replace("/", "-") for row_id in rows}
    for row_id, row in rows.items():
        card = cards[anchor[row_id]]
        study = row_id.split("/")[0]
        for name in row["figures"]:  # each figure in the card, or referred to where it is shown
            file = f"figures/{study}_{name}.png"
            ref = f"#fig-{study}-{name}"
            assert file in card["images"] or (
                ref in card["refs"] and figures.get(ref[1:]) == file
            ), (row_id, name, card)
        if card["images"]:  # a figure shown in a card links back to the claim
            assert f"#{anchor[row_id]}" in card["links"]
    assert rows["demo/fits"]["figures"] == ["shared"] and rows["demo/also-shared"]["figures"] == [
        "shared"
    ]  # the shared figure: drawn in the first card, referred to from the second
    assert "figures/demo_shared.png" in cards["claim-demo-fits"]["images"]
    assert cards["claim-demo-also-shared"]["refs"] == ["#fig-demo-shared"]
    assert any(row["figures"] for r_id, row in rows.items() if r_id.startswith("random/"))
    page.screenshot(tmp_path / f"report_{width}.png", full_page=True)


def test_report_html_stands_alone(report_dir, browser, tmp_path):
    """report.html copied alone to another folder still shows every figure (embedded PNGs)."""
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(report_dir / "report.html", alone / "report.html")
    page = browser.page(width=1400, height=900)
    page.goto((alone / "report.html").resolve().as_uri())
    images = page.evaluate(_IMAGES)
    assert images and all(i["ok"] for i in images), [i["src"] for i in images if not i["ok"]]
    first = page.evaluate(
        "(() => { const r = document.images[0].getBoundingClientRect();"
        " return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}; })()"
    )
    shot = page.screenshot(tmp_path / "alone.png", clip=first)
    assert shot.stat().st_size > 1000
