"""Resolve a `--device` string to a torch device, with a clear error when it is not available."""

from __future__ import annotations

import torch

from learnability.errors import UserError


def check_device(spec: str) -> str:
    """`spec` if it is written as a device ('auto', 'cpu', 'cuda', 'cuda:N'), whether or not this
    machine has it (configs are checked where they are written, not where they run)."""
    text = spec.strip().lower() if isinstance(spec, str) else spec
    if text in ("auto", "cpu", "cuda") or (
        isinstance(text, str)
        and text.startswith("cuda:")
        and text[5:].isascii()
        and text[5:].isdigit()
    ):
        return spec
    raise UserError(f"unknown device {spec!r}; allowed: auto, cpu, cuda, cuda:N")


def resolve_device(spec: str | torch.device | None = "auto") -> torch.device:
    """'auto' (CUDA if present, else CPU), 'cpu', 'cuda' or 'cuda:N'."""
    if isinstance(spec, torch.device):
        return spec
    spec = (spec or "auto").strip().lower()
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if spec == "cpu":
        return torch.device("cpu")
    if spec == "cuda" or spec.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise UserError(
                f"device {spec!r} asked for, but no CUDA device is available; use --device cpu"
            )
        if ":" in spec:
            index = spec.split(":", 1)[1]
            if not (index.isascii() and index.isdigit()) or int(index) >= torch.cuda.device_count():
                raise UserError(
                    f"device {spec!r} does not exist; this machine has cuda:0..cuda:{torch.cuda.device_count() - 1}"
                )
        return torch.device(spec)
    raise UserError(f"unknown device {spec!r}; allowed: auto, cpu, cuda, cuda:N")
