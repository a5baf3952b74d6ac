"""The standard `train` job: build a task and a model, train, measure, save.

    config = TrainJobConfig(task=BooleanTaskConfig(function="majority", n=7), measure=["profile", "blowup"])
    metrics = run_train(config, run_dir="runs/demo")          # without the sweep machinery
    # or, in a sweep: Sweep(..., job="train", base=to_dict(config), ...)

Returned metrics (JSON): status ("converged" | "finished" | "diverged"), converged (bool), steps, converged_step,
seconds, train_loss, test_loss, test_acc, trainable_params, and the metrics of each measure named in
`measure` (listed in `learnability.measure.registry`).
Torch uses `threads` threads during the run (default 1, as sweeps): a sum's rounding depends on how it
is split, so the thread count is part of the run id when it is not 1.
`track`: measures (names as in `measure`) also taken during training, on the untrained model (a row at
step 0) and at every evaluation (every `train.eval_every` steps and at the last step). Each row holds
step, the evaluation's test_loss and test_acc, the mean training loss since the previous evaluation (loss),
the training batch's accuracy (acc) and the learning rate (lr) — none of these three at step 0 — and the
tracked measures' metrics. Rows go to the run's metrics log (`metrics.jsonl`) as they are taken and,
as `history` (a list of rows), into the result. A row whose test loss is not finite skips the measures.
`keep_history` returns the history of the plain evaluations alone (no step 0: the volume study's
plateau rule reads that history as it was stored). Measures run on the first `measure_batch` test items;
sharpness directions come from a generator seeded with `seed` (independent directions across batches). Boolean tasks also report the target's own profile:
target_as, target_K0, target_max_sensitivity, target_degree (when the analysis module has them).
A diverged run skips the measures. `register_measure(name)` adds a measure (a study may add its own).
The final model is saved to run_dir/model.pt (see `learnability.checkpoints`: plain data, read with
weights_only=True and checked against its config).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from learnability import checkpoints
from learnability.boolean.analysis import profile_from_truth_table
from learnability.config import HASH_OMIT_DEFAULT, config_hash, from_dict, to_dict
from learnability.device import check_device, resolve_device
from learnability.errors import UserError, check_int, check_number
from learnability.jsonsafe import json_safe
from learnability.measure.registry import DEFAULT_BOUND_RADII, check_measures, run_measures
from learnability.models import BooleanTransformerConfig, ModelConfig, fixed_parameter_names
from learnability.models.two_head import validate_config as validate_two_head
from learnability.sweep.jobs import RunContext, register_job
from learnability.tasks import Task, build_task, task_config_union
from learnability.tasks.boolean import BooleanTask, BooleanTaskConfig
from learnability.train import TrainConfig, Trainer, seeded_model, select_trainable

TaskConfig = task_config_union()
MAX_SEED = 2**63 - 1  # torch.Generator.manual_seed takes 64-bit seeds
MAX_THREADS = 1024
# Declared size limits: beyond them a run cannot fit any machine this toolkit targets (a batch of
# 2^20 strings, a model of 10^10 numbers = 40 GB of float32 before gradients and optimiser state).
MAX_BATCH = 1 << 20
MAX_MODEL_NUMBERS = 10**10
MAX_PROFILE_SAMPLES = 10**7  # a sampled profile evaluates (n + 1) strings per sample


@dataclass
class TrainJobConfig:
    task: TaskConfig = field(default_factory=BooleanTaskConfig)  # type: ignore[valid-type]
    model: ModelConfig = field(default_factory=BooleanTransformerConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    # measures taken after training (names: `learnability.measure.registry`)
    measure: list[str] = field(default_factory=lambda: ["accuracy"])
    # measures also taken at step 0 and at every evaluation, returned as `history` (module docstring)
    track: list[str] = field(default_factory=list)
    measure_batch: int = 1024  # test items the measures use
    profile_margin: float = 0.0  # outputs within this of the threshold count as undecided (profile)
    # strings the profile measure samples (each with its n neighbours), at any n; None or 0: every
    # string up to n = 20, 4,096 sampled above (not in run ids at None)
    profile_samples: int | None = field(default=None, metadata=HASH_OMIT_DEFAULT)
    sharpness_rho: float = 0.1  # sphere radius
    sharpness_eps: float = 0.02  # per-coordinate σ of the Gaussian variant
    sharpness_directions: int = 32  # random directions per sharpness estimate
    pca_ks: list[int] = field(default_factory=lambda: [1, 2, 4, 8, 16, 32])  # k of the pca measure
    # sphere radii of the sharpness_bound measure, in units of sharpness_eps·√P; not in the run id at
    # its default, so runs stored before it existed keep their id
    bound_radii: list[float] = field(
        default_factory=lambda: list(DEFAULT_BOUND_RADII), metadata=HASH_OMIT_DEFAULT
    )
    seed: int = 0  # model initialisation
    data_seed: int = 0  # data splits and batch sampling
    device: str = "cpu"  # used by run_train when no device is passed (a sweep's device wins)
    save_model: bool = True  # write the trained model to the run folder (model.pt)
    # torch threads of the run: a float sum's order depends on it, so it is part of the run id
    # (when not 1, the default and what sweeps use: runs stored before it existed keep their id)
    threads: int = field(default=1, metadata=HASH_OMIT_DEFAULT)
    # return the evaluation history (as with `track`) without tracking a measure; not in the run id
    # when off, so runs stored before it existed keep their id
    keep_history: bool = field(default=False, metadata=HASH_OMIT_DEFAULT)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """One-line UserError for a setting out of range or a model the task or freeze spec cannot
        use: checked when the config is built, so `sweep --dry-run` finds what the run would."""
        check_int("measure_batch", self.measure_batch, 1)
        check_number("profile_margin", self.profile_margin, 0)
        if self.profile_samples is not None:
            check_int("profile_samples", self.profile_samples, 0, MAX_PROFILE_SAMPLES)
        check_number("sharpness_rho", self.sharpness_rho, 0, low_open=True)
        check_number("sharpness_eps", self.sharpness_eps, 0, low_open=True)
        check_int("sharpness_directions", self.sharpness_directions, 1)
        for i, k in enumerate(self.pca_ks):
            check_int(f"pca_ks[{i}]", k, 1)
        if not self.bound_radii:
            raise UserError("bound_radii=[] is not allowed; give at least one radius multiplier")
        for i, m in enumerate(self.bound_radii):
            check_number(f"bound_radii[{i}]", m, 0, low_open=True)
        if any(b <= a for a, b in zip(self.bound_radii, self.bound_radii[1:])):
            raise UserError(
                f"bound_radii={self.bound_radii} is not allowed; give increasing values"
            )
        check_int("seed", self.seed, 0, MAX_SEED)
        check_int("data_seed", self.data_seed, 0, MAX_SEED)
        check_int("threads", self.threads, 1, MAX_THREADS)
        check_device(self.device)
        check_measures(self.measure, "measure")
        check_measures(self.track, "track")
        check_int("train.batch_size", self.train.batch_size, 1, MAX_BATCH)
        check_int("train.eval_batch", self.train.eval_batch, 1, MAX_BATCH)
        _check_task_fits_model(self.task, self.model)
        _check_model_size(self.model)
        if not isinstance(self.train.freeze, str) or self.train.freeze == "embeddings":
            _check_freeze(self.model, self.train.freeze)


def _check_freeze(model: Any, freeze: str | list[str]) -> None:
    # the model's parameter names come from a model built on the meta device (no weights allocated)
    try:
        select_trainable(checkpoints.parameter_names(model), freeze, fixed_parameter_names(model))
    except UserError as exc:
        raise UserError(f"train.freeze: {exc}") from None


def _check_model_size(model: Any) -> None:
    numbers = checkpoints.parameter_count(model)
    if numbers is not None and numbers > MAX_MODEL_NUMBERS:
        raise UserError(
            f"model {getattr(model, 'arch', '?')!r} as configured holds {numbers:,} numbers; at most "
            f"{MAX_MODEL_NUMBERS:,} are allowed (shrink d_model, d_ff, n_layers or vocab_size)"
        )


def _check_task_fits_model(task: Any, model: Any) -> None:
    """What is known from the two configs alone: a Boolean task's length and vocabulary against the
    model's input size, position table and vocabulary; a token task's (`vocab`, `length` on its
    config) against the model's vocabulary and position table (other tasks are checked when built)."""
    needed, length = getattr(task, "vocab", None), getattr(task, "length", None)
    have, max_len = getattr(model, "vocab_size", None), getattr(model, "max_len", None)
    if isinstance(needed, int) and isinstance(have, int) and have < needed:
        raise UserError(
            f"model.vocab_size={have} is smaller than the {task.name} task's vocabulary ({needed} "
            f"tokens); set model.vocab_size={needed}"
        )
    if isinstance(length, int) and isinstance(max_len, int) and length > max_len:
        raise UserError(
            f"the {task.name} task's sequences have {length} positions, more than "
            f"model.max_len={max_len}; set model.max_len ≥ {length}"
        )
    if not isinstance(task, BooleanTaskConfig):
        return
    longest = max(v for v in (task.n, task.min_len, task.max_len) if v is not None)
    arch = getattr(model, "arch", None)
    if arch == "mlp" and model.n_inputs != task.n:
        raise UserError(
            f"model.n_inputs={model.n_inputs} does not match task.n={task.n}; an MLP reads "
            f"exactly n bits: set model.n_inputs={task.n}"
        )
    if arch == "mlp" and longest != task.n:
        raise UserError("an MLP reads one fixed length; unset task.min_len / task.max_len")
    if arch == "boolean_transformer" and model.positions == "learned" and longest > model.max_len:
        raise UserError(
            f"task strings of length {longest} are longer than model.max_len={model.max_len} (the "
            f"learned position table); set model.max_len ≥ {longest} or model.positions=sinusoidal"
        )
    if arch == "gpt" and longest > model.max_len:
        raise UserError(
            f"task strings of length {longest} are longer than model.max_len={model.max_len}; "
            f"set model.max_len ≥ {longest}"
        )
    if arch == "two_head":
        validate_two_head(model)
        if longest != task.n or model.d != task.n:
            raise UserError(
                f"model.d={model.d} must equal task.n={task.n} (the two-head model reads exactly d "
                "bits), with no task.min_len / task.max_len"
            )
    vocab = getattr(model, "vocab_size", None)
    if vocab is not None and vocab < 2:
        raise UserError(f"model.vocab_size={vocab} is too small for bit strings; it must be ≥ 2")


