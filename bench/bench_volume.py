"""Random-model profiling benchmark (study `volume`), every ratio measured side by side in one run.

(a) profile vs forward: models profiled per second at each N (L = 2, D = 16, EOS read-out, eps = 0),
    beside the pre-engine job's per-model work (forward in 16,384-string chunks, profile, flips),
    where one profile is what `volume.random_profiles` does for a model under one eps: the logit table
    on all 2^N strings with LayerNorm statistics, then for each margin (0, 0.01, 0.1) the labels, the
    profile, the same-balance control and the one-bit changes. "Forward" is a bare batched forward of
    the same, already built, models over the same strings. Interleaved repetitions, median ratio.
(b) chunk size: `model_outputs` at the measured default chunk against the former fixed 65,536 strings
    and against other sizes (N = 16; d = 16 and d = 128).
(c) batched ensemble: `ensemble_logit_tables` (one vmapped forward for many models of one shape) against
    a loop of `logit_table`, models per second at each N.

    .venv/bin/python bench/bench_volume.py [--reps 3] [--threads 1] [--device cpu|cuda] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial

import torch

from learnability.boolean import profile_from_truth_table
from learnability.boolean.balance import (
    _cached_samples,
    k0_at_least_probability,
    k0_positive_probability,
)
from learnability.device import resolve_device
from learnability.jobs.volume import (
    RandomProfilesConfig,
    decision_rows,
    table_summary,
    theorem_bound,
)
from learnability.measure.recogniser import (
    ensemble_logit_tables,
    logit_table,
    mean_one_bit_change,
    one_bit_changes,
)
from learnability.measure.sensitivity import all_bit_strings, default_chunk, model_outputs
from learnability.models import build_model


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, device: torch.device) -> float:
    _sync(device)
    start = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - start


def _models(n: int, count: int, device: torch.device, width: int = 16) -> list[torch.nn.Module]:
    config = RandomProfilesConfig(n=n, width=width, depth=2, models=count, eps=[0.0])
    mc = config.model_config(n, "learned")
    return [build_model(mc, seed=config.seed_of(n, j), device=device).eval() for j in range(count)]


def profile_models(models: list, n: int, device: torch.device) -> None:
    for cached in (k0_positive_probability, k0_at_least_probability, _cached_samples):
        cached.cache_clear()  # every repetition pays for its controls
    bound = theorem_bound(n, 2, 16)
    for m in models:
        table, ln = logit_table(m, n, device)
        table = table.cpu()
        table_summary(table, n, ln)
        decision_rows(table, n, [0.0, 0.01, 0.1], bound, draws=100)


def former_models(models: list, n: int, device: torch.device) -> None:
    """The pre-engine job's work per model: one forward in 16,384-string chunks, the profile of [T > 0],
    the one-bit changes; no LayerNorm statistics, margins or control."""
    for m in models:
        table = model_outputs(m, n, device, 16384).cpu()
        profile_from_truth_table((table > 0).numpy().astype("uint8"), n, fourier=False)
        one_bit_changes(table, n)
        mean_one_bit_change(table, n)


def forward_models(models: list, n: int, device: torch.device) -> None:
    tokens = all_bit_strings(n, device)
    chunk = default_chunk(n, 16, 32)
    with torch.inference_mode():
        for m in models:
            for part in tokens.split(chunk):
                m(part)


def bench_profile(ns: list[int], reps: int, device: torch.device) -> None:
    print("(a) profile (one eps, 3 margins, same-balance control) vs bare forward, L=2 D=16")
    for n in ns:
        count = 16 if n <= 12 else 2
        models = _models(n, count, device)
        profile_models(models[:1], n, device)  # warm-up (and the control caches stay cold below)
        prof, fwd, old, ratios, gains = [], [], [], [], []
        fns = [profile_models, forward_models, former_models]
        for rep in range(reps):
            order = fns[rep % 3 :] + fns[: rep % 3]  # rotate which goes first
            times = {fn.__name__: timed(partial(fn, models, n, device), device) for fn in order}
            prof.append(times["profile_models"])
            fwd.append(times["forward_models"])
            old.append(times["former_models"])
            ratios.append(times["profile_models"] / times["forward_models"])
            gains.append(times["former_models"] / times["profile_models"])
        o = statistics.median(old)
        p, f = statistics.median(prof), statistics.median(fwd)
        print(f"  N={n:2d}: {count / p:8.2f} models/s profiled ({count / p / 3:6.2f} models/s under the "
              f"job's 3 eps) | bare forward {count / f:8.2f} models/s | profile/forward "
              f"{statistics.median(ratios):.2f} | pre-engine profile {count / o:8.2f} models/s, "
              f"now/pre-engine speed {statistics.median(gains):.2f}×")  # fmt: skip


def bench_chunks(n: int, reps: int, device: torch.device) -> None:
    print(f"(b) strings per forward chunk, N={n}, L=2 (min over {reps} interleaved reps)")
    for width in (16, 128):
        model = _models(n, 1, device, width)[0]
        chosen = default_chunk(n, width, 2 * width)
        sizes = sorted({128, 256, 512, 1024, 4096, chosen, 1 << 16})
        best: dict[int, float] = {c: float("inf") for c in sizes}
        for _ in range(reps):
            for c in sizes:
                best[c] = min(best[c], timed(partial(model_outputs, model, n, device, c), device))
        line = "  ".join(f"{c}: {best[c]:.2f}s" for c in sizes)
        print(f"  d={width:3d}: {line} | default {chosen}: former 65536 / default "
              f"{best[1 << 16] / best[chosen]:.2f}×, best size {min(best, key=best.get)}")  # fmt: skip


def _loop(models: list, n: int, device: torch.device) -> None:
    for m in models:
        logit_table(m, n, device)


def bench_ensemble(ns: list[int], reps: int, device: torch.device) -> None:
    print("(c) batched ensemble (vmap over stacked parameters) vs a loop, 16 models L=2 D=16")
    for n in ns:
        models = _models(n, 16, device)
        loop, ens = [], []
        for _rep in range(reps):
            a = timed(partial(_loop, models, n, device), device)
            b = timed(partial(ensemble_logit_tables, models, n, device), device)
            loop.append(a)
            ens.append(b)
        a, b = statistics.median(loop), statistics.median(ens)
        print(f"  N={n:2d}: loop {16 / a:8.1f} models/s | ensemble {16 / b:8.1f} models/s | "
              f"ensemble/loop speed {a / b:.2f}×")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true", help="smaller N (a smoke run)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    print(f"volume benchmark, device {device}, {args.threads} thread(s)")
    bench_profile([8, 10] if args.quick else [12, 16], args.reps, device)
    bench_chunks(10 if args.quick else 16, args.reps, device)
    bench_ensemble([4, 6, 8] if args.quick else [4, 6, 8, 10, 12], args.reps, device)


if __name__ == "__main__":
    main()
