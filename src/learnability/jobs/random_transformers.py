"""The job of study `random` (Zhong & Andreas 2024): train one model on one task, then measure it.

`random.run` (`RandomRunConfig`) builds the task and the model (its vocabulary and context set from the task),
trains it with the shared `learnability.train.Trainer` (the freeze spec in `train.freeze` makes it a random
transformer — "embeddings" — a fully trained one — "full" — or an ablation), and returns:

- always: status, steps, test_acc / test_loss (the task's test set), train_loss, n_trainable, n_params,
  a short history of test accuracy; streamed tasks also `fresh_acc` (accuracy on `fresh_size` fresh draws of
  the training distribution), `rejection_rate` and `test_distinct` (see `StreamedTask`);
- per task, the diagnostics and chance lines of `learnability.measure.algorithmic` on the test set: needle
  accuracy by number of pairs m with the copy baseline E[1/m]; decimal published / full scoring, per-digit
  accuracy, exact match; the majority-class rate of brackets; 1/p for modular addition; memorisation:
  hits, chance hits (table size / n_values), bits stored with and without the chance correction and per
  trainable parameter, and the most a perfect model could store per trainable parameter (`cap_bits_per_param`);
  language: the unigram cross-entropy of the validation text, cross-entropy on training windows, tokens seen
  and epochs; circuit: the KL of the best input-independent guess;
- probes (`probes`): "subspace" (`measure.subspace`: top-k PC vs neuron variance fractions per hidden state on
  `probe_rows` rows — every pair for modular addition, fresh training-distribution draws for streamed tasks —
  for the trained model, the same model at initialisation and the isotropic null of the same shape),
  "attention" (needle: attention maps of one test sequence), "embedding_pcs" (token embeddings on their top
  two PCs), "samples" (language: greedy continuations).

The init seed is `seed`; the data seed is `data_seed`, or `seed` when None (so the random and the fully trained
model of one seed see the same batches, a matched pair). The device comes from the runner.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from learnability.errors import check_choice
from learnability.measure import algorithmic as diag
from learnability.measure.probes import attention_maps
from learnability.measure.subspace import scored_hidden, subspace_probe, top_pcs
from learnability.models import GPTConfig, LSTMConfig, build_model
from learnability.sweep.jobs import RunContext, register_job
from learnability.tasks import Task, build_task
from learnability.tasks.algorithmic import (
    DecimalAddConfig,
    DecimalAddTask,
    MemoriseConfig,
    ModAddConfig,
    NeedleConfig,
    ParensConfig,
    StreamedTask,
)
from learnability.tasks.base import Batch
from learnability.tasks.circuit import CircuitConfig
from learnability.tasks.language import LanguageConfig, greedy_sample
from learnability.train import TrainConfig, Trainer, evaluate

PROBES = ("subspace", "attention", "embedding_pcs", "samples")
PROMPTS = ("And God said", "In the beginning", "The LORD is my")

TaskConfig = (
    ModAddConfig
    | NeedleConfig
    | DecimalAddConfig
    | ParensConfig
    | MemoriseConfig
    | LanguageConfig
    | CircuitConfig
)


@dataclass
class RandomRunConfig:
    task: TaskConfig = field(default_factory=ModAddConfig)
    model: GPTConfig | LSTMConfig = field(default_factory=GPTConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    probes: list[str] = field(default_factory=list)
    subspace_k: list[int] = field(default_factory=lambda: [10])
    probe_rows: int = 1024  # rows of hidden states the subspace probe uses
    fresh_size: int = (
        2000  # fresh training-distribution draws scored after training (streamed tasks)
    )
    seed: int = 0  # initialisation
    data_seed: int | None = None  # data splits and batches; None = `seed`


def task_shape(task: Any) -> tuple[int, int]:
    """(vocab size, input length) of a task config without building it (for cost estimates)."""
    name = task.name
    if name == "mod_add":
        return task.p, 2
    if name == "memorise":
        return max(task.n_keys * (2 if task.offset_y else 1), task.n_values), 2
    if name == "needle":
        return 256, 2 * task.max_pairs + 2
    if name == "decimal_add":
        return 31, 3 * task.digits + 3
    if name == "parens":
        return 4, 2 * task.max_pairs + 2
    return task.vocab_size, task.seq_len  # language, circuit


# -- cost ---------------------------------------------------------------------------------------------------
# Measured on one NVIDIA H200 (2026-11-30, this project's GPT and AdamW in fp32, no TF32): a step costs
# ≈ 5 ms of per-step overhead (launches, optimiser) plus its FLOPs at ≈ 45 TFLOP/s; embedding-only steps
# skip the weight gradients of the frozen layers (≈ 4 instead of 6 FLOPs per parameter and token). In bf16
# autocast the large steps ran 5–8× faster (≈ 300 TFLOP/s), but the code does not use it.
STEP_OVERHEAD_S = 0.005
FP32_FLOPS = 45e12


def run_seconds(
    width: int, layers: int, vocab: int, seq: int, batch: int, steps: int, full: bool
) -> float:
    params = 12 * layers * width * width + 2 * vocab * width + seq * width
    flops = (6.0 if full else 4.0) * params * seq * batch
    return steps * (STEP_OVERHEAD_S + flops / FP32_FLOPS)


# The memorisation step (batch 32,768 over a 1,024-token vocabulary) measured 2.8× the model's estimate
# (26.6 / 29.7 ms embedding-only / full vs ≈ 10): its embedding gradients scatter into few rows.
MEMORISE_FACTOR = 2.8


def gpu_hours(run_specs: list[Any]) -> float:
    """GPU-hours of a list of `RunSpec`s of `random.run` under the measured fp32 throughput model (the
    paper scale's cost estimate)."""
    total = 0.0
    for spec in run_specs:
        c = spec.config
        vocab, seq = task_shape(c.task)
        factor = MEMORISE_FACTOR if c.task.name == "memorise" else 1.0
        total += factor * run_seconds(
            c.model.d_model,
            getattr(c.model, "n_layers", 1),
            vocab,
            seq,
            c.train.batch_size,
            c.train.steps,
            c.train.freeze != "embeddings",
        )
    return total / 3600


def fit_model_to_task(model: GPTConfig | LSTMConfig, task: Any) -> GPTConfig | LSTMConfig:
    """The model config with its vocabulary (and, for the GPT, its context) set from the task."""
    if isinstance(model, GPTConfig):
        return dataclasses.replace(model, vocab_size=task.vocab_size, max_len=task.seq_len)
    return dataclasses.replace(model, vocab_size=task.vocab_size, output="tokens")


@torch.no_grad()
def predictions(
    model: nn.Module, batch: Batch, device: torch.device, chunk: int = 4096
) -> torch.Tensor:
    """Teacher-forced argmax predictions (B, T) on the CPU."""
    was = model.training
    model.eval()
    out = [
        model(batch.inputs[i : i + chunk].to(device)).argmax(-1).cpu()
        for i in range(0, len(batch), chunk)
    ]
    model.train(was)
    return torch.cat(out)


def task_diagnostics(
    model: nn.Module, task: Task, config: RandomRunConfig, device: torch.device
) -> dict[str, Any]:
    """The task's diagnostics and chance lines on its test set (and fresh draws, for streamed tasks)."""
    name = config.task.name
    test = task.test_set()
    out: dict[str, Any] = {}
    fresh: Batch | None = None
    if (
        name == "mod_add"
    ):  # a fixed split: its "training distribution" is every pair, train and test
        fresh = task.make_batch(torch.arange(task.p**2))  # type: ignore[attr-defined]
        out["fresh_acc"] = task.accuracy(
            _onehot(predictions(model, fresh, device), task.vocab_size), fresh
        )
    if isinstance(task, StreamedTask):
        fresh = task.fresh_set(config.fresh_size, seed=_data_seed(config) + 7)
        fresh_pred = predictions(model, fresh, device)
        out["fresh_acc"] = task.accuracy(_onehot(fresh_pred, task.vocab_size), fresh)
        out["rejection_rate"] = task.rejection_rate
        out["test_distinct"] = task.test_distinct
        out["majority_rate"] = diag.majority_rate(test)
        out["fresh_majority_rate"] = diag.majority_rate(fresh)
    if name in ("needle", "decimal_add", "parens"):
        pred = predictions(model, test, device)
        assert fresh is not None  # streamed tasks drew it above
        if name == "needle":
            out.update(diag.needle_by_m(pred, test))
            out["fresh_copy_baseline"] = diag.needle_by_m(fresh_pred, fresh)["copy_baseline"]
        if name == "decimal_add":
            out.update(diag.decimal_scores(pred, test, config.task.digits))  # type: ignore[union-attr]
            fresh_scores = diag.decimal_scores(fresh_pred, fresh, config.task.digits)  # type: ignore[union-attr]
            out["fresh_acc_published"], out["fresh_acc_full"] = (
                fresh_scores["acc_published"],
                fresh_scores["acc_full"],
            )
    if name == "mod_add":
        out["chance"] = 1.0 / task.vocab_size
    out.update(blind_lines(task, config, fresh))
    return out


BLIND_ROWS = 8192  # fresh draws the input-blind predictor is fitted on (streamed tasks)


def blind_lines(task: Any, config: RandomRunConfig, fresh: Batch | None) -> dict[str, float]:
    """The chance lines: the best input-blind predictor (`measure.algorithmic.blind_table`), fitted on every
    pair (modular addition) or on fresh draws, scored on the test rows and on the fresh rows under the task's
    scoring — for decimal addition also under the published and the full scoring."""
    if isinstance(task, StreamedTask):
        fit = task.fresh_set(BLIND_ROWS, seed=_data_seed(config) + 19)
    elif config.task.name == "mod_add":
        fit = task.make_batch(torch.arange(task.p**2))
    else:
        return {}
    masks: dict[str, Any] = {"acc": lambda b: b.mask}
    if config.task.name == "decimal_add":
        masks["published"] = lambda b: DecimalAddTask.published_mask(diag.full_rows(b))
        masks["full"] = lambda b: b.targets >= DecimalAddTask.ANSWER0
    out = {}
    for key, mask in masks.items():
        table = diag.blind_table(fit, task.vocab_size, mask(fit))
        for prefix, rows in (("", task.test_set()), ("fresh_", fresh)):
            if rows is not None:
                out[f"{prefix}blind_{key}"] = diag.blind_rate(table, rows, mask(rows))
    return out


def _onehot(pred: torch.Tensor, vocab: int) -> torch.Tensor:
    """Predictions (B, T) as logits (B, T, V) whose argmax is the prediction (for `task.accuracy`)."""
    return torch.nn.functional.one_hot(pred, vocab).float()


def _data_seed(config: RandomRunConfig) -> int:
    return config.seed if config.data_seed is None else config.data_seed


def fano_bits(hits: float, items: int, n_values: int) -> float:
    """A lower bound on the information (bits) predictions with `hits` right out of `items` uniformly random
    values carry about them: by Fano's inequality each item's H(v | prediction) ≤ h(e) + e·log2(M − 1) at
    error rate e, so I ≥ items · (log2 M − h(e) − e·log2(M − 1)) (per-item error rates only loosen it, h being
    concave); exact when wrong predictions are spread evenly over the other values. ≥ 0 by construction."""
    e = 1.0 - hits / items
    h = -sum(q * math.log2(q) for q in (e, 1.0 - e) if q > 0)
    return items * max(math.log2(n_values) - h - e * math.log2(n_values - 1), 0.0)


def memorisation(task: Any, test_acc: float, n_trainable: int) -> dict[str, Any]:
    """Hits, bits stored and per trainable parameter — the Fano lower bound (the headline), the published hits ×
    log2 M and the hits above chance × log2 M — beside the two predictors that store (almost) nothing: the best
    input-blind one (the most common value) and the best per-key one (each x's, or each y's, most common value:
    at most n_keys · log2 M bits)."""
    items, n = len(task.values), task.config.n_keys
    n_values = task.config.n_values
    bits_each = math.log2(n_values)
    hits = round(test_acc * items)
    chance = items / n_values
    table = task.values.view(n, n)
    per_key = max(
        int(sum(torch.bincount(row, minlength=n_values).max() for row in t))
        for t in (table, table.T)
    )
    return {
        "items": items,
        "hits": hits,
        "chance_hits": chance,
        "blind_hits": int(torch.bincount(task.values).max()),
        "per_key_hits": per_key,
        "per_key_fano_bits": fano_bits(per_key, items, n_values),
        "per_key_max_bits": n * bits_each,
        "bits_fano": fano_bits(hits, items, n_values),
        "bits_per_param_fano": fano_bits(hits, items, n_values) / n_trainable,
        "bits_stored_raw": hits * bits_each,
        "bits_stored": max(hits - chance, 0.0) * bits_each,
        "bits_per_param_raw": hits * bits_each / n_trainable,
        "bits_per_param": max(hits - chance, 0.0) * bits_each / n_trainable,
        "cap_bits_per_param": items * bits_each / n_trainable,
    }


def probe_rows(task: Any, config: RandomRunConfig) -> Batch:
    """The rows the subspace probe reads: every pair of a fixed-dataset task, else fresh training draws."""
    name = config.task.name
    if name == "mod_add":
        return task.make_batch(torch.arange(task.p**2))
    if name == "memorise":
        return task.train_set()
    if isinstance(task, StreamedTask):
        return task.fresh_set(config.probe_rows, seed=_data_seed(config) + 11)
    return task.test_set()


def subspace(
    model: nn.Module, model_config: Any, task: Any, config: RandomRunConfig, device: torch.device
) -> list[dict[str, Any]]:
    """The subspace probe on the trained model, the same model at initialisation and the isotropic null."""
    batch = probe_rows(task, config)
    assert batch.mask is not None
    # one seeded subset of scored positions, the same for both models
    where = batch.mask.nonzero()
    g = torch.Generator().manual_seed(_data_seed(config) + 13)
    if len(where) > config.probe_rows:
        where = where[torch.randperm(len(where), generator=g)[: config.probe_rows]]
    rows = torch.unique(where[:, 0])
    mask = torch.zeros_like(batch.mask)
    mask[where[:, 0], where[:, 1]] = True
    inputs, mask = batch.inputs[rows], mask[rows]
    trained = scored_hidden(model, inputs, mask)
    init = build_model(model_config, seed=config.seed, device=device)
    at_init = scored_hidden(init, inputs, mask)
    return subspace_probe(trained, config.subspace_k, at_init, seed=config.seed)


@torch.no_grad()
def needle_attention(model: nn.Module, task: Any, device: torch.device) -> dict[str, Any]:
    """Attention maps (per layer, per head) of the first test sequence with the most pairs, cropped."""
    test = task.test_set()
    length = test.mask.float().argmax(1) + 1  # the query position + 1 = the real input length
    pick = int(length.argmax())
    n = int(length[pick])
    maps = attention_maps(model, test.inputs[pick : pick + 1, :n], device)
    return {
        "tokens": test.inputs[pick, :n].tolist(),
        "maps": [[head.tolist() for head in layer[0].cpu().float()] for layer in maps],
        "answer": int(test.targets[pick][test.mask[pick]][0]),
    }


@register_job("random.run", RandomRunConfig)
def run(config: RandomRunConfig, ctx: RunContext) -> dict[str, Any]:
    """Train one model (Trainer, freeze spec in `config.train`), then diagnostics and probes."""
    for probe in config.probes:
        check_choice("probe", probe, PROBES)
    device = ctx.device if isinstance(ctx.device, torch.device) else torch.device(ctx.device)
    data_seed = _data_seed(config)
    task = build_task(config.task, data_seed=data_seed)
    model_config = fit_model_to_task(config.model, task)
    model = build_model(model_config, seed=config.seed, device=device)
    trainer = Trainer(model, task, config.train, device=device, metrics_log=ctx.log)
    result = trainer.fit(data_seed=data_seed)
    model = trainer.model
    n_trainable = sum(p.numel() for p in trainer.params)
    metrics: dict[str, Any] = {
        "status": result.status,
        "steps": result.steps,
        "test_acc": result.final.get("test_acc"),
        "test_loss": result.final.get("test_loss"),
        "train_loss": result.final.get("train_loss"),
        "n_trainable": n_trainable,
        "n_params": sum(p.numel() for p in model.parameters()),
        "history": [
            {k: row[k] for k in ("step", "test_acc", "test_loss") if k in row}
            for row in result.history
        ],
    }
    if result.status == "diverged":
        return metrics
    name = config.task.name
    metrics.update(task_diagnostics(model, task, config, device))
    if name == "memorise":
        metrics.update(memorisation(task, metrics["test_acc"] or 0.0, n_trainable))
    if name == "circuit":
        # KL of the best input-independent guess (the mean target distribution): what "learned nothing" scores
        p = task.test_set().targets.double()
        mean = p.mean(0, keepdim=True)
        log_ratio = torch.where(p > 0, (p.clamp_min(1e-300) / mean.clamp_min(1e-300)).log(), 0.0)
        metrics["baseline_kl"] = float((p * log_ratio).sum(1).mean())
    if name == "language":
        metrics.update(language_metrics(model, task, config, device))
    is_gpt = isinstance(model_config, GPTConfig)
    if "subspace" in config.probes:
        metrics["subspace"] = subspace(model, model_config, task, config, device)
    if "attention" in config.probes and is_gpt and name == "needle":
        metrics["attention"] = needle_attention(model, task, device)
    if "embedding_pcs" in config.probes:
        embedding = model.get_parameter("token_embedding.weight")  # (V, D)
        coords, fractions = top_pcs(embedding)
        metrics["embedding_pcs"] = {"coords": coords, "variance_fractions": fractions}
    if "samples" in config.probes and name == "language":
        context = model_config.max_len if isinstance(model_config, GPTConfig) else None
        metrics["samples"] = [
            {"prompt": p, "text": greedy_sample(model, task.tokenizer, p, 32, context, device)}  # type: ignore[attr-defined]
            for p in PROMPTS
        ]
    return metrics


def language_metrics(
    model: nn.Module, task: Any, config: RandomRunConfig, device: torch.device
) -> dict[str, Any]:
    """Unigram cross-entropy of the validation text, CE on training windows, tokens seen and epochs."""

    counts = torch.bincount(task.train_tokens, minlength=task.vocab_size).double() + 1.0
    logp = (counts / counts.sum()).log()
    train_windows = task.sample(
        len(task.test_set()), torch.Generator().manual_seed(_data_seed(config) + 17)
    )
    seen = config.train.batch_size * task.seq_len * (config.train.steps)
    return {
        "unigram_ce": float(-logp[task.test_set().targets.reshape(-1)].mean()),
        "train_ce": evaluate(model, task, train_windows, device)["loss"],
        "tokens_seen": seen,
        "train_tokens": len(task.train_tokens),
        "epochs": seen / len(task.train_tokens),
    }


__all__ = [
    "PROBES",
    "RandomRunConfig",
    "blind_lines",
    "fano_bits",
    "fit_model_to_task",
    "gpu_hours",
    "memorisation",
    "run",
    "run_seconds",
    "task_diagnostics",
    "task_shape",
]
