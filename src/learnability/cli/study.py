"""`learnability study run FILE`: a researcher's own study, run like a built-in one.

    learnability study run question.py                   # its `quick` plan (or its first)
    learnability study run question.py --scale tiny --workers 2 --results results
    learnability study run question.py --dry-run         # load, check, count the runs; run nothing
    learnability report --study-file question.py         # report its stored runs again
    learnability study power sensitivity blowup-grows --results pilot --units 8,16,24   # plan units from a pilot

FILE is a Python file (or a folder with `__init__.py`) defining `STUDY = Study(...)` with the public
API of `learnability.studies` (docs/STUDIES.md). `run_studies` is the one path from a list of studies
to the store, the analysis and the report: `reproduce` uses it too.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from learnability.cli.options import (
    REPORT_FILES,
    Address,
    Backend,
    Budget,
    Device,
    Out,
    Results,
    RetryFailed,
    Workers,
    describe,
    new_console,
    print_claims,
    warn_incomplete,
)
from learnability.errors import UserError, check_choice
from learnability.lazy import lazy, lazy_names
from learnability.paths import check_output_dir, check_writable_dir, claim_output_dir, path_option

if TYPE_CHECKING:
    from learnability.claims import pilot_power
    from learnability.report.html import build_report, headline_text
    from learnability.studies import adaptive, available_studies, get_study
    from learnability.studies.base import StudyResults
    from learnability.studies.loader import check_declaration, load_study_file
    from learnability.studies.pipeline import analyse_study, error_report, pick_scale, sweeps_of
    from learnability.sweep.runner import check_run_options, run_sweep
    from learnability.sweep.store import Store, open_existing
else:  # imported when first used: `--help` and a usage error need none of them (learnability.lazy)
    (pilot_power,) = lazy_names("learnability.claims", "pilot_power")
    build_report, headline_text = lazy_names(
        "learnability.report.html", "build_report", "headline_text"
    )
    adaptive = lazy("learnability.studies.adaptive")
    available_studies, get_study = lazy_names(
        "learnability.studies", "available_studies", "get_study"
    )
    (StudyResults,) = lazy_names("learnability.studies.base", "StudyResults")
    check_declaration, load_study_file = lazy_names(
        "learnability.studies.loader", "check_declaration", "load_study_file"
    )
    analyse_study, error_report, pick_scale, sweeps_of = lazy_names(
        "learnability.studies.pipeline", "analyse_study", "error_report", "pick_scale", "sweeps_of"
    )
    check_run_options, run_sweep = lazy_names(
        "learnability.sweep.runner", "check_run_options", "run_sweep"
    )
    Store, open_existing = lazy_names("learnability.sweep.store", "Store", "open_existing")

app = typer.Typer(
    help="Run a study file of your own (docs/STUDIES.md).",
    no_args_is_help=True,
    add_completion=False,
)


def load_study_files(paths: list[Path], scale: str | None = None) -> list[Any]:
    """The studies of `paths`, each checked (and `scale`, when given, among its plans)."""
    studies = []
    for path in paths:
        study = load_study_file(path)
        if scale is not None:
            check_choice("scale", scale, list(study.plans))
        check_declaration(study, study.plan(scale), str(path))
        studies.append(study)
    names = [s.name for s in studies]
    if len(set(names)) != len(names):
        raise UserError(f"two study files declare the same study name: {names}")
    return studies


def run_studies(
    studies: list[Any],
    *,
    scale: str | None,
    backend: str,
    address: str | None,
    workers: int | None,
    results: Path,
    device: str,
    out: Path | None,
    retry_failed: bool,
    budget: str | None = None,
) -> None:
    """Run each study's sweeps (at `scale`, or each study's default plan) into the store, analyse
    them, and write report.html / claims.json / claims.md into `out` (default RESULTS/report).
    With `budget` (wall time for the whole command), adaptive replication follows the fixed plans
    (`learnability.studies.adaptive`). Exits 1 when a study failed (the others are still reported);
    bad input raises `UserError`."""
    started = time.time()  # --budget counts from here
    budget_s = None if budget is None else adaptive.parse_budget(budget)
    # bad input is refused here, before any study runs or any report (empty or not) is written
    check_run_options(backend, workers, address, device, 1, cli=True)
    if budget_s is not None and scale is None:
        defaults = sorted({s.default_scale for s in studies})
        if len(defaults) > 1:
            raise UserError(
                f"--budget needs one scale for all studies; their default scales differ "
                f"({', '.join(defaults)}): give --scale"
            )
        scale = defaults[0]
    out = out or results / "report"
    check_writable_dir(results, "--results")
    check_output_dir(out, REPORT_FILES, "--out")  # never over files learnability did not write
    console: Console = new_console()
    reports, errors = [], {}
    with Store(results) as store:
        claim_output_dir(out, REPORT_FILES)
        for s in studies:
            t0 = time.perf_counter()
            console.rule(f"[bold]{s.name}[/] — {s.title}")
            sweeping = True  # a UserError while the runs start is bad input: stop, exit 2
            try:
                plan = s.plan(scale)
                console.print(f"cost estimate ({plan.scale}): {s.estimate(plan)}")
                summary = run_sweep(
                    sweeps_of(s, plan),
                    store,
                    backend=backend,
                    workers=workers,
                    address=address,
                    device=device,
                    retry_failed=retry_failed,
                )
                sweeping = False
                console.print(f"runs: {summary.line()}")
                report = analyse_study(s, store, plan, out, seconds=time.perf_counter() - t0)
                report.seconds = time.perf_counter() - t0
                reports.append(report)
                print_claims(console, report)
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # one broken study must not take the others down
                if sweeping and isinstance(exc, UserError):
                    raise  # e.g. a Ray cluster that cannot be reached: every study would fail
                errors[s.name] = describe(exc)
                seconds = time.perf_counter() - t0
                where = str(scale or getattr(s, "default_scale", "quick"))
                reports.append(error_report(s, where, f"study failed: {errors[s.name]}", seconds))
                console.print(f"[red]{s.name} failed:[/] {errors[s.name]}")
        if budget_s is not None:
            assert scale is not None  # set above when --budget is given
            console.rule("[bold]adaptive replication[/]")
            reports = adaptive.replicate_and_report(
                studies, store, scale, budget_s, started, reports, out, say=console.print,
                parallel=workers, run=lambda sweeps: run_sweep(
                    sweeps, store, backend=backend, workers=workers, address=address,
                    device=device, retry_failed=retry_failed,
                ),
            )  # fmt: skip
            for report in reports:
                print_claims(console, report)
    path = build_report(reports, out)
    console.print(f"\nclaims: {headline_text(reports)}")
    console.print(f"report: {path.parent.resolve() / path.name}")  # the link, not its set
    console.print(f"figures: {(out / 'figures').resolve()}")
    warn_incomplete(reports)  # a study with runs missing from the store (an interrupted run)
    if errors:
        # (typer.Exit's code is dropped under standalone_mode=False, which the root command uses)
        sys.exit(1)


@app.command("run")
def run_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="a study file (.py defining STUDY) or a study folder", parser=path_option
        ),
    ],
    scale: Annotated[
        str | None, typer.Option(help="one of the study's plans (default: quick, else its first)")
    ] = None,
    backend: Backend = "local",
    address: Address = None,
    workers: Workers = None,
    results: Results = Path("results"),
    device: Device = "cpu",
    out: Out = None,
    retry_failed: RetryFailed = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="load and check the study, count its runs, run nothing"),
    ] = False,
    budget: Budget = None,
) -> None:
    """Run a study file's sweeps into the store, judge its claims, and write the report."""

    check_run_options(backend, workers, address, device, 1, cli=True)
    (study,) = load_study_files([file], scale)
    if dry_run:
        plan = study.plan(scale)
        typer.echo(
            f"study {study.name!r}, scale {plan.scale!r}: {study.estimate(plan)}; "
            f"{len(study.claims(plan))} claims (dry run, nothing run)"
        )
        return
    run_studies(
        [study], scale=scale, backend=backend, address=address, workers=workers, results=results,
        device=device, out=out, retry_failed=retry_failed, budget=budget,
    )  # fmt: skip


