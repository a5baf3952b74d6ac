"""Where runs execute: inline, a local process pool, or Ray. All three call the same `execute_run`.

`execute_run(payload) -> result` runs one job in the current process and never raises for a job's
own failure: an exception becomes status "failed" with the traceback's last line as `error` and the
full traceback; a job returning `{"status": "diverged", ...}` becomes "diverged". Torch is limited to
`threads` threads per run, so N workers use N cores and results do not depend on the backend.

Executors are driven by the runner (`runner.run_sweep`) through three calls: `submit(key, payload)`,
`poll(timeout) -> [(key, result)]`, `close()`; `capacity` is how many runs to keep in flight. A worker
that dies (os._exit, segfault, OOM kill) comes back as a result with `crashed=True` and
`crash_group` = how many runs died with it: the local pool loses every run in flight when one
worker dies (`BrokenProcessPool`), so the runner re-runs those one at a time to find the culprit,
and rebuilds the pool. Ray isolates tasks, so its crash groups have size 1.

The local pool uses the forkserver start method (spawn where there is none) with torch preloaded in
the server, so starting or rebuilding a pool costs a fork, not a fresh torch import; forking the
driver itself is avoided because CUDA and torch's thread pools are not fork-safe.
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import json
import multiprocessing
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from importlib.metadata import version
from pathlib import Path
from typing import Any

import torch
import yaml

from learnability.config import from_dict
from learnability.device import resolve_device
from learnability.errors import UserError
from learnability.jsonsafe import json_safe
from learnability.paths import atomic_write_text
from learnability.sweep.jobs import RunContext, get_job, import_job_module
from learnability.sweep.store import process_start_ticks

__all__ = ["InlineExecutor", "LocalExecutor", "RayExecutor", "execute_run", "make_executor"]

_versions: dict[str, str] | None = None


def cpu_model() -> str:
    """The processor's model name (Linux: /proc/cpuinfo), else what `platform` knows. Runs record it:
    the same run id trained on two CPUs can differ in its last bits, and so in its trained model."""
    name, flags = "", set[str]()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name") and not name:
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    if not name:
        return platform.processor() or platform.machine() or "unknown"
    # the vector width decides how sums are split, so it is what changes the last bits
    simd = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else ""
    return f"{name} ({simd})" if simd else name


def versions() -> dict[str, str]:
    """python, torch, learnability versions, the host and its CPU model of this process (cached)."""
    global _versions
    if _versions is None:
        try:
            own = version("learnability")
        except Exception:
            own = "unknown"
        _versions = {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "learnability": own,
            "host": socket.gethostname(),
            "cpu": cpu_model(),
        }
    return _versions


def _dump_yaml(data: dict, path: Path) -> None:

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    atomic_write_text(path, yaml.dump(data, Dumper=dumper, sort_keys=False))


def execute_run(payload: dict) -> dict:
    """Run one job here. payload: run_id, job, module, config (plain dict), run_dir, device, threads.

    Returns {status, metrics, error, traceback, started, finished, seconds, versions}; `seconds` is
    the job function's own wall time."""

    started = time.time()
    seconds = 0.0
    ctx = None
    try:
        threads = payload.get("threads") or 0
        if threads and torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        import_job_module(payload.get("module", ""))
        job = get_job(payload["job"])
        config = from_dict(job.config_cls, payload["config"])
        run_dir = Path(payload["run_dir"])
        run_dir.mkdir(parents=True, exist_ok=True)
        _dump_yaml(payload["config"], run_dir / "config.yaml")

        ctx = RunContext(
            run_id=payload["run_id"], run_dir=run_dir, device=resolve_device(payload["device"])
        )
        t0 = time.perf_counter()
        metrics = job.fn(config, ctx)
        seconds = time.perf_counter() - t0
        if metrics is None:
            metrics = {}
        if not isinstance(metrics, dict):
            raise TypeError(
                f"job {payload['job']!r} returned {type(metrics).__name__}, expected a dict"
            )
        metrics = json_safe(metrics)
        json.dumps(metrics, allow_nan=True)
        status = "diverged" if metrics.get("status") == "diverged" else "ok"
        error = metrics.get("error") if status == "diverged" else None
        tb = None
    except KeyboardInterrupt:
        raise
    except (
        BaseException
    ) as exc:  # SystemExit from a job is a failure of that run, not of the worker
        status = "failed"
        metrics = {}
        tb = traceback.format_exc()
        last = f"{type(exc).__name__}: {exc}".strip()
        error = last.splitlines()[-1] if last else type(exc).__name__
    finally:
        if ctx is not None:
            ctx.close()
    return {
        "status": status,
        "metrics": metrics,
        "error": error,
        "traceback": tb,
        "started": started,
        "finished": time.time(),
        "seconds": seconds,
        "versions": versions(),
    }


