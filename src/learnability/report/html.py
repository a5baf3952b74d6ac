"""The HTML report, `claims.md` and `claims.json`, all rendered from the same `ClaimResult` objects so
the three cannot disagree.

`report.html` opens with a headline (per verdict: robust, fragile, untested; per study: its verdicts
and whether its stored runs are complete) and one list of every claim. Each study then shows its own
headline table and one card per claim: the verdict (with its qualifier), the statement and the
paper's, what was measured, the control's value, the independent units, the rule (its own sentence,
id and version), the robustness strip, power, regime, history, scale — and the claim's figure right
there, linked back from the figure to every claim it supports. Each figure is drawn once, in the
first card that shows it; a later card refers to it there. Claims the plan does not run at this
scale get a short card saying so. Figures are the PNGs in `figures/`, embedded in the page (so
report.html shows them wherever it is copied; the PNG and PDF files are linked beside each), shown
at a width proportional to their panel columns so every panel appears at the same size; the page
reflows from 800 px to wide screens.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import os
import platform
import re
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from learnability import __version__
from learnability.claims import VERDICTS, ClaimResult
from learnability.claims.claim import robustness_sentence
from learnability.jsonsafe import json_safe
from learnability.paths import write_file_set
from learnability.report.render import MAX_COLUMNS, FigureFile
from learnability.report.study_report import StudyReport
from learnability.stats import Estimate

NOT_RUN = "not run"
ORDER: tuple[str, ...] = tuple(
    dict.fromkeys(("reproduced", "not reproduced", "inconclusive", "vacuous", NOT_RUN, *VERDICTS))
)
ROBUSTNESS = ("robust", "fragile", "untested", "n/a")
OUTSIDE = "outside regime"
RESTATES = "not independent"  # a claim whose value is built from other claims' (Claim.restates)
# the headline's rows: a verdict reached outside the paper's regime is counted apart, either direction,
# and so is a claim that restates others (its verdict stays on its card)
LABELS: tuple[str, ...] = (
    "reproduced", f"reproduced — {OUTSIDE}", "not reproduced", f"not reproduced — {OUTSIDE}",
    "inconclusive", "vacuous", NOT_RUN, RESTATES,
)  # fmt: skip
_CLASS = {
    "reproduced": "ok", "not reproduced": "bad", "inconclusive": "meh", "vacuous": "vac",
    NOT_RUN: "nr",
}  # fmt: skip
# the smallest share of a figure's own size it is shown at (fonts stay legible, see render.py)
MIN_SCALE, MAX_SCALE = 0.8, 1.25

_CSS = """
*, *::before, *::after { box-sizing: border-box; }
html { font-size: 16px; }
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; max-width: 1200px;
       margin: 0 auto; padding: 1em 10px 3em; color: #1d1d1f; line-height: 1.45; overflow-wrap: break-word; }
