"""Checkpoints: written as plain data, read without running code, checked against what they hold.

Two kinds of file, both `torch.save` archives holding only dicts, lists, tuples, strings, numbers,
None and tensors:

- a **model checkpoint** (`model.pt`, written by the train job and `learnability train`):
  `{"kind": "learnability.model", "format": 2, "job_config": <TrainJobConfig as plain data>,
  "config_hash": <config_hash("train", config)>, "state_dict": {name: tensor}}`;
- a **trainer checkpoint** (`train.checkpoint_path`, for resuming): `{"kind": "learnability.trainer",
  "model", "optimizer", "step", "generator", "state", "train_config"}`.

Reading: `torch.load(..., weights_only=True)` always, so a file that holds anything else (a pickled
object whose `__reduce__` would run code) is refused before any of it runs. Then the content is checked
against the model it claims to be: the config must build (strict `from_dict`), its hash must be the one
saved beside it (a config edited after saving, e.g. a different `task.n`, would otherwise score the
model on a task it never saw), and every tensor must have the name and shape the config's model has.
Every problem is a one-line `UserError` naming the file and what is wrong.

Writing is atomic (a temporary file, then a rename), so a run killed mid-save keeps its previous file.
Reading bounds what a file may inflate to (a zip member is never allowed to grow past the file's own
size: torch.save does not compress), so a small crafted file cannot make a load take gigabytes.
"""

from __future__ import annotations

import errno
import functools
import json
import math
import os
import re
import shutil
import warnings
import zipfile
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import nn

from learnability.config import canonical_json, from_dict
from learnability.errors import UserError
from learnability.models import MODELS
from learnability.paths import atomic_path

__all__ = [
    "FORMAT",
    "MODEL_KIND",
    "SUPPORTED_FORMATS",
    "TRAINER_KIND",
    "check_resume_source",
    "file_name",
    "load_trainer_checkpoint",
    "nonfinite_weights",
    "parameter_count",
    "parameter_names",
    "parameter_shapes",
    "plain",
    "read_checkpoint",
    "read_trainer_checkpoint",
    "save",
    "save_trainer_checkpoint",
    "state_dict_problem",
    "tensors",
]

MODEL_KIND = "learnability.model"
TRAINER_KIND = "learnability.trainer"
FORMAT = 2
SUPPORTED_FORMATS = (2,)  # the layouts this version reads; a file of another was not written by it
# trainer settings that do not change a run's trajectory, so a checkpoint may be resumed under others
_RESUME_FREE = ("checkpoint_path", "checkpoint_every", "resume", "eval_batch")


def file_name(path: Path) -> str:
    return repr(str(path))


