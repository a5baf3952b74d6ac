"""Run the `learnability` command line in-process, as the shell would see it: exit code, stdout, stderr."""

from __future__ import annotations

from learnability.cli import main


def run_cli(argv: list, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        # sys.exit("message") reaches the shell as status 1
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err
