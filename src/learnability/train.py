"""The one training engine every study uses.

`Trainer(model, task, TrainConfig, device).fit(data_seed=...) -> TrainResult`.

- Which parameters train is a declarative freeze spec: "full"; "embeddings" (token embedding, position
  embedding and unembedding / readout — the "random transformer" of Zhong & Andreas); or a list of glob
  patterns over parameter names (`fnmatch`, e.g. ["layers.*.attn.*", "readout.*"]) naming the parameters
  that train. Every pattern must match something and something must be left to train, else `UserError`.
  A model's `fixed_parameters` (the two-head model's positional embeddings V) never train under any spec:
  "full" trains everything else, and a spec that would leave only fixed ones is a `UserError`.
  Frozen parameters are left out of the optimiser, so they stay bit-identical (no weight decay touches them).
- Losses: "mse" (scalar output (B,) vs targets (B,), or per-position (B,T) averaged over the `mask`), "ce" (logits (B,T,V) vs targets (B,T) on the positions
  in `mask`), "kl" (KL(target ‖ model) of the last position's distribution; logits (B,V) or (B,T,V)).
- Data: streamed tasks draw a fresh batch per step from a generator seeded with the data seed; fixed-dataset
  tasks draw minibatches (with replacement) from `task.train_set()`, or use it whole if it fits in one batch.
- Every `eval_every` steps (and at the end) the test set is scored; the run stops early as "converged" when every
  criterion that is set holds (test loss < converge_loss, test accuracy ≥ converge_acc). A non-finite loss stops
  the run as "diverged" — `fit` never raises for it.
- `eval_hook(step, model) -> dict` adds metrics to each evaluation row (the train job uses it to track
  measurements during training); it must not change the model or use the data generator. A hook that
  returns `"stop": True` ends the run there (status "stopped": a budget the hook decides). With
  `eval_at_start`, a fresh (not resumed) run also scores the untrained model: a first row at step 0 with
  test_loss, test_acc and the hook's metrics (no train loss yet).
- Determinism: all randomness comes from explicit generators, so the same init seed (`seeded_model`) and data seed
  give bit-identical parameters on CPU. A checkpoint holds model, optimiser, data generator and history, so a
  resumed run equals an uninterrupted one.
"""

from __future__ import annotations

import fnmatch
import math
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import torch
import torch.nn.functional as F
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from torch import nn

from learnability.checkpoints import load_trainer_checkpoint, save_trainer_checkpoint
from learnability.device import resolve_device
from learnability.errors import UserError, check_choice, check_int, check_number
from learnability.models import build_model, fixed_parameter_names
from learnability.tasks.base import Batch, Task

EMBEDDING_PATTERNS = ["token_embedding.*", "position_embedding.*", "unembedding.*", "readout.*"]
PRESETS = ("full", "embeddings")  # the named freeze specs (besides a list of globs)


