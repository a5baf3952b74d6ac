"""`learnability sweep | results | report | reproduce`: run sweeps, query the store, write the report.

    learnability sweep configs/sweeps/parity_scaling.yaml train.lr=3e-4 grid.task.n=[8,16] --workers 2
    learnability results --study sensitivity --format csv --out runs.csv
    learnability report --out results/report
    learnability reproduce --study sensitivity --scale quick

All commands share a results directory (`--results`, default ./results) holding `learnability.db`
and `runs/<run_id>/`. `report` picks, per study, the scale whose runs are in the store (quick when
both are); `--scale` forces one.
"""

from __future__ import annotations

import csv
import dataclasses
import fnmatch
import io
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperCommand

from learnability.cli.options import (
    REPORT_FILES,
    STORE_FILE,
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
    warn_incomplete,
)
from learnability.errors import UserError, check_choice
from learnability.jsonsafe import json_safe
from learnability.lazy import lazy_names
from learnability.paths import (
    atomic_path,
    atomic_write_text,
    check_output_dir,
    check_output_file,
    check_writable_dir,
    claim_output_dir,
    claim_output_file,
    path_option,
)

if TYPE_CHECKING:
    from learnability.report.html import build_report, headline_text
    from learnability.studies import available_studies, get_study
    from learnability.studies.pipeline import analyse_study, error_report, sweeps_of
    from learnability.sweep.jobs import get_job, known_jobs
    from learnability.sweep.runner import check_run_options, run_sweep
    from learnability.sweep.spec import load_sweep
    from learnability.sweep.store import STATUSES, Store, open_existing
else:  # imported when first used: `--help` and a usage error need none of them (learnability.lazy)
    build_report, headline_text = lazy_names(
        "learnability.report.html", "build_report", "headline_text"
    )
    available_studies, get_study = lazy_names(
        "learnability.studies", "available_studies", "get_study"
    )
    analyse_study, error_report, sweeps_of = lazy_names(
        "learnability.studies.pipeline", "analyse_study", "error_report", "sweeps_of"
    )
    get_job, known_jobs = lazy_names("learnability.sweep.jobs", "get_job", "known_jobs")
    check_run_options, run_sweep = lazy_names(
        "learnability.sweep.runner", "check_run_options", "run_sweep"
    )
    (load_sweep,) = lazy_names("learnability.sweep.spec", "load_sweep")
    STATUSES, Store, open_existing = lazy_names(
        "learnability.sweep.store", "STATUSES", "Store", "open_existing"
    )

_FORMATS = ("table", "csv", "parquet", "json")
_SCALES = ("quick", "paper")


class _LiveHelp(TyperCommand):
    """A command whose help ends with a list computed when the help is shown (the studies or jobs
    installed now), so it can neither go stale nor cost an import on every other command."""

    live: Callable[[], str] = staticmethod(lambda: "")

    def format_help(self, ctx: Any, formatter: Any) -> None:
        try:
            self.epilog = self.live()
        except Exception as exc:  # a broken study module must not hide the rest of the help
            self.epilog = f"(the list could not be computed: {type(exc).__name__}: {exc})"
        super().format_help(ctx, formatter)


def _study_list() -> str:

    rows = []
    for name in available_studies():
        title = getattr(get_study(name), "title", "")
        rows.append(f"{name} ({title})" if title else name)
    return "Studies (for --study): " + "; ".join(rows) + "."


def _job_list() -> str:

    return "Registered jobs (a sweep file's job:): " + ", ".join(known_jobs()) + "."


def _live(text: Callable[[], str]) -> type[TyperCommand]:
    return type("LiveHelpCommand", (_LiveHelp,), {"live": staticmethod(text)})


def register(app: typer.Typer) -> None:
    app.command("sweep", cls=_live(_job_list))(sweep_command)
    app.command("results")(results_command)
    app.command("report", cls=_live(_study_list))(report_command)
    app.command("reproduce", cls=_live(_study_list))(reproduce_command)


