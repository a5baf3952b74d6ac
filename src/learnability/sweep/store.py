"""The results store: SQLite at `<results_dir>/learnability.db`, one row per run, artefacts beside it.

Crash safety: the database is in WAL mode and each finished run is written in its own transaction
by the driver as soon as it finishes. A driver killed with SIGKILL therefore loses at most the runs
that were in flight (left as "running", and re-run on resume); it never loses a committed run and
never leaves a half-written row. By default commits are `synchronous=NORMAL`: a committed run
survives any crash of the process (it is in the OS's hands), and a power cut may lose the last
commits but never corrupts the file. `Store(dir, fsync=True)` uses `synchronous=FULL` (every commit
reaches the disk before the next run is scheduled) at the cost of an fsync per run. Several processes may write to one store at
once (two sweeps): writers take SQLite's write lock with `BEGIN IMMEDIATE` and wait on a busy timeout.

Ownership is a lease: a driver that starts a run writes its owner token (host, pid, process start
time, a random part) and an expiry into the row (`acquire`), and renews the expiry while the run is
in flight (`renew`, from a heartbeat thread). Another driver skips a run under a live lease ("busy",
and waits for it) and never re-runs a finished run (ok, failed, diverged) unless asked to retry
failed ones. Whether a lease is stale is decided by the owner's process where that can be seen,
on its own host: the lease holds exactly as long as that process lives (stopped with Ctrl-Z or
SIGSTOP for any time included: its heartbeat thread is stopped too, but its workers may still be
running the run, so taking it over would run it twice) and is taken over at once when the process
is gone (exited, a zombie, or its pid reused). From another host the owner cannot be seen, and the
expiry decides. A result is never written over a run already finished.

A run belongs to every sweep that asked for it: a run id (hash of job + resolved config) shared by two
sweeps is run once, and `records(sweep=...)` finds it under both (the `members` table).

Layout: `<results_dir>/learnability.db`, `<results_dir>/runs/<run_id>/` (config.yaml, metrics.jsonl,
checkpoints, figures: written by the run itself).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from learnability.errors import UserError, check_choice

__all__ = ["DEFAULT_LEASE", "FINISHED", "STATUSES", "Heartbeat", "RunRecord", "Store"]

STATUSES = ("ok", "failed", "diverged", "running")
DB_NAME = "learnability.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id    TEXT PRIMARY KEY,
    sweep     TEXT NOT NULL,
    study     TEXT NOT NULL DEFAULT '',
    job       TEXT NOT NULL,
    config    TEXT NOT NULL,
    status    TEXT NOT NULL,
    metrics   TEXT NOT NULL DEFAULT '{}',
    error     TEXT,
    traceback TEXT,
    started   REAL,
    finished  REAL,
    seconds   REAL,
    seed      INTEGER,
    versions  TEXT NOT NULL DEFAULT '{}',
    attempts  INTEGER NOT NULL DEFAULT 0,
    owner     TEXT,
    lease_expires REAL
);
CREATE TABLE IF NOT EXISTS members (
    sweep  TEXT NOT NULL,
    study  TEXT NOT NULL DEFAULT '',
    run_id TEXT NOT NULL,
    PRIMARY KEY (sweep, run_id)
);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);
CREATE INDEX IF NOT EXISTS members_run ON members(run_id);
"""

_COLUMNS = (
    "run_id, sweep, study, job, config, status, metrics, error, traceback, started, finished, "
    "seconds, seed, versions, attempts"
)


@dataclass
class RunRecord:
    run_id: str
    sweep: str
    job: str
    config: dict
    status: str
    metrics: dict
    error: str | None
    seconds: float | None
    study: str = ""
    seed: int | None = None
    started: float | None = None
    finished: float | None = None
    versions: dict = field(default_factory=dict)
    attempts: int = 0
    traceback: str | None = None
    run_dir: Path | None = None

    def get(self, dotted: str, default: Any = None) -> Any:
        """A config value by dotted key ('task.n'), or a metric if it is not a config key."""
        for root in (self.config, self.metrics):
            node: Any = root
            for part in dotted.split("."):
                if not isinstance(node, dict) or part not in node:
                    node = _MISS
                    break
                node = node[part]
            if node is not _MISS:
                return node
        return default


