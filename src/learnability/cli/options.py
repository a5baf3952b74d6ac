"""What the commands that run or report studies share: their options (one help text each, so
`sweep`, `reproduce` and `study run` cannot drift apart) and their console output."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from learnability.paths import check_regular_file, path_option

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


STORE_FILE = "learnability.db"  # the store's file in a results folder (learnability.sweep.store)


def check_store(results: Path) -> Path:
    """`results` (a --results folder), refused when its store file is there but is not a regular
    file: SQLite would wait forever on a FIFO, and "no results store" would be untrue."""
    store = Path(results) / STORE_FILE
    if os.path.lexists(store):
        check_regular_file(
            store, "results store", "a folder holding a learnability.db, or a new one"
        )
    return Path(results)


def expand_sweep(sweep: Any) -> list[Any]:
    """`sweep.expand()` (every run's config built and checked), with a transient progress bar on a
    terminal when it is large."""
    if sweep.size() < 5000 or not sys.stdout.isatty():
        return sweep.expand()
    with Progress(
        TextColumn("checking configs"), BarColumn(), MofNCompleteColumn(), transient=True
    ) as bar:
        task = bar.add_task("expand", total=sweep.size())
        return sweep.expand(lambda done, total: bar.update(task, completed=done))


def check_resume_sources(specs: list[Any]) -> None:
    """Runs that resume from a checkpoint file named in their config: each distinct file read
    safely now, so a bad or planted file is refused before anything runs."""
    from learnability.checkpoints import check_resume_source  # (torch: only when needed)

    seen: set[tuple[str, str, str]] = set()
    for spec in specs:
        train = getattr(spec.config, "train", None)
        path = getattr(train, "checkpoint_path", None)
        if not (path and getattr(train, "resume", False) and hasattr(spec.config, "model")):
            continue
        key = (path, repr(spec.config.model), repr(train))
        if key not in seen:
            seen.add(key)
            check_resume_source(spec.config)


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
        from learnability.report.html import robustness_state, verdict_text

        table.add_row(
            f"[{style}]{literal(verdict_text(c))}[/]", robustness_state(c), literal(c.title)
        )
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
