"""`learnability train` and `learnability measure`: train, measure and inspect a model without writing Python.

    learnability train [CONFIG.yaml] [a.b=v ...] [--out DIR] [--device cpu|cuda|auto] [--quiet]
    learnability measure RUN_DIR/model.pt [--measure profile,blowup,...] [--json]

`train` resolves the config (the YAML file, if any, then the overrides; keys checked against TrainJobConfig),
writes DIR/config.yaml (resolved, defaults included), DIR/metrics.jsonl (one JSON line per evaluation),
DIR/model.pt (the final model) and DIR/result.json (the job's metrics), with a progress bar while it trains.
Without --out the run goes to runs/train-<config hash>.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from learnability.checkpoints import check_resume_source
from learnability.config import apply_overrides, config_hash, from_dict, load_yaml, save_resolved
from learnability.device import resolve_device
from learnability.errors import UserError
from learnability.jobs.train import TrainJobConfig, load_model, run_train, target_summary
from learnability.measure.registry import MEASURES, check_measures, run_measures
from learnability.paths import check_writable_dir, check_writable_file
from learnability.tasks import build_task


def _scalar_rows(metrics: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for k, v in metrics.items():
        if isinstance(v, float):
            rows.append((k, f"{v:.6g}" if math.isfinite(v) else str(v)))
        elif isinstance(v, (int, str, bool)) or v is None:
            rows.append((k, str(v)))
        elif isinstance(v, dict) and all(isinstance(x, (int, float)) for x in v.values()):
            rows.append((k, ", ".join(f"{a}: {b:.4g}" for a, b in v.items())))
        elif isinstance(v, list) and len(v) <= 40 and all(isinstance(x, (int, float)) for x in v):
            rows.append((k, " ".join(f"{x:g}" for x in v)))
    return rows


def _show(metrics: dict[str, Any], title: str) -> None:
    table = Table(title=title, show_header=False)
    for k, v in _scalar_rows(metrics):
        table.add_row(k, v)
    Console().print(table)


def train_command(
    args: Annotated[
        list[str] | None,
        typer.Argument(help="an optional CONFIG.yaml, then overrides like train.lr=1e-3"),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="run directory (default runs/train-<hash>)")
    ] = None,
    device: Annotated[
        str | None, typer.Option("--device", help="auto, cpu, cuda or cuda:N")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress bar")] = False,
) -> None:
    """Train one model on one task (a TrainJobConfig from YAML and/or overrides), then measure it."""

    args = list(args or [])
    data: dict[str, Any] = {}
    if args and "=" not in args[0]:
        data = load_yaml(args.pop(0))
    bad = [a for a in args if "=" not in a]
    if bad:
        raise UserError(
            f"argument {bad[0]!r} is not an override key=value (only the first argument may be a config file)"
        )
    data = apply_overrides(data, args, TrainJobConfig)
    config = from_dict(TrainJobConfig, data)  # every range and cross-check, before anything runs
    dev = resolve_device(device if device is not None else config.device)
    run_dir = out if out is not None else Path("runs") / f"train-{config_hash('train', config)}"
    # everything that can be refused is refused before the run folder is made
    check_writable_dir(run_dir, "--out" if out is not None else "run folder")
    if config.train.checkpoint_path:
        check_writable_file(Path(config.train.checkpoint_path), "train.checkpoint_path")
        check_resume_source(config)  # read safely and checked against this run's model now
    run_dir.mkdir(parents=True, exist_ok=True)
    save_resolved(config, run_dir / "config.yaml")
    with (run_dir / "metrics.jsonl").open("w") as log_file:

        def log(step: int, metrics: dict[str, Any]) -> None:
            log_file.write(json.dumps({"step": step, "time": time.time(), **metrics}) + "\n")
            log_file.flush()

        metrics = run_train(config, run_dir, dev, log=log, progress=not quiet)
    (run_dir / "result.json").write_text(json.dumps(metrics, indent=1))
    _show(metrics, f"train → {run_dir}")


def measure_command(
    checkpoint: Annotated[
        Path, typer.Argument(help="a model.pt written by `learnability train` or the train job")
    ],
    measure: Annotated[
        str | None,
        typer.Option("--measure", help="comma-separated measures (default: the run's own list)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of a table")] = False,
    device: Annotated[str, typer.Option("--device", help="auto, cpu, cuda or cuda:N")] = "cpu",
) -> None:
    """Measure a saved model: accuracy, profile, blowup, param_norm, lipschitz, sharpness, ..."""

    names = None
    if measure is not None:
        names = [m.strip() for m in measure.split(",")]
        if not any(names):
            raise UserError(
                f"--measure {measure!r} names no measure; give a comma-separated list of: "
                f"{', '.join(sorted(MEASURES))}"
            )
        names = [m for m in names if m]
        check_measures(names, "--measure")
    dev = resolve_device(device)
    model, config = load_model(checkpoint, dev)
    names = names or config.measure or ["accuracy"]
    task = build_task(config.task, data_seed=config.data_seed)
    metrics = {**target_summary(task), **run_measures(model, task, config, names, dev)}
    if as_json:
        typer.echo(json.dumps(metrics, default=str))
    else:
        _show(
            metrics,
            f"measure {checkpoint} ({', '.join(names)}; known: {', '.join(sorted(MEASURES))})",
        )


def register(app: typer.Typer) -> None:
    """Add `train` and `measure` to the root command."""
    app.command("train", help="Train one model on one task, then measure it.")(train_command)
    app.command("measure", help="Measure a saved model (a model.pt from `learnability train`).")(
        measure_command
    )


__all__ = ["measure_command", "register", "train_command"]