_MISS = object()


FINISHED = ("ok", "failed", "diverged")
DEFAULT_LEASE = 60.0  # seconds a claim lasts without a heartbeat


def process_start_ticks(pid: int) -> str:
    """When process `pid` started (clock ticks since boot, Linux), '' where unknown: with the pid it
    names one process, so a pid reused by another process is not taken for the owner."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def new_owner_token() -> str:
    """A token naming this driver: host, pid, process start time and a random part (unique)."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{process_start_ticks(pid)}:{secrets.token_hex(6)}"


def _owner_state(owner: str | None) -> str:
    """The driver holding a lease: "dead" (no owner, or on this host its process is gone, a zombie,
    or its pid now belongs to a process started at another time), "alive" (on this host, its
    process exists, running or stopped) or "unknown" (another host: the lease's expiry decides)."""
    if not owner:
        return "dead"
    parts = owner.split(":")
    if len(parts) == 2:  # a store written before leases: "host:pid"
        host, pid_text, ticks = parts[0], parts[1], ""
    elif len(parts) >= 4:
        host, pid_text, ticks = parts[0], parts[1], parts[2]
    else:
        return "dead"
    if host != socket.gethostname() or not pid_text.isdigit():
        return "unknown"
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "dead"
    except PermissionError:
        pass  # alive, another user's
    if _zombie(pid):  # killed, not yet reaped by its parent: it will never renew or finish
        return "dead"
    return "dead" if ticks and process_start_ticks(pid) not in ("", ticks) else "alive"


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return False