def crash_result(error: str, group: int) -> dict:
    now = time.time()
    return {
        "status": "failed",
        "metrics": {},
        "error": error,
        "traceback": None,
        "started": now,
        "finished": now,
        "seconds": None,
        "versions": {},
        "crashed": True,
        "crash_group": group,
    }


class InlineExecutor:
    """Runs each job in the driver process at submit time (workers=0: for debugging with pdb)."""

    capacity = 1

    def __init__(self) -> None:
        self._done: list[tuple[str, dict]] = []

    def submit(self, key: str, payload: dict) -> None:
        self._done.append((key, execute_run(payload)))

    def poll(self, timeout: float) -> list[tuple[str, dict]]:
        done, self._done = self._done, []
        return done

    def close(self) -> None:
        pass


# -- processes that die with their driver -------------------------------------------------------------
# A pool outliving its driver keeps running queued runs whose results nobody stores (they are run
# again on resume) and holds memory. So every pool process dies with the driver: on Linux through
# the kernel's parent-death signal (prctl PR_SET_PDEATHSIG, SIGKILL), set in the forkserver (whose
# parent is the driver) and in each worker (whose parent is the forkserver, or the driver under
# spawn); everywhere, and as a second line of defence, through a watchdog thread polling the
# driver's pid (and its start time, so a reused pid is not taken for the driver).
DRIVER_ENV = "LEARNABILITY_POOL_DRIVER"  # "pid:start-ticks" of the driver, for the forkserver
_PR_SET_PDEATHSIG = 1
WATCH_INTERVAL = 0.5  # seconds between the watchdog's looks at the driver


def _driver_id() -> tuple[int, str]:

    pid = os.getpid()
    return pid, process_start_ticks(pid)


def _alive(pid: int, ticks: str) -> bool:

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    now = process_start_ticks(pid)
    return not (ticks and now and now != ticks)


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send `sig` to this process when its parent dies (Linux); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_driver(pid: int, ticks: str) -> None:
    def watch() -> None:
        while _alive(pid, ticks):
            time.sleep(WATCH_INTERVAL)
        os.kill(os.getpid(), signal.SIGKILL)  # no cleanup to wait for: the driver is gone

    threading.Thread(target=watch, name="driver-watchdog", daemon=True).start()


def guard_forkserver() -> None:
    """Called in the forkserver (by the preload module `learnability.sweep._forkserver`): die with the
    driver that started it."""
    driver = os.environ.get(DRIVER_ENV, "")
    pid_text, _, ticks = driver.partition(":")
    if not pid_text.isdigit() or int(pid_text) != os.getppid():
        return  # not started by a driver of ours: nothing to guard
    pid = int(pid_text)
    armed = set_parent_death_signal()
    if not _alive(pid, ticks):  # the driver died before the signal was armed
        os._exit(1)
    if not armed:  # no kernel help (not Linux): poll. (A thread here makes later forks copy a
        _watch_driver(pid, ticks)  # multi-threaded process, so only where it is needed.)


def _init_worker(threads: int, driver_pid: int = 0, driver_ticks: str = "") -> None:
    # Ctrl-C goes to the whole process group: let the driver handle it, not every worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if driver_pid:
        set_parent_death_signal()  # the parent is the forkserver, which dies with the driver
        if not _alive(driver_pid, driver_ticks):
            os._exit(1)
        _watch_driver(driver_pid, driver_ticks)

    torch.set_num_threads(max(1, threads))


def _context() -> multiprocessing.context.BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(
            [
                "learnability.sweep._forkserver",  # first: arms the parent-death signal
                "torch",
                "learnability.sweep.executors",
                "learnability.sweep.jobs",
            ]
        )
        return ctx
    return multiprocessing.get_context("spawn")