def sweep_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="sweep YAML: name, job, base, grid, random, samples, seeds", parser=path_option
        ),
    ],
    overrides: Annotated[
        list[str] | None,
        typer.Argument(
            help="a.b=v sets base fields; grid.a.b=[..] sets a grid axis; seeds=[..], samples=N"
        ),
    ] = None,
    backend: Backend = "local",
    address: Address = None,
    workers: Workers = None,
    results: Results = Path("results"),
    device: Device = "cpu",
    retry_failed: RetryFailed = False,
    threads: Annotated[
        int,
        typer.Option(
            help="torch threads per run; other than 1 only for jobs with a `threads` setting, "
            "where it is part of the run id (it changes the last bits of results)"
        ),
    ] = 1,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="validate and count the runs, run nothing")
    ] = False,
) -> None:
    """Run a sweep file; runs already finished in the store are skipped."""

    console = new_console()
    # everything is checked before the store is even created: a refused command writes nothing
    check_run_options(backend, workers, address, device, threads, cli=True)
    sweep = load_sweep(file, [*(overrides or []), *_threads_override(file, overrides, threads)])
    specs = expand_sweep(sweep)
    check_resume_sources(specs)
    # checked in a dry run too (it writes nothing): the dry run refuses what the real run refuses
    check_writable_dir(check_store(results), "--results")
    if dry_run:
        console.print(
            literal(f"sweep {sweep.name!r}: {len(specs)} runs of job {sweep.job!r}")
            + " (dry run, nothing run)"
        )
        return

    with Store(results) as store:
        summary = run_sweep(
            specs,
            store,
            backend=backend,
            workers=workers,
            address=address,
            device=device,
            retry_failed=retry_failed,
            progress=True,
            threads_per_worker=threads,
        )
    console.print(literal(f"sweep {sweep.name!r}: {summary.line()}"))
    for run_id, error in summary.failures[:5]:
        console.print(f"  [red]failed[/] {literal(run_id)}: {literal(error)}")
    if len(summary.failures) > 5:
        console.print(
            f"  ... and {len(summary.failures) - 5} more (learnability results --status failed)"
        )
    console.print(literal(f"results in {results}/learnability.db"))
    if summary.executed and summary.failed == summary.executed:
        # nothing this command ran worked: a script chaining on it must not go on as if it had
        first = summary.failures[0][1] if summary.failures else ""
        print(
            f"error: every run failed ({summary.failed} of {summary.executed}); the first: {first}",
            file=sys.stderr,
        )
        sys.exit(1)


def _threads_override(file: Path, overrides: list[str] | None, threads: int) -> list[str]:
    """`--threads N` as a config override: the thread count changes results (how sums are split),
    so a run with N ≠ 1 threads must not share its run id with a run on one thread. A job whose
    config has a `threads` setting (in its run id when not 1) gets it; any other job is refused."""
    if threads == 1:
        return []
    job = load_sweep(file, list(overrides or [])).job
    fields = {f.name for f in dataclasses.fields(get_job(job).config_cls)}
    if "threads" not in fields:
        raise UserError(
            f"--threads {threads}: job {job!r} has no `threads` setting, so its run ids cannot tell "
            "runs on several threads from runs on one, and the thread count changes results; run "
            "it with --threads 1 (the default) and use --workers for parallel runs"
        )
    return [f"threads={threads}"]


# -- results ------------------------------------------------------------------------------------


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = value


def record_rows(records: list) -> tuple[list[str], list[dict[str, Any]]]:
    """Flatten records to rows: run fields, then `config.*` and `metrics.*` dotted columns."""
    base = ["run_id", "study", "sweep", "job", "status", "seed", "seconds", "attempts", "error"]
    rows, extra = [], {}
    for r in records:
        row: dict[str, Any] = {k: getattr(r, k) for k in base}
        flat: dict[str, Any] = {}
        _flatten("config", r.config, flat)
        _flatten("metrics", r.metrics, flat)
        row.update(flat)
        extra.update(dict.fromkeys(flat))
        rows.append(row)
    columns = (
        base
        + [c for c in extra if c.startswith("config.")]
        + [c for c in extra if c.startswith("metrics.")]
    )
    return columns, rows


