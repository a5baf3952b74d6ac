"""Stacked ensembles: several seeds of one shape trained as one batched model, when that is faster.

Small models spend most of a training step in per-operation overhead, not arithmetic. K runs that
differ only in their seeds (same model, same training recipe, same batch shapes) can share every
operation: each parameter becomes one tensor (K, ...) and each matmul one batched matmul over the
member dim (`learnability.models.layers`). On CPU every member's numbers are bit-identical to its own
run alone — batched matmuls give each member the bits of the single one, the LayerNorm runs the single
kernel per member, each member keeps its own data stream, optimiser state (one fused kernel over all
members' tensors, each tensor as it would be alone), gradient clipping, evaluations, hooks, early stop
and divergence — so the execution mode is not part of the run id: a run id still means one result.
`tests/test_ensemble.py` checks it against separate runs.

Whether stacking pays depends on the shape (it stops paying once the arithmetic dominates), so it is
measured, not assumed: `fit_stacked` times the first `PROBE` steps of the members one by one, then
`PROBE` steps stacked, and continues with whichever took less CPU time per member-step. Nothing is
thrown away: probe steps are real training steps (the two modes compute the same numbers).

How runs get there. The sweep runner (`runner.run_sweep`) groups the runs it is about to execute
(`group_runs`): runs of one job whose configs differ only in top-level `*seed` fields, with a model
and a training recipe, on CPU with one torch thread, at most `MAX_MEMBERS` per group. A group goes to a
worker as one payload of the job `ensemble.group`, which runs its members' jobs unchanged, one at a
time, each in its own thread: when a member calls `Trainer.fit`, its thread parks; once every member
has parked (or finished), the parked trainers that can be stacked (`stack_key`) train together and
each thread resumes with its own `TrainResult`. Each member is still its own run in the store with its
own metrics, log and files; its stored `versions.execution` says how it was trained. A group whose
worker crashes is re-run one run at a time, as the runner does for crashes anyway.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch
from torch import nn

from learnability.sweep.jobs import RunContext, register_job
from learnability.tasks.base import Batch
from learnability.train import FIT_REDIRECT, Run, Trainer, TrainResult, compute_loss, make_optimizer

__all__ = [
    "MAX_MEMBERS",
    "MODE",
    "PROBE",
    "GroupingExecutor",
    "StackedFit",
    "fit_stacked",
    "group_key",
    "group_runs",
    "stack_key",
    "stack_models",
    "unstackable",
]

# runs per group: a sweep's seeds of one shape split into the fewest groups of at most this many, as even
# as they go (24 seeds: two of 12). Measured on a 2-core EPYC (AVX2), CPU ms per member-step of the
# sensitivity scaling shape at K = 8 / 12 / 16 / 24: 2.43 / 2.13 / 2.03 / 1.97 (n = 4), 2.92 / 2.77 /
# 2.48 / 2.45 (n = 8); past 16 the batched tensors outgrow the caches (docs/PERFORMANCE.md)
MAX_MEMBERS = 16
PROBE = 8  # steps timed in each mode before choosing (the first of each is a warm-up)
# "measure": the probe decides; "stacked" / "single" fix the mode (tests, benchmarks: same numbers)
MODE = "measure"
GROUP_JOB = "ensemble.group"
STACKED_ARCHS = ("boolean_transformer", "gpt")  # the models with a stacked path (`run`)


# -- which trainers can share a stacked model -----------------------------------------------------------------
def unstackable(trainer: Trainer) -> str | None:
    """Why `trainer` cannot be trained stacked (None if it can)."""
    model, c = trainer.model, trainer.config
    if not callable(getattr(model, "run", None)):
        return f"no stacked path for {type(model).__name__}"
    if getattr(getattr(model, "config", None), "dropout", 0.0) or any(
        isinstance(m, nn.Dropout) and m.p > 0 for m in model.modules()
    ):
        return "dropout draws from the global random stream"
    if c.checkpoint_path or c.resume or c.checkpoint_every:
        return "trainer checkpoints"
    if trainer.progress:
        return "progress bar"
    if trainer.device.type != "cpu":
        return f"device {trainer.device} (bit-identity is checked on CPU)"
    if torch.get_num_threads() != 1:
        return "more than one torch thread (sums would split differently)"
    if getattr(trainer.task, "variable", False):
        return "variable-length batches"
    return None


def stack_key(trainer: Trainer) -> str:
    """Trainers with equal keys train as one stacked model: same model shape and settings, same
    training recipe, loss and trainable parameters (seeds, data and tasks may differ)."""
    model = trainer.model
    trains = [n for n, p in model.named_parameters() if p.requires_grad]
    fixed = None if trainer.fixed is None else len(trainer.fixed)
    return repr(
        (type(model).__name__, model.config, trainer.config, trainer.task.loss, trains, fixed)
    )


def stack_models(models: Sequence[nn.Module]) -> nn.Module:
    """One module whose every parameter is the members' parameters stacked (K, ...); the members'
    own parameters become views of it, so they see (and their optimiser steps write) the stack."""
    stacked = copy.deepcopy(models[0])
    own = [dict(m.named_parameters()) for m in models]
    for name, param in list(stacked.named_parameters()):
        owner_name, _, attr = name.rpartition(".")
        owner = stacked.get_submodule(owner_name) if owner_name else stacked
        value = torch.stack([o[name].detach() for o in own])
        owner._parameters[attr] = nn.Parameter(value, requires_grad=param.requires_grad)
    for k, o in enumerate(own):
        for name, big in stacked.named_parameters():
            o[name].data = big.data[k]
    return stacked


def _detach_members(models: Iterable[nn.Module]) -> None:
    """Give members their own storage again (the stack can then be freed)."""
    for m in models:
        for p in m.parameters():
            p.data = p.data.clone()


class _Unstackable(Exception):
    """This step's batches cannot be stacked (their shapes differ): take it member by member."""


