"""The sweep driver: expand, skip what is done, execute the rest, write each result as it finishes.

    summary = run_sweep([sweep_a, sweep_b], Store("results"), backend="local", workers=2)

Everything is expanded and validated before the first run starts. Runs already "ok" or "diverged" in
the store are skipped (resume); "failed" runs are skipped unless `retry_failed=True`. A run is started
only under a lease (`Store.acquire`), renewed by a heartbeat thread while it is in flight: a run
another live driver holds is waited for (and counted as done only once it is), a run whose lease went
stale (its driver died) is taken over. Only this process writes to the store; workers
return results. A worker crash fails only the run that caused it: runs that were in flight beside it
are re-run one at a time before anything else is scheduled, so the crashing run is identified.
Ctrl-C stores the results the workers already finished (waiting `INTERRUPT_GRACE_S` for those on
their way), stops the workers still running and gives their leases up, then re-raises.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape as rich_escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from learnability.device import check_device, resolve_device
from learnability.errors import UserError, check_choice
from learnability.sweep.ensemble import group_runs
from learnability.sweep.executors import check_ray_address, make_executor
from learnability.sweep.jobs import get_job
from learnability.sweep.spec import RunSpec, Sweep
from learnability.sweep.store import Heartbeat, Store

__all__ = ["BACKENDS", "SweepSummary", "check_run_options", "collect_runs", "run_sweep"]

BACKENDS = ("local", "ray")


@dataclass
class SweepSummary:
    total: int = 0  # runs the sweeps ask for
    skipped: int = 0  # finished in the store, before this call or by another driver during it
    by_others: int = 0  # of the skipped: finished by another driver while this one waited
    ok: int = 0
    failed: int = 0
    diverged: int = 0
    crashed: int = 0  # of the failed: worker died
    seconds: float = 0.0  # wall time of this call
    run_seconds: float = 0.0  # sum of the executed runs' own times
    statuses: dict[str, str] = field(
        default_factory=dict
    )  # run_id -> status, for runs executed now
    failures: list[tuple[str, str]] = field(default_factory=list)  # (run_id, error)

    @property
    def executed(self) -> int:
        return self.ok + self.failed + self.diverged

    def line(self) -> str:
        return (
            f"{self.total} runs: {self.ok} ok, {self.failed} failed, {self.diverged} diverged, "
            f"{self.skipped} already done"
            + (f" ({self.by_others} by another driver)" if self.by_others else "")
            + f"; {self.seconds:.1f} s"
        )


MAX_THREADS = 1024
MAX_RAY_WORKERS = 4096  # runs in flight on a cluster


def max_local_workers() -> int:
    """The most processes a local pool may have: each holds torch (hundreds of MB), so far more
    than the cores only exhausts memory."""
    return max(8, 4 * (os.cpu_count() or 1))


_ADDRESS = re.compile(r"(ray://)?[A-Za-z0-9_.\-\[\]:]+:[0-9]{1,5}")


def check_run_options(
    backend: str,
    workers: int | None,
    address: str | None,
    device: str,
    threads: int,
    cli: bool = False,
) -> None:
    """UserError (one line, naming the value and what is allowed) for options a sweep cannot run
    with; checked before the store is opened, so a refused command writes nothing. `cli` names the
    options as the command line spells them."""

    def name(option: str, value: object) -> str:
        return f"--{option} {value}" if cli else f"{option.replace('-', '_')}={value!r}"

    check_choice("backend", backend, BACKENDS)
    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise UserError("the ray backend needs Ray: pip install 'learnability[ray]'")
    if address is not None:
        if backend != "ray":
            raise UserError(
                f"{name('address', address)} is only for --backend ray (a Ray cluster's HOST:PORT); "
                f"the {backend} backend runs on this machine: drop --address or add --backend ray"
            )
        port = address.rsplit(":", 1)[-1]
        if address != "auto" and not (
            _ADDRESS.fullmatch(address) and port.isdigit() and 1 <= int(port) <= 65535
        ):
            raise UserError(
                f"{name('address', address)} is not a Ray address; give HOST:PORT (e.g. "
                "127.0.0.1:6379), ray://HOST:PORT or auto"
            )
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
            raise UserError(f"{name('workers', workers)} is not allowed; give an integer ≥ 0")
        if workers == 0 and backend == "ray":
            raise UserError(
                f"{name('workers', 0)} (inline, in this process) only works with the local backend; "
                "give --workers N ≥ 1 for Ray"
            )
        limit = max_local_workers() if backend == "local" else MAX_RAY_WORKERS
        if workers > limit:
            raise UserError(
                f"{name('workers', workers)} is too many for the {backend} backend; at most {limit}"
                + (" (4 per CPU core)" if backend == "local" else "")
            )
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise UserError(
            f"{name('threads', threads)} is not allowed; give torch threads per run in 1..{MAX_THREADS}"
        )

    if backend == "ray" and address is not None:
        check_ray_address(address)  # seconds, not Ray's minutes of retries, and before any write
    check_device(device)
    if backend == "local" or address is None:
        resolve_device(
            device
        )  # runs on this machine: a missing GPU is an error before anything runs


def collect_runs(sweeps: Sweep | RunSpec | Iterable[Sweep | RunSpec]) -> list[RunSpec]:
    """Expand sweeps (all of them, before anything runs) into unique RunSpecs."""
    if isinstance(sweeps, (Sweep, RunSpec)):
        sweeps = [sweeps]
    specs: list[RunSpec] = []
    for item in sweeps:
        if isinstance(item, Sweep):
            specs.extend(item.expand())
        elif isinstance(item, RunSpec):
            specs.append(item)
        else:
            raise UserError(f"run_sweep takes Sweeps or RunSpecs, got {type(item).__name__}")
    return specs


PLAIN_EVERY_S = 30.0  # seconds between plain progress lines (a log file), besides each sweep's end


class _Progress:
    """Progress over runs. On a terminal: a rich bar (done / failed / running counts, ETA). Elsewhere
    (output redirected to a log file, where a bar shows nothing until it ends): one plain line when
    a sweep's runs are all finished and at most every `PLAIN_EVERY_S` seconds otherwise, with runs
    done / total, failures and the time elapsed."""

    def __init__(self, enabled: bool, total: int, label: str, per_sweep: dict[str, int]) -> None:
        self.bar: Progress | None = None
        self.plain = enabled and total > 0 and not _animated()
        self.total, self.label = total, label
        self.left = dict(per_sweep)  # runs of each sweep not finished yet
        self.t0 = time.monotonic()
        self.last_line = self.t0
        if not enabled or total == 0 or self.plain:
            return
        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            refresh_per_second=4,
        )
        # the label is a sweep name, user text: "[/x]" in it must print as typed, not as markup
        self.task = self.bar.add_task(rich_escape(label), total=total, counts="")
        self.bar.start()

    def update(self, done: int, counts: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=done, counts=counts)

    def finished(self, sweep: str, done: int, summary: SweepSummary) -> None:
        """One run of `sweep` finished (by this driver or another): a plain line when it was the
        sweep's last, or when `PLAIN_EVERY_S` passed since the last line."""
        if not self.plain:
            return
        self.left[sweep] = self.left.get(sweep, 1) - 1
        now = time.monotonic()
        if self.left[sweep] == 0:
            self._line(f"{sweep} finished", done, summary)
        elif now - self.last_line >= PLAIN_EVERY_S:
            self._line(self.label, done, summary)

    def tick(self, done: int, summary: SweepSummary, waiting: int = 0) -> None:
        """Called every loop: a line every `PLAIN_EVERY_S` even when nothing finished (runs in
        flight for a long time still show the driver is alive, and runs another driver holds why
        it waits)."""
        if self.plain and done < self.total and time.monotonic() - self.last_line >= PLAIN_EVERY_S:
            held = f"; waiting for {waiting} run(s) another driver holds" if waiting else ""
            self._line(self.label, done, summary, held)

    def _line(self, what: str, done: int, summary: SweepSummary, held: str = "") -> None:
        elapsed = time.monotonic() - self.t0
        print(
            f"progress: {what}: {done}/{self.total} runs done ({summary.ok} ok, "
            f"{summary.failed} failed, {summary.diverged} diverged"
            + (f", {summary.by_others} by another driver" if summary.by_others else "")
            + f"); {_clock(elapsed)} elapsed{held}",
            flush=True,
        )
        self.last_line = time.monotonic()

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _animated() -> bool:
    """Whether a progress bar shows here as it moves: a terminal, or a notebook (rich's own test,
    so FORCE_COLOR and TTY_INTERACTIVE count as they do for the bar)."""
    console = Console()
    return bool(getattr(console, "is_interactive", console.is_terminal) or console.is_jupyter)


