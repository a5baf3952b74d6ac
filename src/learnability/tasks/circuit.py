"""Circuit imitation (Zhong & Andreas 2024, §5.2): imitate the next-token distribution of a random target GPT-2.

The target is the project's GPT (`learnability.models.GPT`, GPT-2 recipe) of width `target_width`,
`target_layers` layers and `target_heads` heads over `vocab_size` tokens and `seq_len` positions, initialised from
`target_seed` and then rescaled as in the published code so its attention patterns and outputs are far from
uniform: query/key/value weights ×10 (`attn.in_proj.weight`), MLP output projection weight and bias ×20
(`mlp.proj.*`), unembedding weight ×100/√target_width.

Inputs are uniform random token sequences (B, seq_len); the target is the target model's softmax distribution at
the last position (B, V), float32 probabilities (output "distribution", loss "kl": KL(target ‖ student) at the last
position). Targets are computed under `torch.no_grad()` in chunks of `chunk` sequences, so memory stays at one
chunk's activations (the published generator kept autograd on and needed ~77 GB per 10k sequences).

Streamed: the fixed test set (`test_size` sequences) is drawn with the data seed; training batches are fresh
sequences, with any row equal to a test row redrawn. The target model itself depends only on `target_seed`
(fixed, as in the published code), so runs with different data or init seeds imitate the same circuit.
`generation_device` is where the target runs ("cpu", "cuda", "auto"); batches are returned on the CPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

from learnability.device import resolve_device
from learnability.errors import UserError
from learnability.models import GPTConfig, build_model
from learnability.tasks import register_task
from learnability.tasks.algorithmic import row_hash
from learnability.tasks.base import Batch, Task


@dataclass
class CircuitConfig:
    name: Literal["circuit"] = "circuit"  # imitate a random target GPT's next-token distribution
    target_width: int = 512  # width of the target GPT
    target_layers: int = 3  # layers of the target GPT
    target_heads: int = 2  # heads per layer of the target GPT
    vocab_size: int = 512  # tokens
    seq_len: int = 40  # sequence length
    target_seed: int = 12345  # initialises the target (fixed: every run imitates the same circuit)
    test_size: int = 4000  # sequences in the fixed test set
    chunk: int = 1000  # sequences per no-grad forward pass of the target (bounds memory)
    generation_device: str = "cpu"  # where the target runs: cpu, cuda or auto


def build_target(config: CircuitConfig, device: torch.device | str = "cpu") -> torch.nn.Module:
    """The rescaled random target GPT-2 (eval mode, no parameter requires grad)."""

    gpt = GPTConfig(
        vocab_size=config.vocab_size,
        max_len=config.seq_len,
        n_layers=config.target_layers,
        n_heads=config.target_heads,
        d_model=config.target_width,
    )
    model = build_model(gpt, seed=config.target_seed, device=device)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("attn.in_proj.weight"):
                p.mul_(10.0)
            elif ".mlp.proj." in name:
                p.mul_(20.0)
            elif name == "unembedding.weight":
                p.mul_(100.0 / math.sqrt(config.target_width))
            elif name.endswith(("ln1.weight", "ln2.weight", "final_ln.weight")):
                p.fill_(
                    1.0
                )  # LayerNorm gains start at 1 (GPT-2 recipe), whatever the model's init did
            p.requires_grad_(False)
    return model.eval()


class CircuitTask(Task):
    """Imitate a random target transformer's last-position distribution."""

    output = "distribution"
    loss = "kl"

    def __init__(self, config: CircuitConfig, data_seed: int = 0) -> None:
        for what in ("target_width", "target_layers", "target_heads", "vocab_size", "seq_len"):
            value = getattr(config, what)
            if not isinstance(value, int) or value < 1:
                raise UserError(
                    f"circuit.{what} = {value!r} is not allowed; it must be a positive integer"
                )
        if config.target_width % config.target_heads:
            raise UserError(
                f"circuit.target_heads = {config.target_heads} does not divide target_width = "
                f"{config.target_width}; pick a divisor of the width"
            )
        if config.chunk < 1 or config.test_size < 1:
            raise UserError("circuit.chunk and circuit.test_size must be positive integers")
        self.config = config
        self.vocab_size = config.vocab_size
        self.seq_len = config.seq_len
        self.device = resolve_device(config.generation_device)
        self.target = build_target(config, self.device)
        g = torch.Generator().manual_seed(data_seed)
        inputs = self.draw(config.test_size, g)
        self._test = Batch(inputs, self.target_distribution(inputs))
        self._test_hashes = row_hash(inputs)

    def scored_positions(self) -> tuple[int, ...]:
        return (self.seq_len - 1,)  # the last position's distribution

    def draw(self, count: int, generator: torch.Generator) -> torch.Tensor:
        """(count, seq_len) uniform random tokens."""
        return torch.randint(0, self.vocab_size, (count, self.seq_len), generator=generator)

    @torch.no_grad()
    def target_distribution(self, inputs: torch.Tensor) -> torch.Tensor:
        """(B, T) tokens → (B, V) the target's next-token probabilities at the last position (CPU float32)."""
        out = []
        for start in range(0, len(inputs), self.config.chunk):
            logits = self.target(inputs[start : start + self.config.chunk].to(self.device))
            out.append(torch.softmax(logits[:, -1].float(), -1).cpu())
        return torch.cat(out) if out else torch.zeros(0, self.vocab_size)

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        inputs = self.draw(batch_size, generator)
        clash = torch.isin(row_hash(inputs), self._test_hashes)
        while clash.any():
            inputs[clash] = self.draw(int(clash.sum()), generator)
            clash = torch.isin(row_hash(inputs), self._test_hashes)
        return Batch(inputs, self.target_distribution(inputs))

    def test_set(self) -> Batch:
        return self._test


def kl_last(student_logits: torch.Tensor, target_probs: torch.Tensor) -> torch.Tensor:
    """KL(target ‖ student) per row (B,), from student logits (B, V) or (B, T, V) and target probs (B, V)."""
    if student_logits.dim() == 3:
        student_logits = student_logits[:, -1]
    log_q = torch.log_softmax(student_logits.float(), -1)
    p = target_probs.float()
    log_p = torch.where(p > 0, p.clamp_min(1e-30).log(), torch.zeros_like(p))
    return (p * (log_p - log_q)).sum(-1)


register_task(CircuitConfig, CircuitTask)

__all__ = ["CircuitConfig", "CircuitTask", "build_target", "kl_last"]