def refuse_in_worker_start(what: str) -> None:
    """Refuse to open `what` while this process is a worker still starting: a worker imports the
    driver's script as `__mp_main__`, and a script without `if __name__ == "__main__":` would open the
    store (whose lock the driver holds) and start a sweep inside every worker: a hang, not an error."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        script = getattr(sys.modules.get("__mp_main__"), "__file__", None) or "the script"
        raise UserError(
            f"{script} opened {what} while a sweep worker was importing it: a script that runs "
            'sweeps must keep its top-level code under `if __name__ == "__main__":` (worker '
            "processes import it again)"
        )


class Store:
    """The SQLite results store of one results directory."""

    def __init__(
        self,
        results_dir: str | Path,
        timeout: float = 60.0,
        fsync: bool = False,
        lease_seconds: float = DEFAULT_LEASE,
        read_only: bool = False,
    ) -> None:
        refuse_in_worker_start("a results store")
        self.root = Path(results_dir)
        self.path = self.root / DB_NAME
        self.timeout = timeout
        self.read_only = read_only
        # this store's driver: the owner of the leases it takes (see `acquire`)
        self.owner = new_owner_token()
        self.lease_seconds = float(lease_seconds)
        _check_existing(
            self.path
        )  # a file that is not a store is refused before anything is written
        self._tidy_on_close = False
        if read_only:
            self._tidy_on_close = not _side_files(self.path)
            self._conn = _connect_read_only(self.path)
            return
        self.root.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        try:
            self._conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            # all or nothing: the tables and the migration of an older store in one transaction,
            # and only then the switch to WAL (which rewrites the file's header), so a store refused
            # here is left byte for byte as it was
            with self._write() as c:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        c.execute(statement)
                columns = {row[1] for row in c.execute("PRAGMA table_info(runs)")}
                if "lease_expires" not in columns:  # a store from before leases
                    c.execute("ALTER TABLE runs ADD COLUMN lease_expires REAL")
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            if "locked" in str(exc) or "disk is full" in str(exc):
                raise  # not the file's fault: the CLI names the real cause
            raise _not_a_store(self.path, str(exc)) from None

    # -- plumbing -------------------------------------------------------------------------------
    class _Tx:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def __enter__(self) -> sqlite3.Connection:
            self.conn.execute("BEGIN IMMEDIATE")
            return self.conn

        def __exit__(self, exc_type: Any, *_: Any) -> None:
            self.conn.execute("ROLLBACK" if exc_type else "COMMIT")

    def _write(self) -> Store._Tx:
        if self.read_only:
            raise RuntimeError(f"the store {str(self.path)!r} was opened read-only")
        return Store._Tx(self._conn)

    def close(self) -> None:
        self._conn.close()
        if self._tidy_on_close:  # a reader leaves the folder as it found it
            _tidy(self.path)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def run_dir(self, run_id: str) -> Path:
        return self.root / "runs" / run_id

    # -- writes (driver only) -------------------------------------------------------------------
    def add_members(self, specs: Iterable[Any]) -> None:
        """Note that these runs (RunSpecs) belong to their sweeps."""
        rows = [(s.sweep, s.study, s.run_id) for s in specs]
        with self._write() as c:
            c.executemany(
                "INSERT OR IGNORE INTO members(sweep, study, run_id) VALUES (?, ?, ?)", rows
            )

    def acquire(self, spec: Any, retry_failed: bool = False) -> str:
        """Try to take the lease on a run. Returns "claimed" (this driver runs it now), "done" (it is
        finished: ok, diverged, or failed without `retry_failed`) or "busy" (another driver holds a
        live lease on it).

        A lease is the row's owner token with an expiry; the owner's heartbeat (`renew`) moves the
        expiry on while the run is in flight. On the owner's own host the lease is stale exactly when
        the owner's process is gone (a stopped driver keeps its runs: its workers may be running
        them); from another host, when it has expired. A stale lease is taken over."""
        now = time.time()
        with self._write() as c:
            row = c.execute(
                "SELECT status, owner, lease_expires FROM runs WHERE run_id=?", (spec.run_id,)
            ).fetchone()
            if row is not None:
                status, owner, expires = row
                if status in FINISHED and not (retry_failed and status == "failed"):
                    return "done"
                if status == "running" and owner != self.owner:
                    state = _owner_state(owner)
                    if state == "alive":
                        return "busy"  # however long ago its last heartbeat was (see above)
                    if state == "unknown" and (expires is None or expires > now):
                        return "busy"  # another host's driver, within its lease
            self._upsert_running(c, spec, now)
        return "claimed"

    def claim(self, spec: Any, retry_failed: bool = False) -> bool:
        """Take the lease on a run if nobody may be running it and it is not finished (`acquire`)."""
        return self.acquire(spec, retry_failed) == "claimed"

    def mark_running(self, spec: Any) -> None:
        """Take the lease on a run (attempt count + 1), whatever its state."""
        with self._write() as c:
            self._upsert_running(c, spec, time.time())

    def _upsert_running(self, c: sqlite3.Connection, spec: Any, now: float) -> None:
        c.execute(
            "INSERT INTO runs(run_id, sweep, study, job, config, status, started, seed, attempts, "
            "owner, lease_expires) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, 1, ?, ?) "
            "ON CONFLICT(run_id) DO UPDATE SET status='running', started=excluded.started, "
            "owner=excluded.owner, lease_expires=excluded.lease_expires, "
            "attempts=runs.attempts + 1, error=NULL, traceback=NULL",
            (
                spec.run_id,
                spec.sweep,
                spec.study,
                spec.job,
                json.dumps(spec.config_dict, sort_keys=True),
                now,
                spec.seed,
                self.owner,
                now + self.lease_seconds,
            ),
        )

    def renew(self) -> int:
        """Heartbeat: extend every lease this driver holds; returns how many."""
        with self._write() as c:
            cur = c.execute(
                "UPDATE runs SET lease_expires=? WHERE owner=? AND status='running'",
                (time.time() + self.lease_seconds, self.owner),
            )
            return cur.rowcount

    def release(self, run_ids: Iterable[str]) -> None:
        """Give up this driver's leases on runs it will not finish (interrupted): another driver may
        take them over at once, while this process still lives (the owner is cleared)."""
        ids = list(run_ids)
        with self._write() as c:
            c.executemany(
                "UPDATE runs SET lease_expires=0, owner=NULL "
                "WHERE run_id=? AND owner=? AND status='running'",
                [(run_id, self.owner) for run_id in ids],
            )

    def record_result(self, spec: Any, result: dict) -> bool:
        """Store a finished run. `result`: status, metrics, error, traceback, started, finished,
        seconds, versions (what the worker returned). A run already stored as finished is left as
        it is (another driver finished it first, after taking over a stale lease): returns False."""
        status = check_choice("status", result["status"], STATUSES)
        with self._write() as c:
            row = c.execute("SELECT status FROM runs WHERE run_id=?", (spec.run_id,)).fetchone()
            if row is not None and row[0] in FINISHED:
                return False
            c.execute(
                "INSERT INTO runs(run_id, sweep, study, job, config, status, metrics, error, traceback, "
                "started, finished, seconds, seed, versions, attempts, owner, lease_expires) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, NULL, NULL) "
                "ON CONFLICT(run_id) DO UPDATE SET status=excluded.status, metrics=excluded.metrics, "
                "error=excluded.error, traceback=excluded.traceback, started=excluded.started, "
                "finished=excluded.finished, seconds=excluded.seconds, versions=excluded.versions, "
                "owner=NULL, lease_expires=NULL",
                (
                    spec.run_id,
                    spec.sweep,
                    spec.study,
                    spec.job,
                    json.dumps(spec.config_dict, sort_keys=True),
                    status,
                    json.dumps(result.get("metrics") or {}, sort_keys=True, allow_nan=True),
                    result.get("error"),
                    result.get("traceback"),
                    result.get("started"),
                    result.get("finished"),
                    result.get("seconds"),
                    spec.seed,
                    json.dumps(result.get("versions") or {}, sort_keys=True),
                ),
            )
            c.execute(
                "INSERT OR IGNORE INTO members(sweep, study, run_id) VALUES (?, ?, ?)",
                (spec.sweep, spec.study, spec.run_id),
            )
        return True

    # -- reads ----------------------------------------------------------------------------------
    def done_ids(self, statuses: Iterable[str] = ("ok",)) -> set[str]:
        """Run ids whose status is one of `statuses` (default: finished ok)."""
        statuses = list(statuses)
        marks = ",".join("?" * len(statuses))
        rows = self._conn.execute(f"SELECT run_id FROM runs WHERE status IN ({marks})", statuses)
        return {r[0] for r in rows}

    def status_of(self, run_ids: Iterable[str]) -> dict[str, str]:
        ids = list(run_ids)
        out: dict[str, str] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for run_id, status in self._conn.execute(
                f"SELECT run_id, status FROM runs WHERE run_id IN ({marks})", chunk
            ):
                out[run_id] = status
        return out

    def records(
        self,
        sweep: str | None = None,
        study: str | None = None,
        status: str | None = None,
        where: dict[str, Any] | None = None,
        run_ids: Iterable[str] | None = None,
    ) -> list[RunRecord]:
        """Stored runs, filtered. `sweep` and `study` match membership (a run shared by two sweeps is
        found under both, with `.sweep` set to the one asked for); `where` maps dotted config or
        metric keys to required values, e.g. {"task.n": 20}."""
        if status is not None:
            check_choice("status", status, STATUSES)
        sql = f"SELECT {', '.join('r.' + c.strip() for c in _COLUMNS.split(','))}"
        args: list[Any] = []
        if sweep is not None or study is not None:
            sql += ", m.sweep, m.study FROM runs r JOIN members m ON m.run_id = r.run_id WHERE 1=1"
            if sweep is not None:
                sql += " AND m.sweep = ?"
                args.append(sweep)
            if study is not None:
                sql += " AND (m.study = ? OR m.sweep LIKE ?)"
                args += [study, f"{study}/%"]
        else:
            sql += ", NULL, NULL FROM runs r WHERE 1=1"
        if status is not None:
            sql += " AND r.status = ?"
            args.append(status)
        ids = set(run_ids) if run_ids is not None else None
        sql += " ORDER BY r.started, r.run_id"
        out: list[RunRecord] = []
        seen: set[str] = set()
        for row in self._conn.execute(sql, args):
            rec = self._record(row)
            if ids is not None and rec.run_id not in ids:
                continue
            if rec.run_id in seen:  # one run in two sweeps of the same study: list it once
                continue
            seen.add(rec.run_id)
            if where and not all(rec.get(k, _MISS) == v for k, v in where.items()):
                continue
            out.append(rec)
        return out

    def _record(self, row: tuple) -> RunRecord:
        (run_id, sweep, study, job, config, status, metrics, error, tb, started, finished) = row[
            :11
        ]
        seconds, seed, versions, attempts, m_sweep, m_study = row[11:]
        return RunRecord(
            run_id=run_id,
            sweep=m_sweep or sweep,
            job=job,
            config=self._json(run_id, "config", config),
            status=status,
            metrics=self._json(run_id, "metrics", metrics or "{}"),
            error=error,
            seconds=seconds,
            study=m_study if m_sweep else study,
            seed=seed,
            started=started,
            finished=finished,
            versions=self._json(run_id, "versions", versions or "{}"),
            attempts=attempts,
            traceback=tb,
            run_dir=self.run_dir(run_id),
        )

    def _json(self, run_id: Any, column: str, text: Any) -> dict:
        # a row damaged by hand or by another program: one line naming it, not a traceback
        try:
            value = json.loads(text)
        except (TypeError, ValueError) as exc:
            value = exc
        if not isinstance(value, dict):
            why = (
                f"{type(value).__name__}: {value}"
                if isinstance(value, Exception)
                else "not a mapping"
            )
            raise UserError(
                f"results store {str(self.path)!r}: run {run_id!r} has a damaged {column} column "
                f"({why}); delete that row (or restore the store) and run the sweep again"
            )
        return value

    def sweeps(self) -> list[str]:
        return [
            r[0] for r in self._conn.execute("SELECT DISTINCT sweep FROM members ORDER BY sweep")
        ]

    def studies(self) -> list[str]:
        rows = self._conn.execute(
            "SELECT DISTINCT study FROM members WHERE study != '' ORDER BY study"
        )
        return [r[0] for r in rows]

    def integrity_check(self) -> str:
        return self._conn.execute("PRAGMA integrity_check").fetchone()[0]


class Heartbeat:
    """Renews a store's leases from a background thread (its own SQLite connection) every
    lease/6 seconds, so a run in flight keeps its lease however long it takes and whatever the
    driver's main thread is doing; a driver that dies stops renewing, and its leases expire.

        with Heartbeat(store):
            ...  # run things claimed with store.acquire
    """

    def __init__(self, store: Store) -> None:
        self.path, self.owner = store.path, store.owner
        self.lease, self.timeout = store.lease_seconds, store.timeout
        self.interval = max(0.05, self.lease / 6)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-heartbeat", daemon=True)

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            while not self._stop.wait(self.interval):
                try:
                    conn.execute(
                        "UPDATE runs SET lease_expires=? WHERE owner=? AND status='running'",
                        (time.time() + self.lease, self.owner),
                    )
                except sqlite3.Error:
                    continue  # busy for longer than the timeout: try again at the next beat
        finally:
            conn.close()

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=self.timeout + 5)


_SQLITE_HEADER = b"SQLite format 3\x00"


def _not_a_store(path: Path, why: str) -> UserError:
    return UserError(
        f"results store {str(path)!r} cannot be used: {why}; give --results a folder holding a "
        "learnability.db written by learnability, or a new folder"
    )


def _check_existing(path: Path) -> None:
    """UserError unless `path` is absent, or an SQLite file whose tables are a learnability store's
    (checked read-only: a foreign or damaged file is never changed)."""
    try:
        if not path.exists():
            return
        if path.is_dir():
            raise _not_a_store(path, "it is a folder")
        with path.open("rb") as f:
            header = f.read(len(_SQLITE_HEADER))
    except OSError as exc:
        raise _not_a_store(path, exc.strerror or type(exc).__name__) from None
    if header == b"" and path.stat().st_size == 0:
        return  # an empty file: SQLite makes a new database of it
    if header != _SQLITE_HEADER:
        raise _not_a_store(path, "it is not an SQLite database")
    had_side_files = _side_files(path)
    try:
        conn = _reader(path)
        try:
            kinds = dict(conn.execute("SELECT name, type FROM sqlite_master"))
            tables = {
                name: {row[1] for row in conn.execute(f"PRAGMA table_info({name})")}
                for name, kind in kinds.items()
                if kind == "table"
            }
        finally:
            conn.close()
            if not had_side_files:
                _tidy(path)
    except sqlite3.DatabaseError as exc:
        if "locked" in str(exc):
            raise
        raise _not_a_store(path, str(exc)) from None
    for table, needed in _REQUIRED_COLUMNS.items():
        if kinds.get(table, "table") != "table":
            raise _not_a_store(path, f"its {table!r} is a {kinds[table]}, not a table")
        if table in tables and not needed <= tables[table]:
            missing = sorted(needed - tables[table])
            raise _not_a_store(
                path,
                f"its table {table!r} lacks {', '.join(missing[:3])} (another program's database)",
            )


def _schema_columns(table: str) -> set[str]:
    body = _SCHEMA.split(f"CREATE TABLE IF NOT EXISTS {table} (", 1)[1].split(");", 1)[0]
    return {
        line.split()[0]
        for line in body.strip().splitlines()
        if not line.strip().startswith("PRIMARY")
    }


# Every column the store reads or writes, but those a migration adds (`Store.__init__`): a table
# lacking one is another program's (or damaged), refused before anything is written, rather than
# half-migrated and failing at the first read.
_MIGRATED = {"runs": {"lease_expires"}, "members": set()}
_REQUIRED_COLUMNS = {t: _schema_columns(t) - _MIGRATED[t] for t in ("runs", "members")}


def open_existing(results_dir: str | Path) -> Store:
    """Open the store of a results directory that must already exist, read-only (for `results` /
    `report`): it may be on a read-only disk, and a sweep writing to it meanwhile does not block it."""
    path = Path(results_dir) / DB_NAME
    if not path.is_file():
        raise UserError(
            f"no results store at {str(path)!r}; run a sweep first or pass --results DIR"
        )
    return Store(results_dir, read_only=True)


READ_TIMEOUT = 5.0  # seconds a reader waits for SQLite's rare reader locks (WAL recovery)


def _side_files(path: Path) -> bool:
    """Whether SQLite's -wal or -shm file of the store exists (a writer has it, or crashed)."""
    return any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm"))


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _reader(path: Path) -> sqlite3.Connection:
    """A read-only connection (URI mode=ro: nothing can be written through it). In WAL mode a reader
    never waits for a writer's lock.

    Right after a crash the WAL index must be rebuilt, which takes write access: where the store is
    writable a plain connection rebuilds it (reading only), then the read-only one reads. On a
    read-only disk whose store has no WAL to apply it is opened as immutable (nothing can write to it
    there); a WAL that cannot be read there is refused, not ignored (it holds committed runs)."""
    uri = path.resolve().as_uri()

    def connect(query: str) -> sqlite3.Connection:
        conn = sqlite3.connect(
            f"{uri}?{query}", uri=True, timeout=READ_TIMEOUT, isolation_level=None
        )
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    try:
        return connect("mode=ro")
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            raise
        if _writable(path):
            with contextlib.closing(sqlite3.connect(path, timeout=READ_TIMEOUT)) as conn:
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # recovery
            return connect("mode=ro")
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size:
            raise sqlite3.OperationalError(
                f"its write-ahead log cannot be read on this read-only disk ({exc}); copy the "
                "results folder to a writable disk"
            ) from None
        return connect("mode=ro&immutable=1")


def _tidy(path: Path) -> None:
    """Remove the -wal / -shm files a read-only connection made (it cannot remove them itself): a
    plain connection, the last to close, does; where a writer holds them, they stay."""
    if not _writable(path):
        return
    with (
        contextlib.suppress(sqlite3.Error),
        contextlib.closing(sqlite3.connect(path, timeout=0)) as conn,
    ):
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """`_reader`, or the empty store an empty store file is."""
    try:
        conn = _reader(path)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            raise
        raise _not_a_store(path, str(exc)) from None
    if not {"runs", "members"} <= tables:
        # an empty store file (made but never written): read it as the empty store it is
        conn.close()
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.executescript(_SCHEMA)
    return conn