def _stack_batches(batches: Sequence[Batch]) -> tuple[torch.Tensor, Batch]:
    first = batches[0]
    for b in batches[1:]:
        same = b.inputs.shape == first.inputs.shape and b.targets.shape == first.targets.shape
        masks = (b.mask is None) == (first.mask is None) and (
            b.mask is None or first.mask is None or b.mask.shape == first.mask.shape
        )
        if not (same and masks):
            raise _Unstackable
    inputs = torch.stack([b.inputs for b in batches])
    flat = Batch(
        inputs.flatten(0, 1),
        torch.cat([b.targets for b in batches]),
        None if first.mask is None else torch.cat([b.mask for b in batches if b.mask is not None]),
    )
    return inputs, flat


class _Stack:
    """The stacked model of some runs and the optimiser that steps it: each member's own tensors
    (views of the stack), sharing each member optimiser's state, so clipping is per member and every
    fused kernel sees the tensor it sees alone. (A fused AdamW over the stacked tensors themselves gave
    each member its own bits on one CPU and not on another: AVX-512 splits the vectors differently.)"""

    def __init__(self, trainers: list[Trainer], members: list[int]) -> None:
        self.trainers, self.members = trainers, members
        self.module = stack_models([t.model for t in trainers])
        self.big = list(self.module.parameters())
        self.own = [
            list(t.model.parameters()) for t in trainers
        ]  # member j's, in the stack's order
        self.optimizer = make_optimizer([p for t in trainers for p in t.params], trainers[0].config)
        for t in trainers:
            for p in t.params:
                self.optimizer.state[p] = t.optimizer.state[p]

    def update(self, keep: list[int], lr: float) -> None:
        """The optimiser step for the members in `keep` (the others' numbers stay as they were)."""
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        clip = self.trainers[0].config.grad_clip
        for j, own in enumerate(self.own):
            for p, b in zip(own, self.big):
                p.grad = b.grad[j] if (j in keep and b.grad is not None) else None
            if clip is not None and j in keep:
                torch.nn.utils.clip_grad_norm_(self.trainers[j].params, clip)
        self.optimizer.step()

    def release(self) -> None:
        """Members get their own tensors back (their optimiser state was always their own)."""
        _detach_members(t.model for t in self.trainers)