def _clock(seconds: float) -> str:
    """1 h 02 min 03 s, 4 min 05 s or 6 s."""
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min {s % 60:02d} s"
    if s >= 60:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s} s"


def run_sweep(
    sweeps: Sweep | RunSpec | Iterable[Sweep | RunSpec],
    store: Store | str | Path,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    device: str = "cpu",
    retry_failed: bool = False,
    progress: bool = True,
    threads_per_worker: int = 1,
    ensembles: bool = True,
) -> SweepSummary:
    """Execute the runs of `sweeps` not yet done in `store`; returns counts and timings.

    backend "local": a process pool of `workers` processes (default: CPU count; 0 runs inline, for
    debugging). backend "ray": Ray tasks at `address` (HOST:PORT), or a local Ray started here.
    Each run uses `threads_per_worker` torch threads on `device` ("cpu", "cuda", "auto", ...).
    With `ensembles`, runs that differ only in their seeds go to a worker together and train as one
    stacked model where that measures faster (`learnability.sweep.ensemble`; same results)."""
    t0 = time.perf_counter()
    check_run_options(backend, workers, address, device, threads_per_worker)
    specs = collect_runs(sweeps)
    _check_threads(specs, threads_per_worker)
    own_store = not isinstance(store, Store)
    if not isinstance(store, Store):
        store = Store(store)
    summary = SweepSummary(total=len(specs))
    try:
        _drive(
            specs,
            store,
            summary,
            backend,
            workers,
            address,
            device,
            retry_failed,
            progress,
            threads_per_worker,
            ensembles,
        )
    finally:
        summary.seconds = time.perf_counter() - t0
        if own_store:
            store.close()
    return summary