def plain(value: Any) -> Any:
    """`value` as data `torch.load(weights_only=True)` reads back: numpy scalars and arrays become
    numbers, lists and tensors; anything else unknown becomes its string."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, Mapping):
        return {(k if isinstance(k, (str, int)) else str(k)): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [plain(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return plain(value.tolist())
    return str(value)


def save(payload: dict[str, Any], path: str | Path) -> Path:
    """`torch.save(payload)` atomically: a temporary file beside `path`, then a rename."""
    path = Path(path)
    with atomic_path(path) as tmp:
        try:
            torch.save(payload, tmp)
        except RuntimeError as exc:
            # torch reports a failed write as "unexpected pos ..."; say what it was when the disk
            # has no room left for the tensors
            if shutil.disk_usage(tmp.parent).free < _tensor_bytes(payload) + (64 << 10):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from exc
            raise
    return path


def _tensor_bytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, Mapping):
        return sum(_tensor_bytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_tensor_bytes(v) for v in value)
    return 0


# torch.save stores its archive members uncompressed, so what a load inflates to is about the file's
# own size. A crafted archive with deflated members could make a small file allocate gigabytes: the
# members' declared sizes are read from the zip directory (without inflating anything) and bounded.
INFLATE_SLACK = 1 << 20  # bytes of zip headers and pickles beyond the file's own size


def _inflation_problem(path: Path) -> str | None:
    try:
        if not zipfile.is_zipfile(path):
            return None  # torch's legacy format: storages are read as they are, never inflated
        with zipfile.ZipFile(path) as archive:
            inflated = sum(info.file_size for info in archive.infolist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return None  # not a readable zip: torch.load says what is wrong with it
    size = path.stat().st_size
    if inflated > 2 * size + INFLATE_SLACK:
        return (
            f"its archive inflates to {inflated:,} bytes from {size:,} (torch.save never compresses): "
            "a crafted file, not read"
        )
    return None


def read_checkpoint(path: str | Path, what: str = "checkpoint") -> dict[str, Any]:
    """The dict saved at `path`, read with `weights_only=True` (no code in the file can run).

    UserError (one line) for a missing file, a file torch cannot read, or one that holds Python objects
    other than plain data and tensors."""
    path = Path(path)
    try:
        if not path.is_file():
            why = (
                "is not a regular file (a FIFO or a device)" if path.exists() else "does not exist"
            )
            if path.is_dir():
                why = "is a folder"
            raise UserError(f"{what} {file_name(path)} {why}; give the path of a .pt file")
        inflation = _inflation_problem(path)
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise UserError(f"{what} {file_name(path)} cannot be used: {exc.strerror}") from None
    if inflation:
        raise UserError(f"{what} {file_name(path)}: {inflation}")
    try:
        with warnings.catch_warnings():
            # torch warns (on stderr) about pickle protocols; the error below says what matters
            warnings.simplefilter("ignore")
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        found = re.search(r"GLOBAL (\S+)", str(exc))
        if found or "Weights only load failed" in str(exc):
            holds = f" ({found.group(1)})" if found else ""
            raise UserError(
                f"{what} {file_name(path)} holds Python objects{holds}, not only tensors and plain data, "
                "so it is not read (loading it could run code); give a .pt file written by learnability"
            ) from None
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        reason = f"{type(exc).__name__}{': ' + reason[:120] if reason else ''}"
        raise UserError(
            f"{what} {file_name(path)} is not a readable torch checkpoint ({reason}); "
            "give a .pt file written by learnability"
        ) from None
    if not isinstance(payload, dict):
        raise UserError(
            f"{what} {file_name(path)} holds a {type(payload).__name__}, not a learnability checkpoint"
        )
    _check_format(payload, path, what)
    return payload


def _check_format(payload: dict[str, Any], path: Path, what: str) -> None:
    """Refuse a learnability checkpoint of a layout this version does not know (a file from a newer
    version, or an edited one) rather than read its contents under the wrong layout."""
    if payload.get("kind") not in (MODEL_KIND, TRAINER_KIND) or "format" not in payload:
        return  # not a learnability checkpoint (the kind check says so), or one from before formats
    found = payload["format"]
    if type(found) is not int or found not in SUPPORTED_FORMATS:
        shown = repr(found) if isinstance(found, (int, float, str)) else type(found).__name__
        raise UserError(
            f"{what} {file_name(path)} has format {shown[:40]}; this version of learnability reads "
            f"checkpoint format {', '.join(map(str, SUPPORTED_FORMATS))} only: give a .pt file it wrote"
        )


def tensors(value: Any, path: Path, key: str) -> dict[str, torch.Tensor]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in value.items()
    ):
        raise UserError(
            f"checkpoint {file_name(path)}: {key!r} is not a mapping of names to tensors"
        )
    return dict(value)


@functools.lru_cache(maxsize=256)
def _layout(model_json: str) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[int, ...]], ...]]:

    data = json.loads(model_json)
    config = from_dict(MODELS[data["arch"]][0], data)
    # on the meta device: names and shapes without allocating or initialising anything
    with torch.device("meta"):
        model = MODELS[data["arch"]][1](config)
    params = tuple(name for name, _ in model.named_parameters())
    return params, tuple((name, tuple(t.shape)) for name, t in model.state_dict().items())


def parameter_shapes(model_config: Any) -> dict[str, tuple[int, ...]]:
    """{state_dict name: shape} of the model `model_config` describes, without building its weights."""

    return dict(_layout(canonical_json(model_config))[1])


def parameter_count(model_config: Any) -> int | None:
    """How many numbers the model's state holds (built on the meta device: nothing allocated), or
    None when that cannot be told without building it."""
    try:
        shapes = parameter_shapes(model_config)
    except (RuntimeError, ValueError, TypeError, OverflowError, NotImplementedError):
        return None
    return sum(math.prod(shape) for shape in shapes.values())


def parameter_names(model_config: Any) -> list[str]:
    """Names of the parameters (`named_parameters`) of the model `model_config` describes."""

    return list(_layout(canonical_json(model_config))[0])


def state_dict_problem(state: Mapping[str, torch.Tensor], model_config: Any) -> str | None:
    """Why `state` does not have the tensor names, shapes and dtypes of `model_config`'s model, or None."""
    expected = parameter_shapes(model_config)
    missing = [k for k in expected if k not in state]
    extra = [k for k in state if k not in expected]
    if missing or extra:
        parts = []
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            parts.append(f"lacks {missing[0]!r}{more}")
        if extra:
            more = f" and {len(extra) - 1} more" if len(extra) > 1 else ""
            parts.append(f"has {extra[0]!r}{more}")
        arch = getattr(model_config, "arch", "?")
        return f"its weights are not those of the {arch!r} model its config describes: it {' and '.join(parts)}"
    for name, shape in expected.items():
        got = tuple(state[name].shape)
        if got != shape:
            return f"weight {name!r} has shape {list(got)}, but the model its config describes needs {list(shape)}"
        if not state[name].is_floating_point():
            return f"weight {name!r} has dtype {state[name].dtype}; weights must be floating point"
    return None


