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
from dataclasses import dataclass, field
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
    check_resume_sources,
    check_store,
    describe,
    expand_sweep,
    literal,
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


@dataclass
class PreparedStudies:
    """What a study command will do, checked before anything is written: the budget in seconds,
    the scale, the report folder, and per study its plan and every run's resolved spec (or why a
    built-in study's sweeps could not be built: that study is reported as failed, the others run)."""

    budget_s: float | None
    scale: str | None
    out: Path
    plans: list[tuple[Any, Any, list[Any], str | None]] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return len({spec.run_id for _, _, specs, _ in self.plans for spec in specs})


def prepare_studies(
    studies: list[Any],
    *,
    scale: str | None,
    backend: str,
    address: str | None,
    workers: int | None,
    results: Path,
    device: str,
    out: Path | None,
    budget: str | None = None,
) -> PreparedStudies:
    """Every check of a study command, in one place, so `--dry-run` refuses exactly what the real
    run refuses: the options, the budget, the results and report folders, and every run's config
    (each sweep expanded, the whole command held to the run limit). Writes nothing; bad input
    raises `UserError`."""
    from learnability.sweep.spec import check_run_count

    budget_s = None if budget is None else adaptive.parse_budget(budget)
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
    check_writable_dir(check_store(results), "--results")
    check_output_dir(out, REPORT_FILES, "--out")  # never over files learnability did not write
    prepared = PreparedStudies(budget_s, scale, out)
    built: list[tuple[Any, Any, list[Any], str | None]] = []
    for s in studies:
        plan = s.plan(scale)
        sweeps, broken = _guarded(_checked_sweeps, s, plan)
        built.append((s, plan, sweeps or [], broken))
    # the limit holds for the whole command, counted before anything is expanded (a study of
    # many large sweeps would otherwise take minutes to expand before being refused)
    asked = sum(sweep.size() for _, _, sweeps, _ in built for sweep in sweeps)
    what = studies[0].name if len(studies) == 1 else f"these {len(studies)} studies"
    check_run_count(asked, f"study {what!r}" if len(studies) == 1 else what, "all their sweeps")
    for s, plan, sweeps, broken in built:
        specs, failed = _guarded(_expanded, sweeps)
        check_resume_sources(specs or [])
        prepared.plans.append((s, plan, specs or [], broken or failed))
    return prepared


def _checked_sweeps(study: Any, plan: Any) -> list[Any]:
    # each sweep's shape checked (cheap), so that the runs of all of them can be counted
    sweeps = sweeps_of(study, plan)
    for sweep in sweeps:
        sweep.check()
    return list(sweeps)


def _expanded(sweeps: list[Any]) -> list[Any]:
    return [spec for sweep in sweeps for spec in expand_sweep(sweep)]


def _guarded(build: Any, *args: Any) -> tuple[Any, str | None]:
    """`build(*args)`, and None; or, when a built-in study's own code fails (not bad input: a bug
    there), None and what went wrong: that study is reported as failed and the others still run."""
    try:
        return build(*args), None
    except (UserError, KeyboardInterrupt):
        raise
    except (Exception, SystemExit) as exc:
        return None, describe(exc)


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
    prepared: PreparedStudies | None = None,
) -> None:
    """Run each study's sweeps (at `scale`, or each study's default plan) into the store, analyse
    them, and write report.html / claims.json / claims.md into `out` (default RESULTS/report).
    With `budget` (wall time for the whole command), adaptive replication follows the fixed plans
    (`learnability.studies.adaptive`). Exits 1 when a study failed (the others are still reported);
    bad input raises `UserError`, before anything is written (`prepare_studies`)."""
    started = time.time()  # --budget counts from here
    if prepared is None:
        prepared = prepare_studies(
            studies, scale=scale, backend=backend, address=address, workers=workers,
            results=results, device=device, out=out, budget=budget,
        )  # fmt: skip
    budget_s, scale, out = prepared.budget_s, prepared.scale, prepared.out
    console: Console = new_console()
    reports, errors = [], {}
    with Store(results) as store:
        claim_output_dir(out, REPORT_FILES)
        for s, plan, specs, broken in prepared.plans:
            t0 = time.perf_counter()
            console.rule(f"[bold]{literal(s.name)}[/] — {literal(s.title)}")
            sweeping = True  # a UserError while the runs start is bad input: stop, exit 2
            try:
                if broken is not None:
                    raise RuntimeError(broken)
                console.print(f"cost estimate ({literal(plan.scale)}): {_estimate(specs, plan)}")
                summary = run_sweep(
                    specs,
                    store,
                    backend=backend,
                    workers=workers,
                    address=address,
                    device=device,
                    retry_failed=retry_failed,
                )
                sweeping = False
                console.print(f"runs: {literal(summary.line())}")
                report = analyse_study(s, store, plan, out, seconds=time.perf_counter() - t0)
                report.seconds = time.perf_counter() - t0
                reports.append(report)
                print_claims(console, report)
            except KeyboardInterrupt:
                raise
            except (Exception, SystemExit) as exc:  # one broken study must not take the others down
                if sweeping and isinstance(exc, UserError):
                    raise  # e.g. a Ray cluster that cannot be reached: every study would fail
                errors[s.name] = broken or describe(exc)
                seconds = time.perf_counter() - t0
                where = str(scale or getattr(s, "default_scale", "quick"))
                reports.append(error_report(s, where, f"study failed: {errors[s.name]}", seconds))
                console.print(f"[red]{literal(s.name)} failed:[/] {literal(errors[s.name])}")
        if budget_s is not None:
            assert scale is not None  # set by prepare_studies when --budget is given
            console.rule("[bold]adaptive replication[/]")
            reports = adaptive.replicate_and_report(
                studies, store, scale, budget_s, started, reports, out,
                say=lambda text: console.print(literal(text)),
                parallel=workers, run=lambda sweeps: run_sweep(
                    sweeps, store, backend=backend, workers=workers, address=address,
                    device=device, retry_failed=retry_failed,
                ),
            )  # fmt: skip
            for report in reports:
                print_claims(console, report)
    path = build_report(reports, out)
    console.print(f"\nclaims: {literal(headline_text(reports))}")
    console.print(f"report: {literal(path.parent.resolve() / path.name)}")  # the link, not its set
    console.print(f"figures: {literal((out / 'figures').resolve())}")
    warn_incomplete(reports)  # a study with runs missing from the store (an interrupted run)
    if errors:
        # (typer.Exit's code is dropped under standalone_mode=False, which the root command uses)
        sys.exit(1)


