"""Benchmark of the model measurements, ratios measured side by side in one run.

(a) model sensitivity profile at n = 16 vs one plain batched forward over all 2^n inputs (target ≤ 1.2×), and vs
    evaluating every flipped string (2^n · n extra forwards; target: the profile ≥ n/2 times faster);
(b) sharpness with R directions vs R plain forward passes on the same batch (target ≤ 1.3×).
Repetitions are interleaved and the best (minimum) time of each is compared: on a shared machine the minimum is
the least disturbed by other load.

    .venv/bin/python bench/bench_measure.py [--n 16] [--d-model 32] [--reps 3] [--directions 16] [--device cpu] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

import torch

from learnability.device import resolve_device
from learnability.measure import model_profile, sharpness
from learnability.measure.sensitivity import all_bit_strings
from learnability.models import BooleanTransformerConfig, build_model
from learnability.tasks.base import Batch


def timed(fn, device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--d-model", type=int, default=32)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--directions", type=int, default=16)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--device", default="cpu")
    ap.add_argument(
        "--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)"
    )
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    n = args.n
    cfg = BooleanTransformerConfig(
        n_layers=args.layers, n_heads=2, d_model=args.d_model, d_ff=args.d_model, max_len=n
    )
    model = build_model(cfg, seed=0).to(device).eval()
    inputs = all_bit_strings(n, device)
    chunk = 1 << 16

    @torch.no_grad()
    def plain_forward() -> None:
        for s in range(0, len(inputs), chunk):
            model(inputs[s : s + chunk])

    @torch.no_grad()
    def every_flip() -> None:  # the naive way: re-evaluate each string with each bit flipped
        for i in range(n):
            flipped = inputs.clone()
            flipped[:, i] ^= 1
            for s in range(0, len(flipped), chunk):
                model(flipped[s : s + chunk])

    batch = Batch(inputs[: args.batch], torch.zeros(args.batch, device=device))

    @torch.no_grad()
    def r_forwards() -> None:
        for _ in range(args.directions):
            model(batch.inputs)

    gen = torch.Generator(device=device).manual_seed(0)
    times: dict[str, list[float]] = {
        k: [] for k in ("forward", "profile", "flips", "r_forwards", "sharpness")
    }
    timed(plain_forward, device)  # warm-up
    for rep in range(args.reps):
        times["forward"].append(timed(plain_forward, device))
        times["profile"].append(timed(lambda: model_profile(model, n, device), device))
        if rep == 0:  # n forwards over 2^n strings: slow, once is enough for the ratio
            times["flips"].append(timed(every_flip, device) + times["forward"][-1])
        times["r_forwards"].append(timed(r_forwards, device))
        times["sharpness"].append(
            timed(
                lambda: sharpness(model, batch, rho=0.1, directions=args.directions, generator=gen),
                device,
            )
        )
    med = {k: min(v) for k, v in times.items()}
    print(
        f"device {device}, n={n}, d_model={args.d_model}, layers={args.layers}, reps={args.reps}, "
        f"threads={torch.get_num_threads()}"
    )
    for k, v in med.items():
        print(f"  {k:>11}: {v * 1000:9.1f} ms")
    a1 = med["profile"] / med["forward"]
    a2 = med["flips"] / med["profile"]
    b = med["sharpness"] / med["r_forwards"]
    print(f"(a) profile / one forward over 2^n inputs   = {a1:.3f}  (target ≤ 1.2)")
    print(f"(a) every-flip evaluation / profile         = {a2:.1f}  (target ≥ n/2 = {n / 2:.0f})")
    print(f"(b) sharpness R={args.directions} / R forwards        = {b:.3f}  (target ≤ 1.3)")


if __name__ == "__main__":
    main()
