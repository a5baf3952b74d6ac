"""Closed-form population gradient of the two-head sparse-XOR model: its time at d = 2^10, 2^16, 2^20 against
one pass over the d positional embeddings (the floor: the scores Vθ), and against Monte Carlo at equal accuracy.

Monte Carlo baseline: the finite-sample gradient on n uniform strings. Its n is the sample size at which the
Monte Carlo gradient's relative error ‖ĝ − g‖/‖g‖ equals `--target` (the closed form is exact; we take
the error measured at n0 strings and scale it as 1/√n, then time the gradient at n0 and scale the time
linearly in n — both scalings are exact for an unbiased average of i.i.d. terms).

    python bench/bench_sparse_xor.py [--m 32] [--target 0.1] [--device cpu]
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from learnability.device import resolve_device
from learnability.models.two_head import population_grad, sample_grad, sphere


def _time(fn, repeats: int) -> float:
    fn()
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=32)
    ap.add_argument(
        "--target", type=float, default=0.1, help="relative gradient error of Monte Carlo"
    )
    ap.add_argument("--n0", type=int, default=512, help="strings in the measured Monte Carlo batch")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    dev = resolve_device(args.device)
    torch.set_num_threads(
        1
    )  # one thread: the ratios are then not at the mercy of thread scheduling
    print(
        f"device={dev} m={args.m} dtype=float32, 1 thread; times are the best of ≥ {args.repeats} runs"
    )
    print(
        f"{'d':>8} {'floor Vθ':>10} {'closed form':>12} {'ratio':>6} {'MC n':>10} {'MC time':>10} {'speed-up':>9}"
    )
    for k in (10, 16, 20):
        _row(2**k, args, dev)


def _row(d: int, args: argparse.Namespace, dev: torch.device) -> None:
    dtype = torch.float32  # 2^20 × m in float64 would be large; float32 for both sides
    g = torch.Generator().manual_seed(d)
    V = sphere(d, args.m, g, dtype).to(dev)
    theta = sphere(1, args.m, g, dtype)[0].to(dev)
    params = torch.stack(
        [theta, -theta]
    )  # the initialisation: where the one-step experiments evaluate
    p, q = 3, d // 2
    repeats = max(args.repeats, 2**20 // d)  # small d: many repeats, the times are tiny
    floor = _time(lambda: V @ params[0], repeats)
    closed = _time(lambda: population_grad(V, params, "softmax", p, q), repeats)
    _, exact = population_grad(V.double(), params.double(), "softmax", p, q)
    n0 = args.n0
    x = (torch.randint(0, 2, (n0, d), generator=g) * 2 - 1).to(dev, dtype)
    y = -x[:, p] * x[:, q]
    _, est = sample_grad(V, params, "softmax", x, y)
    err = float((est.double() - exact).norm() / exact.norm())
    n_needed = max(1, math.ceil(n0 * (err / args.target) ** 2))
    mc0 = _time(lambda: sample_grad(V, params, "softmax", x, y), max(1, repeats // 4))
    mc = mc0 * n_needed / n0
    print(f"{d:>8} {floor * 1e3:>8.3f}ms {closed * 1e3:>10.3f}ms {closed / floor:>6.1f} "
          f"{n_needed:>10.3g} {mc:>9.3g}s {mc / closed:>9.3g}")  # fmt: skip


if __name__ == "__main__":
    main()
