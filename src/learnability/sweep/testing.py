"""A tiny job for testing and benchmarking the sweep machinery (registered as `testing.probe`).

It lives in the package (not in tests/) so that every worker — a spawned process, a Ray worker on
another node — can import it by name. It computes something deterministic from its seed with torch
(so results can be compared bit for bit between backends), and can be told to misbehave.

modes: "ok" (compute and return), "raise" (raise RuntimeError), "diverge" (return status diverged),
"exit" (kill the worker process with os._exit, as a segfault would), "sleep" (sleep `sleep_s` first).
`work` adds that many iterations of a pure-Python CPU-bound loop (for scheduling benchmarks).
`marker_dir` makes each completed execution leave a file there (tests count executions per run).
`hold_file` makes runs with seed ≥ `hold_from_seed` wait while that file exists (a test holds a sweep
mid-way, whatever the machine's load, and lets it go by removing the file).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import torch

from learnability.config import HASH_OMIT_DEFAULT
from learnability.sweep.jobs import RunContext, register_job


@dataclass
class ProbeConfig:
    seed: int = 0
    x: float = 1.0
    size: int = 8
    mode: Literal["ok", "raise", "diverge", "exit", "sleep"] = "ok"
    sleep_s: float = 0.0
    work: int = 0
    # a folder where every completed execution leaves one file named after its run id (to count
    # executions: a run that ran twice leaves two); "" = none. Not in the run id when unset.
    marker_dir: str = field(default="", metadata=HASH_OMIT_DEFAULT)
    # a file: while it exists, runs with seed >= hold_from_seed wait before they start ("" = none)
    hold_file: str = field(default="", metadata=HASH_OMIT_DEFAULT)
    hold_from_seed: int = field(default=0, metadata=HASH_OMIT_DEFAULT)


def busy_loop(iterations: int) -> int:
    """Pure-Python CPU work (holds one core, releases no GIL): a cheap LCG."""
    acc = 0
    for i in range(iterations):
        acc = (acc * 1103515245 + i) & 0x7FFFFFFF
    return acc


@register_job("testing.probe", ProbeConfig)
def probe(config: ProbeConfig, ctx: RunContext) -> dict:

    if config.mode == "raise":
        raise RuntimeError(f"probe asked to fail (seed {config.seed})")
    if config.mode == "exit":
        os._exit(13)
    if config.hold_file and config.seed >= config.hold_from_seed:
        while os.path.exists(config.hold_file):
            time.sleep(0.02)
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
    if config.marker_dir:
        marker = Path(config.marker_dir) / f"{ctx.run_id}.{os.getpid()}.{time.time_ns()}"
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(f"{config.seed}\n")
    return metrics


_AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")


class LocalRayCluster:
    """A throw-away Ray cluster on 127.0.0.1 (`ray start --head` on a free port), for tests/benchmarks.

        with LocalRayCluster(num_cpus=2) as address:
            run_sweep(sweep, store, backend="ray", address=address)

    It is stopped by killing exactly its own processes (those whose command line names its private
    temp dir, and their descendants), never with `ray stop`, which would end every Ray on the host.
    """

    def __init__(self, num_cpus: int = 2, timeout: float = 300.0) -> None:
        self.num_cpus = num_cpus
        self.timeout = timeout
        self.address = ""
        self.temp_dir = ""

    def __enter__(self) -> str:

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        # short path: Ray's unix socket paths must stay under ~100 characters
        self.temp_dir = tempfile.mkdtemp(prefix=f"lr{port}_", dir="/tmp")
        ray = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
        # One explicit auth mode for the head and this driver: a head started while ~/.ray/auth_token
        # exists turns token auth on by itself, while a driver that imported Ray earlier keeps the mode
        # it read then ('disabled'), and the two cannot talk. The cluster listens on loopback only.
        self._saved_env = {k: os.environ.get(k) for k in _AUTH_VARS}
        os.environ["RAY_AUTH_MODE"] = "disabled"
        os.environ.pop("RAY_AUTH_TOKEN", None)
        # without this Ray resolves 127.0.0.1 to the host's external address and listens there
        # (see executors._loopback_only)
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
        cmd = [
            ray, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
            "--num-cpus", str(self.num_cpus), "--include-dashboard", "false",
            "--disable-usage-stats", "--temp-dir", self.temp_dir,
        ]  # fmt: skip
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=self.timeout)
        if done.returncode != 0:
            self.__exit__()
            raise RuntimeError(f"ray start failed: {done.stderr[-2000:]}")
        self.address = f"127.0.0.1:{port}"
        return self.address

    def __exit__(self, *_: object) -> None:

        try:
            import ray

            if ray.is_initialized():
                ray.shutdown()
        except ImportError:
            pass
        if self.temp_dir:
            for pid in _processes_naming(self.temp_dir):
                with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
                    os.kill(pid, signal.SIGKILL)
            shutil.rmtree(self.temp_dir, ignore_errors=True)
        for key, value in getattr(self, "_saved_env", {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _processes_naming(marker: str) -> list[int]:
    """Pids whose command line contains `marker`, plus their descendants (not this process or its
    ancestors). Linux /proc only; elsewhere an empty list."""
    parent: dict[int, int] = {}
    cmdline: dict[int, str] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline[int(entry)] = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat") as f:
                parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    spared = set()
    pid = os.getpid()
    while pid in parent and pid not in spared:
        spared.add(pid)
        pid = parent[pid]
    found = {p for p, c in cmdline.items() if marker in c} - spared
    while True:
        more = {p for p, pp in parent.items() if pp in found} - found - spared
        if not more:
            break
        found |= more
    return sorted(found)
