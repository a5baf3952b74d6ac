"""Training-step benchmark: the Boolean transformer vs a stock `nn.TransformerEncoder` model of the same shape.

Published Hahn & Rofin default: d 128, 2 layers, 2 heads, FFN 128, post-LN, batch 1024, n 20, AdamW + MSE.
Both models start from the same weights; steps are interleaved (alternating which goes first) and the
median per-repetition time ratio is printed. Achieved FLOP/s counts the matmul FLOPs of each model's step
analytically (backward = 2 × forward) and divides by this machine's fp32 large-matmul rate, measured in the
same run on a 2048 × 2048 product.

    python bench/bench_models.py [--reps 7] [--threads N] [--device cpu|cuda]
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


def layer_flops(b: int, t_q: int, t: int, d: int, ff: int) -> int:
    """Forward matmul FLOPs of one layer whose queries (and everything after attention) cover t_q positions."""
    qkv = 2 * b * (t_q * d * d + t * 2 * d * d)
    attention = 2 * 2 * b * t_q * t * d  # scores and weighted values, summed over heads
    rest = 2 * b * t_q * (d * d + 2 * d * ff)  # out_proj and the MLP
    return qkv + attention + rest


def step_flops(b: int, t: int, d: int, ff: int, layers: int, last_layer_one_query: bool) -> int:
    forward = sum(
        layer_flops(b, 1 if (last_layer_one_query and i == layers - 1) else t, t, d, ff)
        for i in range(layers)
    )
    return 3 * (forward + 2 * b * d)  # backward ≈ 2 × forward; + the readout


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def matmul_flops_per_s(device: torch.device, size: int = 2048, reps: int = 5) -> float:
    a = torch.randn(size, size, device=device)
    b = torch.randn(size, size, device=device)
    a @ b
    times = []
    for _ in range(reps):
        sync(device)
        start = time.perf_counter()
        a @ b
        sync(device)
        times.append(time.perf_counter() - start)
    return 2 * size**3 / statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--device", default="cpu")
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
    models = {"BooleanTransformer": ours, "nn.TransformerEncoder": stock}
    optimisers = {
        k: torch.optim.AdamW(m.parameters(), lr=3e-4, weight_decay=0.1) for k, m in models.items()
    }
    gen = torch.Generator().manual_seed(1)
    batches = [torch.randint(0, 2, (b, n), generator=gen).to(device) for _ in range(4)]
    targets = [x.sum(1).remainder(2).float() for x in batches]  # PARITY, 0/1 targets

    def step(name: str, i: int) -> float:
        model, opt = models[name], optimisers[name]
        sync(device)
        start = time.perf_counter()
        loss = nn.functional.mse_loss(model(batches[i % 4]), targets[i % 4])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sync(device)
        return time.perf_counter() - start

    for i in range(2):  # warm-up (allocator, kernels, AdamW state)
        for name in models:
            step(name, i)
    times: dict[str, list[float]] = {name: [] for name in models}
    names = list(models)
    for r in range(args.reps):
        for name in names if r % 2 == 0 else names[::-1]:
            times[name].append(step(name, r))
    ratios = [s / o for o, s in zip(times["BooleanTransformer"], times["nn.TransformerEncoder"])]
    peak = matmul_flops_per_s(device)

    flops = {
        "BooleanTransformer": step_flops(b, n, d, ff, args.layers, last_layer_one_query=True),
        "nn.TransformerEncoder": step_flops(b, n, d, ff, args.layers, last_layer_one_query=False),
    }
    print(
        f"training step, d {d}, {args.layers} layers, {args.heads} heads, batch {b}, n {n}, "
        f"{args.reps} interleaved reps, {args.threads} threads, {device}"
    )
    print(f"{'model':<24}{'median s/step':>15}{'GFLOP/step':>12}{'GFLOP/s':>10}{'of peak':>9}")
    for name in models:
        med = statistics.median(times[name])
        rate = flops[name] / med
        print(
            f"{name:<24}{med:>15.4f}{flops[name] / 1e9:>12.2f}{rate / 1e9:>10.2f}{rate / peak:>9.1%}"
        )
    useful = flops["nn.TransformerEncoder"] / statistics.median(times["BooleanTransformer"])
    print(
        f"{'(ours, full-model FLOPs)':<24}{'':>15}{'':>12}{useful / 1e9:>10.2f}{useful / peak:>9.1%}"
    )
    print(f"large-matmul peak (2048x2048 fp32): {peak / 1e9:.1f} GFLOP/s")
    print(
        f"speed-up stock/ours, median of per-rep ratios: {statistics.median(ratios):.3f}x (>= 1 means ours is as fast or faster)"
    )


if __name__ == "__main__":
    main()