class LocalExecutor:
    """A process pool on this machine; rebuilt after a worker dies."""

    def __init__(self, workers: int, threads: int = 1) -> None:
        self.workers = workers
        self.threads = threads
        # one queued run per worker hides the round trip to the driver between runs
        self.capacity = 2 * workers
        self._futures: dict[Future, str] = {}
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        pid, ticks = _driver_id()
        # read by the forkserver when it starts (it inherits this environment)
        os.environ[DRIVER_ENV] = f"{pid}:{ticks}"
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=_context(),
            initializer=_init_worker,
            initargs=(self.threads, pid, ticks),
        )

    def submit(self, key: str, payload: dict) -> None:
        try:
            future = self._pool.submit(execute_run, payload)
        except BrokenProcessPool:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            future = self._pool.submit(execute_run, payload)
        self._futures[future] = key

    def poll(self, timeout: float) -> list[tuple[str, dict]]:
        if not self._futures:
            return []
        done, _ = wait(list(self._futures), timeout=timeout, return_when=FIRST_COMPLETED)
        out: list[tuple[str, dict | None]] = []
        broken = False
        for future in done:
            key = self._futures.pop(future)
            try:
                out.append((key, future.result()))
            except BrokenProcessPool:
                broken = True
                out.append((key, None))  # filled in below, once the group size is known
            except Exception as exc:  # e.g. a payload that cannot be pickled
                out.append((key, crash_result(f"{type(exc).__name__}: {exc}", 1)))
        if broken:
            # every other run in flight died with the pool: collect them too
            for future, key in list(self._futures.items()):
                try:
                    out.append((key, future.result(timeout=30)))
                except Exception:
                    out.append((key, None))
            self._futures.clear()
            lost = sum(1 for _, r in out if r is None)
            msg = "worker process died (crash, os._exit or killed) while this run was in flight"
            out = [(k, r if r is not None else crash_result(msg, lost)) for k, r in out]
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
        return [(k, r) for k, r in out if r is not None]

    def close(self) -> None:
        if self._futures:
            # runs still in flight (Ctrl-C; what finished is already stored): stop their workers now
            # rather than wait minutes for results nobody would store
            self._kill_workers()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _kill_workers(self) -> None:
        # (ProcessPoolExecutor has no public way to stop a running call before Python 3.14)
        processes = getattr(self._pool, "_processes", None) or {}
        for process in list(processes.values()):
            with contextlib.suppress(Exception):
                process.kill()


class RayExecutor:
    """Ray tasks (`num_cpus=1`, no automatic retries) on a cluster at `address`, or a local Ray."""

    def __init__(
        self,
        workers: int | None,
        address: str | None,
        threads: int = 1,
        device: str = "cpu",
        modules: tuple[str, ...] = (),
    ) -> None:
        try:
            import ray
        except ImportError:
            raise UserError("the ray backend needs Ray: pip install 'learnability[ray]'") from None
        self.ray = ray
        self._started_here = False
        self._reaper: subprocess.Popen | None = None
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
            if any(not m.startswith("learnability.") for m in modules):
                # a user's job module: let workers on this node import it as the driver does (a
                # separate runtime env costs a fresh worker pool, so only when needed)
                env = {"PYTHONPATH": os.pathsep.join(_python_path())}
                kwargs["runtime_env"] = {"env_vars": env}
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            before = set(_descendants(os.getpid()))
            try:
                if address:
                    # a cluster on this host (loopback address): our driver stays on loopback too
                    with _loopback_only(enabled=_is_loopback(address)):
                        ray.init(address=address, **kwargs)
                else:
                    # a Ray of our own for this run: every service on loopback, reachable from
                    # nowhere else (see _loopback_only; tests/test_ray_loopback.py checks it)
                    with _loopback_only():
                        ray.init(
                            address="local",  # a new instance, never a `ray start` cluster found here
                            num_cpus=workers or os.cpu_count(),
                            include_dashboard=False,
                            dashboard_host="127.0.0.1",
                            _node_ip_address="127.0.0.1",
                            **kwargs,
                        )
            except ConnectionError as exc:
                raise UserError(f"cannot connect to a Ray cluster at {address!r}: {exc}") from None
            except Exception as exc:
                if "Authentication" not in type(exc).__name__:
                    raise
                raise UserError(
                    f"the Ray cluster at {address!r} refused this driver's authentication; start the "
                    "cluster and this command with the same RAY_AUTH_MODE (and RAY_AUTH_TOKEN when it is "
                    "'token')"
                ) from None
            self._started_here = True
            if not address:  # our own instance: the processes it started die with this driver
                started = set(_descendants(os.getpid())) - before
                self._reaper = start_reaper(sorted(started))
        cpus = int(ray.cluster_resources().get("CPU", workers or 1))
        # Ray queues tasks beyond its free CPUs itself; with an explicit worker count the number in
        # flight is what limits concurrency, so no extra is queued then
        self.capacity = max(1, workers) if workers else max(1, 2 * cpus)
        options: dict[str, Any] = {"num_cpus": 1, "max_retries": 0}
        if device.startswith("cuda"):
            options["num_gpus"] = 1
        self._remote = ray.remote(**options)(execute_run)
        self._refs: dict[Any, str] = {}

    def submit(self, key: str, payload: dict) -> None:
        self._refs[self._remote.remote(payload)] = key

    def poll(self, timeout: float) -> list[tuple[str, dict]]:
        if not self._refs:
            return []
        ready, _ = self.ray.wait(list(self._refs), num_returns=1, timeout=timeout)
        if ready:  # take everything else that is ready too
            more, _ = self.ray.wait(list(self._refs), num_returns=len(self._refs), timeout=0)
            ready = list(dict.fromkeys([*ready, *more]))
        out = []
        for ref in ready:
            key = self._refs.pop(ref)
            try:
                out.append((key, self.ray.get(ref)))
            except self.ray.exceptions.RayError as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                out.append(
                    (key, crash_result(f"Ray worker died: {type(exc).__name__}: {first}", 1))
                )
        return out

    def close(self) -> None:
        for ref in list(self._refs):
            with contextlib.suppress(Exception):  # already finished or its worker is gone
                self.ray.cancel(ref, force=True)
        self._refs.clear()
        if self._started_here:
            self.ray.shutdown()
        if self._reaper is not None:
            self._reaper.poll()  # it ends by itself once Ray's processes are gone


