"""The `learnability` command. Each sub-command group lives in its own module of this package.

Every way bad input can end a command goes through `main`: a `UserError`, a usage error of the
command line itself (typer's bundled click), an OS error on a path the user gave, a file that is not
UTF-8, a results store that is not an SQLite database. Each becomes exactly one line on stderr,
`error: <what was wrong, with the value, and what is allowed>`, and exit code 2. Anything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sqlite3
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

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
    ("learnability.cli.plot", "register", None),
    ("learnability.cli.config", "app", "config"),
    ("learnability.cli.study", "app", "study"),
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


def _click_modules() -> list[Any]:
    # typer >= 0.16 bundles its own click as typer._click; older typer uses the click package. Only
    # the one typer really raises matters, but both are checked so an upgrade cannot bring back tracebacks.
    found = []
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            found.append(importlib.import_module(name))
        except ImportError:
            continue
    return found


def _is(exc: BaseException, class_name: str) -> bool:
    return any(
        isinstance(exc, cls)
        for module in _click_modules()
        if isinstance(cls := getattr(module, class_name, None), type)
    )


def one_line(message: str) -> str:
    """`message` on one line: user values are quoted with repr, so a newline left is layout only."""
    return " ".join(part.strip() for part in str(message).splitlines() if part.strip())


def _fail(message: str, code: int = 2) -> NoReturn:
    text = one_line(message)
    stream = sys.stderr
    if stream is not None and stream.isatty():
        # soft_wrap: a long message stays one logical line however narrow the terminal is
        Console(stderr=True, soft_wrap=True, highlight=False).print(
            f"[bold red]error:[/] {escape(text)}"
        )
    else:
        print(f"error: {text}", file=sys.__stderr__ if stream is None else stream, flush=True)
    sys.exit(code)


def _option_value(argv: list[str], opts: list[str]) -> str | None:
    """What the user typed after an option (`-n abc` or `--n=abc`), to name it in the message."""
    for i, arg in enumerate(argv):
        for opt in opts:
            if arg == opt and i + 1 < len(argv):
                return argv[i + 1]
            if arg.startswith(opt + "="):
                return arg[len(opt) + 1 :]
    return None


def _usage_message(exc: Any, argv: list[str]) -> str:
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else "learnability"
    if _is(exc, "NoArgsIsHelpError") and ctx is not None:
        # help on stdout (what the user asked for, in effect); the error itself stays one line
        print(ctx.get_help())
        commands = getattr(ctx.command, "list_commands", None)
        names = ", ".join(commands(ctx)) if commands is not None else ""
        return f"`{path}` needs a command; choose one of: {names}"
    message = one_line(exc.format_message())
    param = getattr(exc, "param", None)
    if _is(exc, "BadParameter") and not _is(exc, "MissingParameter") and param is not None:
        value = _option_value(argv, list(getattr(param, "opts", [])))
        if value is not None and repr(value) not in message:
            message = f"{message} (got {value!r})"
    return f"{message} (see `{path} --help`)"


def main(argv: list[str] | None = None) -> None:
    """Entry point: bad input becomes one line `error: ...` and exit code 2, never a traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        app(args=args, prog_name="learnability", standalone_mode=False)
    except UserError as exc:
        _fail(str(exc))
    except typer.Abort:
        _fail("aborted", 130)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except UnicodeError as exc:
        where = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        reason = getattr(exc, "reason", type(exc).__name__)
        _fail(f"a file given is not UTF-8 text ({reason}{where}); save it as UTF-8")
    except BrokenPipeError:
        # the reader of our output went away (`learnability results | head`): not an error of the
        # input; silence the interpreter's own complaint when it flushes stdout at exit
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except sqlite3.DatabaseError as exc:
        _fail(
            f"the results store cannot be used: {exc}; give --results a folder holding a "
            "learnability.db written by learnability, or a new folder"
        )
    except OSError as exc:
        what = repr(exc.filename) if exc.filename else "a path given"
        reason = exc.strerror or type(exc).__name__
        _fail(f"cannot use {what}: {reason}; give a path that exists and that you may write")
    except Exception as exc:
        if _is(exc, "Exit"):
            sys.exit(getattr(exc, "exit_code", 0))
        if _is(exc, "Abort"):
            _fail("aborted", 130)
        if _is(exc, "UsageError"):
            _fail(_usage_message(exc, args))
        if _is(exc, "ClickException"):  # e.g. a file option that cannot be opened: still input
            text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            _fail(one_line(text))
        raise
    # standalone_mode=False returns the command's return value; commands signal failure by raising.