def target_summary(task: Task) -> dict[str, Any]:
    """The target function's own profile (Boolean tasks, exact sizes only)."""
    if (
        not isinstance(task, BooleanTask)
        or task.output != "scalar"
        or task.variable
        or task.max_len > 20
    ):
        return {}
    fn = task.function_at(task.max_len)
    if getattr(fn, "real_valued", False):
        return {}
    p = profile_from_truth_table(fn.truth_table(), task.max_len)
    out = {
        "target_as": p.average,
        "target_K0": p.zero_count,
        "target_max_sensitivity": p.max_sensitivity,
    }
    if p.degree is not None:
        out["target_degree"] = p.degree
    return out


# -- the job -----------------------------------------------------------------------------------------------
def run_train(
    config: TrainJobConfig,
    run_dir: str | Path | None = None,
    device: torch.device | str | None = None,
    log: Callable[[int, dict[str, Any]], None] | None = None,
    progress: bool = False,
    task: Task | None = None,
) -> dict[str, Any]:
    """Train and measure as the `train` job does, without the sweep machinery (see the module docstring).

    Torch runs on `config.threads` threads meanwhile (restored afterwards): the run id covers them.
    `task`: the task of `config.task` when the caller has built it already (to check it first)."""
    before = torch.get_num_threads()
    if before != config.threads:
        torch.set_num_threads(config.threads)
    try:
        return _run_train(config, run_dir, device, log, progress, task)
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