def _check_threads(specs: list[RunSpec], threads: int) -> None:
    # the thread count changes results (how sums are split): a run on N ≠ 1 threads must have its
    # own run id. A job config with a `threads` setting says it (and the run id holds it); for any
    # other job, N ≠ 1 would store different results under the same ids, so it is refused.
    if threads == 1:
        return
    fixed = sorted({s.job for s in specs if not hasattr(s.config, "threads")})
    if fixed:
        raise UserError(
            f"threads_per_worker={threads}: job {fixed[0]!r} has no `threads` setting, so its run "
            "ids cannot record the thread count, which changes results; use 1, or set the job "
            "config's threads where it has one"
        )


def _drive(
    specs: list[RunSpec],
    store: Store,
    summary: SweepSummary,
    backend: str,
    workers: int | None,
    address: str | None,
    device: str,
    retry_failed: bool,
    progress: bool,
    threads: int,
    ensembles: bool = True,
) -> None:
    stored = store.status_of(s.run_id for s in specs)
    done_states = {"ok", "diverged"} | (set() if retry_failed else {"failed"})
    todo = deque(s for s in specs if stored.get(s.run_id) not in done_states)
    summary.skipped = len(specs) - len(todo)
    modules = {s.job: get_job(s.job).module for s in todo}
    # the executor first: a backend that cannot start (no Ray) leaves the store untouched
    executor = None
    if todo:
        executor = make_executor(
            backend, workers, address, threads, device, tuple(modules.values())
        )
        if ensembles:  # seeds of one shape travel together (they may train as one stacked model)
            executor, grouped = group_runs(executor, todo, device, threads)
            todo = deque(grouped)
    store.add_members(specs)
    if executor is None:
        return
    names = list(dict.fromkeys(s.sweep for s in todo))
    studies = {s.study for s in todo}
    if len(names) == 1:
        label = names[0]
    elif len(studies) == 1 and "" not in studies:
        label = f"{studies.pop()} ({len(names)} sweeps)"
    else:
        label = f"{names[0]} +{len(names) - 1}"
    per_sweep: dict[str, int] = {}
    for s in todo:
        per_sweep[s.sweep] = per_sweep.get(s.sweep, 0) + 1
    short = label if len(label) <= 30 else label[:29] + "…"
    bar = _Progress(progress, len(todo), short, per_sweep)
    in_flight: dict[str, tuple[RunSpec, bool]] = {}
    suspects: deque[RunSpec] = deque()  # in flight when a pool died: re-run alone
    # results the executor handed over and not yet stored: a Ctrl-C between the two still stores them
    arrived: deque[tuple[str, dict]] = deque()

    def payload(spec: RunSpec) -> dict[str, Any]:
        return {
            "run_id": spec.run_id,
            "job": spec.job,
            "module": modules[spec.job],
            "config": spec.config_dict,
            "run_dir": str(store.run_dir(spec.run_id)),
            "device": device,
            # a config's own thread count wins (it is in the run id); other jobs run on one
            "threads": getattr(spec.config, "threads", threads),
        }

    skipped_at_start = summary.skipped

    def done_now() -> int:
        return summary.executed + (summary.skipped - skipped_at_start)

    def refresh(waiting: int = 0) -> None:
        counts = (
            f"[green]{summary.ok} ok[/] [red]{summary.failed} failed[/] "
            f"[yellow]{summary.diverged} div[/] {len(in_flight)} run"
        )
        if waiting:
            counts += f" {waiting} in another driver"
        bar.update(done_now(), counts)
        bar.tick(done_now(), summary, waiting)

    waiting: dict[str, RunSpec] = {}  # under another driver's live lease: checked again later
    next_check = 0.0

    def start(spec: RunSpec, isolated: bool) -> None:
        executor.submit(spec.run_id, payload(spec))
        in_flight[spec.run_id] = (spec, isolated)

    def take(spec: RunSpec) -> None:
        state = store.acquire(spec, retry_failed)
        if state == "claimed":
            waiting.pop(spec.run_id, None)
            start(spec, False)
        elif state == "done":  # finished meanwhile (by another driver): it really is done
            waiting.pop(spec.run_id, None)
            summary.skipped += 1
            summary.by_others += 1
            bar.finished(spec.sweep, done_now(), summary)
        else:
            waiting[spec.run_id] = spec

    def store_arrived(interrupted: bool = False) -> None:
        # each result leaves `arrived` only once it is stored (or handed on as a suspect)
        while arrived:
            run_id, result = arrived[0]
            spec, isolated = in_flight[run_id]
            crashed_beside = result.get("crashed") and result.get("crash_group", 1) > 1
            if crashed_beside and not isolated:
                if not interrupted:  # interrupted: no re-run; its lease is released below
                    suspects.append(spec)
                    del in_flight[run_id]
                arrived.popleft()
                continue
            if store.record_result(spec, result):
                _count(summary, spec, result)
            else:  # another driver took the run over (our lease had lapsed) and finished it
                summary.skipped += 1
                summary.by_others += 1
            del in_flight[run_id]
            arrived.popleft()
            bar.finished(spec.sweep, done_now(), summary)

    try:
        with Heartbeat(store):
            while todo or suspects or in_flight or waiting:
                if suspects:
                    if not in_flight:
                        start(suspects.popleft(), True)
                else:
                    while todo and len(in_flight) < executor.capacity:
                        take(todo.popleft())
                    now = time.monotonic()
                    if waiting and not todo and now >= next_check:
                        # another driver's runs: take over those whose lease went stale
                        next_check = now + min(1.0, store.lease_seconds / 4)
                        for spec in list(waiting.values()):
                            if len(in_flight) < executor.capacity:
                                take(spec)
                arrived.extend(executor.poll(timeout=0.25))
                store_arrived()
                if not in_flight and waiting:
                    time.sleep(0.25)  # only waiting for other drivers: poll returned at once
                refresh(len(waiting))
    except KeyboardInterrupt:
        # Ctrl-C: runs that finished in their workers are results, not waste: store them (and any
        # that finish within a short grace) before the workers are stopped
        _store_what_finished(executor, in_flight, arrived, store_arrived)
        raise
    finally:
        bar.stop()
        executor.close()
        if in_flight:  # interrupted: let another driver take these over at once
            with contextlib.suppress(Exception):
                store.release(in_flight)


