"""The self-contained HTML report, `claims.md` and `claims.json`, all rendered from the same
`ClaimResult` objects so the three cannot disagree.

Per claim the page shows: the verdict, the statement and the paper's, what was measured, the control's
value, the independent units, the rule (its own sentence, id and version), a robustness strip (one
cell per declared alternative analysis, coloured by its verdict) and the rule's history with the
verdict every earlier version gives. Headline counts separate robust from fragile verdicts.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import platform
from pathlib import Path
from typing import Any

from learnability import __version__
from learnability.claims import VERDICTS, ClaimResult
from learnability.jsonsafe import json_safe
from learnability.paths import atomic_write_text
from learnability.report.study_report import StudyReport

_CLASS = {"reproduced": "ok", "not reproduced": "bad", "inconclusive": "meh", "vacuous": "vac"}

_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; max-width: 1180px;
       margin: 2em auto; padding: 0 1em; color: #1d1d1f; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: .2em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; width: 100%; margin: .8em 0; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .35em .5em; vertical-align: top; text-align: left; }
th { background: #f5f5f7; }
.ok { background: #e3f6e5; } .bad { background: #fbe3e3; } .meh { background: #fdf6dc; } .vac { background: #e8e8ee; }
td.verdict { font-weight: 600; white-space: nowrap; }
.claim { border: 1px solid #ddd; border-radius: 4px; margin: 1em 0; padding: .2em .9em .7em; }
.claim h4 { margin: .5em 0 .3em; } .claim dl { display: grid; grid-template-columns: 9em 1fr; gap: .15em .8em; margin: 0; font-size: .9em; }
.claim dt { color: #555; } .claim dd { margin: 0; }
.strip { display: flex; gap: 2px; flex-wrap: wrap; } .strip span { font-size: .75em; padding: .05em .4em; border-radius: 2px; }
figure { display: inline-block; width: 48%; margin: .5em 0.5%; vertical-align: top; }
figure img { width: 100%; border: 1px solid #eee; } figcaption { font-size: .85em; color: #444; }
.note { background: #f5f5f7; border-left: 3px solid #999; padding: .4em .8em; margin: .5em 0; font-size: .9em; }
.error { background: #fbe3e3; border-left: 3px solid #c00; padding: .4em .8em; white-space: pre-wrap; }
.meta { color: #666; font-size: .85em; } pre { white-space: pre-wrap; font-size: .85em; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _verdict(v: str) -> str:
    return f'<span class="{_CLASS.get(v, "meh")}">{_e(v)}</span>'


def _figure_html(png: Path, caption: str, pdf: Path) -> str:
    data = base64.b64encode(Path(png).read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{data}">'
        f'<figcaption>{_e(caption)} <a href="figures/{_e(Path(pdf).name)}">PDF</a></figcaption></figure>'
    )


def _strip(c: ClaimResult) -> str:
    if not c.robustness:
        return "<i>no alternatives declared</i>"
    cells = "".join(
        f'<span class="{_CLASS.get(r["verdict"], "meh")}" title="{_e(r.get("measured", ""))}">'
        f"{_e(r['alternative'])}: {_e(r['verdict'])}</span>"
        for r in c.robustness
    )
    label = "robust" if c.robust else "<b>fragile</b>"
    return f'<div class="strip">{cells}</div><span class="meta">{label}</span>'


def _history(c: ClaimResult) -> str:
    if len(c.history) <= 1:
        return f"v{_e(c.rule['version'])} (unchanged)"
    rows = []
    for h in c.history:
        why = "" if h["why"] == "current rule" else f" — {_e(h['date'])}: {_e(h['why'])}"
        rows.append(f"v{_e(h['version'])}: {_verdict(h['verdict'])}{why}")
    return "<br>".join(rows)


def _claim_html(c: ClaimResult) -> str:
    units = f"{_e(c.units['count'])} {_e(c.units['kind'])}(s), ≥ {_e(c.units.get('min_per_cell', 1))} per cell"
    if c.units.get("note"):
        units += f"; {_e(c.units['note'])}"
    scale = _e(c.scale) + (f" — {_e(c.scale_note)}" if c.scale_note else "")
    return f"""<div class="claim" id="{_e(c.id)}">