def _run_train(
    config: TrainJobConfig,
    run_dir: str | Path | None,
    device: torch.device | str | None,
    log: Callable[[int, dict[str, Any]], None] | None,
    progress: bool,
    task: Task | None = None,
) -> dict[str, Any]:
    device = resolve_device(device if device is not None else config.device)
    check_measures(config.measure + config.track)
    if task is None:
        task = build_task(config.task, data_seed=config.data_seed)
    check_model_fits_task(config, task)
    model = seeded_model(config.model, config.seed, device)
    train = config.train
    if run_dir is not None and train.checkpoint_every and not train.checkpoint_path:
        # periodic checkpoints go in the run directory, and a retried run resumes from them
        train = replace(train, checkpoint_path=str(Path(run_dir) / "trainer.pt"), resume=True)
    hook = None
    if config.track:

        def hook(step: int, m: nn.Module) -> dict[str, Any]:
            return run_measures(m, task, config, config.track, device)

    trainer = Trainer(
        model, task, train, device, metrics_log=log, progress=progress, eval_hook=hook,
        eval_at_start=bool(config.track),
    )  # fmt: skip
    result = trainer.fit(data_seed=config.data_seed, init_seed=config.seed)
    metrics: dict[str, Any] = {
        "status": result.status,
        "converged": result.status == "converged",
        "steps": result.steps,
        "converged_step": result.converged_step,
        "seconds": result.seconds,
        "trainable_params": sum(p.numel() for p in trainer.params),
        **{k: v for k, v in result.final.items()},
    }
    if config.track or config.keep_history:
        metrics["history"] = result.history
    metrics.update(target_summary(task))
    if result.status != "diverged":
        metrics.update(run_measures(model, task, config, config.measure, device))
    if run_dir is not None and config.save_model:
        save_model(Path(run_dir) / "model.pt", model, config)
    # nested values (the history) stay floats: only the top-level scalars are the job's results
    return {k: json_safe(v, "string") if isinstance(v, float) else v for k, v in metrics.items()}


