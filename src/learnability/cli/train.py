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
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from learnability.cli.options import literal
from learnability.config import apply_overrides, config_hash, from_dict, load_yaml, save_resolved
from learnability.errors import UserError
from learnability.jsonsafe import json_safe
from learnability.lazy import lazy, lazy_names
from learnability.paths import (
    atomic_write_text,
    check_output_dir,
    check_writable_file,
    claim_output_dir,
    path_option,
)

if TYPE_CHECKING:
    import torch

    from learnability.checkpoints import check_resume_source, nonfinite_weights, parameter_count
    from learnability.device import resolve_device
    from learnability.jobs.train import (
        TrainJobConfig,
        check_model_fits_task,
        load_model,
        run_train,
        target_summary,
    )
    from learnability.measure.registry import MEASURES, check_measures, run_measures
    from learnability.tasks import build_task
else:  # imported when first used: `--help` and a usage error need none of them (learnability.lazy)
    torch = lazy("torch")
    check_resume_source, nonfinite_weights, parameter_count = lazy_names(
        "learnability.checkpoints", "check_resume_source", "nonfinite_weights", "parameter_count"
    )
    (resolve_device,) = lazy_names("learnability.device", "resolve_device")
    TrainJobConfig, check_model_fits_task, load_model, run_train, target_summary = lazy_names(
        "learnability.jobs.train",
        "TrainJobConfig",
        "check_model_fits_task",
        "load_model",
        "run_train",
        "target_summary",
    )
    MEASURES, check_measures, run_measures = lazy_names(
        "learnability.measure.registry", "MEASURES", "check_measures", "run_measures"
    )
    (build_task,) = lazy_names("learnability.tasks", "build_task")

# what `train` writes into its run folder (trainer.pt: periodic checkpoints), and nothing else
RUN_FILES = ("config.yaml", "metrics.jsonl", "model.pt", "result.json", "trainer.pt")
# bytes a float32 model needs while it trains: weights, gradients and two Adam moments
_TRAIN_BYTES_PER_NUMBER = 16


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
    table = Table(title=literal(title), show_header=False)
    for k, v in _scalar_rows(metrics):
        table.add_row(literal(k), literal(v))
    Console().print(table)


def train_command(
    args: Annotated[
        list[str] | None,
        typer.Argument(help="an optional CONFIG.yaml, then overrides like train.lr=1e-3"),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="run directory (default runs/train-<hash>)", parser=path_option),
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
    # everything that can be refused is refused before the run folder is made: a folder holding
    # files of the user's, the checkpoint to resume from, the task's own checks (built now: a test
    # split too small, a vocabulary larger than the model's) and a model larger than the memory
    check_output_dir(run_dir, RUN_FILES, "--out" if out is not None else "run folder")
    if config.train.checkpoint_path:
        check_writable_file(Path(config.train.checkpoint_path), "train.checkpoint_path")
        check_resume_source(config)  # read safely and checked against this run's model now
    task = build_task(config.task, data_seed=config.data_seed)
    check_model_fits_task(config, task)
    _check_memory(config, dev)
    claim_output_dir(run_dir, RUN_FILES)
    save_resolved(config, run_dir / "config.yaml")
    # the metrics log is appended as training goes (a log, read while it grows); the rest is atomic
    with (run_dir / "metrics.jsonl").open("w") as log_file:

        def log(step: int, metrics: dict[str, Any]) -> None:
            log_file.write(json.dumps({"step": step, "time": time.time(), **metrics}) + "\n")
            log_file.flush()

        metrics = run_train(config, run_dir, dev, log=log, progress=not quiet, task=task)
    atomic_write_text(run_dir / "result.json", json.dumps(metrics, indent=1))
    _show(metrics, f"train → {run_dir}")


def _memory_of(dev: torch.device) -> int | None:
    """Bytes of memory the device has in all (None where unknown)."""
    try:
        if dev.type == "cuda":
            return int(torch.cuda.get_device_properties(dev).total_memory)
        if dev.type == "cpu":
            return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError, RuntimeError):
        pass
    return None


def _check_memory(config: TrainJobConfig, dev: torch.device) -> None:
    numbers = parameter_count(config.model)
    memory = _memory_of(dev)
    if numbers is None or memory is None:
        return
    need = numbers * _TRAIN_BYTES_PER_NUMBER
    if need > memory:
        raise UserError(
            f"the model holds {numbers:,} numbers and needs about {need / 2**30:,.1f} GiB to train "
            f"(weights, gradients, optimiser state); {dev} has {memory / 2**30:,.1f} GiB: shrink "
            "model.d_model, model.d_ff or model.n_layers"
        )


def measure_command(
    checkpoint: Annotated[
        Path,
        typer.Argument(
            help="a model.pt written by `learnability train` or the train job", parser=path_option
        ),
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
    diverged = nonfinite_weights(model.state_dict())
    if diverged:  # it computes NaN everywhere: its scores would describe a constant function
        raise UserError(
            f"checkpoint {str(checkpoint)!r} holds a diverged model: {diverged}; there is nothing "
            "to measure (train again, e.g. with a smaller train.lr)"
        )
    names = names or config.measure or ["accuracy"]
    task = build_task(config.task, data_seed=config.data_seed)
    metrics = {**target_summary(task), **run_measures(model, task, config, names, dev)}
    if as_json:
        # strict JSON (no NaN / Infinity): NaN → null, ±inf → "inf" / "-inf", as job metrics are
        typer.echo(json.dumps(json_safe(metrics, "string"), default=str, allow_nan=False))
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
