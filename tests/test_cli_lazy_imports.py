"""`learnability --help` and a usage error stay quick: the command line imports none of torch, scipy,
matplotlib or pandas until a command runs (`learnability.lazy`, issue #36)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "scipy", "matplotlib", "pandas")

_PROBE = """
import sys
from learnability.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print("LOADED", ",".join(m for m in {heavy!r} if m in sys.modules), "CODE", code)
"""


def _run(*argv: str) -> tuple[list[str], str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=HEAVY), *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("LOADED")][-1]
    loaded, code = line.removeprefix("LOADED ").split(" CODE ")
    return [m for m in loaded.split(",") if m], code


def test_help_imports_nothing_heavy():
    loaded, code = _run("--help")
    assert loaded == [] and code in ("0", "None")


def test_usage_errors_import_nothing_heavy():
    for argv in (["sweep", "--bogus"], ["train", "--nope"], ["fn", "profile"], ["study"]):
        loaded, code = _run(*argv)
        assert loaded == [], (argv, loaded)
        assert code == "2", (argv, code)


def test_a_command_still_gets_real_objects():
    # a command resolves every stand-in before its body runs: `fn list` prints the zoo
    out = subprocess.run(
        [sys.executable, "-c", "from learnability.cli import main; main(['fn', 'list'])"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and "parity" in out.stdout
