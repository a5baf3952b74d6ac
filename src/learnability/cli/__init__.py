"""The `learnability` command. Each sub-command group lives in its own module of this package."""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

from learnability.errors import UserError

app = typer.Typer(
    name="learnability",
    help="Which functions can a transformer learn, and why: analyse, train, measure, sweep, reproduce.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# (module, attribute, name or None to merge commands at top level). A module that is absent is skipped,
# so the command works while parts of the toolkit are being built.
_GROUPS: list[tuple[str, str, str | None]] = [
    ("learnability.cli.fn", "app", "fn"),
    ("learnability.cli.train", "register", None),
    ("learnability.cli.sweep", "register", None),
]


def _assemble() -> None:
    for module_name, attribute, group in _GROUPS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        target = getattr(module, attribute)
        if group is None:
            target(app)
        else:
            app.add_typer(target, name=group)


_assemble()


def main(argv: list[str] | None = None) -> None:
    """Entry point: bad input becomes `error: ...` and exit code 2, never a traceback."""
    err = Console(stderr=True)
    try:
        app(args=argv, standalone_mode=False)
    except UserError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except Exception as exc:  # click's usage errors carry their own exit code
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Exit):
            sys.exit(exc.exit_code)
        raise
    # standalone_mode=False returns the command's return value; commands signal failure by raising.