@dataclass
class TrainConfig:
    steps: int = 1000  # optimiser steps (the most; a converged run stops early)
    batch_size: int = 128  # training strings per step
    lr: float = 3e-4  # learning rate
    weight_decay: float = 0.1  # decoupled (AdamW) or L2 (SGD) weight decay
    betas: list[float] = field(default_factory=lambda: [0.9, 0.999])  # AdamW's (β1, β2)
    optimizer: Literal["adamw", "sgd"] = "adamw"  # the optimiser
    momentum: float = 0.0  # sgd only
    schedule: Literal["constant", "warmup_cosine"] = "constant"  # learning-rate schedule
    warmup_steps: int = 0  # linear warm-up steps (both schedules)
    min_lr_ratio: float = 0.0  # cosine decays to lr * min_lr_ratio
    grad_clip: float | None = None  # max global grad norm
    # which parameters train: "full", "embeddings" or a list of globs of parameter names
    freeze: str | list[str] = "full"
    eval_every: int = 100  # evaluate on the test set every this many steps
    eval_size: int | None = None  # score at most this many test items (None = the whole test set)
    eval_batch: int = 8192  # chunk size for evaluation (memory only)
    converge_loss: float | None = None  # stop early once the test loss is below this
    converge_acc: float | None = None  # stop early once the test accuracy reaches this
    checkpoint_every: int = 0  # 0 = only at the end (when checkpoint_path is set)
    checkpoint_path: str | None = None  # trainer checkpoint file (None: none, or the run folder's)
    resume: bool = False  # continue from checkpoint_path if it exists

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """One-line UserError for any setting out of range (run when built, so `--dry-run` sees it)."""
        check_choice("train.optimizer", self.optimizer, ["adamw", "sgd"])
        check_choice("train.schedule", self.schedule, ["constant", "warmup_cosine"])
        check_int("train.steps", self.steps, 0)
        check_int("train.batch_size", self.batch_size, 1)
        check_number("train.lr", self.lr, 0)
        check_number("train.weight_decay", self.weight_decay, 0)
        if not isinstance(self.betas, (list, tuple)) or len(self.betas) != 2:
            raise UserError(
                f"train.betas={self.betas!r} is not allowed; give two numbers in [0, 1), e.g. [0.9, 0.999]"
            )
        for i, beta in enumerate(self.betas):
            check_number(f"train.betas[{i}]", beta, 0, 1, high_open=True)
        check_number("train.momentum", self.momentum, 0, 1, high_open=True)
        check_int("train.warmup_steps", self.warmup_steps, 0)
        check_number("train.min_lr_ratio", self.min_lr_ratio, 0, 1)
        if self.grad_clip is not None:
            check_number("train.grad_clip", self.grad_clip, 0, low_open=True)
        if isinstance(self.freeze, str):
            check_choice("freeze spec", self.freeze, PRESETS)
        elif not isinstance(self.freeze, list) or not self.freeze:
            raise UserError(
                f"train.freeze={self.freeze!r} is not allowed; give 'full', 'embeddings' or a "
                "non-empty list of parameter-name globs"
            )
        elif any(not isinstance(p, str) or not p.strip() for p in self.freeze):
            raise UserError(
                f"train.freeze={self.freeze!r} is not allowed; every pattern must be a non-empty glob"
            )
        check_int("train.eval_every", self.eval_every, 1)
        if self.eval_size is not None:
            check_int("train.eval_size", self.eval_size, 1)
        check_int("train.eval_batch", self.eval_batch, 1)
        if self.converge_loss is not None:
            check_number("train.converge_loss", self.converge_loss, 0)
        if self.converge_acc is not None:
            check_number("train.converge_acc", self.converge_acc, 0, 1)
        check_int("train.checkpoint_every", self.checkpoint_every, 0)
        if self.checkpoint_path is not None and not str(self.checkpoint_path).strip():
            raise UserError("train.checkpoint_path='' is not allowed; give a file path or null")
        if self.resume and self.checkpoint_path is None and not self.checkpoint_every:
            # (the train job fills in a path in the run folder when checkpoint_every is set)
            raise UserError(
                "train.resume=true resumes from train.checkpoint_path, which is not set; give "
                "train.checkpoint_path=FILE (or train.checkpoint_every=N for the run folder)"
            )


@dataclass
class TrainResult:
    status: Literal["converged", "finished", "diverged", "stopped"]
    steps: int
    history: list[dict[str, float]]
    final: dict[str, float]
    seconds: float
    converged_step: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- model construction ------------------------------------------------------------------------------------
def seeded_model(config: Any, seed: int, device: torch.device | str = "cpu") -> nn.Module:
    """`build_model(config)` with its initialisation drawn from `seed` only (the global RNG is left alone)."""

    with torch.random.fork_rng(devices=[]):  # belt and braces for models that touch the global RNG
        torch.manual_seed(int(seed))
        model = build_model(config, seed=int(seed))
    return model.to(resolve_device(device))


