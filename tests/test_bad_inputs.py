"""The bad-input corpus (tests/data/bad_inputs.yaml): every entry is refused the same way.

Each entry is a command line a careless user (or an attacker) might type. The command runs in process,
in a fresh working directory holding only the entry's files, and must:

- exit with code 2,
- print exactly one line on stderr, starting `error:`, with no traceback in it,
- name what the entry's `expect` lists (usually the bad value),
- write nothing: the working directory holds exactly what it held before (no store, report or run
  folder, no partial file), and no code hidden in a file ran (no `PWNED` marker anywhere).

Entries (see the file's head for the format) are easy to add: a new mistake users make is one more
item in the YAML file.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from learnability.cli import main

CORPUS = Path(__file__).parent / "data" / "bad_inputs.yaml"
ENTRIES: list[dict[str, Any]] = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
MARKER = "PWNED"


# -- files the entries can ask for ------------------------------------------------------------------
class _Payload:
    """Unpickling this creates the marker file: the stand-in for any code hidden in a pickle."""

    def __init__(self, target: Path) -> None:
        self.target = str(target)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.target, "w"))


TINY_JOB = {
    "task": {"name": "boolean", "function": "majority", "n": 5},
    "model": {"arch": "boolean_transformer", "n_layers": 1, "n_heads": 1, "d_model": 8, "d_ff": 8},
    "train": {"steps": 2, "batch_size": 8, "eval_every": 1},
    "measure": ["accuracy"],
}


def _tiny_model() -> tuple[Any, Any]:
    from learnability.config import from_dict
    from learnability.jobs.train import TrainJobConfig
    from learnability.train import seeded_model

    config = from_dict(TrainJobConfig, TINY_JOB)
    return seeded_model(config.model, 0), config


def _model_checkpoint(path: Path, edit: dict[str, Any] | None = None) -> None:
    from learnability.jobs.train import save_model

    model, config = _tiny_model()
    save_model(path, model, config)
    if edit:  # what a user editing the file by hand would do: change the config, keep the rest
        payload = torch.load(path, weights_only=True)
        for dotted, value in edit.items():
            node = payload
            *parents, last = dotted.split(".")
            for part in parents:
                node = node[part]
            node[last] = value
        torch.save(payload, path)


def _trainer_checkpoint(path: Path) -> None:
    from learnability.tasks import build_task
    from learnability.train import TrainConfig, Trainer

    model, config = _tiny_model()
    train = TrainConfig(steps=2, batch_size=8, eval_every=1, checkpoint_path=str(path))
    Trainer(model, build_task(config.task), train).fit()


def _store(path: Path) -> None:
    from learnability.sweep import Store, Sweep, run_sweep

    with Store(path) as store:
        run_sweep(
            Sweep("demo/probe", "testing.probe", grid={"x": [1.0, 2.0]}),
            store,
            workers=0,
            progress=False,
        )


def _make(kind: str, path: Path, root: Path) -> None:
    marker = root / MARKER
    if kind == "evil_pickle":  # a plain pickle (torch's legacy format)
        path.write_bytes(pickle.dumps({"kind": "learnability.model", "x": _Payload(marker)}))
    elif kind == "evil_torch":  # torch's zip format with the payload inside
        torch.save({"kind": "learnability.model", "job_config": _Payload(marker)}, path)
    elif kind == "evil_trainer":
        torch.save({"kind": "learnability.trainer", "state": _Payload(marker)}, path)
    elif kind == "model":
        _model_checkpoint(path)
    elif kind == "model_edited_n":
        _model_checkpoint(path, {"job_config.task.n": 4})
    elif kind == "model_edited_width":
        _model_checkpoint(path, {"job_config.model.d_model": 16, "config_hash": None})
    elif kind == "model_bad_config":
        _model_checkpoint(path, {"job_config.train.batch_size": 0})
    elif kind == "model_no_state":
        _model_checkpoint(path)
        payload = torch.load(path, weights_only=True)
        del payload["state_dict"]
        torch.save(payload, path)
    elif kind == "model_nan":  # a diverged run's model: NaN weights
        model, config = _tiny_model()
        with torch.no_grad():
            next(iter(model.parameters())).fill_(float("nan"))
        from learnability.jobs.train import save_model

        save_model(path, model, config)
    elif kind == "model_no_hash":  # the hash deleted and the task edited: the same shapes
        _model_checkpoint(path, {"job_config.task.function": "parity", "config_hash": None})
        payload = torch.load(path, weights_only=True)
        del payload["config_hash"]
        torch.save(payload, path)
    elif kind == "zip_bomb":  # a real torch archive plus a small member that inflates to 64 MB
        import zipfile

        _model_checkpoint(path)
        with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("model/data/99", bytes(64 << 20))
    elif kind == "damaged_store":  # a row another program (or a hand edit) broke
        _store(path)
        with sqlite3.connect(path / "learnability.db") as conn:
            conn.execute("UPDATE runs SET config = 'not json {' WHERE rowid = 1")
        conn.close()
    elif kind == "model_wrong_kind":
        _model_checkpoint(path, {"kind": "something.else"})
    elif kind == "tensor_list":
        torch.save([torch.zeros(2)], path)
    elif kind == "trainer":
        _trainer_checkpoint(path)
    elif kind == "store":
        _store(path)
    elif kind == "corrupt_db":
        path.mkdir(parents=True, exist_ok=True)
        (path / "learnability.db").write_bytes(b"this is not an SQLite database, only text\n" * 200)
    elif kind == "foreign_db":  # a real SQLite file, but not a learnability store
        path.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path / "learnability.db") as conn:
            conn.execute("CREATE TABLE runs (x INTEGER)")
    elif kind == "empty_store":
        from learnability.sweep import Store

        Store(path).close()
    elif kind in ("deep_store", "deeper_store"):  # metrics nested past what is read (or parsed)
        depth = 500 if kind == "deep_store" else 100_000
        _store_metrics(path, '{"a": ' * depth + "1" + "}" * depth)
    elif kind == "signed_store":  # every run's `neg` below zero, every `inf` infinite
        _store_metrics(path, '{"neg": -1.5, "inf": "inf", "value": 1.0}')
    elif kind == "model_format_999":  # a layout this version does not know
        _model_checkpoint(path, {"format": 999})
    elif kind == "trainer_format_999":
        _trainer_checkpoint(path)
        payload = torch.load(path, weights_only=True)
        payload["format"] = 999
        torch.save(payload, path)
    else:
        raise AssertionError(f"unknown fixture {kind!r}")


def _store_metrics(path: Path, metrics: str) -> None:
    """A probe store whose every run's metrics column holds `metrics` (JSON text) instead."""
    _store(path)
    with sqlite3.connect(path / "learnability.db") as conn:
        conn.execute("UPDATE runs SET metrics = ?", (metrics,))
    conn.close()


