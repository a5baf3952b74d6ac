"""`learnability train` / `measure` as the README shows them, determinism, and help that lists names."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
import torch
import yaml

from cli_run import run_cli

ROOT = Path(__file__).resolve().parents[1]
# README lines not run here, and why: they need a Ray cluster, a GPU, or minutes on two cores
NOT_RUN = ("--backend ray", "--device cuda", "reproduce", "report", "sweep ", "results ")


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("```bash\nlearnability fn profile", 1)[1].split("```", 1)[0]
    lines = ("learnability fn profile" + block).splitlines()
    return [
        re.sub(r"\s+#.*$", "", line).strip() for line in lines if line.startswith("learnability")
    ]


def test_readme_examples_run_as_written(tmp_path, capsys, monkeypatch):
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    monkeypatch.chdir(tmp_path)
    commands = _readme_commands()
    run = [c for c in commands if not any(k in c for k in NOT_RUN)]
    assert len(commands) >= 10 and len(run) >= 4
    for command in run:
        code, _, err = run_cli(shlex.split(command)[1:], capsys)
        assert code == 0, f"{command}: {err}"
    train = next(c for c in run if c.startswith("learnability train"))
    out_dir = Path(shlex.split(train)[shlex.split(train).index("--out") + 1])
    assert (out_dir / "model.pt").is_file() and (out_dir / "result.json").is_file()
    assert any(f"measure {out_dir}/model.pt" in c for c in run)  # measure reads what train wrote


def test_train_fixes_the_thread_count_it_records(tmp_path, capsys, monkeypatch):
    from learnability.train import Trainer

    seen: list[int] = []
    fit = Trainer.fit

    def recording_fit(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(Trainer, "fit", recording_fit)
    args = [
        "train",
        "task.function=majority",
        "task.n=5",
        "model.d_model=16",
        "model.d_ff=16",
        "train.steps=30",
        "train.eval_every=10",
        "--quiet",
    ]
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # whatever the process had, a run uses its config's count
    try:
        assert run_cli([*args, "--out", tmp_path / "a"], capsys)[0] == 0
        assert run_cli([*args, "--out", tmp_path / "b"], capsys)[0] == 0
        assert run_cli([*args, "threads=2", "--out", tmp_path / "c"], capsys)[0] == 0
        assert torch.get_num_threads() == 2  # restored afterwards
    finally:
        torch.set_num_threads(before)
    assert seen == [1, 1, 2]
    config = yaml.safe_load((tmp_path / "a" / "config.yaml").read_text())
    assert config["threads"] == 1
    a = torch.load(tmp_path / "a" / "model.pt", weights_only=True)
    b = torch.load(tmp_path / "b" / "model.pt", weights_only=True)
    assert a["config_hash"] == b["config_hash"]
    assert all(torch.equal(a["state_dict"][k], b["state_dict"][k]) for k in a["state_dict"])
    # the thread count is part of the run id when it is not the default
    c = torch.load(tmp_path / "c" / "model.pt", weights_only=True)
    assert c["config_hash"] != a["config_hash"]
    json.loads((tmp_path / "a" / "result.json").read_text())


@pytest.mark.parametrize(
    ("command", "lister"),
    [
        ("reproduce", "learnability.studies:available_studies"),
        ("report", "learnability.studies:available_studies"),
        ("sweep", "learnability.sweep.jobs:known_jobs"),
    ],
)
def test_help_lists_what_can_be_named(capsys, command, lister):
    import importlib

    module, name = lister.split(":")
    names = getattr(importlib.import_module(module), name)()
    code, out, _ = run_cli([command, "--help"], capsys)
    text = " ".join(out.split())
    assert code == 0 and names
    for item in names:
        assert item in text, f"{item!r} missing from `{command} --help`"
