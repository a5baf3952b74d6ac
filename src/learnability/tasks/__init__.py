"""Tasks: what a model is trained and scored on. `build_task(config)` dispatches on the config's `name` tag.

Task modules register themselves: `register_task(ConfigClass, builder)`, where the builder is
`builder(config) -> Task` or `builder(config, data_seed) -> Task` (a builder that names a `data_seed` parameter
gets the run's data seed, so the fixed train / test split can follow it; others are called with the config only).
`TASK_CONFIGS` maps each `name` tag to its config class, for the job config's task union.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any, Union

from learnability.errors import UserError, did_you_mean
from learnability.tasks.base import Batch, Task

TASK_CONFIGS: dict[str, type] = {}
_BUILDERS: dict[str, tuple[Callable[..., Task], bool]] = {}


def _tag_of(config_cls: type) -> str:
    field = getattr(config_cls, "__dataclass_fields__", {}).get("name")
    if field is None or not isinstance(field.default, str):
        raise TypeError(
            f"{config_cls.__name__} needs a `name` field with a string default (the task tag)"
        )
    return field.default


def register_task(config_cls: type, builder: Callable[..., Task]) -> None:
    """Make `build_task` build `builder(config[, data_seed])` for configs of `config_cls` (tag = its `name`)."""
    tag = _tag_of(config_cls)
    takes_seed = "data_seed" in inspect.signature(builder).parameters
    TASK_CONFIGS[tag] = config_cls
    _BUILDERS[tag] = (builder, takes_seed)


def build_task(config: Any, data_seed: int = 0) -> Task:
    """The task for `config` (a registered task config dataclass); `data_seed` fixes its data splits."""
    tag = getattr(config, "name", None)
    if tag not in _BUILDERS:
        raise UserError(
            f"unknown task {tag!r}{did_you_mean(str(tag), _BUILDERS)}; allowed: {', '.join(sorted(_BUILDERS))}"
        )
    builder, takes_seed = _BUILDERS[tag]
    return builder(config, data_seed=data_seed) if takes_seed else builder(config)


def task_config_union() -> Any:
    """The `Union[...]` of every registered task config class (for job configs)."""

    classes = tuple(TASK_CONFIGS.values())
    return classes[0] if len(classes) == 1 else Union[classes]  # noqa: UP007


# Task modules register themselves on import; a module another engineer has not written yet is skipped.
for _module in ("boolean", "algorithmic", "language", "circuit", "scratchpad"):
    try:
        importlib.import_module(f"learnability.tasks.{_module}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"learnability.tasks.{_module}":
            raise

__all__ = ["TASK_CONFIGS", "Batch", "Task", "build_task", "register_task", "task_config_union"]
