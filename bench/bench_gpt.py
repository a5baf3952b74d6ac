"""Embedding-only GPT training step: the project's GPT against the published stack, HF `transformers` GPT-2.

Zhong & Andreas train GPT-2 (pre-LN, tanh-GELU MLP of width 4D, learned positions, untied unembedding
without bias, dropout 0) with only the token and position embeddings and the unembedding trainable.
Both sides get the same shapes (width 64 and 256, 4 heads, 2 layers, batch 64, the sequence length and
vocabulary below), the same weights (ours copied into HF's layout; the logits are checked to agree),
the same freeze (requires_grad False on every other parameter, the optimiser holding only the trainable
ones), the same loss (cross-entropy on every position) and the published optimiser settings (AdamW,
gradient-norm clip 1.0). Ours is the project's training step as `Trainer.step` runs it (its optimiser
from `make_optimizer`); theirs `torch.optim.AdamW` as the published code builds it. HF's model is
built from a `GPT2Config` (no download), once with eager and once with sdpa attention.

Steps are interleaved and repeated (median of per-repetition ratios), in process CPU time with one
torch thread; a 2048 × 2048 matmul between repetitions measures the large-matmul rate under the same
load. The "floor" column is the step's matmul FLOPs (the same on both sides: with requires_grad False
neither computes a frozen weight's gradient) at that rate: no implementation of this step does less
arithmetic, so HF's time over the floor bounds the ratio any of them can reach. `--profile` prints
torch.profiler's operator table of our step. `transformers` is installed for this benchmark only
(`.venv/bin/pip install transformers`); without it the script says so and exits.

    .venv/bin/python bench/bench_gpt.py [--reps 9] [--widths 64,256] [--seq 32] [--vocab 384] [--profile]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from learnability.models import GPT, GPTConfig, build_model
from learnability.tasks.base import Batch
from learnability.train import TrainConfig, apply_freeze, compute_loss, make_optimizer


def hf_model(ours: GPT, attention: str) -> nn.Module:
    """HF GPT2LMHeadModel of ours' shape with ours' weights (Conv1D weights are stored transposed)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    c = ours.config
    config = GPT2Config(
        vocab_size=c.vocab_size,
        n_positions=c.max_len,
        n_embd=c.d_model,
        n_layer=c.n_layers,
        n_head=c.n_heads,
        n_inner=4 * c.d_model,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        layer_norm_epsilon=c.ln_eps,
        tie_word_embeddings=False,
        use_cache=False,
    )
    config._attn_implementation = attention
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        t = model.transformer
        t.wte.weight.copy_(ours.token_embedding.weight)
        t.wpe.weight.copy_(ours.position_embedding.weight)
        for block, mine in zip(t.h, ours.layers):
            block.ln_1.load_state_dict(mine.ln1.state_dict())
            block.ln_2.load_state_dict(mine.ln2.state_dict())
            block.attn.c_attn.weight.copy_(mine.attn.in_proj.weight.t())
            block.attn.c_attn.bias.copy_(mine.attn.in_proj.bias)
            block.attn.c_proj.weight.copy_(mine.attn.out_proj.weight.t())
            block.attn.c_proj.bias.copy_(mine.attn.out_proj.bias)
            block.mlp.c_fc.weight.copy_(mine.mlp.fc.weight.t())
            block.mlp.c_fc.bias.copy_(mine.mlp.fc.bias)
            block.mlp.c_proj.weight.copy_(mine.mlp.proj.weight.t())
            block.mlp.c_proj.bias.copy_(mine.mlp.proj.bias)
        t.ln_f.load_state_dict(ours.final_ln.state_dict())
        model.lm_head.weight.copy_(ours.unembedding.weight)
    for name, p in model.named_parameters():
        p.requires_grad_(name.startswith(("transformer.wte.", "transformer.wpe.", "lm_head.")))
    return model


def step_flops(b: int, t: int, d: int, vocab: int, layers: int) -> int:
    """Matmul FLOPs of one embedding-only step: frozen linears forward and input gradient (2×), attention
    forward and backward (3×), the trained unembedding forward, input and weight gradients (3×)."""
    n = b * t
    linears = 2 * n * (3 * d * d + d * d + 2 * d * 4 * d)
    attention = 4 * b * t * t * d
    return layers * (2 * linears + 3 * attention) + 3 * 2 * n * d * vocab


