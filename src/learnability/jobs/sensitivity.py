"""Jobs of the `sensitivity` study (Hahn & Rofin 2024; docs/studies/sensitivity.md).

Every job trains through the shared `Trainer` and measures with `learnability.measure`; none has a
training loop of its own. A job's `data_seed` defaults to its `seed`: the published code draws the
initial weights and the data stream from one `random_state`, so a seed is one independent unit.

- `sensitivity.train` (`MeasuredTrainConfig`): a Boolean task with a fixed budget of `budget` steps.
  Measured at initialisation (`init`: norm, blowup, C), at the first evaluation whose test MSE <
  `fit_loss` (`at_fit`, plus `fit_step`), `after_fit` steps later (`after_fit_state`: the same time since
  the fit in every run) and at the budget (top level). A run that has not reached fit + `after_fit` by
  the budget trains on until it does, at most to `train.steps`; light measurements (test loss, norm,
  blowup) at every evaluation form `trajectory`. An early-stopped run ("until fit") is bit-identical
  to this run up to `fit_step`, so `at_fit` is what it would measure.
- `sensitivity.dynamics` (`DynamicsConfig`): loss (`probe_loss`, on the 0/1 target scale), Gaussian and
  sphere sharpness (±1 units), blowup and norm on one fixed batch at step 0 and every `every` steps,
  through the Trainer's evaluation hook; no early stop.
- `sensitivity.generalisation` (`GeneralisationConfig`): a random function learned from `train_size`
  strings (function, strings and initialisation all from the seed); the learned function against random
  completions of the same data, then a fresh model refitted to the learned function's table and to
  `refits` completions, each refit's sharpness measured.
- `sensitivity.length` (`LengthConfig`): a Boolean task trained on lengths min_len..max_len with a
  length-invariant read-out, accuracy per length bucket (`learnability.measure.length`).
- `sensitivity.scratchpad` (`ScratchpadConfig`): PARITY at n with the autoregressive prefix-parity
  scratchpad (decoded on its own outputs) or plain, at the same budget; sharpness, blowup and norm of
  the trained model (the published Figure 11).

Scales: sharpness and sensitivity are reported in ±1 output units (×4 for models trained on 0/1 targets).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from learnability.checkpoints import plain, save
from learnability.config import to_dict
from learnability.device import resolve_device
from learnability.errors import UserError
from learnability.jobs.train import target_summary
from learnability.jsonsafe import json_safe
from learnability.measure import layernorm_blowup, lipschitz_constant, model_outputs, parameter_norm
from learnability.measure.bounds import (
    lipschitz_scaled,
    output_scale,
    real_average_sensitivity,
    reference_radius,
    sampled_real_sensitivity,
    sharpness_profile,
)
from learnability.measure.length import bucket_accuracy, check_length_setup, training_strings
from learnability.measure.norms import positional_names
from learnability.measure.scratchpad import scratchpad_accuracy
from learnability.measure.sharpness import sharpness
from learnability.models import BooleanTransformerConfig
from learnability.sweep.jobs import RunContext, register_job
from learnability.tasks import Task, build_task
from learnability.tasks.base import Batch
from learnability.tasks.boolean import BooleanTask, BooleanTaskConfig, codes_of
from learnability.tasks.scratchpad import ScratchpadParityConfig
from learnability.train import TrainConfig, Trainer, compute_loss, evaluate, seeded_model

EXACT_LIMIT = 16  # the model's own sensitivity is exact on all 2^n strings up to this n


# -- measurements shared by the jobs ------------------------------------------------------------------------
# output_scale and reference_radius live in measure.bounds (the named bound measures use them too)


def gaussian_sharpness(model: nn.Module, task: Task, batch: Batch, eps: float, directions: int,
                       seed: int, se: bool = False) -> Any:  # fmt: skip
    """The published sharpness: mean loss increase under N(0, ε²) per coordinate, in ±1 units; with `se`,
    (mean, its standard error over the directions): the measurement noise a trend is read against."""
    est = sharpness(model, batch, lambda out, b: compute_loss(task.loss, out, b), rho=eps,
                    kind="gaussian", directions=directions,
                    generator=torch.Generator().manual_seed(seed + 7919))  # fmt: skip
    mean, half = (
        est.mean * output_scale(task),
        (est.ci_high - est.ci_low) / 2 / 1.96 * output_scale(task),
    )
    return (mean, half) if se else mean


def sharpness_pair(
    model: nn.Module, task: Task, batch: Batch, eps: float, directions: int, seed: int
) -> dict[str, float]:
    """Gaussian (published) and sphere sharpness at the same radius ρ = ε√P (output change), ±1 units."""
    rho = reference_radius(model, eps)
    sphere = sharpness(model, batch, rho=rho, kind="sphere", directions=directions,
                       generator=torch.Generator().manual_seed(seed + 104_729))  # fmt: skip
    return {"sharpness_gauss": gaussian_sharpness(model, task, batch, eps, directions, seed),
            "sharpness_sphere": sphere.mean * output_scale(task), "rho0": rho}  # fmt: skip


def blowups(model: nn.Module, inputs: torch.Tensor, device: torch.device) -> dict[str, float]:
    paper = layernorm_blowup(model, inputs, "paper", device)
    published = layernorm_blowup(model, inputs, "published", device)
    return {"blowup_paper": paper.mean, "blowup_paper_sq": float(paper.per_input.double().pow(2).mean()),
            "blowup_published": published.mean}  # fmt: skip


def norms(model: nn.Module) -> dict[str, float]:
    """‖θ‖ without positional parameters, and of the weight matrices alone (no LayerNorm gains, biases)."""
    skip = positional_names(model)
    matrices = sum(float(p.detach().double().pow(2).sum()) for n, p in model.named_parameters()
                   if p.dim() >= 2 and n not in skip)  # fmt: skip
    return {"param_norm": parameter_norm(model), "param_norm_matrices": matrices**0.5}


def init_measures(model: nn.Module, batch: Batch, device: torch.device) -> dict[str, float]:
    """What the trained model is compared with: its own initialisation."""
    return {**norms(model), **blowups(model, batch.inputs, device),
            "log10_C": lipschitz_scaled(model)["log10_C"],
            "log10_C_unscaled": lipschitz_constant(model)["log10_C"]}  # fmt: skip


# -- sensitivity.train -----------------------------------------------------------------------------------
@dataclass
class MeasuredTrainConfig:
    """A Boolean task with a fixed budget, measured at init, at fit, `after_fit` steps later and at the
    budget (module doc). `train.steps` is the most a run may train to reach fit + `after_fit`."""

    task: BooleanTaskConfig = field(default_factory=BooleanTaskConfig)
    model: BooleanTransformerConfig = field(default_factory=BooleanTransformerConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    budget: int | None = None  # the fixed budget (None: train.steps)
    after_fit: int = 0  # steps after the fit of the `after_fit_state` measurement
    fit_loss: float = 1e-3  # the published criterion: test MSE (0/1 scale) below this = fitted
    measure_batch: int = 1024  # test strings the measurements use
    sharpness_eps: float = (
        0.02  # σ of the published Gaussian perturbation; sphere radii scale with ε√P
    )
    directions: int = 16  # Gaussian sharpness directions
    profile_directions: int | None = None  # directions of the sphere profile (None: `directions`)
    radii: list[float] = field(default_factory=lambda: [0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0])
    seed: int = 0  # initialisation
    data_seed: int | None = None  # batches and test split (None: the seed)
    save_model: bool = True


def measure_trained(model: nn.Module, task: BooleanTask, config: MeasuredTrainConfig,
                    device: torch.device) -> dict[str, Any]:  # fmt: skip
    """Every measurement of the scaling and trade-off claims, on the model as it is now."""
    test = task.test_set()
    batch = test.slice(0, config.measure_batch).to(device)
    scores = evaluate(model, task, test, device)
    gauss, se = gaussian_sharpness(
        model, task, batch, config.sharpness_eps, config.directions, config.seed, se=True
    )
    out: dict[str, Any] = {"test_loss": scores["loss"], "test_acc": scores["acc"], **init_measures(model, batch, device),
                           "sharpness_gauss": gauss, "sharpness_gauss_se": se}  # fmt: skip
    rho0 = reference_radius(model, config.sharpness_eps)
    radii = [m * rho0 for m in config.radii]
    profile = sharpness_profile(model, batch, radii, config.profile_directions or config.directions,
                                config.seed + 31, output_scale(task))  # fmt: skip
    out.update(rho0=rho0, radii=radii, sharpness_profile=[e.mean for e in profile])
    # the sphere sharpness at ε√P is the profile's point there (the same directions), else its own draw
    out["sharpness_sphere"] = (out["sharpness_profile"][config.radii.index(1.0)] if 1.0 in config.radii
                               else sharpness_pair(model, task, batch, config.sharpness_eps, config.directions,
                                                   config.seed)["sharpness_sphere"])  # fmt: skip
    n = task.max_len
    scale = 1.0 if task.config.targets == "01" else 0.25
    if n <= EXACT_LIMIT:
        table = model_outputs(model, n, device).cpu()
        out["model_as_real"] = real_average_sensitivity(table, n, scale)
        thresholded = (table > task.threshold).double()
        out["model_as"] = real_average_sensitivity(thresholded, n)
    else:
        g = torch.Generator().manual_seed(config.seed + 11)
        out["model_as_real"] = scale * sampled_real_sensitivity(model, n, 1024, g, device)
    return out


@register_job("sensitivity.train", MeasuredTrainConfig)
def train_job(config: MeasuredTrainConfig, ctx: RunContext) -> dict[str, Any]:
    device = resolve_device(ctx.device)
    budget = config.budget or config.train.steps
    if not 1 <= budget <= config.train.steps or config.after_fit < 0:
        raise UserError(f"budget={budget}, after_fit={config.after_fit} are not allowed; need 1 ≤ budget ≤ "
                        f"train.steps={config.train.steps} and after_fit ≥ 0")  # fmt: skip
    data_seed = config.seed if config.data_seed is None else config.data_seed
    task = build_task(config.task, data_seed)
    if not isinstance(task, BooleanTask) or task.output != "scalar":
        raise UserError("sensitivity.train needs a scalar Boolean task (no scratchpad)")
    model = seeded_model(config.model, config.seed, device)
    probe = task.test_set().slice(0, config.measure_batch).to(device)
    init = init_measures(model, probe, device)
    snap: dict[str, Any] = {}

    def hook(step: int, m: nn.Module) -> dict[str, Any]:
        loss = evaluate(m, task, task.test_set(), device)["loss"]
        if "fit_step" not in snap and loss < config.fit_loss:
            snap.update(fit_step=step, at_fit=measure_trained(m, task, config, device))
        fit = snap.get("fit_step")
        if fit is not None and "after_fit_state" not in snap and step >= fit + config.after_fit:
            snap["after_fit_state"] = (
                snap["at_fit"] if step == fit else measure_trained(m, task, config, device)
            )
        if step >= budget and "at_budget" not in snap:
            snap["at_budget"] = measure_trained(m, task, config, device)
        light = {
            "param_norm": parameter_norm(m),
            "blowup_paper": layernorm_blowup(m, probe.inputs, "paper", device).mean,
        }
        return {**light, "stop": "at_budget" in snap and "after_fit_state" in snap}  # fmt: skip

    result = Trainer(model, task, config.train, device, metrics_log=ctx.log,
                     eval_hook=hook).fit(data_seed, config.seed)  # fmt: skip
    trajectory = [{"step": 0, "param_norm": init["param_norm"], "blowup_paper": init["blowup_paper"]}] + [
        {k: row[k] for k in ("step", "test_loss", "param_norm", "blowup_paper") if k in row}
        for row in result.history if "param_norm" in row]  # fmt: skip
    metrics: dict[str, Any] = {"status": result.status, "steps": result.steps, "budget": budget,
                               "seconds": result.seconds, "init": init, "fit_step": snap.get("fit_step"),
                               "at_fit": snap.get("at_fit"), "after_fit": config.after_fit,
                               "after_fit_state": snap.get("after_fit_state"), "trajectory": trajectory}  # fmt: skip
    metrics.update(target_summary(task))
    if (
        result.status != "diverged"
    ):  # the state at the budget (measured now if training ended before it)
        metrics.update(snap.get("at_budget") or measure_trained(model, task, config, device))
    if config.save_model:
        _save(Path(ctx.run_dir) / "model.pt", model, config)
    return json_safe(metrics, "string")


def _save(path: Path, model: nn.Module, config: Any) -> None:
    # plain data, written atomically: read back with weights_only=True like every checkpoint
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    payload = {"kind": "learnability.sensitivity.model", "job_config": plain(to_dict(config)),
               "state_dict": state}  # fmt: skip
    save(payload, path)


# -- sensitivity.dynamics --------------------------------------------------------------------------------
@dataclass
class DynamicsConfig:
    """PARITY (or any Boolean function) trained without early stop, measured on one fixed batch."""

    function: str = "parity"
    n: int = 6
    model: BooleanTransformerConfig = field(default_factory=BooleanTransformerConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    every: int = 50  # measure every this many steps (and at step 0)
    probe: int = 256  # size of the fixed measurement batch
    directions: int = 8
    sharpness_eps: float = 0.02
    seed: int = 0
    data_seed: int | None = None  # None: the seed


@register_job("sensitivity.dynamics", DynamicsConfig)
def dynamics_job(config: DynamicsConfig, ctx: RunContext) -> dict[str, Any]:
    if config.every < 1 or config.probe < 1 or config.directions < 1:
        raise UserError(
            f"dynamics every={config.every}, probe={config.probe}, directions={config.directions} "
            "are not allowed; each must be ≥ 1"
        )
    device = resolve_device(ctx.device)
    data_seed = config.seed if config.data_seed is None else config.data_seed
    task = build_task(BooleanTaskConfig(function=config.function, n=config.n), data_seed)
    probe = task.sample(config.probe, torch.Generator().manual_seed(10_007 + data_seed))
    probe = probe.to(device)
    model = seeded_model(config.model, config.seed, device)

    def measure(step: int, m: nn.Module) -> dict[str, Any]:
        was = m.training
        m.eval()
        with torch.no_grad():
            loss = float(compute_loss(task.loss, m(probe.inputs), probe))
        # the loss on the task's own (0/1) scale, where the paper aligns runs at < 0.01
        row = {"probe_loss": loss,
               **sharpness_pair(m, task, probe, config.sharpness_eps, config.directions, config.seed + step),
               **blowups(m, probe.inputs, device), "param_norm": parameter_norm(m)}  # fmt: skip
        m.train(was)
        return row

    first = {"step": 0, **measure(0, model)}
    train = replace(config.train, eval_every=config.every, converge_loss=None, converge_acc=None)
    result = Trainer(model, task, train, device, metrics_log=ctx.log,
                     eval_hook=measure).fit(data_seed, config.seed)  # fmt: skip
    trajectory = [first] + [row for row in result.history if "probe_loss" in row]
    return json_safe({"status": result.status, "steps": result.steps,
                    "test_loss": result.final.get("test_loss"), "test_acc": result.final.get("test_acc"),
                    "trajectory": trajectory}, "string")  # fmt: skip


# -- sensitivity.generalisation ----------------------------------------------------------------------------
@dataclass
class GeneralisationConfig:
    """A random function on n bits learned from `train_size` strings, against random completions."""

    n: int = 7
    train_size: int = 32
    function_seed: int | None = None  # which random function (None: the seed)
    model: BooleanTransformerConfig = field(default_factory=BooleanTransformerConfig)
    train: TrainConfig = field(default_factory=TrainConfig)  # the partial-data run
    refit: TrainConfig = field(default_factory=TrainConfig)  # every refit on a full truth table
    completions: int = 200  # random completions whose sensitivity is compared
    refits: int = 2  # random completions refitted (plus the learned function)
    directions: int = 16
    sharpness_eps: float = 0.02
    seed: int = 0  # initialisation (and, by default, the function and the training strings)
    data_seed: int | None = None  # which training strings (None: the seed)


def completion_tables(
    n: int, codes: np.ndarray, labels: np.ndarray, count: int, seed: int
) -> np.ndarray:
    """(count, 2^n) uint8 tables that agree with `labels` on `codes` and are fair coins elsewhere."""
    rng = np.random.default_rng(seed)
    tables = rng.integers(0, 2, size=(count, 2**n), dtype=np.uint8)
    tables[:, codes] = labels[None, :]
    return tables


def table_sensitivity(tables: np.ndarray, n: int) -> np.ndarray:
    """Average sensitivity of each row of (m, 2^n) 0/1 truth tables: (m,) float."""
    t = np.asarray(tables, dtype=np.int8).reshape(len(tables), -1)
    total = np.zeros(len(t))
    for i in range(n):
        v = t.reshape(len(t), -1, 2, 2**i)
        total += (v[:, :, 0] != v[:, :, 1]).mean(axis=(1, 2))
    return total


@register_job("sensitivity.generalisation", GeneralisationConfig)
def generalisation_job(config: GeneralisationConfig, ctx: RunContext) -> dict[str, Any]:
    n = config.n
    device = resolve_device(ctx.device)
    if not 1 <= config.train_size < 2**n:
        raise UserError(
            f"train_size={config.train_size} is not allowed; need 1..{2**n - 1} for n={n}"
        )
    if n > 16:
        raise UserError(f"n={n} is not allowed for the generalisation job; refits need n ≤ 16")
    fseed = config.seed if config.function_seed is None else config.function_seed
    data_seed = config.seed if config.data_seed is None else config.data_seed
    task = build_task(BooleanTaskConfig(function=f"random:seed={fseed}", n=n, mode="fixed",
                                        train_size=config.train_size), data_seed)  # fmt: skip
    assert isinstance(task, BooleanTask)
    model = seeded_model(config.model, config.seed, device)
    fit = Trainer(model, task, config.train, device).fit(data_seed, config.seed)
    learned = (model_outputs(model, n, device).cpu() > task.threshold).numpy().astype(np.uint8)
    train = task.train_set()
    assert train is not None
    codes = codes_of(train.inputs).numpy()
    labels = (train.targets.numpy() > 0.5).astype(np.uint8)
    comps = completion_tables(n, codes, labels, config.completions,
                              1_000_003 * fseed + 7 * config.seed + config.train_size)  # fmt: skip
    comp_as = table_sensitivity(comps, n)
    learned_as = float(table_sensitivity(learned[None], n)[0])

    def refit(table: np.ndarray, tag: str) -> dict[str, Any]:
        path = Path(ctx.run_dir) / f"refit_{tag}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, table.astype(np.uint8))
        full = build_task(BooleanTaskConfig(function=str(path), n=n, mode="fixed", train_size=2**n),
                          data_seed)  # fmt: skip
        m = seeded_model(config.model, config.seed, device)
        r = Trainer(m, full, config.refit, device).fit(data_seed, config.seed)
        batch = full.test_set().to(device)
        return {**sharpness_pair(m, full, batch, config.sharpness_eps, config.directions, config.seed),
                "loss": r.final.get("test_loss"), "acc": r.final.get("test_acc"),
                "as": float(table_sensitivity(table[None], n)[0])}  # fmt: skip

    refits = [refit(comps[k], f"completion{k}") for k in range(min(config.refits, len(comps)))]
    return json_safe({
        "status": fit.status, "train_acc": float((learned[codes] == labels).mean()),
        "test_acc": fit.final.get("test_acc"), "learned_as": learned_as,
        "completion_as": comp_as.tolist(), "completion_as_mean": float(comp_as.mean()),
        "learned_as_quantile": float((comp_as <= learned_as).mean()),
        "refit_learned": refit(learned, "learned"), "refit_completions": refits,
    }, "string")  # fmt: skip


# -- sensitivity.length -------------------------------------------------------------------------------------
@dataclass
class LengthConfig:
    """Train on lengths task.min_len..task.max_len; accuracy per bucket of task.length_buckets."""

    task: BooleanTaskConfig = field(default_factory=BooleanTaskConfig)
    model: BooleanTransformerConfig = field(default_factory=BooleanTransformerConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    per_length: int = 512  # test strings per length (all of them when there are fewer)
    seed: int = 0
    data_seed: int | None = None  # None: the seed


@register_job("sensitivity.length", LengthConfig)
def length_job(config: LengthConfig, ctx: RunContext) -> dict[str, Any]:
    check_length_setup(config.model)
    if config.task.min_len is None or config.task.max_len is None or not config.task.length_buckets:
        raise UserError(
            "sensitivity.length needs task.min_len, task.max_len and task.length_buckets"
        )
    device = resolve_device(ctx.device)
    data_seed = config.seed if config.data_seed is None else config.data_seed
    task = build_task(config.task, data_seed)
    model = seeded_model(config.model, config.seed, device)
    result = Trainer(model, task, config.train, device, metrics_log=ctx.log).fit(
        data_seed, config.seed
    )
    scores = bucket_accuracy(model, task, config.task.length_buckets, config.per_length,
                             seed=1_000 + data_seed, device=device)  # fmt: skip
    strings = training_strings(config.task.min_len, config.task.max_len,
                               config.train.steps * config.train.batch_size)  # fmt: skip
    return json_safe({"status": result.status, "steps": result.steps, "length_acc": scores["buckets"],
                    "length_acc_by_length": scores["lengths"], "training_space": strings.space,
                    "training_distinct": strings.expected_distinct}, "string")  # fmt: skip


# -- sensitivity.scratchpad ---------------------------------------------------------------------------------
@dataclass
class ScratchpadConfig:
    """PARITY at n: `autoregressive` (the prefix-parity scratchpad, decoded on its own outputs) or
    `plain` (one label per string), with the same model size and budget."""

    n: int = 8
    mode: Literal["autoregressive", "plain"] = "autoregressive"
    model: BooleanTransformerConfig = field(default_factory=BooleanTransformerConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    test_size: int = 1024
    measure_batch: int = 256  # test sequences of the sharpness / blowup measurements
    directions: int = 32  # Gaussian sharpness directions
    sharpness_eps: float = 0.02
    seed: int = 0
    data_seed: int | None = None  # None: the seed


@register_job("sensitivity.scratchpad", ScratchpadConfig)
def scratchpad_job(config: ScratchpadConfig, ctx: RunContext) -> dict[str, Any]:
    device = resolve_device(ctx.device)
    data_seed = config.seed if config.data_seed is None else config.data_seed
    model_config = config.model
    if config.mode == "autoregressive":
        task: Task = build_task(
            ScratchpadParityConfig(n=config.n, test_size=config.test_size), data_seed
        )
        model_config = replace(model_config, readout="all", causal=True, vocab_size=3,
                               max_len=max(model_config.max_len, 2 * config.n))  # fmt: skip
    else:
        task = build_task(BooleanTaskConfig(function="parity", n=config.n, test_size=config.test_size),
                          data_seed)  # fmt: skip
    model = seeded_model(model_config, config.seed, device)
    init_norm = parameter_norm(model)
    result = Trainer(model, task, config.train, device, metrics_log=ctx.log).fit(
        data_seed, config.seed
    )
    batch = task.test_set().slice(0, config.measure_batch).to(device)
    # the published Figure 11: sharpness (teacher-forced loss on every scored position), blowup, norm
    out: dict[str, Any] = {"status": result.status, "steps": result.steps, "test_acc": result.final.get("test_acc"),
                           "init_param_norm": init_norm, **norms(model), **blowups(model, batch.inputs, device),
                           "sharpness_gauss": gaussian_sharpness(model, task, batch, config.sharpness_eps,
                                                                 config.directions, config.seed)}  # fmt: skip
    if config.mode == "autoregressive":
        bits = task.test_set().inputs[:, : config.n]
        out.update(scratchpad_accuracy(model, bits, device))
        with torch.no_grad():
            model.eval()
            test = task.test_set().to(device)
            last = model(test.inputs)[:, -1] > 0.5  # teacher forced: given the true y_{n−1}
            out["teacher_forced_final_acc"] = float(
                (last == (test.targets[:, -1] > 0.5)).float().mean()
            )
    else:
        out["final_bit_acc"] = out["test_acc"]
    return json_safe(out, "string")


__all__ = [
    "DynamicsConfig", "GeneralisationConfig", "LengthConfig", "MeasuredTrainConfig", "ScratchpadConfig",
    "completion_tables", "gaussian_sharpness", "measure_trained", "norms", "table_sensitivity",
]  # fmt: skip