# -- training several runs as one ---------------------------------------------------------------------------
@dataclass
class StackedFit:
    """Fits of several compatible trainers, each a `Run`, computed stacked or one by one."""

    trainers: list[Trainer]
    runs: list[Run]
    mode: str = "single"
    probe: dict[str, float] = field(default_factory=dict)
    errors: dict[int, BaseException] = field(default_factory=dict)  # a run's own code raised
    _stack: _Stack | None = None

    # -- one step, either way ---------------------------------------------------------------------------
    def _own(self, i: int, fn: Callable[[], Any]) -> Any:
        """Call run i's own code (its model, evaluation, hooks, log): what it raises is that run's
        failure, as it would be alone; the other runs go on."""
        try:
            return fn()
        except Exception as exc:
            self.errors[i] = exc
            self.runs[i].status = "failed"
            return None

    def single_step(self, i: int, batch: Batch | None = None) -> None:
        self._own(i, lambda: self.trainers[i].step(self.runs[i], batch))

    def _restack(self) -> _Stack | None:
        """The stack of the runs still going (two or more), rebuilt when that set changed."""
        live = [i for i, r in enumerate(self.runs) if r.active]
        if self._stack is not None and self._stack.members == live:
            return self._stack
        self._unstack()
        if len(live) >= 2:
            self._stack = _Stack([self.trainers[i] for i in live], live)
        return self._stack

    def _unstack(self) -> None:
        if self._stack is not None:
            self._stack.release()
            self._stack = None

    def stacked_step(self) -> None:
        """One step of every stacked run at once."""
        stack = self._restack()
        assert stack is not None
        members = stack.members
        runs = [self.runs[i] for i in members]
        trainers = stack.trainers
        factor = runs[0].factor()
        batches = [r.batch() for r in runs]
        try:
            inputs, flat = _stack_batches(batches)
        except _Unstackable:
            self._unstack()
            for i, b in zip(members, batches):
                self.single_step(i, b)
            return
        at = trainers[0].at  # the same task config in every member: the same query positions
        if at is not None:
            flat, batches = flat.at(at), [b.at(at) for b in batches]
        out = stack.module.run(inputs) if at is None else stack.module.run(inputs, at)  # type: ignore[operator]
        losses = compute_loss(trainers[0].task.loss, out.flatten(0, 1), flat, groups=len(runs))
        values = losses.tolist()
        keep = [
            j for j, v in enumerate(values) if self._own(members[j], partial(runs[j].accept, v))
        ]
        for big in stack.big:
            big.grad = None
        if not keep:
            return
        (losses.sum() if len(keep) == len(runs) else losses[keep].sum()).backward()
        stack.update(keep, trainers[0].config.lr * factor)
        for j in keep:
            self._own(members[j], partial(runs[j].advance, out[j], batches[j], values[j], factor))

    # -- the whole fit ----------------------------------------------------------------------------------
    def fit(self) -> list[TrainResult | BaseException]:
        """Each run's TrainResult, or the exception its own code raised. An exception of the
        stacked machinery itself propagates (the caller then runs every member again alone)."""
        start = time.perf_counter()
        try:
            self._fit()
        finally:
            self._unstack()
        share = (time.perf_counter() - start) / len(self.runs)
        out: list[TrainResult | BaseException] = []
        for i, r in enumerate(self.runs):
            if i in self.errors:
                out.append(self.errors[i])
                continue
            result = self._own(i, r.finish)
            if result is None:
                out.append(self.errors[i])
                continue
            result.seconds = share  # each run's share of the time they took together
            out.append(result)
        return out

    def _fit(self) -> None:
        k = len(self.runs)
        steps = self.trainers[0].config.steps
        if k < 2 or MODE == "single" or (MODE == "measure" and steps < 4 * PROBE):
            self.mode = "single"
            self._rest_single()
            return
        if MODE == "stacked":
            self.mode = "stacked"
            while sum(r.active for r in self.runs) >= 2:
                self.stacked_step()
            self._rest_single()
            return
        single: list[float] = []
        for _ in range(PROBE):
            for i, r in enumerate(self.runs):
                if r.active:
                    single.append(self._timed(partial(self.single_step, i)))
        stacked: list[float] = []
        for _ in range(PROBE):
            live = sum(r.active for r in self.runs)
            if live < 2:
                break
            stacked.append(self._timed(self.stacked_step) / live)
        # the first of each mode pays for allocations and first calls; steps that evaluated are out
        t_single = _median(single[k:])
        t_stacked = _median(stacked[1:])
        self.probe = {"single_ms": 1e3 * t_single, "stacked_ms": 1e3 * t_stacked}
        if t_stacked < t_single:
            self.mode = "stacked"
            while sum(r.active for r in self.runs) >= 2:
                self.stacked_step()
        self._rest_single()

    def _timed(self, fn: Callable[[], None]) -> float:
        """CPU seconds of one step, not counting an evaluation it triggered (steps differ in that)."""
        evals = [len(r.state["history"]) for r in self.runs]
        t0 = time.process_time()
        fn()
        dt = time.process_time() - t0
        if [len(r.state["history"]) for r in self.runs] != evals:
            return float("nan")
        return dt

    def _rest_single(self) -> None:
        self._unstack()
        for i, r in enumerate(self.runs):
            while r.active:
                self.single_step(i)