# -- freeze specs ------------------------------------------------------------------------------------------
def trainable_names(model: nn.Module, freeze: str | list[str]) -> list[str]:
    """Names of the parameters that train under `freeze`; UserError for a spec that is wrong for this model.

    A model's `fixed_parameters` (part of its definition, e.g. the two-head model's positional
    embeddings) never train, whatever the spec."""
    fixed = fixed_parameter_names(model)
    return select_trainable([n for n, _ in model.named_parameters()], freeze, fixed)


def select_trainable(
    names: list[str], freeze: str | list[str], fixed: set[str] | frozenset[str] = frozenset()
) -> list[str]:
    """The parameter `names` that train under `freeze`, never one in `fixed` (see `trainable_names`)."""
    every = names
    names = [n for n in names if n not in fixed]
    if isinstance(freeze, str):
        check_choice("freeze spec", freeze, PRESETS)
        if freeze == "full":
            chosen = names
        else:
            chosen = [
                n for n in names if any(fnmatch.fnmatchcase(n, p) for p in EMBEDDING_PATTERNS)
            ]
    else:
        if not freeze:
            raise UserError(
                "freeze pattern list is empty; give 'full', 'embeddings' or patterns that match parameters"
            )
        for pattern in freeze:
            if not any(fnmatch.fnmatchcase(n, pattern) for n in names):
                held = [n for n in every if n in fixed and fnmatch.fnmatchcase(n, pattern)]
                if held:
                    raise UserError(
                        f"freeze pattern {pattern!r} matches only {', '.join(held)}, which the model "
                        "keeps fixed (part of its definition); no freeze spec trains it"
                    )
                tops = sorted({n.split(".")[0] + ".*" for n in names})
                raise UserError(
                    f"freeze pattern {pattern!r} matches no parameter; parameter groups: {', '.join(tops)}"
                )
        chosen = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in freeze)]
    if not chosen:
        why = f" (fixed, never trained: {', '.join(sorted(fixed))})" if fixed else ""
        raise UserError(f"freeze spec {freeze!r} leaves nothing to train in this model{why}")
    return chosen


def apply_freeze(model: nn.Module, freeze: str | list[str]) -> list[nn.Parameter]:
    """Set requires_grad by the freeze spec; return the trainable parameters (in model order)."""
    keep = set(trainable_names(model, freeze))
    params = []
    for name, p in model.named_parameters():
        p.requires_grad_(name in keep)
        if name in keep:
            params.append(p)
    return params


# -- losses ------------------------------------------------------------------------------------------------
def compute_loss(
    kind: str, output: torch.Tensor, batch: Batch, reduction: str = "mean", groups: int = 1
) -> torch.Tensor:
    """The task loss of `output` on `batch`; reduction "mean" → scalar, "none" → per-example (B,).

    With `groups` = K the rows are K equal groups, one after the other (a stacked ensemble's members,
    flattened), and "mean" gives each group's loss (K,), each with the bits it has alone."""
    if kind == "mse":
        per = (
            output.reshape(output.shape[0], -1).float()
            - batch.targets.reshape(output.shape[0], -1).float()
        ) ** 2
        if batch.mask is not None and batch.mask.numel() == per.numel():
            # per-position targets: only the scored positions count (an all-True mask = plain mean)
            m = batch.mask.reshape(per.shape).to(per.dtype)
            per = (per * m).sum(1) / m.sum(1).clamp_min(1)
        else:
            per = per.mean(1)
    elif kind == "ce":
        logits = output.float()
        if logits.dim() == 2:  # (B, V) against a single target per row
            per = F.cross_entropy(logits, batch.targets.reshape(-1), reduction="none")
        else:
            # over contiguous (B·T, V) rows: the log-softmax over a strided class dim is ~3× slower
            flat = logits.reshape(-1, logits.shape[-1])
            ce = F.cross_entropy(flat, batch.targets.reshape(-1), reduction="none")
            ce = ce.view(batch.targets.shape)  # (B, T)
            if batch.mask is None:
                per = ce.mean(1)
            else:
                m = batch.mask.to(ce.dtype)
                per = (ce * m).sum(1) / m.sum(1).clamp_min(1)
            if reduction == "mean" and batch.mask is not None:
                # average over scored positions of the whole batch, not over rows
                m = batch.mask.to(ce.dtype)
                if groups > 1:
                    scored = (ce * m).view(groups, -1).sum(-1)
                    return scored / m.view(groups, -1).sum(-1).clamp_min(1)
                return (ce * m).sum() / m.sum().clamp_min(1)
    elif kind == "kl":
        logits = output.float()
        if logits.dim() == 3:
            logits = logits[:, -1]
        p = batch.targets.float()
        per = (torch.xlogy(p, p) - p * F.log_softmax(logits, -1)).sum(-1)
    else:
        check_choice("loss", kind, ["mse", "ce", "kl"])
        raise AssertionError
    if reduction != "mean":
        return per
    return per.view(groups, -1).mean(-1) if groups > 1 else per.mean()


