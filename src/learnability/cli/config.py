"""`learnability config show [JOB]`: every key of a job's config with its type, default, range and help.

    learnability config show                 # the registered jobs
    learnability config show train           # every key of the train job (task, model, train, ...)
    learnability config show train --key model   # only keys under model.
    learnability config show train --json    # the same as JSON, for scripts

The listing is computed from the config dataclasses (`learnability.config.describe`): types and defaults
from the fields, help from each field's comment, ranges from what the config's own checks refuse, so it
cannot drift from the code. Keys inside a tagged union (task.name, model.arch) are listed per member.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from learnability.errors import UserError, check_choice

app = typer.Typer(
    help="Show the keys a job's config takes (types, defaults, ranges, help).",
    no_args_is_help=True,
)


def _value(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if value is None:
        return "null"
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


@app.command("show")
def show_command(
    job: Annotated[str | None, typer.Argument(help="a registered job, e.g. train")] = None,
    key: Annotated[
        str | None, typer.Option("--key", help="only keys equal to or under this one, e.g. model")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """List every key of JOB's config (a sweep's `base` and a train YAML use the same keys)."""
    from learnability.config import describe
    from learnability.sweep.jobs import get_job, known_jobs

    if job is None:
        for name in known_jobs():
            cls = get_job(name).config_cls
            doc = (cls.__doc__ or "").strip().splitlines()
            first = doc[0] if doc and not doc[0].startswith(cls.__name__ + "(") else ""
            typer.echo(f"{name:28} {cls.__name__}{': ' + first if first else ''}")
        typer.echo("show one: learnability config show JOB")
        return
    check_choice("job", job, known_jobs())
    cls = get_job(job).config_cls
    keys = describe(cls)
    if key is not None:
        keys = [k for k in keys if k.key == key or k.key.startswith(key + ".")]
        if not keys:
            tops = sorted({k.key.split(".")[0] for k in describe(cls)})
            raise UserError(
                f"--key {key!r} names no key of {job}; top-level keys: {', '.join(tops)}"
            )
    if as_json:
        rows = [
            {"key": k.key, "type": k.type, "default": k.default, "range": k.range,
             "help": k.help, "variant": k.variant}
            for k in keys
        ]  # fmt: skip
        typer.echo(json.dumps(rows, indent=1, default=str))
        return
    typer.echo(f"job {job}: {cls.__name__} ({len(keys)} keys)")
    width = min(max(len(k.key) for k in keys), 32)
    variant = None
    for k in keys:
        if k.variant != variant:
            variant = k.variant
            if variant:
                typer.echo(f"\n[{variant}]")
            else:
                typer.echo("")
        head = f"  {k.key:{width}}  {k.type} = {_value(k.default)}"
        tail = "  ".join(
            part for part in (k.range and f"({k.range})", k.help and f"# {k.help}") if part
        )
        typer.echo(f"{head}  {tail}" if tail else head)


__all__ = ["app", "show_command"]