# -- Ray's own processes die with the driver ----------------------------------------------------------
# A Ray started here (gcs_server, raylet, the dashboard and runtime-env agents) is Ray's, not ours:
# the GCS and raylet share the driver's fate, but the two agents, on noticing the raylet gone, try
# for 60 s to report it to the GCS that died with it (about 62 s measured after a SIGKILL of the
# driver, ~170 MB). A reaper process, started in its own session so it outlives the driver, watches
# the driver (pid and start time) and SIGKILLs the processes Ray started, each checked by its own
# start time, the moment the driver is gone; it ends by itself when they end first (a clean
# shutdown). Linux only (/proc); elsewhere the agents' own 60 s bound stands.
_REAPER = r"""
import os, signal, sys, time
def ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""
driver, driver_ticks = sys.argv[1].split(":")
targets = [t.split(":") for t in sys.argv[2:]]
while True:
    alive = [(pid, t) for pid, t in targets if ticks(pid) == t]
    if not alive:
        break
    if ticks(driver) != driver_ticks:
        for pid, _ in alive:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        break
    time.sleep(0.25)
"""


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc; [] elsewhere)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def start_reaper(pids: list[int]) -> subprocess.Popen | None:
    """Start the reaper of `pids` (see above) for this driver; None where there is nothing to do."""
    targets = [f"{pid}:{t}" for pid in pids if (t := process_start_ticks(pid))]
    driver, ticks = _driver_id()
    if not targets or not ticks:
        return None
    return subprocess.Popen(
        [sys.executable, "-S", "-c", _REAPER, f"{driver}:{ticks}", *targets],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )  # fmt: skip


# Ray turns a node address of 127.0.0.1 into the host's external address ("remotely reachable",
# services.resolve_ip_for_localhost) whenever it thinks it may be part of a cluster, and its servers
# then listen on every interface (GCS, raylet, object manager, workers, the driver) or on the external
# address (runtime-env agent). With RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 (what Ray does by itself on a
# laptop OS) the node address stays 127.0.0.1 and every service listens on loopback only. Ray reads
# the variable when it is imported, so its parsed value is set too while the instance starts; the
# processes it starts inherit the variable.
_RAY_CLUSTER_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


@contextlib.contextmanager
def _loopback_only(enabled: bool = True) -> Iterator[None]:
    if not enabled:
        yield
        return
    from ray._private import ray_constants

    saved_env = os.environ.get(_RAY_CLUSTER_ENV)
    saved_flag = getattr(ray_constants, "ENABLE_RAY_CLUSTER", None)
    os.environ[_RAY_CLUSTER_ENV] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if saved_env is None:
            os.environ.pop(_RAY_CLUSTER_ENV, None)
        else:
            os.environ[_RAY_CLUSTER_ENV] = saved_env
        if saved_flag is not None:
            ray_constants.ENABLE_RAY_CLUSTER = saved_flag


