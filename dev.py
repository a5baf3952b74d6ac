#!/usr/bin/env python3
"""Set up the project's environment and run something in it: the README's two commands.

    python3 dev.py reproduce [ARGS...]   # venv + install, then `learnability reproduce ARGS`
    python3 dev.py test [PYTEST ARGS...] # venv + install, then ruff, mypy and the test suite

Only the Python standard library is used here, so it works on a fresh machine with Python >= 3.11 and
pip. The environment lives in .venv/; torch and the other dependencies are pinned by constraints.txt
(the library's own metadata asks for ranges).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".installed"


def _fingerprint() -> str:
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "constraints.txt"):
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def ensure_env() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 -- dev.py itself may be started by an older python3
        sys.exit(f"learnability needs Python >= 3.11; this is {sys.version.split()[0]}")
    if not (BIN / "python").exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if STAMP.exists() and STAMP.read_text() == _fingerprint():
        return
    print("installing learnability and its pinned dependencies (first time only)", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "-c", str(ROOT / "constraints.txt"), "-e", f"{ROOT}[dev]"], check=True)
    STAMP.write_text(_fingerprint())


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"reproduce", "test", "shell"}:
        print(__doc__)
        return 2
    ensure_env()
    command, rest = argv[0], argv[1:]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if command == "reproduce":
        return subprocess.call([str(BIN / "learnability"), "reproduce", *rest], cwd=ROOT, env=env)
    if command == "test":
        lint = subprocess.call([str(BIN / "ruff"), "check", "."], cwd=ROOT, env=env)
        fmt = subprocess.call([str(BIN / "ruff"), "format", "--check", "."], cwd=ROOT, env=env)
        types = subprocess.call([str(BIN / "mypy")], cwd=ROOT, env=env)  # [tool.mypy] in pyproject
        tests = subprocess.call([str(BIN / "python"), "-m", "pytest", *rest], cwd=ROOT, env=env)
        return tests or lint or fmt or types
    return subprocess.call([str(BIN / "python"), *rest], cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