# -- trainer checkpoints (resume) ---------------------------------------------------------------------
def save_trainer_checkpoint(
    path: str | Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    step: int,
    generator: torch.Generator,
    state: dict[str, Any],
    train_config: Any,
) -> Path:
    """Everything a resumed run needs to continue bit for bit, as plain data (atomic)."""

    return save(
        {
            "kind": TRAINER_KIND,
            "format": FORMAT,
            "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
            "optimizer": plain(optimizer.state_dict()),
            "step": int(step),
            "generator": generator.get_state(),
            "state": plain(state),
            "train_config": plain(asdict(train_config)),
        },
        path,
    )


def _trajectory(config: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in _RESUME_FREE}


def read_trainer_checkpoint(
    path: str | Path, train_config: Any, shapes: Mapping[str, tuple[int, ...]]
) -> dict[str, Any]:
    """The payload of a trainer checkpoint, checked against the run that would resume from it: the
    model's tensor `shapes` and the training settings that change the trajectory. UserError else."""

    path = Path(path)
    payload = read_checkpoint(path, "trainer checkpoint")
    kind = payload.get("kind")
    if kind != TRAINER_KIND:
        raise UserError(
            f"train.checkpoint_path {file_name(path)} has kind {kind!r}; expected {TRAINER_KIND!r} "
            "(the file a run with train.checkpoint_path writes)"
        )
    missing = [k for k in ("model", "optimizer", "step", "generator", "state") if k not in payload]
    if missing:
        raise UserError(
            f"trainer checkpoint {file_name(path)} lacks {', '.join(map(repr, missing))}"
        )
    state_dict = tensors(payload["model"], path, "model")
    own = dict(shapes)
    theirs = {k: tuple(v.shape) for k, v in state_dict.items()}
    if own != theirs:
        diff = sorted(k for k in own.keys() | theirs.keys() if own.get(k) != theirs.get(k))
        there = list(theirs[diff[0]]) if diff[0] in theirs else "none"
        here = list(own[diff[0]]) if diff[0] in own else "none"
        raise UserError(
            f"trainer checkpoint {file_name(path)} is from another model: weight {diff[0]!r} has "
            f"shape {there} there, {here} in this run's model"
        )
    step = payload["step"]
    if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step <= train_config.steps:
        raise UserError(
            f"trainer checkpoint {file_name(path)}: step {step!r} is not allowed; it must be an int in "
            f"0..train.steps={train_config.steps}"
        )
    gen = payload["generator"]
    if not isinstance(gen, torch.Tensor) or gen.dtype != torch.uint8:
        raise UserError(
            f"trainer checkpoint {file_name(path)}: 'generator' is not a generator state"
        )
    state = payload["state"]
    if not isinstance(state, dict) or not isinstance(state.get("history", []), list):
        raise UserError(f"trainer checkpoint {file_name(path)}: 'state' is not a training state")
    if not all(isinstance(row, dict) for row in state.get("history", [])):
        raise UserError(f"trainer checkpoint {file_name(path)}: a history row is not a mapping")
    value = state.get("loss_sum", 0.0)
    if not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise UserError(
            f"trainer checkpoint {file_name(path)}: state 'loss_sum' is not a finite number"
        )
    if not isinstance(payload["optimizer"], dict):
        raise UserError(
            f"trainer checkpoint {file_name(path)}: 'optimizer' is not an optimiser state"
        )
    saved = payload.get("train_config")
    if isinstance(saved, dict):
        ours, theirs_cfg = _trajectory(plain(asdict(train_config))), _trajectory(saved)
        keys = sorted(
            k for k in ours.keys() | theirs_cfg.keys() if ours.get(k) != theirs_cfg.get(k)
        )
        if keys:
            key = keys[0]
            raise UserError(
                f"trainer checkpoint {file_name(path)} is from a run with train.{key}="
                f"{theirs_cfg.get(key)!r}, not {ours.get(key)!r}; resume with the settings it was "
                "saved with, or give a new train.checkpoint_path"
            )
    return payload


