"""The Ray instance the project starts on demand listens on loopback only.

`--backend ray` without `--address` starts a Ray of its own for the run. This test starts it through
the project's code path (`make_executor`, as `run_sweep` does), keeps work in flight for a while, and
meanwhile lists every listening socket (TCP in LISTEN, UDP without a peer) of every process Ray
started: its GCS, raylet (node manager and object manager), dashboard and runtime-env agents, log
monitor, workers, and the driver itself. Any listener on an address other than loopback fails the test.
"""

from __future__ import annotations

import ipaddress
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")


def _loopback(ip: str) -> bool:
    address = ipaddress.ip_address(ip.split("%")[0])
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return (mapped or address).is_loopback


def _listeners(proc: psutil.Process) -> set[tuple[str, int, str]]:
    try:
        conns = proc.net_connections(kind="inet")
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return set()
    out = set()
    for c in conns:
        udp = c.type.name == "SOCK_DGRAM"
        if c.status == psutil.CONN_LISTEN or (udp and not c.raddr):
            out.add((c.laddr.ip, c.laddr.port, "udp" if udp else "tcp"))
    return out


def _name(proc: psutil.Process) -> str:
    try:
        cmd = proc.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return "?"
    if not cmd:
        return proc.name()
    first = Path(cmd[0]).name
    if first.startswith("python") and len(cmd) > 1:
        script = next((Path(a).name for a in cmd[1:] if a.endswith(".py")), cmd[1])
        return f"python {script}"
    return first if not first.startswith("ray::") else cmd[0].split()[0]


@pytest.mark.timeout(240)
def test_on_demand_ray_listens_on_loopback_only(tmp_path: Path):
    from learnability.sweep.executors import make_executor

    assert not ray.is_initialized()
    me = psutil.Process()
    before = _listeners(me)  # the test process's own sockets, not Ray's
    executor = make_executor("ray", 2, None, 1, "cpu")
    seen: dict[tuple[str, int, str], str] = {}
    try:
        for i in range(4):  # work in flight, so workers start and every agent is up
            executor.submit(
                str(i),
                {
                    "run_id": f"loopback{i}",
                    "job": "testing.probe",
                    "module": "",
                    "config": {"mode": "sleep", "sleep_s": 1.0, "seed": i},
                    "run_dir": str(tmp_path / str(i)),
                    "device": "cpu",
                    "threads": 1,
                },
            )
        session = ray._private.worker._global_node.get_session_dir_path()
        start, done = time.time(), 0
        # sample for at least 8 s and until every run finished (workers take seconds to boot)
        while time.time() < start + 8 or (done < 4 and time.time() < start + 120):
            procs = {p.pid: p for p in me.children(recursive=True)}
            for p in psutil.process_iter():
                try:
                    if session in " ".join(p.cmdline()):
                        procs[p.pid] = p
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
            for p in procs.values():
                for sock in _listeners(p):
                    seen.setdefault(sock, _name(p))
            for sock in _listeners(me) - before:
                seen.setdefault(sock, "driver (this process)")
            done += len(executor.poll(0.5))
        assert done == 4, "the probe runs did not finish"
    finally:
        executor.close()
    assert not ray.is_initialized()
    table = "\n".join(f"  {name:28s} {ip}:{port}/{kind}" for (ip, port, kind), name in sorted(
        seen.items(), key=lambda kv: kv[1]))  # fmt: skip
    print(f"listening sockets of the on-demand Ray instance:\n{table}")
    names = set(seen.values())
    for service in ("gcs_server", "raylet", "ray::IDLE", "ray::RuntimeEnvAgent"):
        assert any(service in n for n in names), f"{service} not seen listening: {table}"
    assert any(n.startswith("ray::") and "Agent" not in n for n in names) or "ray::IDLE" in names
    outside = {sock: name for sock, name in seen.items() if not _loopback(sock[0])}
    assert not outside, f"listening beyond loopback: {outside}\nall:\n{table}"