def fit_stacked(trainers: Sequence[Trainer], data_seeds: Sequence[int]) -> StackedFit:
    """Fit compatible trainers (equal `stack_key`, none `unstackable`) stacked where that measures
    faster; `.fit()` gives each its TrainResult, as `trainer.fit(seed)` would."""
    runs = [t.start(s) for t, s in zip(trainers, data_seeds)]
    return StackedFit(list(trainers), runs)


def _median(values: list[float]) -> float:
    """Median of the timed steps (NaN marks a step that also evaluated); inf if none."""
    kept = [v for v in values if v == v]
    return statistics.median(kept) if kept else float("inf")


# -- a group of runs in one worker --------------------------------------------------------------------------
@dataclass
class GroupConfig:
    """The payloads (as `executors.execute_run` takes them) of the runs trained together."""

    members: list[dict] = field(default_factory=list)


class _GroupAborted(Exception):
    """Raised in a member's thread when its group stops (see `_Group.run`)."""


class _Member:
    """One member run in its own thread; it only runs while the group hands it the baton."""

    def __init__(self, payload: dict, group: _Group) -> None:
        self.payload, self.group = payload, group
        self.go = threading.Semaphore(0)
        self.state = "ready"  # ready | parked | done
        self.trainer: Trainer | None = None
        self.data_seed = 0
        self.answer: TrainResult | BaseException | None = None
        self.result: dict | None = None
        self.execution: list[str] = []
        self.busy = 0.0  # wall seconds this member's own code ran
        self.thread = threading.Thread(
            target=self._main, name=f"member-{payload['run_id']}", daemon=True
        )

    def _main(self) -> None:
        from learnability.sweep.executors import execute_run

        self.go.acquire()
        FIT_REDIRECT.fit = self._park
        t0 = time.perf_counter()
        try:
            self.result = execute_run(self.payload)
        finally:
            self.busy += time.perf_counter() - t0
            FIT_REDIRECT.fit = None
            self.state = "done"
            self.group.back.release()

    def _park(self, trainer: Trainer, data_seed: int, init_seed: int | None) -> TrainResult:
        self.trainer, self.data_seed, self.state = trainer, int(data_seed), "parked"
        self.busy += time.perf_counter()  # the parked interval is taken off `busy`: another's time
        self.group.back.release()
        self.go.acquire()
        self.busy -= time.perf_counter()
        answer, self.answer, self.trainer = self.answer, None, None
        if isinstance(answer, BaseException):
            raise answer
        assert answer is not None
        return answer

    def resume(self) -> None:
        """Let this member run until it parks at its next fit or finishes."""
        self.state = "ready"
        self.go.release()
        self.group.back.acquire()