def check_resume_source(config: Any) -> None:
    """For a TrainJobConfig that resumes (train.resume with an existing train.checkpoint_path): read
    and check that checkpoint now, before anything is written (UserError if it cannot be used)."""
    train = config.train
    if not (train.resume and train.checkpoint_path):
        return
    path = Path(train.checkpoint_path)
    try:
        exists = path.exists()
    except OSError:
        exists = True  # let read_checkpoint name the problem
    if exists:
        read_trainer_checkpoint(path, train, parameter_shapes(config.model))


def load_trainer_checkpoint(
    path: str | Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    generator: torch.Generator,
    train_config: Any,
) -> tuple[int, dict[str, Any]]:
    """Restore model, optimiser and data generator from a trainer checkpoint; returns (step, state).

    The checkpoint must come from a run with the same model and the same training settings (those that
    change the trajectory); anything else is a UserError and nothing is changed."""
    path = Path(path)
    # the live model's own tensors are the reference: a trainer may train any nn.Module
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    payload = read_trainer_checkpoint(path, train_config, shapes)
    model_before = {k: v.clone() for k, v in model.state_dict().items()}
    try:
        model.load_state_dict(payload["model"])
        optimizer.load_state_dict(payload["optimizer"])
        generator.set_state(payload["generator"])
    except (RuntimeError, ValueError, KeyError, TypeError, IndexError) as exc:
        model.load_state_dict(model_before)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(
            f"trainer checkpoint {file_name(path)} does not fit this run's model and optimiser: {first}"
        ) from None
    return int(payload["step"]), payload["state"]


def nonfinite_weights(state: Mapping[str, torch.Tensor]) -> str | None:
    """Why a model's weights are not all finite (a diverged run's model.pt), or None: such a model
    computes NaN everywhere, and scoring it would read as a constant function."""
    bad = {k: int((~torch.isfinite(v)).sum()) for k, v in state.items() if v.is_floating_point()}
    bad = {k: n for k, n in bad.items() if n}
    if not bad:
        return None
    first = next(iter(bad))
    total = sum(v.numel() for v in state.values())
    return (
        f"{sum(bad.values()):,} of its {total:,} weights are NaN or infinite (first in {first!r}, "
        f"{len(bad)} tensor(s) in all)"
    )
