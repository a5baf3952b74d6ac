"""Random-model profiling benchmark (study `volume`): models profiled per second, and the cost against a plain
forward pass of the same models over all 2^N strings.

"Profile" is exactly what the `volume.random_profiles` job does per model: build it from its seed, evaluate
it once on all 2^N strings (`measure.model_outputs`, with the eps = 0 degenerate-row hooks), profile the
thresholded table (`boolean.profile_from_truth_table`), count undecided / decided zero-sensitivity strings
and scan the logit table for the largest one-bit change (XOR-half views). "Forward" is the bare batched
forward pass of the same, already built, models over the same strings under `inference_mode`. The two are
interleaved (alternating which goes first) and the median per-repetition ratio is printed.

    python bench/bench_volume.py [--reps 5] [--threads 1] [--device cpu|cuda] [--ns 12 16]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from learnability.device import resolve_device
from learnability.models import build_model
from learnability.studies.volume import RandomProfilesConfig, profile_random_models


def plain_forward(models: list, tokens: torch.Tensor, batch: int, device: torch.device) -> float:
    t0 = time.perf_counter()
    with torch.inference_mode():
        for model in models:
            for chunk in tokens.split(batch):
                model(chunk)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - t0


def profile(config: RandomProfilesConfig, device: torch.device) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = profile_random_models(config, device)
    return time.perf_counter() - t0, out


def bench(n: int, models: int, eps: float, reps: int, device: torch.device) -> None:
    config = RandomProfilesConfig(
        n=n, init="xavier_normal", ln_eps=eps, depth=2, width=16, heads=2, models=models
    )
    built = [
        build_model(config.model_config(), seed=config.seed * 1_000_003 + j, device=device).eval()
        for j in range(models)
    ]
    tokens = (
        (torch.arange(2**n, device=device)[:, None] >> torch.arange(n, device=device)) & 1
    ).long()
    plain_forward(built[:1], tokens, config.batch_size, device)  # warm-up
    profile(RandomProfilesConfig(**{**config.__dict__, "models": 1}), device)
    fwd, prof, ratios, split = [], [], [], []
    for rep in range(reps):
        if rep % 2:
            p, out = profile(config, device)
            f = plain_forward(built, tokens, config.batch_size, device)
        else:
            f = plain_forward(built, tokens, config.batch_size, device)
            p, out = profile(config, device)
        fwd.append(f)
        prof.append(p)
        ratios.append(p / f)
        split.append(out["seconds_profile"] / p)
    f, p = statistics.median(fwd), statistics.median(prof)
    print(
        f"N={n:2d} eps={eps:<6g} {models:3d} models x {2**n:6d} strings | "
        f"profiled {models / p:8.2f} models/s | plain forward {models / f:8.2f} models/s | "
        f"ratio profile/forward {statistics.median(ratios):.3f} "
        f"(share outside the forward {statistics.median(split):.1%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--ns", type=int, nargs="+", default=[12, 16])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    print(
        f"volume random-model profiling, L=2 D=16 heads=2 EOS readout, device {device}, {args.threads} thread(s)"
    )
    for n in args.ns:
        models = 16 if n <= 12 else 3
        for eps in (0.0, 1e-5):
            bench(n, models, eps, args.reps, device)


if __name__ == "__main__":
    main()