h1 { font-size: 1.7em; margin: .3em 0 .2em; }
h2 { border-bottom: 2px solid #ccc; padding-bottom: .2em; margin-top: 2.2em; font-size: 1.45em; }
h3 { font-size: 1.15em; margin: 1.4em 0 .4em; }
a { color: #0b57a4; }
code { font-size: .85rem; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: .6em 0; font-size: .85rem; }
th, td { border: 1px solid #d5d5d8; padding: .3em .45em; vertical-align: top; text-align: left;
         overflow-wrap: break-word; hyphens: auto; }
th { background: #f2f2f5; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.zero { color: #888; }
table.headline { width: auto; min-width: min(100%, 30em); }
table.studies { font-size: .78rem; }  /* one column per headline row: it must fit a narrow window */
table.studies th, table.studies td { padding: .3em .3em; }
.ok { background: #dff3e2; } .bad { background: #f9dede; } .meh { background: #fbf3d5; }
.vac { background: #e6e6ee; } .nr { background: #e4eef7; }
.verdict { font-weight: 600; padding: 0 .3em; border-radius: 3px; white-space: nowrap; }
.claim { border: 1px solid #d5d5d8; border-left: 6px solid #bbb; border-radius: 4px; margin: 1.2em 0;
         padding: .3em 12px .8em; }
.claim.ok { border-left-color: #2e8b45; background: none; } .claim.bad { border-left-color: #c0392b; background: none; }
.claim.meh { border-left-color: #d4a017; background: none; } .claim.vac { border-left-color: #777; background: none; }
.claim.nr { border-left-color: #5b8fc7; background: none; }
.claim h4 { margin: .5em 0 .4em; font-size: 1.05em; }
.claim .id { font-weight: normal; color: #666; font-size: .8rem; margin-left: .3em; }
.claim dl { display: grid; grid-template-columns: 7.5em minmax(0, 1fr); gap: .2em .8em; margin: 0;
            font-size: .9rem; }
.claim dt { color: #555; } .claim dd { margin: 0; min-width: 0; }
.strip { display: flex; gap: 3px; flex-wrap: wrap; margin-bottom: .2em; }
.strip span { font-size: .8rem; padding: .05em .4em; border-radius: 2px; }
.strip span.noop { opacity: .55; font-style: italic; }
.figs { display: flex; flex-wrap: wrap; gap: 12px 2%; margin-top: .8em; align-items: flex-start; }
figure.fig { margin: 0; max-width: 100%;
             width: min(100%, max(calc(var(--w) * @MIN@), calc(100% * var(--cols) / @COLS@)),
                        calc(var(--w) * @MAX@)); }
figure.fig img { display: block; width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .85rem; color: #444; margin-top: .25em; }
.figref { font-size: .85rem; color: #444; margin: .6em 0 0; }
.note { background: #f4f4f7; border-left: 3px solid #999; padding: .4em .8em; margin: .5em 0; font-size: .9rem; }
.warn { background: #fdecd0; border-left: 3px solid #d9730d; padding: .4em .8em; margin: .5em 0; }
.error { background: #f9dede; border-left: 3px solid #c00; padding: .4em .8em; white-space: pre-wrap; }
.meta { color: #555; font-size: .8rem; }
nav.toc a { margin-right: .8em; white-space: nowrap; }
pre { white-space: pre-wrap; font-size: .85rem; }
@media (max-width: 600px) { .claim dl { grid-template-columns: minmax(0, 1fr); } .claim dt { font-weight: 600; margin-top: .3em; } }
"""
# a figure is shown at a width proportional to its columns, between MIN_SCALE and MAX_SCALE of its own
# size (--w, in CSS px) and never wider than its box
_CSS = (
    _CSS.replace("@MIN@", str(MIN_SCALE))
    .replace("@MAX@", str(MAX_SCALE))
    .replace("@COLS@", str(MAX_COLUMNS))
)


def _e(value: Any) -> str:
    return html.escape(str(value))


# -- the state of a claim, tolerant of old and new claims.json rows -----------------------------------------
def _get(obj: Any, key: str, default: Any = None) -> Any:
    """A field that newer claim rows / study reports carry and older ones lack."""
    return getattr(obj, key, default)


def robustness_state(c: ClaimResult) -> str:
    """robust / fragile / untested (a decided verdict no effective, powered alternative tested) / n/a
    (an inconclusive or not-run verdict: nothing to hold)."""
    robust = _get(c, "robust")
    if robust is not None and c.verdict != NOT_RUN:
        return "robust" if robust else "fragile"
    return "untested" if c.verdict in ("reproduced", "not reproduced", "vacuous") else "n/a"


def headline_label(c: ClaimResult) -> str:
    """The headline row a claim counts in: its verdict, "— outside regime" apart; a claim that
    restates others (not independent evidence) in a row of its own, whatever its verdict."""
    if _get(c, "restates"):
        return RESTATES
    return f"{c.verdict} — {OUTSIDE}" if _get(c, "qualifier") == OUTSIDE else c.verdict


def verdict_text(c: ClaimResult) -> str:
    """The verdict with its qualifier ("reproduced — outside regime", "inconclusive — units") or, for
    a claim that never ran, "not run at this scale"."""
    if c.verdict == NOT_RUN:
        return "not run at this scale"
    qualifier = _get(c, "qualifier")
    return f"{c.verdict} — {qualifier}" if qualifier else c.verdict


def _counts_text(summary: dict[str, int]) -> str:
    parts = [f"{summary.get('no_op', 0)} no-op"]
    parts += [
        f"{summary[k]} {k.replace('_', ' ')}"
        for k in ("underpowered", "not_evaluated", "not_counted")
        if summary.get(k)
    ]
    return ", ".join(parts)


def robustness_text(c: ClaimResult) -> str:
    """The sentence behind `robust` (generated with it by the engine, so the two cannot disagree),
    with the alternatives that did not count; for an old row, how many of its alternatives agree."""
    summary = _get(c, "robustness_summary")
    if c.verdict == NOT_RUN:
        return "not tested (not run)"
    if _get(c, "robustness_reason") is not None and isinstance(summary, dict):
        reason = robustness_sentence(c.verdict, _get(c, "robust"), summary)
        return f"{reason} ({_counts_text(summary)})"
    state = robustness_state(c)
    if isinstance(summary, dict) and "effective" in summary:
        k, j = summary.get("effective", 0), summary.get("agree", 0)
        if state in ("untested", "n/a"):
            return f"{state}: no alternative changed the evidence ({_counts_text(summary)})"
        lead = "robust under" if state == "robust" else "fragile: the verdict holds under"
        return f"{lead} {j} of {k} effective alternatives ({_counts_text(summary)})"
    agree = sum(1 for r in c.robustness if r.get("verdict") == c.verdict)
    return f"{state}: {agree} of {len(c.robustness)} alternatives agree"


def _cls(c: ClaimResult | str) -> str:
    verdict = c if isinstance(c, str) else c.verdict
    return _CLASS.get(verdict, "meh")


def _slug(c: ClaimResult) -> str:
    return c.id.split("/", 1)[-1]


def claim_anchor(c: ClaimResult) -> str:
    return "claim-" + re.sub(r"[^A-Za-z0-9_-]+", "-", c.id)


def figure_anchor(study: str, name: str) -> str:
    return "fig-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{study}-{name}")


def claim_figures(report: StudyReport, c: ClaimResult) -> list[str]:
    """Names of the figures showing claim `c`: the one it names, any listed in a new-style row,
    and every figure that declares the claim."""
    names: list[str] = []
    if c.figure:
        names.append(c.figure)
    names += [n for n in _get(c, "figures", None) or [] if isinstance(n, str)]
    names += [f.name for f in report.figures if _slug(c) in f.claims or c.id in f.claims]
    known = {f.name for f in report.figures}
    return [n for n in dict.fromkeys(names) if n in known]


def figure_claims(report: StudyReport) -> dict[str, list[ClaimResult]]:
    out: dict[str, list[ClaimResult]] = {}
    for c in report.claims:
        for name in claim_figures(report, c):
            out.setdefault(name, []).append(c)
    return out


# -- headline -----------------------------------------------------------------------------------------------
def headline(reports: list[StudyReport]) -> dict[str, dict[str, int]]:
    """Per headline row (`LABELS`: outside-regime verdicts apart): how many claims, and how many of
    them robust, fragile, untested and n/a."""
    empty = dict.fromkeys(("total", *ROBUSTNESS), 0)
    out: dict[str, dict[str, int]] = {v: dict(empty) for v in LABELS}
    for r in reports:
        for c in r.claims:
            bucket = out.setdefault(headline_label(c), dict(empty))
            bucket["total"] += 1
            bucket[robustness_state(c)] += 1
    return out


def headline_text(reports: list[StudyReport]) -> str:
    parts = []
    for verdict, n in headline(reports).items():
        if n["total"]:
            split = ", ".join(f"{n[k]} {k}" for k in ROBUSTNESS if n[k])
            parts.append(f"{n['total']} {verdict} ({split})")
    return ", ".join(parts) or "no claims"


def completeness(report: StudyReport) -> str:
    """'' when every run the plan expects is stored; else what is missing, in words. Reads the
    report's run counts and, when the study recorded it, its expected count (int or per sweep)."""
    stored = {s: sum(c.values()) for s, c in report.run_counts.items()}
    failed = sum(n for c in report.run_counts.values() for st, n in c.items() if st != "ok")
    expected = _get(report, "expected_runs")
    short: list[str] = []
    if isinstance(expected, dict):
        for sweep, n in expected.items():
            if stored.get(sweep, 0) < int(n):
                short.append(f"{sweep}: {stored.get(sweep, 0)} of {int(n)}")
        total_expected = sum(int(n) for n in expected.values())
    elif isinstance(expected, (int, float)) and not isinstance(expected, bool):
        total_expected = int(expected)
    else:
        total_expected = None
    total = sum(stored.values())
    parts = []
    if total_expected is not None and total < total_expected:
        text = f"incomplete: {total} of {total_expected} planned runs stored"
        if short:
            text += " (" + "; ".join(short[:6]) + ("; …" if len(short) > 6 else "") + ")"
        parts.append(text)
    if failed:
        parts.append(f"{failed} stored run(s) did not finish ok")
    return "; ".join(parts)


def _headline_table(reports: list[StudyReport]) -> str:
    counts = headline(reports)
    head = "".join(f"<th>{k}</th>" for k in (*ROBUSTNESS, "all"))
    rows = []
    for verdict in counts:
        n = counts.get(verdict)
        if not n or not n["total"]:
            continue
        cells = "".join(
            f"<td class='n{'' if n[k] else ' zero'}'>{n[k]}</td>" for k in (*ROBUSTNESS, "total")
        )
        cls = _cls(verdict.split(" — ")[0])
        rows.append(f"<tr><td class='{cls}'><b>{_e(verdict)}</b></td>{cells}</tr>")
    if not rows:
        return "<p class='meta'>no claims</p>"
    return f"<table class='headline'><tr><th>verdict</th>{head}</tr>{''.join(rows)}</table>"


def _studies_table(reports: list[StudyReport]) -> str:
    """One row per study: its claims by verdict (every state, zeros included), by robustness, and
    whether its stored runs are complete."""
    head = "".join(f"<th class='{_cls(v.split(' — ')[0])}'>{_header(v)}</th>" for v in LABELS)
    head += f"<th>{' / '.join(_header(k) for k in ROBUSTNESS)}</th>"
    rows = []
    for r in reports:
        counts = [sum(1 for c in r.claims if headline_label(c) == v) for v in LABELS]
        cells = "".join(f"<td class='n{'' if n else ' zero'}'>{n}</td>" for n in counts)
        split = [sum(1 for c in r.claims if robustness_state(c) == k) for k in ROBUSTNESS]
        cells += f"<td class='n'>{' / '.join(str(n) for n in split)}</td>"
        runs = "analysis failed" if r.error else (completeness(r) or "complete")
        rows.append(
            f"<tr><td><a href='#{_e(_study_anchor(r))}'>{_e(r.study)}</a></td>"
            f"<td class='n'>{len(r.claims)}</td>{cells}"
            f"<td>{_e(r.scale)}</td><td>{_e(runs)}</td></tr>"
        )
    return (
        f"<table class='studies'><tr><th>study</th><th>claims</th>{head}<th>scale</th>"
        f"<th>stored runs</th></tr>{''.join(rows)}</table>"
    )


def _all_claims_table(reports: list[StudyReport]) -> str:
    rows = []
    for r in reports:
        for c in r.claims:
            figs = ", ".join(
                f"<a href='#{_e(figure_anchor(r.study, n))}'>{_e(n)}</a>"
                for n in claim_figures(r, c)
            )
            rows.append(
                f"<tr><td><a href='#{_e(claim_anchor(c))}'>{_e(c.title)}</a>"
                f"<br><code class='meta'>{_e(c.id)}</code></td>"
                f"<td class='{_cls(c)}'><b>{_e(verdict_text(c))}</b>{_adaptive_tag(c)}</td>"
                f"<td>{_e(robustness_state(c))}</td><td>{figs}</td></tr>"
            )
    if not rows:
        return ""
    return (
        "<table class='claims'><tr><th>claim</th><th>verdict</th><th>robustness</th>"
        f"<th>figure</th></tr>{''.join(rows)}</table>"
    )


# -- cards --------------------------------------------------------------------------------------------------
def _verdict(c: ClaimResult | str, text: str | None = None) -> str:
    label = text if text is not None else (c if isinstance(c, str) else verdict_text(c))
    return f'<span class="verdict {_cls(c)}">{_e(label)}</span>'


def _strip(c: ClaimResult) -> str:
    if not c.robustness:
        return "<i>no alternatives declared</i>"
    cells = []
    for r in c.robustness:
        effect = r.get("effect")
        counted = effect in (None, "changed")
        extra = "" if counted else " noop"
        tip = r.get("measured", "") + (f" ({effect})" if effect else "")
        cells.append(
            f'<span class="{_cls(str(r.get("verdict", "")))}{extra}" title="{_e(tip)}">'
            f"{_e(r['alternative'])}: {_e(r.get('verdict', ''))}"
            f"{'' if counted else f' ({effect})'}</span>"
        )
    return f'<div class="strip">{"".join(cells)}</div><span class="meta">{_e(robustness_text(c))}</span>'


def engine_before_text(c: ClaimResult) -> str:
    """'' when the engine before issue 33 gave this claim the same label and robustness; else what it
    gave (one-sided regime, every changed alternative counted)."""
    before = _get(c, "engine_before")
    if not isinstance(before, dict):
        return ""
    state = {True: "robust", False: "fragile", None: "untested"}[before.get("robust")]
    now = {True: "robust", False: "fragile", None: "untested"}[_get(c, "robust")]
    if before.get("label") == verdict_text(c) and state == now:
        return ""
    return (
        f"before issue 33 the engine said {before.get('label')} ({state}): a one-sided regime rule "
        "and every changed alternative counted"
    )


def _history(c: ClaimResult) -> str:
    engine = engine_before_text(c)
    tail = f"<br><span class='meta'>{_e(engine)}</span>" if engine else ""
    if len(c.history) <= 1:
        return f"v{_e(c.rule['version'])} (unchanged){tail}"
    rows = []
    for h in c.history:
        why = "" if h["why"] == "current rule" else f" — {_e(h['date'])}: {_e(h['why'])}"
        rows.append(f"v{_e(h['version'])}: {_verdict(str(h['verdict']), str(h['verdict']))}{why}")
    return "<br>".join(rows) + tail


def control_text(c: ClaimResult) -> str:
    """The control's name and value, the name once ('none: why', not 'none: none: why')."""
    name, value = str(c.control.get("name", "")), str(c.control.get("value", ""))
    if not value or value.startswith(name):
        return value or name
    return f"{name}: {value}"


def units_text(c: ClaimResult) -> str:
    n = int(c.units.get("count") or 0)
    kind = c.units.get("kind", "unit")
    if n == 0:
        text = (
            f"no {kind} measured (unit: {kind}; ≥ {c.units.get('min_per_cell', 1)} per cell needed)"
        )
    else:
        text = f"{n} × {kind}, ≥ {c.units.get('min_per_cell', 1)} per cell"
    if c.units.get("note"):
        text += f"; {c.units['note']}"
    return text


def restates_text(c: ClaimResult) -> str:
    """'' for an independent claim; else which claims it restates and that the headline counts it
    apart."""
    restated = _get(c, "restates") or []
    if not restated:
        return ""
    return (
        f"built from {', '.join(restated)} on the same runs: not independent evidence, counted apart "
        f"in the headline ({RESTATES})"
    )


def _regime(c: ClaimResult) -> str:
    regime = _get(c, "regime")
    if not isinstance(regime, dict):
        return ""
    inside = regime.get("inside")
    where = {True: "inside", False: "outside", None: "unknown relative to"}.get(inside, "?")
    text = (
        f"claimed: {_e(regime.get('claimed', ''))}; checked: {_e(regime.get('checked', ''))} "
        f"({where} the claimed regime)"
    )
    if regime.get("needs"):
        text += f"; a test needs {_e(regime['needs'])}"
    return text


def _adaptive_tag(c: ClaimResult) -> str:
    """The list's mark of a verdict reached under `--budget`'s sequential design."""
    a = _get(c, "adaptive")
    if not isinstance(a, dict):
        return ""
    return (
        f"<br><span class='meta'>adaptive (+{_e(a.get('units_added', '?'))} seeds per sweep); "
        f"fixed-sample: {_e(a.get('fixed_sample_verdict', '?'))}</span>"
    )


def _adaptive(c: ClaimResult) -> str:
    a = _get(c, "adaptive")
    if not isinstance(a, dict):
        return ""
    return (
        f"reached by adaptive replication ({_e(a.get('method', ''))}: {_e(a.get('rounds', '?'))} "
        f"round(s), {_e(a.get('units_added', '?'))} unit(s) added); the fixed-sample verdict was "
        f"{_e(a.get('fixed_sample_verdict', '?'))}"
    )


def _power(c: ClaimResult) -> str:
    power = _get(c, "power")
    if isinstance(power, dict) and power.get("text"):
        return _e(power["text"])
    return ""


def _scale_text(c: ClaimResult, common: str) -> str:
    """The claim's scale and its own deviations; the study-wide ones (`common`) are printed once
    above the claims and referred to here."""
    note = c.scale_note
    if common and note.startswith(common):
        own = note[len(common) :].strip()
        return c.scale + (f": {own} (and the study-wide deviations above)" if own else
                          " (the study-wide deviations above)")  # fmt: skip
    return c.scale + (f": {note}" if note else "")


def _claim_html(
    report: StudyReport, c: ClaimResult, homes: dict[str, str], common: str, out_dir: Path
) -> str:
    anchor = claim_anchor(c)
    head = f'<h4>{_verdict(c)} {_e(c.title)} <a class="id" href="#{_e(anchor)}">{_e(c.id)}</a></h4>'
    figures = _claim_figures_html(report, c, homes, out_dir)
    if c.verdict == NOT_RUN:
        return (
            f'<article class="claim {_cls(c)}" id="{_e(anchor)}">{head}<dl>'
            f"<dt>checked</dt><dd>{_e(c.statement)}</dd>"
            f"<dt>why not run</dt><dd>{_e(c.measured)}</dd>"
            f"<dt>rule</dt><dd>{_e(c.rule['text'])} <span class='meta'>({_e(c.rule['id'])} "
            f"v{_e(c.rule['version'])})</span></dd>"
            f"<dt>scale</dt><dd>{_e(_scale_text(c, common))}</dd></dl>{figures}</article>"
        )
    rows = [
        ("checked", _e(c.statement)),
        ("paper", _e(c.paper_statement)),
        ("measured", _e(c.measured)),
        ("control", _e(control_text(c))),
        ("units", _e(units_text(c))),
        ("rule", f"{_e(c.rule['text'])} <span class='meta'>({_e(c.rule['id'])} v{_e(c.rule['version'])})</span>"),
        ("power", _power(c)),
        ("robustness", _strip(c)),
        ("adaptive", _adaptive(c)),
        ("regime", _regime(c)),
        ("restates", _e(restates_text(c))),
        ("history", _history(c)),
        ("scale", _e(_scale_text(c, common))),
    ]  # fmt: skip
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows if v)
    return f'<article class="claim {_cls(c)}" id="{_e(anchor)}">{head}<dl>{body}</dl>{figures}</article>'


def _claim_figures_html(
    report: StudyReport, c: ClaimResult, homes: dict[str, str], out_dir: Path
) -> str:
    """The claim's figures, each drawn once on the page: with the first claim that shows it (its
    home, where its anchor is); a later claim refers to it there instead of drawing it again."""
    by_name = {f.name: f for f in report.figures}
    supports = figure_claims(report)
    claims = {x.id: x for x in report.claims}
    parts, refs = [], []
    for name in claim_figures(report, c):
        home = homes.setdefault(name, c.id)
        if home == c.id:
            parts.append(_figure_html(report, by_name[name], supports.get(name, []), out_dir))
        else:
            where = f"<a href='#{_e(claim_anchor(claims[home]))}'>{_e(claims[home].title)}</a>"
            refs.append(
                f"<a href='#{_e(figure_anchor(report.study, name))}'><b>{_e(name)}</b></a> "
                f"(shown above with {where})"
            )
    out = f'<div class="figs">{"".join(parts)}</div>' if parts else ""
    if refs:
        out += f"<p class='figref'>Figure{'s' if len(refs) > 1 else ''}: {'; '.join(refs)}.</p>"
    return out


def _href(path: Path, out_dir: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), Path(out_dir).resolve())).as_posix()


def _data_uri(path: Path) -> str | None:
    """The PNG as a data URI, so report.html shows its figures wherever it is copied (None: the
    file is gone)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _figure_html(
    report: StudyReport,
    f: FigureFile,
    supports: list[ClaimResult],
    out_dir: Path,
    anchor: bool = True,
) -> str:
    """A figure at its legible size, its PNG embedded (the page stands alone; the PNG and PDF files
    are linked beside it): data-dpi and data-min-text-pt let a browser check the smallest text's
    displayed size (min_text_pt × displayed width / own width)."""
    png, pdf = _href(f.png, out_dir), _href(f.pdf, out_dir)
    ident = figure_anchor(report.study, f.name)
    natural = f.width_px / f.dpi * 96 if f.width_px else f.width_in * 96  # CSS px at its own size
    links = ", ".join(f"<a href='#{_e(claim_anchor(c))}'>{_e(c.title)}</a>" for c in supports)
    back = f" Evidence for: {links}." if links else ""
    id_attr = f' id="{_e(ident)}"' if anchor else ""
    size = f' width="{round(natural)}"' + (
        f' height="{round(f.height_px / f.dpi * 96)}"' if f.height_px else ""
    )
    src = _data_uri(f.png)
    image = (
        f'<img src="{src}" alt="{_e(f.caption)}"{size} data-file="{_e(png)}" '
        f'data-dpi="{f.dpi}" data-min-text-pt="{f.min_text_pt:g}">'
        if src is not None
        else f"<div class='warn'>figure file missing: {_e(png)}</div>"
    )
    return (
        f'<figure class="fig"{id_attr} '
        f'style="--w: {natural:.0f}px; --cols: {f.columns}">{image}'
        f'<figcaption><a href="#{_e(ident)}"><b>{_e(f.name)}</b></a>: {_e(f.caption)}{back} '
        f'<a href="{_e(png)}">PNG</a> · <a href="{_e(pdf)}">PDF</a></figcaption></figure>'
    )


# -- tables -------------------------------------------------------------------------------------------------
_LONG = re.compile(r"\S{16,}")


def _breakable(text: str) -> str:
    """Escaped text whose long unbroken tokens (run ids, paths, joined names) may wrap after a
    delimiter or every 12 characters, so a wide table fits its page without breaking words."""

    def soften(m: re.Match[str]) -> str:
        token = re.sub(r"([_/.,=:;|-])", "\\1\0", m.group(0))
        return "\0".join(re.sub(r"(.{12})", "\\1\0", piece) for piece in token.split("\0"))

    return re.sub("\0+", "<wbr>", _e(_LONG.sub(soften, str(text))))


_WORD = re.compile(r"[A-Za-z]{10,}")
_VOWELS = set("aeiouyAEIOUY")
_ONSETS = {"bl", "br", "cl", "cr", "dr", "fl", "fr", "gl", "gr", "pl", "pr", "sc", "sk", "sl", "sm",
           "sn", "sp", "st", "sw", "tr", "tw", "th", "ch", "sh", "ph", "wh"}  # fmt: skip


def _hyphenable(word: str) -> str:
    """A soft hyphen at a vowel-consonant boundary near the middle of a long word, so a narrow
    column header can break it ("incon-clusive") instead of overflowing the page."""
    middle = len(word) // 2
    vowel = [ch in _VOWELS for ch in word]
    cuts = []
    for i in range(3, len(word) - 3):  # a vowel, then consonants, then a vowel: cut in between
        if vowel[i - 1] and not vowel[i]:
            j = i
            while j < len(word) and not vowel[j]:
                j += 1
            if j < len(word) - 2:
                run = word[i:j].lower()
                # one consonant goes with the next syllable (re-du), two split unless they start one
                cut = i if len(run) == 1 else (j - 2 if run[-2:] in _ONSETS else j - 1)
                cuts.append(cut)
    cuts = [c for c in cuts if 3 <= c <= len(word) - 3]
    if not cuts:
        return word
    cut = min(cuts, key=lambda i: abs(i - middle))
    return word[:cut] + "\u00ad" + word[cut:]


def _header(text: str) -> str:
    """A table header cell's content: long words may hyphenate, long tokens may wrap."""
    return _breakable(_WORD.sub(lambda m: _hyphenable(m.group(0)), str(text)))


def _table_html(table: Any) -> str:
    head = "".join(f"<th>{_header(c)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_breakable(cell_text(v))}</td>" for v in row) + "</tr>"
        for row in table.rows
    )
    caption = f"<p class='meta'>{_e(table.caption)}</p>" if table.caption else ""
    return f"<h3>{_e(table.title)}</h3><table><tr>{head}</tr>{body}</table>{caption}"


def cell_text(v: Any) -> str:
    """A table cell: an `Estimate` exactly as a claim card prints it, floats to 4 significant digits."""
    if isinstance(v, Estimate):
        return v.fmt()
    if isinstance(v, float):
        return "n/a" if not math.isfinite(v) else f"{v:.4g}"
    return str(v)


# -- a study ------------------------------------------------------------------------------------------------
def _study_anchor(report: StudyReport) -> str:
    return "study-" + re.sub(r"[^A-Za-z0-9_-]+", "-", report.study)


def common_note(claims: Iterable[ClaimResult]) -> str:
    """The scale-note text every claim of a study starts with (the study-wide deviation), cut at a
    sentence end; '' unless at least two claims share it."""
    notes = [c.scale_note for c in claims]
    if len(notes) < 2 or not all(notes):
        return ""
    prefix = os.path.commonprefix(notes)  # noqa: RUF071 -- texts, not paths
    if prefix in notes and all(n == prefix or n.startswith(prefix + " ") for n in notes):
        return prefix.strip()
    cut = max(prefix.rfind(". "), prefix.rfind("; "))
    return prefix[: cut + 1].strip() if cut > 20 else ""


def _study_html(report: StudyReport, out_dir: Path) -> str:
    parts = [f'<h2 id="{_e(_study_anchor(report))}">{_e(report.title)}</h2>']
    parts.append(
        f"<p class='meta'>{_e(report.paper)} · study <code>{_e(report.study)}</code> · "
        f"scale <b>{_e(report.scale)}</b> · {_e(f'{report.seconds:.0f}')} s</p>"
    )
    missing = completeness(report)
    if missing:
        parts.append(f"<div class='warn'><b>Stored runs:</b> {_e(missing)}</div>")
    if report.protocol_note:
        parts.append(f"<div class='note'>{_e(report.protocol_note)}</div>")
    common = common_note(report.claims)
    if common:
        parts.append(
            f"<div class='note'><b>Deviations at the {_e(report.scale)} scale</b> (every claim): "
            f"{_e(common)}</div>"
        )
    if report.error:
        parts.append(f"<div class='error'>{_e(report.error)}</div>")
    counts = ", ".join(
        f"{_e(sweep)}: " + " / ".join(f"{n} {_e(status)}" for status, n in sorted(c.items()))
        for sweep, c in report.run_counts.items()
    )
    if counts:
        parts.append(f"<details class='meta'><summary>runs per sweep</summary>{counts}</details>")
    if report.claims:
        parts.append(_headline_table([report]))
        homes: dict[str, str] = {}
        parts.append("<h3>Claims</h3>")
        parts.extend(_claim_html(report, c, homes, common, out_dir) for c in report.claims)
    parts.extend(f"<div class='note'>{_e(n)}</div>" for n in report.notes if n != report.error)
    parts.extend(_table_html(t) for t in report.tables)
    shown = set(figure_claims(report))
    others = [f for f in report.figures if f.name not in shown]
    if others:
        parts.append("<h3>Other figures</h3>")
        parts.append(
            '<div class="figs">'
            + "".join(_figure_html(report, f, [], out_dir) for f in others)
            + "</div>"
        )
    return "\n".join(parts)


# -- claims.md ----------------------------------------------------------------------------------------------
# what Markdown would read as markup in running text: emphasis, code, links, inline HTML (a tag, a
# comment, an autolink) and character references; a pipe would split a table cell
_MD_MARKUP = re.compile(
    r"[\\`*\[\]|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;)"
)


def _md(text: Any) -> str:
    """Text for a Markdown cell or line: never markup, escaped the Markdown way (a backslash before
    each character Markdown would read as markup; no HTML entities: claims.md is read as text too);
    one line."""
    return _MD_MARKUP.sub(lambda m: "\\" + m.group(0), str(text).replace("\n", " "))


def _wrap(label: str, text: str, width: int = 100, markdown: bool = False) -> list[str]:
    """A `- label: text` list item wrapped for a terminal; continuation lines indented so Markdown
    keeps them in the item. `markdown`: `text` is Markdown already (links), not escaped again."""
    lines = textwrap.wrap(
        f"- **{label}:** {text if markdown else _md(text)}",
        width,
        subsequent_indent="  ",
        break_on_hyphens=False,
    )
    return lines or [f"- **{label}:**"]


def machines_text(reports: list[StudyReport]) -> str:
    """Where the judged runs trained, over all studies: "runs trained on: CPU · torch (n runs); ..."."""
    total: dict[str, int] = {}
    for r in reports:
        for machine, n in r.machines.items():
            total[machine] = total.get(machine, 0) + n
    if not total:
        return "runs trained on: no runs stored"
    parts = [f"{m} ({n:,} runs)" for m, n in sorted(total.items(), key=lambda kv: -kv[1])]
    mixed = (
        " — more than one machine: a verdict at its band's edge can differ between them"
        if len(total) > 1
        else ""
    )
    return "runs trained on: " + "; ".join(parts) + mixed


def claims_markdown(reports: list[StudyReport]) -> str:
    lines = ["# Claims", "", *textwrap.wrap(f"{headline_text(reports)}.", 100), ""]
    lines += [*textwrap.wrap(machines_text(reports) + ".", 100), ""]
    lines += [
        "| study | claims | "
        + " | ".join(LABELS)
        + " | "
        + " / ".join(ROBUSTNESS)
        + " | stored runs |",
        "|---|---|" + "---|" * len(LABELS) + "---|---|",
    ]
    for r in reports:
        cells = [str(sum(1 for c in r.claims if headline_label(c) == v)) for v in LABELS]
        split = " / ".join(
            str(sum(1 for c in r.claims if robustness_state(c) == k)) for k in ROBUSTNESS
        )
        runs = "analysis failed" if r.error else (completeness(r) or "complete")
        lines.append(
            f"| {_md(r.study)} | {len(r.claims)} | "
            + " | ".join(cells)
            + f" | {split} | {_md(runs)} |"
        )
    for r in reports:
        lines += ["", f"## {_md(r.study)}: {_md(r.title)}", ""]
        missing = completeness(r)
        if missing:
            lines += [f"> **Stored runs:** {missing}", ""]
        common = common_note(r.claims)
        if common:
            text = f"**Deviations at the {r.scale} scale** (every claim): {_md(common)}"
            lines += [*textwrap.wrap(text, 100, break_on_hyphens=False), ""]
        if r.error:
            lines += [f"> **error:** {_md(r.error)}", ""]
        for c in r.claims:
            lines += ["", f"### {_md(c.title)}", ""]
            status = f"`{c.id}` · **{verdict_text(c)}**"
            if c.verdict != NOT_RUN:
                status += f" · {robustness_text(c)}"
            lines += [*textwrap.wrap(status, 100, break_on_hyphens=False), ""]
            if c.verdict == NOT_RUN:
                lines += _wrap("why", c.measured)
            else:
                lines += _wrap("measured", c.measured)
                lines += _wrap("control", control_text(c))
                lines += _wrap("units", units_text(c))
            lines += _wrap("rule", f"v{c.rule['version']}: {c.rule['text']}")
            if _power(c):
                lines += _wrap("power", str(_get(c, "power")["text"]))
            if c.verdict != NOT_RUN:
                lines += alternatives_markdown(c)
            if len(c.history) > 1:
                lines += _wrap(
                    "earlier rules",
                    "; ".join(f"v{h['version']} → {h['verdict']}" for h in c.history[1:]),
                )
            if restates_text(c):
                lines += _wrap("restates", restates_text(c))
            if engine_before_text(c):
                lines += _wrap("earlier engine", engine_before_text(c))
            if c.scale_note and c.scale_note.strip() != common:
                lines += _wrap("scale", _scale_text(c, common))
            figs = claim_figures(r, c)
            if figs:
                links = ", ".join(f"[{_md(n)}](figures/{r.study}_{n}.png)" for n in figs)
                lines += _wrap("figure", links, markdown=True)
    return "\n".join(lines) + "\n"


def alternatives_markdown(c: ClaimResult) -> list[str]:
    """The alternatives that disagree (effective ones only: changed evidence, power to decide) and,
    apart, those that did not count and why — never a never-evaluated alternative as disagreeing."""
    lines: list[str] = []
    disagree = [
        f"{a['alternative']} → {a.get('verdict')}"
        for a in c.robustness
        if a.get("effect", "changed") == "changed" and a.get("verdict") != c.verdict
    ]
    if disagree:
        lines += _wrap("alternatives that disagree", "; ".join(disagree))
    not_counted = [
        f"{a['alternative']} ({a['effect']}: {a.get('verdict')})"
        for a in c.robustness
        if a.get("effect") in ("underpowered", "not evaluated", "not counted")
    ]
    if not_counted:
        lines += _wrap("alternatives not counted", "; ".join(not_counted))
    return lines


def claims_json(reports: list[StudyReport]) -> list[dict[str, Any]]:
    rows = []
    for r in reports:
        for c in r.claims:
            row = c.as_json()
            row["figures"] = claim_figures(r, c)
            rows.append(row)
    return rows


def build_report(reports: list[StudyReport], out_dir: Path) -> Path:
    """Write `report.html`, `claims.json` and `claims.md` into `out_dir`; return the HTML path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    toc = "".join(f'<a href="#{_e(_study_anchor(r))}">{_e(r.study)}</a>' for r in reports)
    body = "\n".join(_study_html(r, out_dir) for r in reports)
    page = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>learnability report</title><style>{_CSS}</style></head><body>
<h1>learnability — reproduction report</h1>
<p class="meta">learnability {__version__} · Python {platform.python_version()} · {_e(platform.machine())} · {now}</p>
<p class="meta">{_e(machines_text(reports))}</p>
<nav class="toc"><a href="#headline">headline</a><a href="#all-claims">all claims</a>{toc}</nav>
<h2 id="headline">Headline</h2>
<p><b>Claims:</b> {_e(headline_text(reports))}. A verdict is <i>robust</i> when every declared
alternative analysis that changes the evidence and has the power to decide (≥ 50% at its own units) gives
the same verdict, <i>fragile</i> when one does not, <i>untested</i> when none did; an inconclusive verdict is
never robust (<i>n/a</i>). A verdict reached outside the paper's regime, in either direction, counts apart
("— outside regime"); <i>vacuous</i> means the check's parameters alone decide it; <i>not run</i> means the
plan does not run the check at this scale.</p>
{_headline_table(reports)}
{_studies_table(reports)}
<h2 id="all-claims">All claims</h2>
{_all_claims_table(reports)}
{body}
</body></html>"""
    claims = json.dumps(
        json_safe(claims_json(reports), "null"), indent=2, default=str, allow_nan=False
    )
    # the three as one set (`paths.write_file_set`): whenever a kill or a full disk stops this, a
    # reader finds the old three or the new three, never a page beside another run's claims
    files = {"report.html": page, "claims.json": claims, "claims.md": claims_markdown(reports)}
    write_file_set(out_dir, {n: text.encode("utf-8") for n, text in files.items()}, "report")
    return out_dir / "report.html"


__all__ = [
    "LABELS",
    "NOT_RUN",
    "ORDER",
    "alternatives_markdown",
    "build_report",
    "cell_text",
    "claim_anchor",
    "claim_figures",
    "claims_json",
    "claims_markdown",
    "common_note",
    "completeness",
    "figure_anchor",
    "headline",
    "headline_label",
    "headline_text",
    "robustness_state",
    "robustness_text",
    "units_text",
    "verdict_text",
]  # fmt: skip