def _cell(value: Any) -> Any:
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return value


def results_command(
    results: Results = Path("results"),
    study: Annotated[str | None, typer.Option(help="only runs of this study")] = None,
    sweep: Annotated[str | None, typer.Option(help="only runs of this sweep")] = None,
    status: Annotated[str | None, typer.Option(help="ok, failed, diverged or running")] = None,
    format: Annotated[str, typer.Option("--format", help="table, csv, parquet or json")] = "table",
    out: Annotated[
        Path | None,
        typer.Option(
            help="write to this file (default: stdout; parquet needs --out)", parser=path_option
        ),
    ] = None,
    columns: Annotated[
        str | None,
        typer.Option(
            help="comma-separated column globs to keep, e.g. 'config.task.*,metrics.acc*'"
        ),
    ] = None,
) -> None:
    """List stored runs with their config and metrics as flat columns."""
    from learnability.frame import read_records

    check_choice("format", format, _FORMATS)
    if status is not None:
        check_choice("status", status, STATUSES)
    if format == "parquet" and out is None:
        raise UserError("--format parquet writes a file; give --out FILE.parquet")
    if out is not None:
        check_output_file(out, "--out")  # never over a file learnability did not write
    with open_existing(check_store(results)) as store:
        if study is not None and study not in store.studies():
            check_choice("study", study, store.studies())
        if sweep is not None and sweep not in store.sweeps():
            check_choice("sweep", sweep, store.sweeps())
        records = read_records(store, sweep=sweep, study=study, status=status)
    all_columns, rows = record_rows(records)
    if columns:
        all_columns = _select_columns(all_columns, columns)
    console = new_console()
    if format == "table":
        _print_table(console, all_columns, rows)
        return
    if format == "json":
        # strict JSON (a diverged run's NaN → null, ±inf → "inf" / "-inf"): any parser reads it
        rows_json = [{"config": r.config, "metrics": r.metrics, **_plain(r)} for r in records]
        text = json.dumps(json_safe(rows_json, "string"), indent=1, allow_nan=False)
    elif format == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=all_columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(row.get(k)) for k in all_columns})
        text = buf.getvalue()
    else:
        assert out is not None  # parquet without --out was refused above
        claim_output_file(out)
        _write_parquet(all_columns, rows, out)
        console.print(literal(f"{len(rows)} runs written to {out}"))
        return
    if out is None:
        typer.echo(text, nl=False)
    else:
        claim_output_file(out)
        atomic_write_text(out, text)
        console.print(literal(f"{len(rows)} runs written to {out}"))


def _plain(r: Any) -> dict[str, Any]:
    keys = (
        "run_id",
        "study",
        "sweep",
        "job",
        "status",
        "seed",
        "seconds",
        "attempts",
        "error",
        "started",
        "finished",
        "versions",
    )
    return {k: getattr(r, k) for k in keys}


