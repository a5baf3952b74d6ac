"""The self-contained HTML report: one page, figures embedded, a claims table per study.

Beside the page it writes `claims.json` (every claim with its numbers, for scripts) and
`claims.md` (the same as a Markdown table, for notes and issues). Figures stay beside it as PNG and
PDF files (written by each study's FigureSink).
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import platform
from dataclasses import asdict
from pathlib import Path
from typing import Any

from learnability import __version__
from learnability.studies.base import StudyReport

_VERDICT_CLASS = {"reproduced": "ok", "not reproduced": "bad", "inconclusive": "meh"}

_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; max-width: 1180px;
       margin: 2em auto; padding: 0 1em; color: #1d1d1f; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: .2em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; width: 100%; margin: .8em 0; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .35em .5em; vertical-align: top; text-align: left; }
th { background: #f5f5f7; }
td.ok { background: #e3f6e5; font-weight: 600; } td.bad { background: #fbe3e3; font-weight: 600; }
td.meh { background: #fdf6dc; font-weight: 600; }
figure { display: inline-block; width: 48%; margin: .5em 0.5%; vertical-align: top; }
figure img { width: 100%; border: 1px solid #eee; } figcaption { font-size: .85em; color: #444; }
.note { background: #f5f5f7; border-left: 3px solid #999; padding: .4em .8em; margin: .5em 0; font-size: .9em; }
.error { background: #fbe3e3; border-left: 3px solid #c00; padding: .4em .8em; white-space: pre-wrap; }
.meta { color: #666; font-size: .85em; } pre { white-space: pre-wrap; font-size: .85em; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _figure_html(png: Path, caption: str, pdf: Path) -> str:
    data = base64.b64encode(Path(png).read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{data}">'
        f'<figcaption>{_e(caption)} <a href="figures/{_e(Path(pdf).name)}">PDF</a></figcaption></figure>'
    )


def _claims_table(report: StudyReport) -> str:
    rows = []
    for c in report.claims:
        cls = _VERDICT_CLASS.get(c.verdict, "meh")
        rows.append(
            f"<tr><td>{_e(c.claim)}</td><td>{_e(c.paper_statement)}</td><td>{_e(c.measured)}</td>"
            f'<td>{_e(c.scale)}</td><td class="{cls}">{_e(c.verdict)}</td></tr>'
        )
    head = "<tr><th>claim</th><th>paper's statement</th><th>measured</th><th>scale</th><th>verdict</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _table_html(table: Any) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>" for row in table.rows
    )
    caption = f"<p class='meta'>{_e(table.caption)}</p>" if table.caption else ""
    return f"<h3>{_e(table.title)}</h3><table><tr>{head}</tr>{body}</table>{caption}"


def _study_html(report: StudyReport, error: str | None) -> str:
    parts = [f'<h2 id="{_e(report.study)}">{_e(report.title)}</h2>']
    parts.append(f"<p class='meta'>{_e(report.paper)} · study <code>{_e(report.study)}</code> · "
                 f"scale <b>{_e(report.scale)}</b> · {report.seconds:.0f} s</p>")  # fmt: skip
    if report.protocol_note:
        parts.append(f"<div class='note'>{_e(report.protocol_note)}</div>")
    if error:
        parts.append(f"<div class='error'>analysis failed: {_e(error)}</div>")
    counts = ", ".join(
        f"{_e(sweep)}: " + " / ".join(f"{n} {_e(status)}" for status, n in sorted(c.items()))
        for sweep, c in report.run_counts.items()
    )
    if counts:
        parts.append(f"<p class='meta'>runs — {counts}</p>")
    if report.claims:
        parts.append("<h3>Claims</h3>" + _claims_table(report))
    parts.extend(f"<div class='note'>{_e(n)}</div>" for n in report.notes)
    parts.extend(_table_html(t) for t in report.tables)
    if report.figures:
        parts.append("<h3>Figures</h3>")
        parts.extend(_figure_html(f.png, f.caption, f.pdf) for f in report.figures)
    return "\n".join(parts)


def _claims_markdown(reports: list[StudyReport]) -> str:
    lines = ["| study | claim | verdict | scale | measured |", "|---|---|---|---|---|"]
    for r in reports:
        for c in r.claims:
            measured = c.measured.replace("|", "/").replace("\n", " ")
            lines.append(f"| {r.study} | {c.claim} | {c.verdict} | {c.scale} | {measured} |")
    return "\n".join(lines) + "\n"


def build_report(
    reports: list[StudyReport], out_dir: Path, errors: dict[str, str] | None = None
) -> Path:
    """Write `report.html`, `claims.json` and `claims.md` into `out_dir`; return the HTML path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    errors = errors or {}
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    total = {"reproduced": 0, "not reproduced": 0, "inconclusive": 0}
    for r in reports:
        for c in r.claims:
            total[c.verdict] = total.get(c.verdict, 0) + 1
    toc = " · ".join(f'<a href="#{_e(r.study)}">{_e(r.study)}</a>' for r in reports)
    summary = ", ".join(f"{n} {k}" for k, n in total.items())
    body = "\n".join(_study_html(r, errors.get(r.study)) for r in reports)
    page = f"""<!doctype html><html><head><meta charset="utf-8">
<title>learnability report</title><style>{_CSS}</style></head><body>
<h1>learnability — reproduction report</h1>
<p class="meta">learnability {__version__} · Python {platform.python_version()} · {_e(platform.machine())} · {now}</p>
<p>{toc}</p><p><b>Claims:</b> {_e(summary)}.</p>
{body}
</body></html>"""
    path = out_dir / "report.html"
    path.write_text(page, encoding="utf-8")
    claims = [{"study": r.study, "scale": r.scale, **asdict(c)} for r in reports for c in r.claims]
    (out_dir / "claims.json").write_text(json.dumps(claims, indent=2, default=str))
    (out_dir / "claims.md").write_text(_claims_markdown(reports))
    return path
