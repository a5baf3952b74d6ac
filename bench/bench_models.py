"""Training step: the project's Boolean transformer against the published model (`nn.TransformerEncoder`).

Published Hahn & Rofin default: d 128, 2 layers, 2 heads, FFN 128, post-LN, batch 1024, n 20, MSE on
0/1 targets, AdamW 3e-4 (weight decay 0.1). Both models start from the same weights and see the same
batches. Ours is the project's training step as `Trainer.step` runs it (the loss from `compute_loss`,
the optimiser from `make_optimizer`); the stock model is trained as the published code does it
(`torch.optim.AdamW`). Steps are interleaved (alternating which goes first) and repeated; between
repetitions a 2048 × 2048 fp32 matmul measures this machine's large-matmul rate under the same load.
Everything in process CPU time (one torch thread: the work of this process only, not the time other
processes hold the cores). Printed: the median of the per-repetition time ratios (target ≥ 2.0), and
each step's achieved FLOP rate against the matmul rate (target ≥ 60%) — counting the matmul FLOPs each
implementation performs (analytic, backward = 2 × forward), and, for ours, also the stock model's
FLOPs (the work a standard implementation of the same function does).

`--profile` adds torch.profiler's table of our step's operators (where the remaining time goes).

    .venv/bin/python bench/bench_models.py [--reps 9] [--threads 1] [--profile]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from learnability.device import resolve_device
from learnability.models import BooleanTransformer, BooleanTransformerConfig
from learnability.models.reference import StockEncoderModel, copy_stock_weights
from learnability.tasks.base import Batch
from learnability.train import TrainConfig, compute_loss, make_optimizer


def full_layer_flops(b: int, t: int, d: int, ff: int) -> int:
    """Forward matmul FLOPs of a standard encoder layer over t positions."""
    return 2 * b * t * (3 * d * d + d * d + 2 * d * ff) + 4 * b * t * t * d


def stock_step_flops(b: int, t: int, d: int, ff: int, layers: int) -> int:
    return 3 * (layers * full_layer_flops(b, t, d, ff) + 2 * b * d)


def our_step_flops(model: BooleanTransformer, tokens: torch.Tensor) -> int:
    """Forward matmul FLOPs of `model.run` as it computes (module docs of the model and layers) × 3."""
    c = model.config
    b, t = tokens.shape
    d, ff, h = c.d_model, c.d_ff, c.n_heads
    t += model.extra
    one_query = c.readout != "all"

    def last(bq: int) -> int:  # one query, keys and values in the input space
        return 2 * bq * (3 * d * d + d * d + 2 * d * ff) + 4 * bq * h * t * d + 2 * bq * d * d

    total = 2 * b * d * (t if c.readout == "all" else 1)  # readout
    layers = c.n_layers
    if model._table_pays(tokens):
        values = c.vocab_size + model.extra
        r = values if c.positions in ("none", "alibi") else values * t
        table = 2 * r * d * 3 * d + 2 * r * r * d  # q/k/v on the table, all query-key scores
        if layers == 1 and one_query:
            return 3 * (total + last(b))
        total += table + 2 * b * t * r * d + 2 * b * t * (d * d + 2 * d * ff)
        layers -= 1
    if one_query:
        total += last(b)
        layers -= 1
    return 3 * (total + layers * full_layer_flops(b, t, d, ff))


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def clock(device: torch.device) -> float:
    # on a shared CPU, process CPU time counts this work only; a GPU's work is wall time
    return time.perf_counter() if device.type == "cuda" else time.process_time()


def matmul_rate(device: torch.device, a: torch.Tensor, b: torch.Tensor) -> float:
    sync(device)
    start = clock(device)
    a @ b
    sync(device)
    return 2 * a.shape[0] ** 3 / (clock(device) - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    d, ff, b, n = args.d, args.d, args.batch, args.n

    torch.manual_seed(0)
    stock = StockEncoderModel(d, ff, args.layers, args.heads, max_len=n).to(device)
    cfg = BooleanTransformerConfig(
        d_model=d, d_ff=ff, n_layers=args.layers, n_heads=args.heads, max_len=n
    )
    ours = BooleanTransformer(cfg).to(device)
    copy_stock_weights(stock, ours)
    recipe = TrainConfig(lr=3e-4, weight_decay=0.1)
    opt_ours = make_optimizer(list(ours.parameters()), recipe)
    opt_stock = torch.optim.AdamW(stock.parameters(), lr=3e-4, weight_decay=0.1)
    gen = torch.Generator().manual_seed(1)
    inputs = [torch.randint(0, 2, (b, n), generator=gen).to(device) for _ in range(4)]
    batches = [Batch(x, x.sum(1).remainder(2).float()) for x in inputs]  # PARITY, 0/1 targets

    def step_ours(i: int) -> None:
        batch = batches[i % 4]
        out = ours(batch.inputs)
        loss = compute_loss("mse", out, batch)
        loss.item()
        opt_ours.zero_grad(set_to_none=True)
        loss.backward()
        opt_ours.step()

    def step_stock(i: int) -> None:
        batch = batches[i % 4]
        loss = nn.functional.mse_loss(stock(batch.inputs), batch.targets)
        loss.item()
        opt_stock.zero_grad(set_to_none=True)
        loss.backward()
        opt_stock.step()

    steps = {"ours": step_ours, "stock": step_stock}
    for i in range(2):  # warm-up: allocator, kernels, AdamW state
        for fn in steps.values():
            fn(i)
    big = [torch.randn(2048, 2048, device=device) for _ in range(2)]
    matmul_rate(device, *big)
    times: dict[str, list[float]] = {k: [] for k in steps}
    peaks = []
    for r in range(args.reps):
        for name in ["ours", "stock"] if r % 2 == 0 else ["stock", "ours"]:
            sync(device)
            start = clock(device)
            steps[name](r)
            sync(device)
            times[name].append(clock(device) - start)
        peaks.append(matmul_rate(device, *big))
    ratio = statistics.median(s / o for o, s in zip(times["ours"], times["stock"]))
    peak = statistics.median(peaks)
    flops = {
        "ours": our_step_flops(ours, inputs[0]),
        "stock": stock_step_flops(b, n, d, ff, args.layers),
    }
    print(
        f"training step, d {d}, {args.layers} layers, {args.heads} heads, batch {b}, n {n}, "
        f"{args.reps} interleaved reps, {args.threads} thread(s), {device}, "
        f"{'wall' if device.type == 'cuda' else 'process CPU'} time"
    )
    print(f"{'model':<34}{'median s/step':>14}{'GFLOP/step':>12}{'GFLOP/s':>10}{'of peak':>9}")
    for name, label in (("ours", "BooleanTransformer (ours)"), ("stock", "nn.TransformerEncoder")):
        med = statistics.median(times[name])
        rate = flops[name] / med
        print(
            f"{label:<34}{med:>14.4f}{flops[name] / 1e9:>12.2f}{rate / 1e9:>10.1f}{rate / peak:>9.1%}"
        )
    useful = flops["stock"] / statistics.median(times["ours"])
    print(
        f"{'ours, at the stock FLOP count':<34}{'':>14}{'':>12}{useful / 1e9:>10.1f}{useful / peak:>9.1%}"
    )
    print(f"large-matmul rate (2048 x 2048 fp32, between reps): {peak / 1e9:.1f} GFLOP/s")
    print(
        f"speed-up stock/ours, median of per-rep ratios: {ratio:.2f}x (target >= 2.0); "
        f"ours at {flops['ours'] / statistics.median(times['ours']) / peak:.0%} of the matmul rate "
        f"counting its own FLOPs (target >= 60%)"
    )
    if args.profile:
        from torch.profiler import profile

        with profile() as prof:
            for i in range(3):
                step_ours(i)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20))


if __name__ == "__main__":
    main()
