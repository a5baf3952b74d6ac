"""The paper scale runs, in miniature: every distinct kind of run of the four studies' paper plans,
shrunk to a tiny size and run once on the CPU through the same `execute_run` a sweep uses.

No GPU has been at hand to run the paper plans, so a paper run's first failure would otherwise come
after hours on someone's GPU box. Here each paper sweep is expanded (every config checked, as
`reproduce --dry-run` does), the runs are grouped by what code they exercise (job, task, model and its
discrete settings, measures and probes), one run per group is shrunk — steps to 1, batches, test
sets, model widths, sample grids and model counts to a few — and executed. It must finish (status ok
or diverged: one step of training may diverge on a purpose-built blowup init), and shrinking must not
change which code runs: only sizes are touched, never a kind, a mode or a measure.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from learnability.config import from_dict, to_dict
from learnability.studies import available_studies, get_study
from learnability.sweep.executors import execute_run
from learnability.sweep.jobs import get_job

# sizes -> a few: keys of any config (at any depth) holding a count of things to build or draw
_SMALL = {
    "steps": 1, "batch_size": 8, "eval_every": 1, "eval_batch": 64, "warmup_steps": 0,
    "test_size": 16, "train_size": 8, "measure_batch": 16, "probe": 16, "probe_rows": 16,
    "fresh_size": 16, "per_length": 4, "completions": 4, "refits": 1, "directions": 2,
    "sharpness_directions": 2, "select_size": 16, "sign_samples": 8, "control_draws": 8,
    "count": 8, "models": 4, "every": 1, "chunk": 16, "stop_after": 1, "n_keys": 16, "n_values": 16,
    "budget": 1, "after_fit": 1,
}  # fmt: skip
_WIDTH = {"d_model": 16, "d_ff": 16, "width": 8, "target_width": 4}
_LISTS = ("n_grid", "m_grid", "ns", "radii", "pca_ks", "subspace_k", "eps", "margins")


def _shrink(data: Any, key: str = "") -> Any:
    if isinstance(data, dict):
        out = {k: _shrink(v, k) for k, v in data.items()}
        if "per_decade" in out:  # a log grid: two points per decade at most
            out["per_decade"] = min(out["per_decade"], 0.5)
        if out.get("name") == "language":  # the tokenizer: fewer merges to learn
            out["vocab_size"] = min(out.get("vocab_size", 300), 300)
        # the scratchpad decodes n steps of up to 2n tokens each: its n is a size (not in the kind)
        if out.get("mode") in ("autoregressive", "plain") and "n" in out:
            out["n"] = min(out["n"], 16)
        if out.get("generation_device") == "auto":
            out["generation_device"] = "cpu"
        return out
    if isinstance(data, list) and key in _LISTS and len(data) > 2:
        return data[:2]
    if isinstance(data, bool) or not isinstance(data, int):
        return "cpu" if key == "device" else data
    if key in _SMALL:
        return min(data, _SMALL[key]) if key != "eval_every" else 1
    if key in _WIDTH:
        return min(data, _WIDTH[key])
    return data


def _kind(config: Any) -> tuple:
    """What code a run exercises: job-level strings and lists of names, task and model settings."""
    data = to_dict(config)
    parts: list[Any] = []
    for section in ("task", "model"):
        sub = data.get(section)
        if isinstance(sub, dict):
            strings = ((k, v) for k, v in sub.items() if isinstance(v, str))
            parts.append(tuple(sorted((k, v) for k, v in strings if not k.endswith("device"))))
    for k, v in sorted(data.items()):
        if isinstance(v, str) and k not in ("function", "device"):
            parts.append((k, v))
        elif isinstance(v, list) and all(isinstance(x, str) for x in v):
            parts.append((k, tuple(v)))  # measures, tracks, probes
    return tuple(parts)


def _paper_groups() -> dict[tuple, Any]:
    groups: dict[tuple, Any] = {}
    for name in available_studies():
        study = get_study(name)
        for sweep in study.sweeps(study.plan("paper")):
            for spec in sweep.expand():  # every paper config is built and checked here
                groups.setdefault((spec.job, *_kind(spec.config)), spec)
    return groups


@pytest.mark.timeout(600)
def test_every_kind_of_paper_run_runs_one_tiny_step_on_the_cpu(tmp_path: Path):
    groups = _paper_groups()
    jobs = {spec.job for spec in groups.values()}
    assert len(jobs) >= 10 and len(groups) >= 20  # the four studies' jobs, each kind once
    failures, slow = [], []
    for i, spec in enumerate(groups.values()):
        job = get_job(spec.job)
        small = to_dict(from_dict(job.config_cls, _shrink(spec.config_dict)))
        assert _kind(from_dict(job.config_cls, small)) == _kind(spec.config)  # sizes only
        t0 = time.perf_counter()
        result = execute_run({
            "run_id": f"smoke{i}", "job": spec.job, "module": job.module, "config": small,
            "run_dir": str(tmp_path / f"run{i}"), "device": "cpu", "threads": 1,
        })  # fmt: skip
        seconds = time.perf_counter() - t0
        if result["status"] not in ("ok", "diverged"):
            failures.append(f"{spec.sweep} ({spec.job}): {result['error']}")
        if seconds > 20:
            slow.append(f"{spec.sweep} ({spec.job}): {seconds:.0f} s")
    assert not failures, "\n".join(failures)
    assert not slow, f"shrink these further: {slow}"
