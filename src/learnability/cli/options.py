"""What the commands that run or report studies share: their options (one help text each, so
`sweep`, `reproduce` and `study run` cannot drift apart) and their console output."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from learnability.paths import path_option

# what `report` / `reproduce` / `study run` write into the report folder (figures/: a folder of its own)
REPORT_FILES = ("report.html", "claims.json", "claims.md", "figures")

Backend = Annotated[str, typer.Option(help="local (process pool) or ray")]
Address = Annotated[
    str | None, typer.Option(help="Ray cluster HOST:PORT (default: start a local Ray)")
]
Workers = Annotated[
    int | None,
    typer.Option(help="parallel runs (default: CPU count; 0 = inline, for debugging)"),
]
Results = Annotated[
    Path, typer.Option(help="results directory (store + run artefacts)", parser=path_option)
]
Device = Annotated[str, typer.Option(help="cpu, cuda, cuda:N or auto")]
Out = Annotated[
    Path | None,
    typer.Option(help="report directory (default: RESULTS/report)", parser=path_option),
]
RetryFailed = Annotated[bool, typer.Option("--retry-failed", help="run failed runs again")]
Budget = Annotated[
    str | None,
    typer.Option(
        help="wall time (90s, 60m, 2h) for the whole command: after the fixed plan, add seeds "
        "to undecided claims until they are decided or the time is spent (adaptive verdicts)"
    ),
]

_VERDICT_STYLE = {
    "reproduced": "green",
    "not reproduced": "red",
    "inconclusive": "yellow",
    "vacuous": "magenta",
    "not run": "dim",
}


def new_console() -> Console:
    return Console(highlight=False)


def literal(text: object) -> str:
    """`text` as it must reach a rich console: every name, title, path, value or error message a
    user (or a user's code) wrote goes through this, so `[/x]` or `[n/2]` in it is shown as typed
    instead of being read as console markup (a traceback, or text that silently vanishes)."""
    return escape(str(text))


def describe(exc: BaseException) -> str:
    """The last line of an exception's report (type and message), for one-line failure notes."""
    if isinstance(exc, SystemExit):  # a study's own code ended the program: a failure of that study
        return f"its code called sys.exit({exc.code!r})"
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


def print_claims(out: Console, report: Any) -> None:
    """One line per claim: the verdict in colour, robust or fragile, then the claim."""
    table = Table(show_header=False, box=None, padding=(0, 1))
    for c in report.claims:
        style = _VERDICT_STYLE.get(c.verdict, "")
        robust = {True: "robust", False: "fragile", None: "untested"}[c.robust]
        table.add_row(f"[{style}]{literal(c.verdict)}[/]", robust, literal(c.title))
    out.print(table)
    out.print(
        f"{len(report.claims)} claims at the {literal(report.scale)} scale; {report.seconds:.0f} s"
    )


def warn_incomplete(reports: list[Any]) -> None:
    """One warning line (stderr) per study whose report judges fewer runs than its plan has."""
    for r in reports:
        expected, stored = getattr(r, "runs_expected", 0), getattr(r, "runs_stored", 0)
        if expected and stored < expected:
            Console(stderr=True, highlight=False, soft_wrap=True).print(
                f"[yellow]warning:[/] study {literal(repr(r.study))} is incomplete: {stored} of "
                f"its {expected} {literal(r.scale)} runs are in the store, so its verdicts judge "
                f"part of the plan; run `learnability reproduce --study {literal(r.study)} --scale "
                f"{literal(r.scale)}` to finish it"
            )
