"""Language-modelling task: the offline KJV corpus, the local BPE tokenizer, the split and the windows."""

from __future__ import annotations

import pytest
import torch

from learnability.errors import UserError
from learnability.tasks import build_task
from learnability.tasks.language import (
    BPETokenizer,
    LanguageConfig,
    greedy_sample,
    load_verses,
    pretokenize,
    train_bpe,
)

SMALL = LanguageConfig(vocab_size=200, seq_len=16, test_size=32)


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    # one cache for the whole session, so the corpus is tokenised once
    monkeypatch.setenv("LEARNABILITY_CACHE", str(tmp_path_factory.getbasetemp() / "lm-cache"))


def test_corpus_is_shipped_offline():
    verses = load_verses("kjv")
    assert len(verses) > 30_000
    assert verses[0].startswith("In the beginning God created")


def test_bpe_round_trip_and_merges():
    text = "the cat sat on the mat\nthe cat ate\n" * 20
    tok = train_bpe(text, 40)
    assert tok.vocab_size <= 40
    assert tok.decode(tok.encode(text)) == text
    assert len(tok.encode(" the")) == 1  # the most frequent word became one token
    assert tok.encode("the cat!?") and tok.decode(tok.encode("Zq")) == "<unk><unk>"
    again = BPETokenizer(tok.symbols, tok.merges)
    assert again.encode(text) == tok.encode(text)
    with pytest.raises(UserError, match="vocab_size"):
        train_bpe(text, 3)


def test_pretokenize_keeps_every_character_of_ordinary_text():
    text = "And God said, Let there be light: and there was light.\n"
    assert "".join(pretokenize(text)) == text


def test_language_task_windows_and_split():
    task = build_task(SMALL, data_seed=1)
    assert task.vocab_size == 200 and task.output == "tokens" and task.loss == "ce"
    b = task.sample(8, torch.Generator().manual_seed(0))
    assert b.inputs.shape == (8, 16) and b.mask.all()
    assert torch.equal(b.inputs[:, 1:], b.targets[:, :-1])
    assert int(b.targets.max()) < task.vocab_size
    test = task.test_set()
    assert test.inputs.shape == (32, 16)
    # round trip of the validation text through the tokenizer (the end of Revelation)
    tail = task.tokenizer.decode(task.valid_tokens[-40:])
    assert "Amen" in tail
    assert len(task.train_tokens) > 10 * len(task.valid_tokens)
    again = build_task(SMALL, data_seed=1).test_set()
    assert torch.equal(again.inputs, test.inputs)


def test_greedy_sample_runs_a_causal_lm():
    from learnability.models import GPTConfig, build_model

    task = build_task(SMALL, data_seed=0)
    model = build_model(GPTConfig(vocab_size=200, max_len=16, n_layers=1, d_model=16), seed=0)
    text = greedy_sample(model, task.tokenizer, "And God said", max_new_tokens=20, context=16)
    assert isinstance(text, str) and text
    assert text == greedy_sample(model, task.tokenizer, "And God said", 20, context=16)


def test_bad_split_raises():
    with pytest.raises(UserError, match="valid_fraction"):
        build_task(LanguageConfig(valid_fraction=0.9))