INTERRUPT_GRACE_S = 2.0  # seconds a Ctrl-C waits for results already on their way from workers


def _store_what_finished(
    executor: Any,
    in_flight: dict[str, tuple[RunSpec, bool]],
    arrived: deque[tuple[str, dict]],
    store_arrived: Any,
) -> None:
    """After a Ctrl-C: store every result the workers finished, waiting at most `INTERRUPT_GRACE_S`
    for those in transit; a second Ctrl-C stops the waiting (what is stored by then stays)."""
    deadline = time.monotonic() + INTERRUPT_GRACE_S
    with contextlib.suppress(KeyboardInterrupt):
        store_arrived(interrupted=True)
        while in_flight and time.monotonic() < deadline:
            got = executor.poll(timeout=max(0.0, min(0.25, deadline - time.monotonic())))
            arrived.extend((k, r) for k, r in got if k in in_flight)
            store_arrived(interrupted=True)


def _count(summary: SweepSummary, spec: RunSpec, result: dict) -> None:
    status = result["status"]
    summary.statuses[spec.run_id] = status
    if status == "ok":
        summary.ok += 1
    elif status == "diverged":
        summary.diverged += 1
    else:
        summary.failed += 1
        summary.crashed += bool(result.get("crashed"))
        summary.failures.append((spec.run_id, result.get("error") or ""))
    summary.run_seconds += result.get("seconds") or 0.0