def _write_parquet(columns: list[str], rows: list[dict[str, Any]], out: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError(
            "--format parquet needs pyarrow: pip install 'learnability[parquet]'"
        ) from None
    data = {c: _parquet_column([_cell(row.get(c)) for row in rows]) for c in columns}
    with atomic_path(out) as tmp:
        pq.write_table(pa.table(data), tmp)


_INT64 = (-(2**63), 2**63 - 1)


def _parquet_column(values: list[Any]) -> list[Any]:
    """One column's values as parquet can hold them: numbers as numbers; mixed types, and integers
    beyond parquet's 64 bits (or beyond any float), as their text, exactly as stored."""
    kinds = {type(v) for v in values if v is not None}
    ints = [v for v in values if type(v) is int]
    wide = any(not _INT64[0] <= v <= _INT64[1] for v in ints)
    mixed = bool(kinds) and not (kinds <= {int, float} or len(kinds) == 1)
    if mixed or (wide and kinds == {int}):
        return [None if v is None else str(v) for v in values]
    if kinds == {int, float}:
        try:
            return [None if v is None else float(v) for v in values]
        except OverflowError:  # an integer beyond any float
            return [None if v is None else str(v) for v in values]
    return values


def _print_table(console: Console, columns: list[str], rows: list[dict[str, Any]]) -> None:

    if not rows:
        console.print("no runs match")
        return
    # columns constant over all rows say little in a table: show them once above it
    varying = [
        c for c in columns if len({json.dumps(_cell(r.get(c)), default=str) for r in rows}) > 1
    ]
    keep = ["run_id", "status"] + [c for c in varying if c not in ("run_id", "status")]
    hidden = {"seed"} if "config.seed" in columns else set()  # the same value twice
    keep = [c for c in keep if c not in hidden]
    # a terminal holds ~10 characters a column: keep config columns first, then metrics
    fits = max(4, console.width // 11)
    left_out = keep[fits:]
    keep = keep[:fits]
    # only a column with one value in every row is called constant; a varying column the
    # terminal has no room for is listed below the table as left out, never shown as one value
    constant = [
        c
        for c in columns
        if c not in varying and c not in keep and c not in hidden and rows[0].get(c) is not None
    ]
    if constant:
        shown = ", ".join(f"{c}={_short(rows[0].get(c))}" for c in constant[:12])
        more = f" (+{len(constant) - 12} more)" if len(constant) > 12 else ""
        console.print(literal(f"all {len(rows)} runs: {shown}{more}"))
    table = Table(show_lines=False)
    for c in keep:
        label = c.replace("config.", "").replace("metrics.", "m.")
        table.add_column(literal(label), no_wrap=c == "run_id", overflow="fold")
    for row in rows:
        table.add_row(*[literal(_short(row.get(c))) for c in keep])
    console.print(table)
    if left_out:
        console.print(
            literal(
                f"(+{len(left_out)} more varying columns: {', '.join(left_out[:6])}"
                f"{', ...' if len(left_out) > 6 else ''}; choose with --columns, or use --format csv)"
            )
        )


def _select_columns(columns: list[str], patterns: str) -> list[str]:
    """Columns matching any of the comma-separated globs (run_id always kept), in stored order."""

    globs = [p.strip() for p in patterns.split(",") if p.strip()]
    chosen = [c for c in columns if c == "run_id" or any(fnmatch.fnmatch(c, g) for g in globs)]
    if len(chosen) <= 1:
        raise UserError(
            f"--columns {patterns!r} matches no column; columns look like: {', '.join(columns[:8])}, ..."
        )
    return chosen


def _short(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    text = json.dumps(value) if isinstance(value, (list, dict)) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- report and reproduce -----------------------------------------------------------------------


def _write_report(reports: list, out: Path) -> Path:

    return build_report(reports, out)


def _studies(names: list[str] | None) -> list[Any]:

    names = names or available_studies()
    if not names:
        raise UserError("no studies are installed (learnability.studies has none)")
    return [get_study(n) for n in names]


def report_command(
    results: Results = Path("results"),
    study: Annotated[
        list[str] | None, typer.Option(help="studies to report (default: those in the store)")
    ] = None,
    out: Out = None,
    scale: Annotated[
        str | None, typer.Option(help="quick or paper (default: the scale found in the store)")
    ] = None,
    study_file: Annotated[
        list[Path] | None,
        typer.Option(
            "--study-file",
            help="also report a study file's runs (docs/STUDIES.md)",
            parser=path_option,
        ),
    ] = None,
) -> None:
    """Analyse stored runs and write the HTML report with figures (PNG + PDF) and claims."""
    from learnability.cli.study import load_study_files

    if scale is not None and (study or not study_file):
        check_choice("scale", scale, _SCALES)
    for name in study or []:
        check_choice("study", name, available_studies())
    files = load_study_files(list(study_file or []), scale)
    out = out or results / "report"
    check_output_dir(out, REPORT_FILES, "--out")
    console = new_console()
    with open_existing(check_store(results)) as store:
        names = list(study or [])
        present = set(store.studies())
        if not names and not files:
            names = [n for n in available_studies() if n in present]
            if not names:
                raise UserError(
                    f"the store in {str(results)!r} has no runs of any study "
                    f"({', '.join(available_studies())}); run `learnability reproduce` first"
                )
        runs_of = {n: f"reproduce --study {n}" for n in names}
        runs_of.update({f.name: f"study run {p}" for f, p in zip(files, study_file or [])})
        absent = [n for n in runs_of if n not in present]
        if absent:
            raise UserError(
                f"the store in {str(results)!r} has no runs of study {absent[0]!r}; run "
                f"`learnability {runs_of[absent[0]]}` first, or report one of: "
                f"{', '.join(sorted(present)) or '(none)'}"
            )
        from learnability.frame import read_records

        for name in runs_of:  # a damaged or foreign row (JSON nested too deep) is bad input: found
            read_records(store, study=name)  # before the report folder is touched
        reports, errors = [], {}
        claim_output_dir(out, REPORT_FILES)
        for s in [*(_studies(names) if names else []), *files]:
            t0 = time.perf_counter()
            try:
                reports.append(analyse_study(s, store, scale, out))
            except (Exception, SystemExit) as exc:  # (SystemExit: a study file's own code)
                errors[s.name] = describe(exc)
                reports.append(
                    error_report(
                        s,
                        str(scale or getattr(s, "default_scale", "quick")),
                        f"analysis failed: {errors[s.name]}",
                        time.perf_counter() - t0,
                    )
                )
                console.print(
                    f"[red]{literal(s.name)}: analysis failed:[/] {literal(errors[s.name])}"
                )
    path = _write_report(reports, out)
    console.print(f"claims: {literal(headline_text(reports))}")
    console.print(f"report: {literal(path)}")
    warn_incomplete(reports)


def reproduce_command(
    study: Annotated[list[str] | None, typer.Option(help="studies to run (default: all)")] = None,
    scale: Annotated[
        str, typer.Option(help="quick (a 2-core CPU, minutes) or paper (published configs)")
    ] = "quick",
    backend: Backend = "local",
    address: Address = None,
    workers: Workers = None,
    results: Results = Path("results"),
    device: Device = "cpu",
    out: Out = None,
    retry_failed: RetryFailed = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="validate every run's config, print the run counts and cost, run nothing",
        ),
    ] = False,
    budget: Budget = None,
) -> None:
    """Run each study's sweeps into the store, analyse them, and write the report."""

    from learnability.cli.study import prepare_studies, run_studies

    check_choice("scale", scale, _SCALES)
    studies = _studies(list(study or []))
    # the dry run and the real run refuse the same input: both go through prepare_studies
    prepared = prepare_studies(
        studies, scale=scale, backend=backend, address=address, workers=workers,
        results=results, device=device, out=out, budget=budget,
    )  # fmt: skip
    if dry_run:
        dry_run_studies(prepared, results)
        return
    run_studies(
        studies, scale=scale, backend=backend, address=address, workers=workers,
        results=results, device=device, out=out, retry_failed=retry_failed, budget=budget,
        prepared=prepared,
    )  # fmt: skip


def dry_run_studies(prepared: Any, results: Path) -> int:
    """`reproduce --dry-run`: what `prepare_studies` checked (every sweep of every study expanded,
    each run's config built, as the real run does), printed per study: the runs and the plan's cost
    estimate (and how many are finished in the store, read-only, when there is one). Writes
    nothing; returns the runs."""
    console = new_console()
    stored: set[str] = set()
    if (check_store(results) / STORE_FILE).is_file():
        with open_existing(results) as store:
            stored = store.done_ids(("ok", "diverged"))
    total = 0
    for s, plan, specs, broken in prepared.plans:
        if broken is not None:
            console.print(
                f"{literal(s.name)} ({literal(plan.scale)}): [red]failed:[/] {literal(broken)}"
            )
            continue
        ids = {spec.run_id for spec in specs}
        total += len(ids)
        done = f", {len(ids & stored)} finished in the store" if stored else ""
        cost = f"; {plan.cost}" if plan.cost else ""
        console.print(literal(f"{s.name} ({plan.scale}): {len(ids)} runs{done}{cost}"))
    console.print(f"{total} runs in all, every config checked (dry run: nothing run or written)")
    return total
