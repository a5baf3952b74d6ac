"""Checkpoints cannot run code, and are checked against what they hold.

A malicious pickle (an object whose `__reduce__` creates a marker file, standing in for any code) is
given to `learnability measure`, to `learnability train ... train.resume=true`, to the library's
loaders and planted in the corpus cache: the payload never runs, and the CLI answers with one line
and exit code 2.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
import torch

from learnability.checkpoints import load_trainer_checkpoint, plain
from learnability.cli import main
from learnability.config import config_hash, from_dict
from learnability.errors import UserError
from learnability.jobs.train import TrainJobConfig, load_model, read_model_checkpoint, save_model
from learnability.train import seeded_model

JOB = {
    "task": {"name": "boolean", "function": "majority", "n": 5},
    "model": {"arch": "boolean_transformer", "n_layers": 1, "n_heads": 1, "d_model": 8, "d_ff": 8},
    "train": {"steps": 4, "batch_size": 8, "eval_every": 2},
}


class Payload:
    def __init__(self, target: Path) -> None:
        self.target = str(target)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.target, "w"))  # unpickling this creates the file


def _evil(path: Path, marker: Path, fmt: str, kind: str = "learnability.model") -> Path:
    data = {"kind": kind, "job_config": Payload(marker), "state_dict": {}, "model": Payload(marker)}
    if fmt == "torch":
        torch.save(data, path)  # torch's zip format with the payload in data.pkl
    else:
        path.write_bytes(pickle.dumps(data))  # a bare pickle (torch's legacy format)
    return path


def _cli(argv: list[str], capsys) -> tuple[int, str]:
    capsys.readouterr()
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["torch", "pickle"])
def test_malicious_checkpoint_given_to_measure_does_not_run(tmp_path, capsys, fmt):
    marker = tmp_path / "PWNED"
    evil = _evil(tmp_path / "evil.pt", marker, fmt)
    code, err = _cli(["measure", evil], capsys)
    assert not marker.exists(), "the pickle's payload ran"
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "evil.pt" in err and "not read (loading it could run code)" in err


@pytest.mark.parametrize("fmt", ["torch", "pickle"])
def test_malicious_checkpoint_given_to_train_resume_does_not_run(
    tmp_path, capsys, monkeypatch, fmt
):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "PWNED"
    evil = _evil(tmp_path / "evil.pt", marker, fmt, kind="learnability.trainer")
    argv = ["train", "task.n=5", f"train.checkpoint_path={evil}", "train.resume=true"]
    code, err = _cli([*argv, "--out", tmp_path / "run"], capsys)
    assert not marker.exists(), "the pickle's payload ran"
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "evil.pt" in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "runs").exists()


def test_library_loaders_and_the_trainer_refuse_it_too(tmp_path):
    marker = tmp_path / "PWNED"
    evil = _evil(tmp_path / "evil.pt", marker, "torch", kind="learnability.trainer")
    with pytest.raises(UserError, match="Python objects"):
        load_model(evil)
    config = from_dict(TrainJobConfig, JOB)
    model = seeded_model(config.model, 0)
    optimizer = torch.optim.AdamW(model.parameters())
    with pytest.raises(UserError, match="Python objects"):
        load_trainer_checkpoint(evil, model, optimizer, torch.Generator(), config.train)
    assert not marker.exists()


def test_a_planted_corpus_cache_is_not_run_and_is_replaced(tmp_path, monkeypatch):
    from learnability.tasks import language

    monkeypatch.setenv("LEARNABILITY_CACHE", str(tmp_path / "cache"))
    tokens = torch.arange(10)
    built = []

    def fake_prepare(corpus: str, vocab_size: int, valid_fraction: float) -> tuple:
        built.append(vocab_size)
        return language.BPETokenizer(["a", "b"], [("a", "b")]), tokens, tokens

    monkeypatch.setattr(language, "_prepare", fake_prepare)
    monkeypatch.setattr(language, "corpus_path", lambda: tmp_path / "kjv.jsonl")
    (tmp_path / "kjv.jsonl").write_text("{}\n")
    key = f"kjv-{(tmp_path / 'kjv.jsonl').stat().st_size}-v77-f0.05-{language._FORMAT}.pt"
    marker = tmp_path / "PWNED"
    (tmp_path / "cache").mkdir()
    _evil(tmp_path / "cache" / key, marker, "torch")
    language.prepared_corpus.cache_clear()
    tok, train, _ = language.prepared_corpus("kjv", 77, 0.05)
    assert not marker.exists() and built == [77]  # the planted file was ignored: rebuilt
    language.prepared_corpus.cache_clear()
    tok2, train2, _ = language.prepared_corpus("kjv", 77, 0.05)  # now read from the safe cache
    assert built == [77] and torch.equal(train2, train) and tok2.merges == tok.merges
    language.prepared_corpus.cache_clear()


def test_a_model_checkpoint_is_plain_data_checked_against_its_config(tmp_path):
    config = from_dict(TrainJobConfig, JOB)
    model = seeded_model(config.model, 3)
    path = save_model(tmp_path / "model.pt", model, config)
    payload = torch.load(path, weights_only=True)  # plain data: loads with weights_only
    assert payload["config_hash"] == config_hash("train", config)
    loaded, again = load_model(path)
    assert again == config
    x = torch.randint(0, 2, (4, 5))
    assert torch.equal(loaded(x), model(x))
    # edited after saving: a different task.n would score the model on a task it never saw
    payload["job_config"]["task"]["n"] = 4
    torch.save(payload, tmp_path / "edited.pt")
    with pytest.raises(UserError, match="changed after the model was saved"):
        read_model_checkpoint(tmp_path / "edited.pt")
    # edited with the hash removed too: the weights still do not fit a wider model
    payload["job_config"]["task"]["n"] = 5
    payload["job_config"]["model"]["d_model"] = 16
    del payload["config_hash"]
    torch.save(payload, tmp_path / "wider.pt")
    with pytest.raises(UserError, match="shape"):
        read_model_checkpoint(tmp_path / "wider.pt")


def test_trainer_state_with_numpy_values_is_stored_as_plain_data():
    import numpy as np

    state = {"history": [{"step": 1, "m": np.float64(0.5), "v": np.arange(3)}], "n": np.int64(2)}
    assert plain(state) == {"history": [{"step": 1, "m": 0.5, "v": [0, 1, 2]}], "n": 2}


def test_a_checkpoint_of_an_unknown_format_is_refused_naming_the_supported_ones(tmp_path):
    from learnability.checkpoints import SUPPORTED_FORMATS, read_checkpoint

    path = tmp_path / "model.pt"
    config = from_dict(TrainJobConfig, JOB)
    save_model(path, seeded_model(config.model, 0), config)
    assert read_checkpoint(path)["format"] in SUPPORTED_FORMATS
    for bad in (999, "2", 2.0, True, None, [2]):
        payload = torch.load(path, weights_only=True)
        payload["format"] = bad
        torch.save(payload, path)
        with pytest.raises(UserError, match=r"has format .*reads checkpoint format 2 only"):
            read_checkpoint(path)


def test_a_fifo_checkpoint_is_not_a_regular_file_and_is_never_opened(tmp_path):
    import os

    from learnability.checkpoints import read_checkpoint

    fifo = tmp_path / "c.pt"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="is not a regular file"):
        read_checkpoint(fifo)