@torch.no_grad()
def evaluate(
    model: nn.Module,
    task: Task,
    batch: Batch,
    device: torch.device | str = "cpu",
    chunk: int = 8192,
) -> dict[str, float]:
    """Loss and accuracy of `model` on `batch` (chunked for memory); returns {"loss", "acc"}."""
    device = resolve_device(device)
    was_training = model.training
    model.eval()
    outputs = []
    for start in range(0, len(batch), chunk):
        outputs.append(model(batch.slice(start, start + chunk).inputs.to(device)))
    model.train(was_training)
    out = torch.cat(outputs)
    b = batch.to(device)
    return {"loss": compute_loss(task.loss, out, b).item(), "acc": task.accuracy(out, b)}


def lr_factor(config: TrainConfig, step: int) -> float:
    """Multiplier of the base lr at `step` (0-based) under the schedule."""
    if config.schedule == "constant":
        return 1.0 if config.warmup_steps <= 0 else min(1.0, (step + 1) / config.warmup_steps)
    if step < config.warmup_steps:
        return (step + 1) / config.warmup_steps
    span = max(config.steps - config.warmup_steps, 1)
    progress = min((step - config.warmup_steps) / span, 1.0)
    return config.min_lr_ratio + (1 - config.min_lr_ratio) * 0.5 * (
        1 + math.cos(math.pi * progress)
    )


def make_optimizer(params: list[nn.Parameter], config: TrainConfig) -> torch.optim.Optimizer:
    """The optimiser `config` names over `params`: one fused kernel per step where torch has one (CPU
    and CUDA float parameters), which is what makes small models' steps cheap."""
    c = config
    fused = bool(params) and all(
        p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in params
    )
    if c.optimizer == "adamw":
        return torch.optim.AdamW(
            params,
            lr=c.lr,
            betas=(float(c.betas[0]), float(c.betas[1])),
            weight_decay=c.weight_decay,
            fused=fused or None,
        )
    return torch.optim.SGD(
        params, lr=c.lr, momentum=c.momentum, weight_decay=c.weight_decay, fused=fused or None
    )


def query_positions(
    model: nn.Module, task: Task, device: torch.device | str = "cpu"
) -> torch.Tensor | None:
    """(P,) long: the only output positions a training step needs, when `task` reads fewer than all
    of them (`Task.scored_positions`) and `model` can ask only those queries (a GPT without dropout,
    whose last block then does P rows of work instead of T); else None (the full forward)."""
    positions = task.scored_positions()
    config = getattr(model, "config", None)
    asks = getattr(config, "arch", None) == "gpt" and not getattr(config, "dropout", 0.0)
    if positions is None or not asks or len(positions) >= task.seq_len:
        return None
    return torch.tensor(sorted(set(positions)), dtype=torch.long, device=device)


# A stacked-ensemble driver (learnability.sweep.ensemble) sets `fit` on this thread to take over
# `Trainer.fit` calls: it trains several compatible trainers as one batched model.
FIT_REDIRECT = threading.local()