<h4>{_verdict(c.verdict)} {_e(c.title)} <span class="meta">{_e(c.id)}</span></h4>
<dl><dt>checked</dt><dd>{_e(c.statement)}</dd>
<dt>paper</dt><dd>{_e(c.paper_statement)}</dd>
<dt>measured</dt><dd>{_e(c.measured)}</dd>
<dt>control</dt><dd>{_e(c.control["name"])}: {_e(c.control["value"])}</dd>
<dt>units</dt><dd>{units}</dd>
<dt>rule</dt><dd>{_e(c.rule["text"])} <span class="meta">({_e(c.rule["id"])} v{_e(c.rule["version"])})</span></dd>
<dt>robustness</dt><dd>{_strip(c)}</dd>
<dt>history</dt><dd>{_history(c)}</dd>
<dt>scale</dt><dd>{scale}</dd></dl></div>"""


def _summary_table(report: StudyReport) -> str:
    rows = "".join(
        f'<tr><td><a href="#{_e(c.id)}">{_e(c.title)}</a></td>'
        f'<td class="verdict {_CLASS.get(c.verdict, "meh")}">{_e(c.verdict)}</td>'
        f"<td>{'robust' if c.robust else 'fragile'}</td><td>{_e(c.scale)}</td></tr>"
        for c in report.claims
    )
    return f"<table><tr><th>claim</th><th>verdict</th><th>robustness</th><th>scale</th></tr>{rows}</table>"


def _table_html(table: Any) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(_cell(v))}</td>" for v in row) + "</tr>" for row in table.rows
    )
    caption = f"<p class='meta'>{_e(table.caption)}</p>" if table.caption else ""
    return f"<h3>{_e(table.title)}</h3><table><tr>{head}</tr>{body}</table>{caption}"


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return "n/a" if not math.isfinite(v) else f"{v:.4g}"
    return str(v)


def _study_html(report: StudyReport) -> str:
    parts = [f'<h2 id="{_e(report.study)}">{_e(report.title)}</h2>']
    parts.append(f"<p class='meta'>{_e(report.paper)} · study <code>{_e(report.study)}</code> · "
                 f"scale <b>{_e(report.scale)}</b> · {_e(f'{report.seconds:.0f}')} s</p>")  # fmt: skip
    if report.protocol_note:
        parts.append(f"<div class='note'>{_e(report.protocol_note)}</div>")
    if report.error:
        parts.append(f"<div class='error'>{_e(report.error)}</div>")
    counts = ", ".join(
        f"{_e(sweep)}: " + " / ".join(f"{_e(n)} {_e(status)}" for status, n in sorted(c.items()))
        for sweep, c in report.run_counts.items()
    )
    if counts:
        parts.append(f"<p class='meta'>runs — {counts}</p>")
    if report.claims:
        parts.append("<h3>Claims</h3>" + _summary_table(report))
        parts.extend(_claim_html(c) for c in report.claims)
    parts.extend(f"<div class='note'>{_e(n)}</div>" for n in report.notes if n != report.error)
    parts.extend(_table_html(t) for t in report.tables)
    if report.figures:
        parts.append("<h3>Figures</h3>")
        parts.extend(_figure_html(f.png, f.caption, f.pdf) for f in report.figures)
    return "\n".join(parts)


def headline(reports: list[StudyReport]) -> dict[str, dict[str, int]]:
    """Per verdict: how many claims, how many of them robust and how many fragile."""
    out: dict[str, dict[str, int]] = {v: {"total": 0, "robust": 0, "fragile": 0} for v in VERDICTS}
    for r in reports:
        for c in r.claims:
            bucket = out.setdefault(c.verdict, {"total": 0, "robust": 0, "fragile": 0})
            bucket["total"] += 1
            bucket["robust" if c.robust else "fragile"] += 1
    return out


def headline_text(reports: list[StudyReport]) -> str:
    parts = []
    for verdict, n in headline(reports).items():
        if n["total"]:
            parts.append(f"{n['total']} {verdict} ({n['robust']} robust, {n['fragile']} fragile)")
    return ", ".join(parts) or "no claims"


def claims_markdown(reports: list[StudyReport]) -> str:
    lines = [
        f"Claims: {headline_text(reports)}.",
        "",
        "| claim | verdict | robust | rule | control | units | measured | scale |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        for c in r.claims:
            cells = [
                f"**{c.id}** {c.title}",
                c.verdict + ("" if len(c.history) <= 1 else " (earlier: " + ", ".join(
                    f"v{h['version']} {h['verdict']}" for h in c.history[1:]) + ")"),
                "yes" if c.robust else "no: " + ", ".join(
                    f"{a['alternative']} → {a['verdict']}" for a in c.robustness if a["verdict"] != c.verdict),
                f"v{c.rule['version']}: {c.rule['text']}",
                f"{c.control['name']}: {c.control['value']}",
                f"{c.units['count']} {c.units['kind']}",
                c.measured,
                c.scale + (f" ({c.scale_note})" if c.scale_note else ""),
            ]  # fmt: skip
            lines.append("| " + " | ".join(_md(x) for x in cells) + " |")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    # a cell is text, never markup: HTML escaped (Markdown renders inline HTML), pipes kept as such
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def claims_json(reports: list[StudyReport]) -> list[dict[str, Any]]:
    return [c.as_json() for r in reports for c in r.claims]


def build_report(reports: list[StudyReport], out_dir: Path) -> Path:
    """Write `report.html`, `claims.json` and `claims.md` into `out_dir`; return the HTML path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    toc = " · ".join(f'<a href="#{_e(r.study)}">{_e(r.study)}</a>' for r in reports)
    body = "\n".join(_study_html(r) for r in reports)
    page = f"""<!doctype html><html><head><meta charset="utf-8">
<title>learnability report</title><style>{_CSS}</style></head><body>
<h1>learnability — reproduction report</h1>
<p class="meta">learnability {__version__} · Python {platform.python_version()} · {_e(platform.machine())} · {now}</p>
<p>{toc}</p><p><b>Claims:</b> {_e(headline_text(reports))}. A verdict is <i>robust</i> when every
declared alternative analysis gives the same verdict; <i>vacuous</i> means the check's parameters alone
decide it.</p>
{body}
</body></html>"""
    path = out_dir / "report.html"
    # each file atomically (temporary file, then rename): a kill or a full disk leaves the old one
    atomic_write_text(path, page)
    atomic_write_text(
        out_dir / "claims.json",
        json.dumps(json_safe(claims_json(reports), "null"), indent=2, default=str, allow_nan=False),
    )
    atomic_write_text(out_dir / "claims.md", claims_markdown(reports))
    return path


__all__ = ["build_report", "claims_json", "claims_markdown", "headline", "headline_text"]