def _unit_counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 2:
        raise UserError(f"--units {text!r}: give unit counts ≥ 2 separated by commas, e.g. 8,16,24")
    return counts


@app.command("power")
def power_command(
    study: Annotated[str, typer.Argument(help="a built-in study's name, or a study file")],
    claim: Annotated[str, typer.Argument(help="the claim's slug (e.g. blowup-grows)")],
    units: Annotated[str, typer.Option(help="unit counts to price, comma-separated")] = "6,12,24",
    results: Results = Path("results"),
    scale: Annotated[
        str | None, typer.Option(help="the plan the evidence reads (default: the store's)")
    ] = None,
    draws: Annotated[int, typer.Option(min=50, max=100_000, help="resamples per unit count")] = 400,
    seed: Annotated[int, typer.Option(help="the resampling seed")] = 0,
) -> None:
    """How often a claim's rule would decide with n units, resampled from a pilot store (every
    finished run of the study in --results, whatever seeds it has): choose a plan's units with it,
    then run them on fresh seeds."""
    counts = _unit_counts(units)
    if study in available_studies():
        the_study = get_study(study)
    else:
        (the_study,) = load_study_files([path_option(study)])
    with open_existing(results) as store:
        records = [r for r in store.records(study=the_study.name) if r.status != "running"]
        if not records:
            raise UserError(f"no finished runs of study {the_study.name!r} in {str(results)!r}")
        plan = the_study.plan(scale or pick_scale(the_study, store))
    claims = {c.slug: c for c in the_study.claims(plan)}
    check_choice("claim", claim, claims)
    try:
        found = pilot_power(
            claims[claim], StudyResults(records, plan, the_study.name), counts, draws, seed
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    kind = claims[claim].units.kind
    typer.echo(
        f"{the_study.name}/{claim} (rule v{claims[claim].rule.version}, fixed-sample): share of {draws} "
        f"resampled experiments per verdict, each {kind} drawn with replacement from the pilot's "
        f"{found.pool} in {str(results)!r}"
    )
    for n, shares in found.shares.items():
        typer.echo(f"  {n:>5}: " + ", ".join(f"{v} {p:.1%}" for v, p in shares.items()))


__all__ = ["app", "load_study_files", "power_command", "run_studies"]
