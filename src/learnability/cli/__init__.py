"""The `learnability` command. Each sub-command group lives in its own module of this package.

Every way bad input can end a command goes through `main`: a `UserError`, a usage error of the
command line itself (typer's bundled click), an OS error on a path the user gave, a file that is not
UTF-8, a results store that is not an SQLite database. Each becomes exactly one line on stderr,
`error: <what was wrong, with the value, and what is allowed>`, and exit code 2. Anything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import sqlite3
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from learnability.errors import UserError
from learnability.lazy import resolve_before_commands

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


_INTERRUPTED = "interrupted (Ctrl-C); what finished is kept: run the command again to go on"
try:
    _assemble()
    resolve_before_commands(app)  # each command imports what it uses first (learnability.lazy)
except (
    KeyboardInterrupt
):  # Ctrl-C while the commands still load (torch takes seconds): one line too
    print(f"error: {_INTERRUPTED}", file=sys.stderr, flush=True)
    sys.exit(130)


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


def _no_space(exc: BaseException) -> bool:
    return getattr(exc, "errno", None) in _NO_SPACE or "disk is full" in str(exc)


_NO_SPACE = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def _out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    oom = getattr(sys.modules.get("torch"), "OutOfMemoryError", None)
    if isinstance(oom, type) and isinstance(exc, oom):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and any(
        words in text for words in ("can't allocate memory", "not enough memory", "out of memory")
    )


def main(argv: list[str] | None = None) -> None:
    """Entry point: bad input becomes one line `error: ...` and exit code 2, never a traceback.

    Not the input's fault, and also one line: Ctrl-C (`error: interrupted`, exit 130, the shell's
    code for SIGINT), a full disk and memory running out (exit 1, naming that cause)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = app(args=args, prog_name="learnability", standalone_mode=False)
    except UserError as exc:
        _fail(str(exc))
    except typer.Abort:
        _fail("aborted", 130)
    except KeyboardInterrupt:
        _fail(_INTERRUPTED, 130)
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
        if _no_space(exc):
            _fail(f"no space left on the disk holding the results store ({exc}); {_FREE_SPACE}", 1)
        if "locked" in str(exc):
            _fail(
                f"the results store is locked by another process ({exc}) for longer than the "
                "store's timeout; wait for it, or use another --results folder",
                1,
            )
        _fail(
            f"the results store cannot be used: {exc}; give --results a folder holding a "
            "learnability.db written by learnability, or a new folder"
        )
    except OSError as exc:
        what = repr(exc.filename) if exc.filename else "a path given"
        reason = exc.strerror or type(exc).__name__
        if _no_space(exc):
            _fail(f"no space left on the disk to write {what} ({reason}); {_FREE_SPACE}", 1)
        _fail(f"cannot use {what}: {reason}; give a path that exists and that you may write")
    except Exception as exc:
        if _is(exc, "Exit"):
            _exit(getattr(exc, "exit_code", 0))
        if _is(exc, "Abort"):
            _fail("aborted", 130)
        if _is(exc, "UsageError"):
            _fail(_usage_message(exc, args))
        if _is(exc, "ClickException"):  # e.g. a file option that cannot be opened: still input
            text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            _fail(one_line(text))
        if _out_of_memory(exc):
            first = one_line(str(exc))[:200] or type(exc).__name__
            _fail(
                f"out of memory ({first}); use a smaller model, batch_size or task, or a device "
                "with more memory",
                1,
            )
        if _no_space(exc) or "file write failed" in str(exc):  # torch.save's own wording
            _fail(
                f"writing failed, most likely a full disk ({one_line(str(exc))[:200]}); {_FREE_SPACE}",
                1,
            )
        raise
    # standalone_mode=False returns the command's return value (None), or the code of a typer.Exit,
    # and typer turns Ctrl-C into Exit(130) itself: each must still reach the shell.
    if isinstance(code, int) and not isinstance(code, bool):
        _exit(code)


_FREE_SPACE = "free some space there, or write to another disk, and run the command again"


def _exit(code: int) -> NoReturn:
    if code == 130:
        _fail(_INTERRUPTED, 130)
    sys.exit(code)