def _expand(text: str, root: Path) -> str:
    text = text.replace("{tmp}", str(root))
    # {repeat:TEXT:N}: TEXT repeated N times (specs and paths longer than the OS allows)
    return re.sub(r"\{repeat:(.*?):(\d+)\}", lambda m: m.group(1) * int(m.group(2)), text)


def _create(files: dict[str, Any], root: Path) -> None:
    for name, spec in files.items():
        path = root / _expand(name, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(spec, str):
            path.write_text(_expand(spec, root), encoding="utf-8")
        elif "hex" in spec:
            path.write_bytes(bytes.fromhex(spec["hex"]))
        elif "dir" in spec:
            path.mkdir(exist_ok=True)
        elif "fifo" in spec:  # a named pipe: opening it to read would wait for a writer forever
            os.mkfifo(path)
        elif "fixture" in spec:
            _make(spec["fixture"], path, root)
        elif "mode" in spec:  # permissions (ignored when running as root, who may write anyway)
            path.chmod(int(str(spec["mode"]), 8))
        else:
            raise AssertionError(f"unknown file spec {spec!r}")


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            # files by size and time; folders by existence only (a folder's time changes when a
            # temporary file comes and goes, e.g. SQLite's lock files on a read)
            key = (st.st_size, st.st_mtime_ns) if p.is_file() else (-1, 0)
            out[str(p.relative_to(root))] = key
    return out


def _skip_reason(entry: dict[str, Any]) -> str | None:
    needs = entry.get("requires", [])
    if "no_cuda" in needs and torch.cuda.is_available():
        return "a CUDA device is present, so --device cuda is not bad input here"
    if "not_root" in needs and hasattr(os, "geteuid") and os.geteuid() == 0:
        return "root may write where file permissions forbid it"
    if "ray" in needs and importlib.util.find_spec("ray") is None:
        return "Ray is not installed, so the Ray backend is refused before its address is looked at"
    return None


def _id(entry: dict[str, Any]) -> str:
    return entry.get("id") or " ".join(str(a) for a in entry["argv"])[:60]


def _commands() -> dict[str, list[list[str]]]:
    """Every command path of `learnability` and the spellings of each of its options."""
    import typer.main

    from learnability.cli import app

    found: dict[str, list[list[str]]] = {}

    def walk(command: Any, path: list[str]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
            return
        options = [p for p in command.params if p.param_type_name == "option"]
        found[" ".join(path)] = [list(p.opts) for p in options if "--help" not in p.opts]

    walk(typer.main.get_command(app), [])
    return found


def test_corpus_covers_every_option_of_every_command():
    # each option of each command (as `learnability <cmd> --help` lists them) is misused somewhere
    missing = []
    for path, options in _commands().items():
        words = path.split()
        argvs = [[str(a) for a in e["argv"]] for e in ENTRIES if e["argv"][: len(words)] == words]
        assert argvs, f"no entry for `learnability {path}`"
        for spellings in options:
            used = any(
                a == opt or a.startswith(opt + "=")
                for argv in argvs
                for a in argv
                for opt in spellings
            )
            if not used:
                missing.append(f"{path} {spellings[-1]}")
    assert not missing, f"options no corpus entry uses: {missing}"


def test_corpus_is_large_and_covers_every_command():
    assert len(ENTRIES) >= 250
    ids = [_id(e) for e in ENTRIES]
    assert len(ids) == len(set(ids)), "entry ids must be unique"
    commands = {e["argv"][0] if e["argv"] else "" for e in ENTRIES}
    for command in ("fn", "train", "measure", "sweep", "results", "report", "reproduce", ""):
        assert command in commands, command
    assert {"profile", "list"} <= {
        e["argv"][1] for e in ENTRIES if e["argv"][:1] == ["fn"] and len(e["argv"]) > 1
    }


@pytest.mark.timeout(60)
@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(entry, tmp_path, monkeypatch, capsys):
    reason = _skip_reason(entry)
    if reason:
        pytest.skip(reason)
    root = tmp_path / "work"
    root.mkdir()
    _create(entry.get("files") or {}, root)
    for name, mode in (entry.get("chmod") or {}).items():
        (root / name).chmod(int(str(mode), 8))
    monkeypatch.chdir(root)
    # where caches would go if a command wrongly got that far: inside the snapshot
    monkeypatch.setenv("LEARNABILITY_CACHE", str(root / ".cache"))
    before = _snapshot(root)
    argv = [_expand(str(a), root) for a in entry["argv"]]
    capsys.readouterr()
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out, err = capsys.readouterr()
    for name in entry.get("chmod") or {}:
        (root / name).chmod(0o755)
    lines = err.splitlines()
    assert "Traceback" not in err and "Traceback" not in out, err or out
    assert code == 2, f"exit {code}; stderr: {err!r}; stdout: {out[-500:]!r}"
    assert len(lines) == 1 and lines[0].startswith("error: "), f"stderr: {err!r}"
    for word in entry.get("expect") or []:
        assert _expand(str(word), root) in lines[0], f"{word!r} not in {lines[0]!r}"
    assert not list(tmp_path.rglob(MARKER)), "code hidden in a file ran"
    after = _snapshot(root)
    assert after == before, f"written: {sorted(set(after.items()) ^ set(before.items()))[:5]}"