def race(
    width: int, args: argparse.Namespace, tokens: list[torch.Tensor], targets: list[torch.Tensor]
) -> tuple[dict[str, float], dict[str, float], float]:
    """Median ms per step of each side, HF / ours median per-rep ratios, the matmul rate (FLOP/s)."""
    recipe = TrainConfig(lr=1e-3, weight_decay=1e-3, grad_clip=1.0, freeze="embeddings")
    cfg = GPTConfig(
        vocab_size=args.vocab, max_len=args.seq, n_layers=args.layers, n_heads=4,
        d_model=width, unembedding_bias=False,
    )  # fmt: skip
    ours = build_model(cfg, seed=0)
    assert isinstance(ours, GPT)
    theirs = {a: hf_model(ours, a) for a in ("eager", "sdpa")}
    with torch.no_grad():
        for a, m in theirs.items():
            diff = (m(tokens[0]).logits - ours(tokens[0])).abs().max().item()
            assert diff < 1e-4, f"HF {a} logits differ from ours by {diff}"
    mine = apply_freeze(ours, recipe.freeze)
    optimisers: dict[str, torch.optim.Optimizer] = {"ours": make_optimizer(mine, recipe)}
    trainable = {a: [p for p in m.parameters() if p.requires_grad] for a, m in theirs.items()}
    for a, ps in trainable.items():  # the published optimiser
        optimisers[a] = torch.optim.AdamW(ps, lr=recipe.lr, weight_decay=recipe.weight_decay)

    def step_ours(i: int) -> None:
        batch = Batch(tokens[i % 4], targets[i % 4])
        loss = compute_loss("ce", ours(batch.inputs), batch)
        loss.item()
        optimisers["ours"].zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(mine, 1.0)
        optimisers["ours"].step()

    def step_theirs(attention: str) -> Callable[[int], None]:
        model, opt = theirs[attention], optimisers[attention]

        def run(i: int) -> None:
            logits = model(tokens[i % 4]).logits
            # as HF's own LM loss computes it: over (B·T, V) rows
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets[i % 4].reshape(-1))
            loss.item()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable[attention], 1.0)
            opt.step()

        return run

    steps = {"ours": step_ours, "eager": step_theirs("eager"), "sdpa": step_theirs("sdpa")}
    for i in range(3):  # warm-up: allocations, optimiser state
        for fn in steps.values():
            fn(i)
    times: dict[str, list[float]] = {k: [] for k in steps}
    names = list(steps)
    big = [torch.randn(2048, 2048) for _ in range(2)]
    rates = []
    for r in range(args.reps):
        for name in names if r % 2 == 0 else names[::-1]:
            t0 = time.process_time()
            steps[name](r)
            times[name].append(time.process_time() - t0)
        t0 = time.process_time()
        big[0] @ big[1]
        rates.append(2 * 2048**3 / (time.process_time() - t0))
    ratio = {
        a: statistics.median(t / o for t, o in zip(times[a], times["ours"]))
        for a in ("eager", "sdpa")
    }
    if args.profile:
        from torch.profiler import profile

        with profile() as prof:
            for i in range(3):
                step_ours(i)
        print(f"width {width}, our step:")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
    return (
        {k: 1e3 * statistics.median(v) for k, v in times.items()},
        ratio,
        statistics.median(rates),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--widths", default="64,256")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=384)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if importlib.util.find_spec("transformers") is None:
        print(
            "skip: HF transformers is not installed (it is for this benchmark only: "
            ".venv/bin/pip install transformers)"
        )
        return
    import transformers

    torch.set_num_threads(1)
    print(
        f"embedding-only GPT training step: batch {args.batch}, length {args.seq}, vocabulary "
        f"{args.vocab}, {args.layers} layers, 4 heads; {args.reps} interleaved reps, 1 torch thread, "
        f"process CPU time; transformers {transformers.__version__}"
    )
    print(
        f"{'width':>6}{'ours ms':>9}{'HF eager ms':>13}{'HF sdpa ms':>12}{'eager/ours':>12}{'sdpa/ours':>11}"
    )
    gen = torch.Generator().manual_seed(0)
    tokens = [torch.randint(0, args.vocab, (args.batch, args.seq), generator=gen) for _ in range(4)]
    targets = [
        torch.randint(0, args.vocab, (args.batch, args.seq), generator=gen) for _ in range(4)
    ]
    for width in [int(w) for w in args.widths.split(",")]:
        med, ratio, rate = race(width, args, tokens, targets)
        floor = 1e3 * step_flops(args.batch, args.seq, width, args.vocab, args.layers) / rate
        print(
            f"{width:>6}{med['ours']:>9.2f}{med['eager']:>13.2f}{med['sdpa']:>12.2f}"
            f"{ratio['eager']:>11.2f}x{ratio['sdpa']:>10.2f}x{floor:>10.2f}{med['sdpa'] / floor:>23.2f}x"
        )
    print(
        "ratio = HF step time / ours, median of per-rep ratios (target >= 2.0); floor = the step's matmul "
        "FLOPs at the large-matmul rate measured between reps"
    )


if __name__ == "__main__":
    main()