def check_model_fits_task(config: TrainJobConfig, task: Task) -> None:
    """UserError when the built task has more tokens than the model's vocabulary."""
    vocab = getattr(config.model, "vocab_size", None)
    if vocab is not None and getattr(task, "vocab_size", 0) > vocab:
        raise UserError(
            f"model.vocab_size={vocab} is smaller than the task's vocabulary ({task.vocab_size}); "
            f"set model.vocab_size={task.vocab_size}"
        )


# -- the saved model (model.pt) -------------------------------------------------------------------
def save_model(path: str | Path, model: nn.Module, config: TrainJobConfig) -> Path:
    """Write `model` with its TrainJobConfig as a model checkpoint (plain data, atomic)."""
    return checkpoints.save(
        {
            "kind": checkpoints.MODEL_KIND,
            "format": checkpoints.FORMAT,
            "job_config": checkpoints.plain(to_dict(config)),
            "config_hash": config_hash("train", config),
            "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        },
        path,
    )


def read_model_checkpoint(path: str | Path) -> tuple[TrainJobConfig, dict[str, torch.Tensor]]:
    """(TrainJobConfig, state_dict) of a model checkpoint, checked against each other; UserError else."""
    path = Path(path)
    name = checkpoints.file_name(path)
    payload = checkpoints.read_checkpoint(path, "checkpoint")
    kind = payload.get("kind")
    if kind != checkpoints.MODEL_KIND:
        hint = (
            " (a trainer checkpoint: resume it with train.resume=true)"
            if kind == checkpoints.TRAINER_KIND
            else ""
        )
        raise UserError(
            f"checkpoint {name} has kind {kind!r}; expected {checkpoints.MODEL_KIND!r}, the model.pt "
            f"written by `learnability train`{hint}"
        )
    for key in ("job_config", "state_dict"):
        if key not in payload:
            raise UserError(f"checkpoint {name} lacks {key!r}; it is not a complete model.pt")
    if not isinstance(payload["job_config"], dict):
        raise UserError(f"checkpoint {name}: 'job_config' is not a mapping")
    try:
        config = from_dict(TrainJobConfig, payload["job_config"])
    except UserError as exc:
        raise UserError(f"checkpoint {name} holds an invalid config: {exc}") from None
    saved_hash = payload.get("config_hash")
    if saved_hash is not None and saved_hash != config_hash("train", config):
        raise UserError(
            f"checkpoint {name}: its config was changed after the model was saved (hash "
            f"{config_hash('train', config)} ≠ saved {saved_hash!r}); the weights belong to the "
            "original config: use the unedited file, or train again with the new config"
        )
    state = checkpoints.tensors(payload["state_dict"], path, "state_dict")
    problem = checkpoints.state_dict_problem(state, config.model)
    if problem:
        raise UserError(f"checkpoint {name} does not fit its model config: {problem}")
    if saved_hash is None:  # every model.pt holds it: without it an edited config goes unnoticed
        raise UserError(
            f"checkpoint {name} lacks its 'config_hash', so a config edited after saving (another "
            "task, say) cannot be told apart; use the file as learnability wrote it, or train again"
        )
    return config, state


def load_model(
    path: str | Path, device: torch.device | str = "cpu"
) -> tuple[nn.Module, TrainJobConfig]:
    """Rebuild the model of a model checkpoint: (model on `device`, its TrainJobConfig)."""
    dev = resolve_device(device)
    config, state = read_model_checkpoint(path)
    model = seeded_model(config.model, config.seed)
    model.load_state_dict(state)  # names and shapes were checked: this cannot fail on them
    return model.to(dev), config


@register_job("train", TrainJobConfig)
def train_job(config: TrainJobConfig, ctx: RunContext) -> dict[str, Any]:
    """The standard train job: metrics to ctx.log, model to ctx.run_dir/model.pt."""
    return run_train(config, ctx.run_dir, ctx.device, log=ctx.log)


__all__ = [
    "TrainJobConfig", "check_model_fits_task", "load_model", "read_model_checkpoint", "run_train",
    "save_model",
    "target_summary", "train_job",
]  # fmt: skip
