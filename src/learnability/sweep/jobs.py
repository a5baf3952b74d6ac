"""The job registry: a job is a function `fn(config, ctx) -> dict` with its config dataclass.

    @register_job("train", TrainJobConfig)
    def train(config: TrainJobConfig, ctx: RunContext) -> dict: ...

`get_job(name)` finds a job; on a miss it asks the job package (`learnability.jobs`, by name) to import
the module registering it, so a worker process that only knows a job's name can run it. A job defined elsewhere (a user's module) is found through its module name, which the runner
carries with each run and imports in the worker before the lookup.

A job returns a JSON-serialisable metrics dict. If it contains `"status": "diverged"` the run is
stored as diverged (not failed): the run itself worked, the training did not converge to anything.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from learnability.errors import UserError, did_you_mean
from learnability.jsonsafe import json_safe

__all__ = ["Job", "RunContext", "get_job", "import_job_module", "known_jobs", "register_job"]


@dataclass(frozen=True)
class Job:
    name: str
    fn: Callable[[Any, RunContext], dict]
    config_cls: type
    module: str  # where it is registered: imported by workers before the lookup


_JOBS: dict[str, Job] = {}


def register_job(name: str, config_cls: type) -> Callable[[Callable], Callable]:
    """Decorator registering `fn(config: config_cls, ctx: RunContext) -> dict` as job `name`."""

    def decorate(fn: Callable) -> Callable:
        _JOBS[name] = Job(name=name, fn=fn, config_cls=config_cls, module=fn.__module__)
        return fn

    return decorate


JOB_PACKAGE = "learnability.jobs"  # asked, by name, for modules registering the standard jobs


def _load_standard_jobs(name: str | None = None) -> None:
    """Have the job package import the module for `name`'s prefix (or every module)."""
    package = importlib.import_module(JOB_PACKAGE)
    if name is not None:
        package.load(name.split(".", 1)[0])
        if name in _JOBS:
            return
    package.load_all()


def _import_errors() -> dict[str, str]:
    return dict(getattr(importlib.import_module(JOB_PACKAGE), "import_errors", {}))


def import_job_module(module: str) -> None:
    """Import the module that registers a job (in a worker that has not seen it yet)."""
    if module and module != "__main__":
        importlib.import_module(module)


def known_jobs() -> list[str]:
    _load_standard_jobs()
    return sorted(_JOBS)


def get_job(name: str) -> Job:
    """The registered job `name`; UserError listing the known jobs if there is none."""
    job = _JOBS.get(name)
    if job is None:
        _load_standard_jobs(name)
        job = _JOBS.get(name)
    if job is None:
        _load_standard_jobs()
        names = sorted(_JOBS)
        broken = "".join(f"; {m} failed to import ({e})" for m, e in _import_errors().items())
        raise UserError(
            f"unknown job {name!r}{did_you_mean(name, names)}; known jobs: {', '.join(names) or '(none)'}"
            f"{broken}"
        )
    return job


@dataclass
class RunContext:
    """What a running job may use: where to put artefacts, which device, and the metrics log."""

    run_id: str
    run_dir: Path
    device: Any = "cpu"  # a torch.device in workers; kept loose so this module does not need torch
    _log_file: Any = field(default=None, repr=False)

    @property
    def metrics_path(self) -> Path:
        return self.run_dir / "metrics.jsonl"

    def log(self, step: int, metrics: dict) -> None:
        """Append one line `{"step", "time", **metrics}` to run_dir/metrics.jsonl (flushed each line)."""
        if self._log_file is None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            # a retried run starts a fresh log rather than appending to a dead attempt's
            self._log_file = self.metrics_path.open("w")
        row = {"step": int(step), "time": time.time(), **metrics}
        self._log_file.write(json.dumps(json_safe(row)) + "\n")
        self._log_file.flush()

    def close(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
