"""`learnability plot`: a figure of any stored sweep, drawn by the report's renderer.

    learnability plot demo/parity_scaling --x n --y sharpness --hue function --logy
    learnability plot demo/parity_scaling --x n --y test_acc --hue function --by seed --out acc.pdf
    learnability plot demo/zip --x n --y converged --hue freeze --where train.lr=1e-3

Columns are named as `learnability results` shows them (`config.task.n`, `metrics.sharpness`) or by a
unique last part (`n`, `sharpness`, `task.n`). `--by mean-ci` (default) draws the mean over independent
units (the runs' seeds) with a 95% interval — Wilson for a Boolean y such as `converged` — and `--by seed`
one line per seed. Only finished (ok) runs are drawn unless `--status` says otherwise. Runs of one seed
that differ in a setting not on the plot are refused rather than averaged: pick that setting as `--hue`
or fix it with `--where`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from learnability.config import parse_override
from learnability.errors import UserError, check_choice
from learnability.paths import check_output_file, claim_output_file, path_option


def _where(df: Any, clauses: list[str]) -> Any:
    from learnability.frame import column

    for text in clauses:
        if "=" not in text:
            raise UserError(
                f"--where {text!r} is not of the form column=value (e.g. train.lr=1e-3)"
            )
        key, value = parse_override(text)
        col = column(df, key, "--where column")
        values = df[col].map(lambda v: str(v) if isinstance(v, (list, dict)) else v)
        wanted = str(value) if isinstance(value, (list, dict)) else value
        kept = df[values == wanted]
        if kept.empty:
            seen = sorted({repr(v) for v in values.dropna()})[:8]
            raise UserError(
                f"--where {text!r} matches no run; {col} takes: {', '.join(seen) or 'no value'}"
            )
        df = kept
    return df


def plot_command(
    sweep: Annotated[
        str, typer.Argument(help="the sweep's name, as `learnability results` lists it")
    ],
    x: Annotated[str, typer.Option("--x", help="column on the x axis, e.g. n or config.task.n")],
    y: Annotated[str, typer.Option("--y", help="numeric column on the y axis, e.g. sharpness")],
    hue: Annotated[
        str | None, typer.Option("--hue", help="one colour per value of this column")
    ] = None,
    by: Annotated[
        str, typer.Option("--by", help="mean-ci (mean ± 95% CI over seeds) or seed (a line each)")
    ] = "mean-ci",
    logy: Annotated[bool, typer.Option("--logy", help="logarithmic y axis")] = False,
    logx: Annotated[bool, typer.Option("--logx", help="logarithmic x axis")] = False,
    where: Annotated[
        list[str] | None,
        typer.Option("--where", help="keep runs with column=value (repeatable)"),
    ] = None,
    status: Annotated[str, typer.Option(help="runs of this status: ok, diverged, ...")] = "ok",
    out: Annotated[
        Path | None,
        typer.Option(
            help="file to write, .png or .pdf (default: RESULTS/plots/<sweep>_<y>_vs_<x>.png)",
            parser=path_option,
        ),
    ] = None,
    results: Annotated[Path, typer.Option(help="results directory", parser=path_option)] = Path(
        "results"
    ),
) -> None:
    """Plot a stored sweep: y against x, one line per hue value, mean ± 95% CI over seeds."""
    check_choice("--by", by, ("mean-ci", "seed"))
    if out is not None:
        if out.suffix.lower() not in (".png", ".pdf"):
            raise UserError(f"--out {str(out)!r} must end in .png or .pdf")
        check_output_file(out, "--out")  # never over a file learnability did not write
    from learnability.frame import results as stored
    from learnability.frame import sweep_figure
    from learnability.report.render import save_as

    everything = stored(sweep=sweep, results=results)
    if everything.empty:
        raise UserError(f"sweep {sweep!r} has no runs in the store yet")
    df = everything[everything["status"] == status]
    if df.empty:
        counts = everything["status"].value_counts().to_dict()
        shown = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        raise UserError(f"sweep {sweep!r} has no {status} runs ({shown}); try --status")
    df = _where(df, where or [])
    built = sweep_figure(df, x, y, hue, by=by, logx=logx, logy=logy, title=sweep)
    if out is None:
        name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in sweep)
        out = results / "plots" / f"{name}_{built.figure.name}.png"
        check_output_file(out, "--out")
    claim_output_file(out)
    save_as(built.figure, out, built.xcategories)
    others = everything[everything["status"] != status]["status"].value_counts().to_dict()
    left = (
        "; left out: " + ", ".join(f"{n} {s}" for s, n in sorted(others.items())) if others else ""
    )
    typer.echo(f"{sweep}: {built.figure.caption}{left} → {out}")


def register(app: typer.Typer) -> None:
    app.command("plot")(plot_command)


__all__ = ["plot_command", "register"]