class _Group:
    def __init__(self, payloads: list[dict]) -> None:
        self.back = threading.Semaphore(0)
        self.members = [_Member(p, self) for p in payloads]

    def run(self) -> dict[str, dict]:
        for m in self.members:
            m.thread.start()
        shares: dict[int, float] = {}
        try:
            while True:
                for m in self.members:
                    if m.state == "ready":
                        m.resume()
                parked = [m for m in self.members if m.state == "parked"]
                if not parked:
                    break
                for batch, why in _partition(parked):
                    t0 = time.perf_counter()
                    note = self._fit(batch, why)
                    share = (time.perf_counter() - t0) / len(batch)
                    for m in batch:
                        m.state = "ready"  # answered: it resumes on the next round
                        m.execution.append(note)
                        shares[id(m)] = shares.get(id(m), 0.0) + share
        except BaseException as exc:
            # the stacked machinery failed: stop every member; the runner runs them again alone
            for m in self.members:
                while m.state != "done":
                    if m.state == "parked":
                        m.answer = _GroupAborted(f"ensemble group aborted: {exc!r}")
                    m.resume()
            raise
        for m in self.members:
            m.thread.join()
        out = {}
        for m in self.members:
            result = m.result or {"status": "failed", "metrics": {}, "error": "member did not run"}
            result["seconds"] = m.busy + shares.get(id(m), 0.0)
            result["versions"] = {
                **(result.get("versions") or {}),
                "execution": "; ".join(dict.fromkeys(m.execution)) or "single",
            }
            out[m.payload["run_id"]] = result
        return out

    def _fit(self, members: list[_Member], why: str | None) -> str:
        trainers = [m.trainer for m in members if m.trainer is not None]
        assert len(trainers) == len(members)
        if why is not None or len(members) < 2:
            for m, t in zip(members, trainers):
                m.answer = _answer(partial(t.fit, m.data_seed))
            return f"single ({why})" if why else "single"
        fit = fit_stacked(trainers, [m.data_seed for m in members])
        for m, r in zip(members, fit.fit()):
            m.answer = r
        probe = fit.probe
        timing = (
            f", probe {probe['stacked_ms']:.2f} vs {probe['single_ms']:.2f} ms per member-step"
            if probe
            else ""
        )
        return f"{fit.mode} ×{len(members)}{timing}"


def _answer(fn: Callable[[], TrainResult]) -> TrainResult | BaseException:
    try:
        return fn()
    except Exception as exc:
        return exc


def _partition(parked: list[_Member]) -> list[tuple[list[_Member], str | None]]:
    """Parked members in groups that train together, each with the reason it cannot (or None)."""
    groups: dict[str, list[_Member]] = {}
    out: list[tuple[list[_Member], str | None]] = []
    for m in parked:
        assert m.trainer is not None
        why = unstackable(m.trainer)
        if why is not None:
            out.append(([m], why))
        else:
            groups.setdefault(stack_key(m.trainer), []).append(m)
    out.extend((g, None) for g in groups.values())
    return out


@register_job(GROUP_JOB, GroupConfig)
def group_job(config: GroupConfig, ctx: RunContext) -> dict[str, Any]:
    """Run the member runs together (module doc); their results, keyed by run id."""
    try:
        return {"members": _Group(list(config.members)).run()}
    finally:
        shutil.rmtree(ctx.run_dir, ignore_errors=True)  # a scratch folder, not a run's


# -- the runner's side: which runs go together ----------------------------------------------------------------
def group_key(spec: Any) -> str | None:
    """Runs with equal keys may train together: one job, configs equal up to top-level `*seed`
    fields, with a model and a training recipe (None: run alone)."""
    config = spec.config
    model, train = getattr(config, "model", None), getattr(config, "train", None)
    dropout = getattr(model, "dropout", 0)
    if getattr(model, "arch", None) not in STACKED_ARCHS or dropout:
        return None
    if train is None or train.checkpoint_every or train.checkpoint_path or train.resume:
        return None
    plain = {k: v for k, v in spec.config_dict.items() if not k.endswith("seed")}
    return spec.job + json.dumps(plain, sort_keys=True, default=str)


def group_runs(
    executor: Any, todo: Iterable[Any], device: str, threads: int
) -> tuple[Any, list[Any]]:
    """The executor to submit `todo` to, and `todo` reordered so each group's runs are adjacent.

    Groups form only on CPU with one torch thread (where stacked runs are checked bit-identical);
    anywhere else the executor and the order are returned as they are."""
    specs = list(todo)
    if device != "cpu" or threads != 1:
        return executor, specs
    keyed: dict[str, list[Any]] = {}
    order: list[list[Any]] = []
    for s in specs:
        key = group_key(s)
        if key is None:
            order.append([s])
            continue
        if key not in keyed:
            keyed[key] = []
            order.append(keyed[key])
        keyed[key].append(s)
    groups: dict[str, str] = {}
    ordered: list[Any] = []
    for members in order:
        for chunk in even_chunks(members, MAX_MEMBERS):
            if len(chunk) > 1:
                gid = f"ensemble-{chunk[0].run_id}-{len(chunk)}"
                groups.update((s.run_id, gid) for s in chunk)
            ordered.extend(chunk)
    if not groups:
        return executor, specs
    return GroupingExecutor(executor, groups), ordered