RAY_CONNECT_TIMEOUT = 5.0  # seconds: a cluster on a network answers in milliseconds

# Ray's GCS (HOST:PORT) and its client server (ray://HOST:PORT) both speak gRPC, i.e. HTTP/2: sent a
# client's connection preface and an empty SETTINGS frame, such a server answers with a SETTINGS
# frame of its own (RFC 9113 §3.4) before anything else. Something else at the port (a web server,
# a database, a listener that never answers) is told apart in one round trip, where Ray itself
# would wait for minutes before giving up, after the store was made.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_H2_EMPTY_SETTINGS = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # length 0, type 4 (SETTINGS), stream 0
_SETTINGS = 4


def check_ray_address(address: str, timeout: float | None = None) -> None:
    """UserError unless a Ray cluster answers at a Ray address (HOST:PORT or ray://HOST:PORT) within
    `timeout` seconds (default `RAY_CONNECT_TIMEOUT`): something must accept the connection and
    answer a gRPC (HTTP/2) handshake as Ray's services do. Ray itself retries an address where
    nothing listens, or where something else does, for minutes; this says so in seconds, before
    anything is written. (With RAY_USE_TLS set, the handshake is TLS's: only the connection is
    checked.)"""
    if address == "auto":
        return  # Ray looks the address up itself (the cluster `ray start` recorded on this host)
    limit = RAY_CONNECT_TIMEOUT if timeout is None else timeout
    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    deadline = time.monotonic() + limit
    try:
        conn = socket.create_connection((host, int(port)), timeout=limit)
    except (OSError, ValueError) as exc:
        reason = (
            "timed out" if isinstance(exc, TimeoutError) else getattr(exc, "strerror", None) or exc
        )
        raise UserError(
            f"--address {address}: no Ray cluster answers there ({reason}, within {limit:g} s); "
            f"start one (`ray start --head --port {port}`) or give the address it prints"
        ) from None
    with conn:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return
        answer = _http2_answer(conn, deadline)
    if len(answer) == 9 and answer[3] == _SETTINGS and answer[5:9] == bytes(4):
        return
    if not answer:
        what = f"it did not answer a gRPC handshake within {limit:g} s"
    elif answer == b"closed":
        what = "it closed the connection at a gRPC handshake"
    else:
        what = f"it answered a gRPC handshake with {answer[:9]!r}"
    raise UserError(
        f"--address {address}: something listens there, but not a Ray cluster ({what}); give the "
        "address `ray start --head` printed (its GCS port, 6379 by default, or ray://HOST:10001)"
    )


def _http2_answer(conn: socket.socket, deadline: float) -> bytes:
    """Send an HTTP/2 client preface; the first 9 bytes of the answer (a frame header), b"" when
    none came before `deadline`, b"closed" when the peer closed or reset the connection."""
    got = b""
    try:
        conn.settimeout(max(0.01, deadline - time.monotonic()))
        conn.sendall(_H2_PREFACE + _H2_EMPTY_SETTINGS)
        while len(got) < 9:
            conn.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = conn.recv(9 - len(got))
            if not chunk:
                return got or b"closed"
            got += chunk
    except TimeoutError:
        return got
    except OSError:
        return got or b"closed"
    return got


def _is_loopback(address: str) -> bool:

    host = address.removeprefix("ray://").rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _python_path() -> list[str]:
    # workers on this node import user job modules the way the driver does
    # (not site-packages: a cluster's workers have their own environment)
    own = [p for p in sys.path if p and os.path.isdir(p) and "site-packages" not in p]
    paths = [os.getcwd(), *[p for p in own if not p.startswith(sys.base_prefix)]]
    return list(dict.fromkeys(paths))


def make_executor(
    backend: str,
    workers: int | None,
    address: str | None,
    threads: int,
    device: str,
    modules: tuple[str, ...] = (),
) -> InlineExecutor | LocalExecutor | RayExecutor:
    """The executor for `backend`; `modules` are the job modules the runs need."""
    if backend == "ray":
        return RayExecutor(workers, address, threads, device, modules)
    if workers == 0:
        return InlineExecutor()
    return LocalExecutor(workers or max(1, os.cpu_count() or 1), threads)