# -- the trainer -------------------------------------------------------------------------------------------
class Trainer:
    """Trains `model` on `task` under `config`; see the module docstring for the rules."""

    def __init__(
        self,
        model: nn.Module,
        task: Task,
        config: TrainConfig,
        device: torch.device | str = "cpu",
        metrics_log: Callable[[int, dict[str, float]], None] | None = None,
        progress: bool = False,
        eval_hook: Callable[[int, nn.Module], dict[str, Any]] | None = None,
        eval_at_start: bool = False,
    ) -> None:
        self.device = resolve_device(device)
        self.model = model.to(self.device)
        self.task = task
        self.config = c = config
        self.metrics_log = metrics_log
        self.progress = progress
        self.eval_hook = (
            eval_hook  # extra metrics at each evaluation (e.g. sharpness during training)
        )
        self.eval_at_start = eval_at_start  # a step-0 row before the first update
        c.validate()  # again: a config may have been edited since it was built
        self.params = apply_freeze(self.model, c.freeze)
        self.optimizer = make_optimizer(self.params, c)
        test = task.test_set()
        if c.eval_size is not None and len(test) > c.eval_size:
            test = test.slice(0, c.eval_size)
        self.test = test.to(self.device)
        fixed = task.train_set()
        self.fixed = None if fixed is None else fixed.to(self.device)
        self.at = query_positions(self.model, task, self.device)

    def outputs(self, batch: Batch) -> tuple[torch.Tensor, Batch]:
        """The model's training outputs on `batch` and the batch they are scored against: with query
        positions (`query_positions`), the outputs at those positions and the targets there."""
        if self.at is None:
            return self.model(batch.inputs), batch
        return self.model(batch.inputs, at=self.at), batch.at(self.at)

    # -- data ----------------------------------------------------------------------------------------------
    def _batch(self, generator: torch.Generator) -> Batch:
        if self.fixed is None:
            return self.task.sample(self.config.batch_size, generator).to(self.device)
        if len(self.fixed) <= self.config.batch_size:
            return self.fixed
        idx = torch.randint(0, len(self.fixed), (self.config.batch_size,), generator=generator).to(
            self.device
        )
        m = self.fixed.mask
        return Batch(self.fixed.inputs[idx], self.fixed.targets[idx], None if m is None else m[idx])

    # -- checkpoints ---------------------------------------------------------------------------------------
    def save_checkpoint(
        self, path: str | Path, step: int, generator: torch.Generator, state: dict[str, Any]
    ) -> None:

        # plain data, written atomically: a run killed mid-save keeps its previous checkpoint
        save_trainer_checkpoint(
            path, self.model, self.optimizer, step, generator, state, self.config
        )

    def _load_checkpoint(
        self, path: Path, generator: torch.Generator
    ) -> tuple[int, dict[str, Any]]:

        # weights_only: a checkpoint path can come from a shared sweep file, so it must not run code
        return load_trainer_checkpoint(path, self.model, self.optimizer, generator, self.config)

    # -- the loop ------------------------------------------------------------------------------------------
    def fit(self, data_seed: int = 0, init_seed: int | None = None) -> TrainResult:
        """Train; `data_seed` drives batch sampling (`init_seed` is recorded only: build the model with
        `seeded_model`). Returns a TrainResult; a non-finite loss ends the run with status "diverged"."""
        redirect = getattr(FIT_REDIRECT, "fit", None)
        if redirect is not None:
            return cast(TrainResult, redirect(self, data_seed, init_seed))
        run = self.start(data_seed)
        while run.active:
            self.step(run)
        return run.finish()

    def start(self, data_seed: int = 0) -> Run:
        """A fit in progress at its first step (or where its checkpoint left off, with `resume`)."""
        return Run(self, data_seed)

    def set_lr(self, factor: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = self.config.lr * factor

    def step(self, run: Run, batch: Batch | None = None) -> None:
        """One training step of `run` on this trainer's own model and optimiser (on `batch` when
        the caller has already drawn the step's batch)."""
        factor = run.factor()
        self.set_lr(factor)
        if batch is None:
            batch = run.batch()
        out, batch = self.outputs(batch)
        loss = compute_loss(self.task.loss, out, batch)
        value = loss.item()  # on CPU this costs nothing: there is no queue to drain
        if not run.accept(value):
            return
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.config.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(self.params, self.config.grad_clip)
        self.optimizer.step()
        run.advance(out, batch, value, factor)

    def _start_row(self) -> dict[str, Any]:
        """The untrained model's evaluation row (step 0): test loss and accuracy, the hook's metrics."""
        first = evaluate(self.model, self.task, self.test, self.device, self.config.eval_batch)
        row: dict[str, Any] = {"test_loss": first["loss"], "test_acc": first["acc"]}
        if self.eval_hook is not None and math.isfinite(first["loss"]):
            row.update(self.eval_hook(0, self.model))
        self.model.train()
        return row

    def _converged(self, metrics: dict[str, float]) -> bool:
        c = self.config
        if c.converge_loss is None and c.converge_acc is None:
            return False
        ok = True
        if c.converge_loss is not None:
            ok &= metrics["loss"] < c.converge_loss
        if c.converge_acc is not None:
            ok &= metrics["acc"] >= c.converge_acc
        return bool(ok)

    def _record(
        self, state: dict[str, Any], step: int, row: dict[str, float], bar: _Progress
    ) -> None:
        row = {"step": step, **row}
        state["history"].append(row)
        bar.show(row)
        if self.metrics_log is not None:
            self.metrics_log(step, {k: v for k, v in row.items() if k != "step"})


class Run:
    """One `Trainer.fit` in progress: data generator, step, history and status. `Trainer.step` (or a
    stacked ensemble, for several runs at once) computes each step; `accept` and `advance` do the
    bookkeeping around it (divergence, evaluation, hooks, convergence, checkpoints) and `finish` gives
    the TrainResult, so every way of computing the steps shares one set of rules."""

    def __init__(self, trainer: Trainer, data_seed: int) -> None:
        self.trainer = t = trainer
        self.config = c = trainer.config
        self.start_time = time.perf_counter()
        self.generator = torch.Generator().manual_seed(int(data_seed))
        self.state: dict[str, Any] = {
            "history": [],
            "loss_sum": 0.0,
            "loss_count": 0,
            "status": "finished",
        }
        self.step = 0
        self.ckpt = Path(c.checkpoint_path) if c.checkpoint_path else None
        if c.resume and self.ckpt is not None and self.ckpt.exists():
            self.step, self.state = t._load_checkpoint(self.ckpt, self.generator)
        self.status: str = self.state["status"]
        self.converged_step: int | None = self.state.get("converged_step")
        self.bar = _Progress(c.steps, enabled=t.progress)
        self.bar.advance(self.step)
        if t.eval_at_start and self.step == 0 and not self.state["history"]:
            t._record(self.state, 0, t._start_row(), self.bar)
        t.model.train()
        self.last_eval: dict[str, float] = self.state.get("last_eval", {})

    @property
    def active(self) -> bool:
        return self.step < self.config.steps and self.status == "finished"

    def factor(self) -> float:
        """The lr multiplier of the coming step."""
        return lr_factor(self.config, self.step)

    def batch(self) -> Batch:
        """The coming step's training batch (advances the data generator)."""
        return self.trainer._batch(self.generator)

    def accept(self, value: float) -> bool:
        """False (and the run ends "diverged", the step not taken) for a non-finite loss."""
        if math.isfinite(value):
            return True
        self.status = "diverged"
        self.step += 1
        self.trainer._record(self.state, self.step, {"loss": value}, self.bar)
        return False

    def advance(self, out: torch.Tensor, batch: Batch, value: float, factor: float) -> None:
        """After the update: count the step, evaluate when due, stop when converged, checkpoint."""
        t, c, state = self.trainer, self.config, self.state
        self.step += 1
        step = self.step
        state["loss_sum"] += value
        state["loss_count"] += 1
        self.bar.advance(1, loss=value)
        if step % c.eval_every == 0 or step == c.steps:
            train_acc = t.task.accuracy(out.detach(), batch)
            self.last_eval = last = evaluate(t.model, t.task, t.test, t.device, c.eval_batch)
            t.model.train()
            row = {
                "loss": state["loss_sum"] / max(state["loss_count"], 1),
                "acc": train_acc,
                "lr": c.lr * factor,
                "test_loss": last["loss"],
                "test_acc": last["acc"],
            }
            state["loss_sum"], state["loss_count"] = 0.0, 0
            if t.eval_hook is not None and math.isfinite(last["loss"]):
                row.update(t.eval_hook(step, t.model))
                t.model.train()
            stop = bool(row.pop("stop", False))
            t._record(state, step, row, self.bar)
            if not math.isfinite(last["loss"]):
                self.status = "diverged"
            elif t._converged(last):
                self.status, self.converged_step = "converged", step
            elif stop:
                self.status = "stopped"
            state["last_eval"] = last
        if (
            self.ckpt is not None
            and c.checkpoint_every
            and step % c.checkpoint_every == 0
            and self.status == "finished"
        ):
            t.save_checkpoint(self.ckpt, step, self.generator, {**state, "status": self.status})

    def finish(self) -> TrainResult:
        t, state, status = self.trainer, self.state, self.status
        self.bar.close()
        last_eval = self.last_eval
        if status == "diverged":  # an earlier evaluation does not describe the diverged model
            last_eval = {}
        elif not last_eval:
            last_eval = evaluate(t.model, t.task, t.test, t.device, self.config.eval_batch)
        state["status"], state["converged_step"] = status, self.converged_step
        if self.ckpt is not None and status != "diverged":
            t.save_checkpoint(self.ckpt, self.step, self.generator, state)
        final = {
            "test_loss": last_eval.get("loss", float("nan")),
            "test_acc": last_eval.get("acc", float("nan")),
        }
        if state["history"]:
            final["train_loss"] = state["history"][-1].get("loss", float("nan"))
        return TrainResult(
            cast(Any, status),
            self.step,
            state["history"],
            final,
            time.perf_counter() - self.start_time,
            self.converged_step,
        )


class _Progress:
    """A rich progress bar with loss and accuracy, only when asked for (interactive use)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.enabled = enabled
        self.pending = 0
        if not enabled:
            return

        self.bar = Progress(
            TextColumn("train"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeRemainingColumn(),
            transient=False,
        )
        self.bar.start()
        self.task = self.bar.add_task("train", total=total, info="")
        self.last_loss = float("nan")
        self.info = ""

    def advance(self, k: int, loss: float | None = None) -> None:
        if not self.enabled:
            return
        self.pending += k
        if loss is not None:
            self.last_loss = loss
        if self.pending >= 10 or loss is None:
            self.bar.update(
                self.task, advance=self.pending, info=f"loss {self.last_loss:.4g} {self.info}"
            )
            self.pending = 0

    def show(self, row: dict[str, float]) -> None:
        if self.enabled and "test_acc" in row:
            self.info = f"test loss {row['test_loss']:.4g} acc {row['test_acc']:.3f}"

    def close(self) -> None:
        if self.enabled:
            self.bar.update(
                self.task, advance=self.pending, info=f"loss {self.last_loss:.4g} {self.info}"
            )
            self.bar.stop()


__all__ = [
    "EMBEDDING_PATTERNS",
    "FIT_REDIRECT",
    "PRESETS",
    "Run",
    "TrainConfig",
    "TrainResult",
    "Trainer",
    "apply_freeze",
    "compute_loss",
    "evaluate",
    "lr_factor",
    "make_optimizer",
    "seeded_model",
    "select_trainable",
    "trainable_names",
]