def even_chunks(items: list[Any], most: int) -> list[list[Any]]:
    """`items` in order, in the fewest chunks of at most `most`, their sizes differing by one at most."""
    count = -(-len(items) // most) if items else 0
    size, extra = divmod(len(items), count) if count else (0, 0)
    out, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return out


class GroupingExecutor:
    """Wraps an executor: runs of one group, submitted one after another, go out as one
    `ensemble.group` payload; their results come back one per run, as from the inner executor."""

    def __init__(self, inner: Any, groups: dict[str, str]) -> None:
        self.inner = inner
        self.group_of = groups
        self.sizes: dict[str, int] = {}
        for gid in groups.values():
            self.sizes[gid] = self.sizes.get(gid, 0) + 1
        self.largest = max(self.sizes.values())
        self.buffer: dict[str, list[tuple[str, dict]]] = {}
        self.flight: dict[str, list[str]] = {}  # inner key -> the run ids it carries
        self.alone: set[str] = set()  # runs of a group that crashed: retried one at a time

    @property
    def capacity(self) -> int:
        """Runs the runner may have in flight: the rest of each group being gathered, and a whole
        group for every free slot of the inner executor."""
        held = sum(len(v) for v in self.flight.values())
        gathering = sum(self.sizes[g] for g in self.buffer)
        free = self.inner.capacity - len(self.flight) - len(self.buffer)
        return held + gathering + max(free, 0) * self.largest

    def submit(self, key: str, payload: dict) -> None:
        gid = self.group_of.get(key)
        if gid is None or key in self.alone:
            self._send(key, [(key, payload)])
            return
        for other in [
            g for g in self.buffer if g != gid
        ]:  # the runner moved on: those are complete
            self._flush(other)
        self.buffer.setdefault(gid, []).append((key, payload))
        if len(self.buffer[gid]) == self.sizes[gid]:
            self._flush(gid)

    def _flush(self, gid: str) -> None:
        self._send(gid, self.buffer.pop(gid))

    def _send(self, key: str, runs: list[tuple[str, dict]]) -> None:
        if len(runs) == 1:
            self.inner.submit(runs[0][0], runs[0][1])
            self.flight[runs[0][0]] = [runs[0][0]]
            return
        first = runs[0][1]
        scratch = os.path.join(tempfile.gettempdir(), f"learnability-{key}-{os.getpid()}")
        self.inner.submit(
            key,
            {
                "run_id": key,
                "job": GROUP_JOB,
                "module": __name__,
                "config": {"members": [p for _, p in runs]},
                "run_dir": scratch,
                "device": first.get("device", "cpu"),
                "threads": first.get("threads", 1),
            },
        )
        self.flight[key] = [k for k, _ in runs]

    def poll(self, timeout: float) -> list[tuple[str, dict]]:
        for gid in list(self.buffer):
            self._flush(gid)
        out: list[tuple[str, dict]] = []
        for key, result in self.inner.poll(timeout):
            members = self.flight.pop(key, [key])
            if members == [key]:
                out.append((key, result))
                continue
            got = (
                (result.get("metrics") or {}).get("members")
                if result.get("status") == "ok"
                else None
            )
            if not isinstance(got, dict) or set(got) != set(members):
                # the group itself failed (a crash, or the grouping): each run goes again alone
                self.alone.update(members)
                why = result.get("error") or "the ensemble group failed"
                out.extend((m, _group_crash(why, len(members))) for m in members)
                continue
            out.extend((m, got[m]) for m in members)
        return out

    def close(self) -> None:
        self.inner.close()


def _group_crash(error: str, size: int) -> dict:
    now = time.time()
    return {
        "status": "failed",
        "metrics": {},
        "error": f"{error} (in an ensemble group of {size}; re-run alone)",
        "traceback": None,
        "started": now,
        "finished": now,
        "seconds": None,
        "versions": {},
        "crashed": True,
        "crash_group": max(size, 2),
    }
