"""Stacked ensembles: every member's numbers are bit-identical to the same run alone (CPU, one thread).

Model level (forward and every parameter gradient) for the model settings the plans use, trainer level
(early stops at different steps, a member that diverges, AdamW, SGD and clipping on
member views), job level (the `ensemble.group` job against separate `execute_run` calls: metrics and
saved weights) and the runner (a sweep with and without ensembles stores the same results).
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest
import torch

from learnability.config import config_hash, from_dict, to_dict
from learnability.jobs.train import TrainJobConfig
from learnability.models import BooleanTransformerConfig, GPTConfig, build_model
from learnability.sweep import ensemble
from learnability.sweep.ensemble import GroupingExecutor, fit_stacked, stack_models
from learnability.sweep.executors import execute_run
from learnability.sweep.runner import run_sweep
from learnability.sweep.spec import Sweep
from learnability.sweep.store import Store
from learnability.tasks import build_task
from learnability.tasks.algorithmic import DecimalAddConfig, ModAddConfig, NeedleConfig
from learnability.tasks.boolean import BooleanTaskConfig
from learnability.train import TrainConfig, Trainer

K = 3


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _bits(b: int, n: int, k: int) -> torch.Tensor:
    return torch.randint(0, 2, (b, n), generator=torch.Generator().manual_seed(k))


@pytest.mark.parametrize(
    "cfg",
    [
        BooleanTransformerConfig(d_model=8, d_ff=16, max_len=5),  # the published recipe
        BooleanTransformerConfig(d_model=8, d_ff=8, max_len=5, readout="eos", embedding="add"),
        BooleanTransformerConfig(d_model=8, d_ff=8, max_len=5, ln="pre", positions="alibi"),
        BooleanTransformerConfig(d_model=8, d_ff=8, max_len=5, readout="all", causal=True),
        BooleanTransformerConfig(d_model=8, d_ff=8, n_layers=1, max_len=5, positions="none"),
        BooleanTransformerConfig(d_model=8, d_ff=8, max_len=5, ln_eps=0.0),
        GPTConfig(vocab_size=7, max_len=5, d_model=8, unembedding_bias=False),
        GPTConfig(vocab_size=7, max_len=5, d_model=8, n_heads=4),
    ],
    ids=["published", "eos-add", "pre-alibi", "causal-all", "one-layer", "eps0", "gpt", "gpt4"],
)
def test_stacked_model_is_bit_identical_to_each_member(cfg):
    models = [build_model(cfg, seed=s) for s in range(K)]
    alone = [copy.deepcopy(m) for m in models]
    stacked = stack_models(models)
    vocab = getattr(cfg, "vocab_size", 2)
    tokens = torch.stack(
        [
            torch.randint(0, vocab, (16, 5), generator=torch.Generator().manual_seed(k))
            for k in range(K)
        ]
    )
    out = stacked.run(tokens)
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(9))
    out.backward(grad)
    big = dict(stacked.named_parameters())
    for k, model in enumerate(alone):
        mine = model(tokens[k])
        assert torch.equal(mine, out[k])
        mine.backward(grad[k])
        for name, p in model.named_parameters():
            assert torch.equal(p.grad, big[name].grad[k]), name
    # the members' own parameters are views of the stack
    assert (
        models[1].token_embedding.weight.data_ptr() == big["token_embedding.weight"][1].data_ptr()
    )


@pytest.mark.parametrize(
    "task_config",
    [
        ModAddConfig(p=11),
        NeedleConfig(max_pairs=3, test_size=64),
        DecimalAddConfig(digits=2, test_size=64),
    ],
    ids=["mod_add", "needle", "decimal_add"],
)
def test_stacked_gpt_asking_scored_positions_equals_separate_fits(monkeypatch, task_config):
    # embedding-only GPTs whose last block asks only the task's scored positions (Trainer.at)
    monkeypatch.setattr(ensemble, "MODE", "stacked")
    train = TrainConfig(steps=12, batch_size=16, lr=1e-2, eval_every=4, freeze="embeddings")

    def trainers() -> list[Trainer]:
        out = []
        for s in range(K):
            task = build_task(task_config, s)
            cfg = GPTConfig(vocab_size=task.vocab_size, max_len=task.seq_len, d_model=16, n_heads=2)
            out.append(Trainer(build_model(cfg, seed=s), task, train))
        return out

    alone = [t.fit(data_seed=s) for s, t in enumerate(trainers())]
    together = trainers()
    assert together[0].at is not None and len(together[0].at) < together[0].task.seq_len
    results = fit_stacked(together, list(range(K))).fit()
    for a, b in zip(alone, results):
        assert not isinstance(b, BaseException)
        assert json.dumps([a.steps, a.history, a.final]) == json.dumps(
            [b.steps, b.history, b.final]
        )


def _trainers(train: TrainConfig, function: str = "majority", poison: int | None = None):
    model_cfg = BooleanTransformerConfig(d_model=8, d_ff=8, max_len=5, readout="eos")
    out = []
    for s in range(K):
        task = build_task(BooleanTaskConfig(function=function, n=5, test_size=32), s)
        model = build_model(model_cfg, seed=s)
        if s == poison:
            with torch.no_grad():
                model.readout.weight.fill_(float("inf"))
        out.append(Trainer(model, task, train))
    return out


@pytest.mark.parametrize(
    "train,function,poison",
    [
        # early stops at different steps (the stack shrinks), AdamW
        (
            TrainConfig(steps=60, batch_size=16, lr=1e-2, eval_every=5, converge_acc=0.9),
            "majority",
            None,
        ),
        # a member whose loss is not finite from the start diverges alone, the others go on
        (TrainConfig(steps=12, batch_size=16, lr=3e-3, eval_every=4), "parity", 1),
        # clipping each member by its own norm, cosine schedule: members' own tensors
        (
            TrainConfig(
                steps=12,
                batch_size=16,
                lr=3e-3,
                eval_every=6,
                grad_clip=0.5,
                schedule="warmup_cosine",
                warmup_steps=3,
            ),
            "parity",
            None,
        ),
        # SGD with momentum: its fused kernel is applied per member
        (
            TrainConfig(
                steps=12, batch_size=16, lr=3e-2, optimizer="sgd", momentum=0.9, eval_every=6
            ),
            "parity",
            None,
        ),
    ],
    ids=["early-stops", "one-diverges", "clip", "sgd"],
)
def test_stacked_fit_equals_separate_fits(monkeypatch, train, function, poison):
    monkeypatch.setattr(ensemble, "MODE", "stacked")
    alone = [t.fit(data_seed=s) for s, t in enumerate(_trainers(train, function, poison))]
    together = _trainers(train, function, poison)
    fit = fit_stacked(together, list(range(K)))
    results = fit.fit()
    assert fit.mode == "stacked"
    singles = _trainers(train, function, poison)
    for s, t in enumerate(singles):
        t.fit(data_seed=s)
    for a, b, t_single, t_stacked in zip(alone, results, singles, together):
        assert not isinstance(b, BaseException)
        same = json.dumps([a.status, a.steps, a.history, a.final])  # NaN-safe, bit-exact floats
        assert same == json.dumps([b.status, b.steps, b.history, b.final])
        for p, q in zip(t_single.model.parameters(), t_stacked.model.parameters()):
            assert torch.equal(p, q)
    if poison is not None:
        assert [r.status for r in results] == ["finished", "diverged", "finished"]  # type: ignore[union-attr]
    elif train.converge_acc:
        assert len({r.steps for r in results}) > 1  # type: ignore[union-attr]


def _payloads(root: Path, tag: str, base: dict) -> list[dict]:
    out = []
    for seed in range(K):
        data = json.loads(json.dumps(base))
        data["seed"] = data["data_seed"] = seed
        config = from_dict(TrainJobConfig, data)
        run_id = config_hash("train", config)
        out.append({"run_id": run_id, "job": "train", "module": "learnability.jobs.train",
                    "config": to_dict(config), "run_dir": str(root / tag / run_id),
                    "device": "cpu", "threads": 1})  # fmt: skip
    return out


GPT_RUN = {
    "task": {"name": "mod_add", "p": 5},
    "model": {"arch": "gpt", "n_layers": 1, "n_heads": 2, "d_model": 8},
    "train": {"steps": 10, "batch_size": 8, "lr": 1e-2, "eval_every": 5, "freeze": "embeddings"},
    "measure": ["accuracy"],
}


def test_group_job_equals_separate_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(ensemble, "MODE", "stacked")
    alone = {p["run_id"]: execute_run(p) for p in _payloads(tmp_path, "alone", GPT_RUN)}
    t0 = time.perf_counter()
    together = ensemble._Group(_payloads(tmp_path, "together", GPT_RUN)).run()
    wall = time.perf_counter() - t0
    # each member's seconds are its share of the group's time: together they are the group's wall
    # time, not K times it (the power analysis prices added units from these)
    shares = sum(r["seconds"] for r in together.values())
    assert 0.5 * wall < shares <= wall * 1.01
    assert set(alone) == set(together)
    for run_id, a in alone.items():
        b = together[run_id]
        assert b["status"] == a["status"] == "ok"
        assert b["versions"]["execution"].startswith("stacked ×3")
        strip = lambda m: {k: v for k, v in m.items() if k != "seconds"}  # noqa: E731
        assert strip(a["metrics"]) == strip(b["metrics"])
        wa = torch.load(tmp_path / "alone" / run_id / "model.pt", weights_only=True)["state_dict"]
        wb = torch.load(tmp_path / "together" / run_id / "model.pt", weights_only=True)[
            "state_dict"
        ]
        assert all(torch.equal(wa[k], wb[k]) for k in wa)


def test_runner_with_and_without_ensembles_stores_the_same(tmp_path, monkeypatch):
    monkeypatch.setattr(ensemble, "MODE", "stacked")
    sweep = Sweep("ens/gpt", "train", base=GPT_RUN, seeds=[0, 1, 2])
    stored = {}
    for flag in (True, False):
        root = tmp_path / str(flag)
        summary = run_sweep(sweep, root, workers=0, progress=False, ensembles=flag)
        assert summary.ok == 3
        with Store(root) as store:
            stored[flag] = {r.run_id: r for r in store.records(sweep="ens/gpt")}
    assert set(stored[True]) == set(stored[False])
    for run_id, a in stored[True].items():
        b = stored[False][run_id]
        strip = lambda m: {k: v for k, v in m.items() if k != "seconds"}  # noqa: E731
        assert strip(a.metrics) == strip(b.metrics)
        assert a.versions["execution"].startswith("stacked ×3")
        assert "execution" not in b.versions


class _FakeInner:
    """An executor whose group payloads crash: members must come back to be re-run alone."""

    capacity = 2

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict]] = []

    def submit(self, key: str, payload: dict) -> None:
        self.sent.append((key, payload))

    def poll(self, timeout: float) -> list[tuple[str, dict]]:
        out = []
        for key, payload in self.sent:
            if payload["job"] == ensemble.GROUP_JOB:
                out.append((key, {"status": "failed", "crashed": True, "crash_group": 1,
                                  "error": "worker died", "metrics": {}}))  # fmt: skip
            else:
                out.append((key, {"status": "ok", "metrics": {"alone": True}}))
        self.sent = []
        return out

    def close(self) -> None:
        pass


def test_a_crashed_group_comes_back_as_runs_to_retry_alone():
    inner = _FakeInner()
    grouping = GroupingExecutor(inner, {"a": "g", "b": "g", "c": "g"})
    assert grouping.capacity == 2 * 3  # a whole group per free slot
    for key in "abc":
        grouping.submit(key, {"run_id": key, "job": "train", "device": "cpu", "threads": 1})
    assert [p["job"] for _, p in inner.sent] == [ensemble.GROUP_JOB]
    back = dict(grouping.poll(0))
    assert set(back) == {"a", "b", "c"}
    assert all(r["crashed"] and r["crash_group"] >= 2 for r in back.values())
    grouping.submit("a", {"run_id": "a", "job": "train"})  # the runner's isolated retry
    assert inner.sent[0][0] == "a" and inner.sent[0][1]["job"] == "train"
    assert grouping.poll(0) == [("a", {"status": "ok", "metrics": {"alone": True}})]
