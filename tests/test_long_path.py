"""The test command passes wherever a user clones: here, from a clone whose path is 150 characters.

A clone's path reaches the tests through the interpreter's path (the clone's `.venv/bin/python`) and
every path built from the checkout: a test that cut a process's command line short (as
`test_orphans.py` once did, at 80 characters) failed in most real clones and passed in CI's short one.
This test copies the checkout's files (tracked and not ignored, as a clone with local edits holds)
into a folder whose path is exactly 150 characters, makes a virtual environment there on the same
interpreter and packages (the clone's own `src` first), and runs a subset of the suite in it: the
orphan test, which reads process command lines, and the fast CLI tests.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LENGTH = 150
SUBSET = ["tests/test_orphans.py", "tests/test_cli_fn.py"]


def _checkout_files() -> list[str]:
    try:
        listed = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout.splitlines()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        pytest.skip("git is not available to list the checkout's files")
    return [f for f in listed if (ROOT / f).is_file()]


@pytest.mark.timeout(300)
def test_the_suite_passes_from_a_clone_with_a_150_character_path(tmp_path_factory):
    base = tmp_path_factory.mktemp("c")
    room = LENGTH - len(str(base)) - 1
    if room < 1:
        pytest.skip(
            f"the temporary folder's path {str(base)!r} is already {LENGTH} characters long"
        )
    clone = base / ("clone-" + "x" * room)[:room]
    assert len(str(clone)) == LENGTH
    for name in _checkout_files():
        target = clone / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    assert (clone / "tests" / "test_orphans.py").is_file()

    env_dir = clone / ".venv"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    found = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    # the clone's package first, then this environment's dependencies (a plain path line: the
    # editable install of *this* checkout in there is not processed, so it cannot shadow the clone)
    Path(found, "_learnability_here.pth").write_text(
        "\n".join([str(clone / "src"), *site.getsitepackages()]) + "\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run(
        [str(python), "-c", "import learnability, sys; print(learnability.__file__, sys.executable)"],
        capture_output=True, text=True, timeout=120, env=env, cwd=clone,
    )  # fmt: skip
    assert where.stdout.startswith(str(clone / "src")), where.stdout + where.stderr
    assert len(where.stdout.split()[1]) > LENGTH  # the interpreter's own path is that long

    done = subprocess.run(
        [str(python), "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", *SUBSET],
        capture_output=True, text=True, timeout=280, env=env, cwd=clone,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "skipped" not in summary, summary
