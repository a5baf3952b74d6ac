"""A tiny job for testing and benchmarking the sweep machinery (registered as `testing.probe`).

It lives in the package (not in tests/) so that every worker — a spawned process, a Ray worker on
another node — can import it by name. It computes something deterministic from its seed with torch
(so results can be compared bit for bit between backends), and can be told to misbehave.

modes: "ok" (compute and return), "raise" (raise RuntimeError), "diverge" (return status diverged),
"exit" (kill the worker process with os._exit, as a segfault would), "sleep" (sleep `sleep_s` first).
`work` adds that many iterations of a pure-Python CPU-bound loop (for scheduling benchmarks).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Literal

from learnability.sweep.jobs import RunContext, register_job


@dataclass
class ProbeConfig:
    seed: int = 0
    x: float = 1.0
    size: int = 8
    mode: Literal["ok", "raise", "diverge", "exit", "sleep"] = "ok"
    sleep_s: float = 0.0
    work: int = 0


def busy_loop(iterations: int) -> int:
    """Pure-Python CPU work (holds one core, releases no GIL): a cheap LCG."""
    acc = 0
    for i in range(iterations):
        acc = (acc * 1103515245 + i) & 0x7FFFFFFF
    return acc


@register_job("testing.probe", ProbeConfig)
def probe(config: ProbeConfig, ctx: RunContext) -> dict:
    import torch

    if config.mode == "raise":
        raise RuntimeError(f"probe asked to fail (seed {config.seed})")
    if config.mode == "exit":
        os._exit(13)
    if config.mode == "sleep" and config.sleep_s > 0:
        time.sleep(config.sleep_s)
    acc = busy_loop(config.work) if config.work else 0
    g = torch.Generator().manual_seed(config.seed)
    a = torch.randn(config.size, config.size, generator=g, dtype=torch.float64)
    value = float((a @ a.T * config.x).tanh().sum())
    ctx.log(0, {"value": value})
    metrics = {"value": value, "norm": float(a.norm()), "acc": acc, "device": str(ctx.device)}
    if config.mode == "diverge":
        metrics["status"] = "diverged"
    return metrics