def _estimate(specs: list[Any], plan: Any) -> str:
    # what Study.estimate says, from the runs already expanded
    runs = len({spec.run_id for spec in specs})
    return f"{runs} runs" + (f"; {plan.cost}" if plan.cost else "")


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
    # the dry run and the real run check the same things, in the same function
    prepared = prepare_studies(
        [study], scale=scale, backend=backend, address=address, workers=workers,
        results=results, device=device, out=out, budget=budget,
    )  # fmt: skip
    if dry_run:
        ((_, plan, specs, _),) = prepared.plans
        typer.echo(
            f"study {study.name!r}, scale {plan.scale!r}: {_estimate(specs, plan)}; "
            f"{len(study.claims(plan))} claims (dry run, nothing run)"
        )
        return
    run_studies(
        [study], scale=scale, backend=backend, address=address, workers=workers, results=results,
        device=device, out=out, retry_failed=retry_failed, budget=budget, prepared=prepared,
    )  # fmt: skip


# Declared limits of `study power`: a unit count beyond a plan anyone runs, or more resampled units
# than a few minutes hold, is a typo (`--units 2,100000000` ran on for hours)
MAX_UNITS = 10_000
MAX_UNIT_DRAWS = 100_000_000  # draws × the unit counts' sum: units resampled in all


def _unit_counts(text: str, draws: int) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 2 or max(counts) > MAX_UNITS:
        raise UserError(
            f"--units {text!r}: give unit counts in 2..{MAX_UNITS:,} separated by commas, e.g. 8,16,24"
        )
    if draws * sum(counts) > MAX_UNIT_DRAWS:
        raise UserError(
            f"--units {text!r} with --draws {draws} resamples {draws * sum(counts):,} units; at "
            f"most {MAX_UNIT_DRAWS:,} (draws × the unit counts' sum) are allowed: fewer draws or counts"
        )
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
    counts = _unit_counts(units, draws)
    if study in available_studies():
        the_study = get_study(study)
    else:
        (the_study,) = load_study_files([path_option(study)])
    from learnability.frame import read_records

    try:  # the study's own code runs here (its sweeps, claims, evidence): it must not end the program
        with open_existing(check_store(results)) as store:
            records = [
                r for r in read_records(store, study=the_study.name) if r.status != "running"
            ]
            if not records:
                raise UserError(f"no finished runs of study {the_study.name!r} in {str(results)!r}")
            plan = the_study.plan(scale or pick_scale(the_study, store))
        claims = {c.slug: c for c in the_study.claims(plan)}
        if not claims:
            raise UserError(
                f"study {the_study.name!r} declares no claims at scale {plan.scale!r}, so there is "
                f"no claim {claim!r} to price"
            )
        check_choice("claim", claim, claims)
        found = pilot_power(
            claims[claim], StudyResults(records, plan, the_study.name), counts, draws, seed
        )
    except UserError:
        raise
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except SystemExit as exc:
        raise UserError(
            f"study {the_study.name!r}: its code called sys.exit({exc.code!r}) while its claim "
            f"{claim!r} was resampled; a study's functions must return, not end the program"
        ) from None
    kind = claims[claim].units.kind
    typer.echo(
        f"{the_study.name}/{claim} (rule v{claims[claim].rule.version}, fixed-sample): share of {draws} "
        f"resampled experiments per verdict, each {kind} drawn with replacement from the pilot's "
        f"{found.pool} in {str(results)!r}"
    )
    for n, shares in found.shares.items():
        typer.echo(f"  {n:>5}: " + ", ".join(f"{v} {p:.1%}" for v, p in shares.items()))


__all__ = [
    "PreparedStudies",
    "app",
    "load_study_files",
    "power_command",
    "prepare_studies",
    "run_studies",
]
