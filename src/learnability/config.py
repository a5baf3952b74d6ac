"""Typed configs: build dataclasses strictly from dicts / YAML, apply `a.b=v` overrides, hash them.

A config is a plain `@dataclass` with type hints and defaults. `from_dict(cls, data)` builds one and
rejects anything it does not understand, naming the field path (`model.d_model`), the value and what
was expected. Supported field types: `int`, `float` (an int is accepted and converted), `bool`, `str`,
`Path` (from a string), `Literal[...]`, `X | None`, `list[X]`, `tuple[X, ...]` / `tuple[A, B]`,
`dict[str, X]`, `Any`, nested dataclasses, and tagged unions of dataclasses.

Tagged unions: a field typed `A | B` where A and B are dataclasses that share a field whose type is a
`Literal` (the tag, e.g. `arch` or `name`). The tag value in the data chooses the member. When the data
omits the tag and the field's default is an instance of one member, that member is used (so
`model: {d_model: 64}` edits the default model); otherwise a missing or unknown tag is an error listing
the allowed tags.

`config_hash(job, config)` is the sha256 (16 hex digits) of the sorted JSON of `{"job", "config"}`,
where the config is fully resolved (defaults included), so a run's id does not depend on how the
config was spelled.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import yaml

from learnability.errors import UserError, did_you_mean
from learnability.paths import atomic_write_text

__all__ = [
    "HASH_OMIT_DEFAULT",
    "KeyInfo",
    "apply_overrides",
    "config_hash",
    "describe",
    "from_dict",
    "load_yaml",
    "parse_override",
    "save_resolved",
    "to_dict",
    "validate_key",
    "yaml_values",
]

_MISSING = dataclasses.MISSING
_hints_cache: dict[type, dict[str, Any]] = {}
_fields_cache: dict[type, tuple[dataclasses.Field, ...]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _hints_cache.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls)
        _hints_cache[cls] = hints
        _fields_cache[cls] = tuple(f for f in dataclasses.fields(cls) if f.init)
    return hints


def _fields(cls: type) -> tuple[dataclasses.Field, ...]:
    _hints(cls)
    return _fields_cache[cls]


def _type_name(tp: Any) -> str:
    if tp is type(None):
        return "null"
    if isinstance(tp, type) and not get_args(tp):
        return tp.__name__
    origin = get_origin(tp)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in get_args(tp))
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in get_args(tp))
    return str(tp).replace("typing.", "")


def _where(path: str) -> str:
    return path or "<config>"


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _tag_field(members: tuple[type, ...]) -> str | None:
    """The field name every member carries with a `Literal` type (the union's tag), or None."""
    first = members[0]
    for f in _fields(first):
        if all(
            get_origin(_hints(m).get(f.name)) is Literal and f.name in _hints(m) for m in members
        ):
            return f.name
    return None


def _tag_values(cls: type, tag: str) -> tuple[Any, ...]:
    return get_args(_hints(cls)[tag])


def _convert(tp: Any, value: Any, path: str, default: Any = _MISSING) -> Any:
    if tp is Any:
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _build(tp, value, path)
    origin = get_origin(tp)
    if origin is Literal:
        allowed = get_args(tp)
        # bool is an int subclass: keep True from matching a Literal[1]
        if any(value == a and type(value) is type(a) for a in allowed):
            return value
        raise UserError(
            f"{_where(path)}: {value!r} is not allowed{did_you_mean(str(value), [str(a) for a in allowed])}; "
            f"allowed: {', '.join(repr(a) for a in allowed)}"
        )
    if _is_union(tp):
        args = get_args(tp)
        if value is None:
            if type(None) in args:
                return None
            raise UserError(f"{_where(path)}: null is not allowed; expected {_type_name(tp)}")
        members = tuple(a for a in args if a is not type(None))
        if len(members) == 1:
            return _convert(members[0], value, path)
        if all(dataclasses.is_dataclass(m) for m in members):
            return _convert_tagged(members, value, path, default)
        # a number goes to the member of its own type when there is one (int | float keeps 1.0 a
        # float and 1 an int, where "first member that accepts it" would turn 1.0 into 1)
        own = type(value)
        if own in (int, float) and own in members:
            return value
        for member in members:  # plain union such as int | str: first member that accepts it
            try:
                return _convert(member, value, path)
            except UserError:
                continue
        raise UserError(f"{_where(path)}: {value!r} is not a {_type_name(tp)}")
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise UserError(f"{_where(path)}: {value!r} is not a bool (true/false)")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)  # YAML's 1e3 is a float; accept integral floats for int fields
        raise UserError(f"{_where(path)}: {value!r} is not an int")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):  # YAML 1.1 reads "1e-3" as a string
            try:
                return float(value)
            except ValueError:
                pass
        raise UserError(f"{_where(path)}: {value!r} is not a float")
    if tp is str:
        if isinstance(value, str):
            return value
        raise UserError(f"{_where(path)}: {value!r} is not a str")
    if tp is Path:
        if isinstance(value, (str, Path)):
            return Path(value)
        raise UserError(f"{_where(path)}: {value!r} is not a path")
    if origin in (list, typing.Sequence, tuple) or tp in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise UserError(f"{_where(path)}: {value!r} is not a list; expected {_type_name(tp)}")
        args = get_args(tp)
        if origin is tuple or tp is tuple:
            if not args:
                return tuple(value)
            if len(args) == 2 and args[1] is Ellipsis:
                return tuple(_convert(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
            if len(value) != len(args):
                raise UserError(
                    f"{_where(path)}: {value!r} has {len(value)} items; expected {len(args)}"
                )
            return tuple(
                _convert(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value))
            )
        item = args[0] if args else Any
        return [_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise UserError(
                f"{_where(path)}: {value!r} is not a mapping; expected {_type_name(tp)}"
            )
        key_t, val_t = get_args(tp) or (Any, Any)
        return {
            _convert(key_t, k, f"{path}.<key>"): _convert(val_t, v, f"{path}.{k}")
            for k, v in value.items()
        }
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    raise UserError(f"{_where(path)}: unsupported field type {_type_name(tp)}")


def _convert_tagged(members: tuple[type, ...], value: Any, path: str, default: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if isinstance(value, members):
            return value
        raise UserError(f"{_where(path)}: {type(value).__name__} is not one of the allowed configs")
    tag = _tag_field(members)
    if tag is None:
        raise UserError(
            f"{_where(path)}: cannot choose between {_type_name(members)} (no tag field)"
        )
    by_tag: dict[Any, type] = {}
    for m in members:
        for v in _tag_values(m, tag):
            by_tag[v] = m
    allowed = ", ".join(repr(t) for t in by_tag)
    if not isinstance(value, dict):
        raise UserError(
            f"{_where(path)}: {value!r} is not a mapping; expected a config with {tag}: {allowed}"
        )
    if tag not in value:
        if default is not _MISSING and isinstance(default, members):
            return _build(type(default), {**value, tag: getattr(default, tag)}, path)
        raise UserError(f"{_where(path)}: missing {tag!r}; allowed: {allowed}")
    chosen = value[tag]
    if chosen not in by_tag:
        raise UserError(
            f"{_where(path)}.{tag}: unknown {tag} {chosen!r}{did_you_mean(str(chosen), [str(t) for t in by_tag])}; "
            f"allowed: {allowed}"
        )
    return _build(by_tag[chosen], value, path)


def _field_default(f: dataclasses.Field) -> Any:
    if f.default is not _MISSING:
        return f.default
    if f.default_factory is not _MISSING:
        return f.default_factory()
    return _MISSING


def _build(cls: type, data: Any, path: str) -> Any:
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        if isinstance(data, cls):
            return data
        data = to_dict(data)
    if not isinstance(data, dict):
        raise UserError(
            f"{_where(path)}: {data!r} is not a mapping; expected {cls.__name__} fields"
        )
    hints = _hints(cls)
    fields = _fields(cls)
    names = [f.name for f in fields]
    for key in data:
        if key not in hints or key not in names:
            sub = f"{path}.{key}" if path else str(key)
            raise UserError(
                f"unknown key {sub!r}{did_you_mean(str(key), names)}; "
                f"{cls.__name__} has: {', '.join(names)}"
            )
    kwargs = {}
    for f in fields:
        sub = f"{path}.{f.name}" if path else f.name
        if f.name in data:
            default = _field_default(f) if _is_union(hints[f.name]) else _MISSING
            kwargs[f.name] = _convert(hints[f.name], data[f.name], sub, default)
        elif f.default is _MISSING and f.default_factory is _MISSING:
            raise UserError(f"{sub}: missing required field ({_type_name(hints[f.name])})")
    try:
        return cls(**kwargs)
    except UserError:
        raise
    except (ValueError, TypeError) as exc:  # a __post_init__ check that is not a UserError
        raise UserError(f"{_where(path)}: {exc}") from None


def from_dict(cls: type, data: Any, path: str = "") -> Any:
    """Build the dataclass `cls` from `data` (a mapping, possibly nested), strictly.

    Missing fields take their defaults; unknown keys, wrong types and bad tags raise UserError.
    """
    if not (dataclasses.is_dataclass(cls) and isinstance(cls, type)):
        return _convert(cls, data, path)
    return _build(cls, data, path)


def to_dict(obj: Any) -> Any:
    """The plain-data form of a config (dicts, lists, scalars): `from_dict(type(c), to_dict(c)) == c`."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, Path):
        return str(obj)
    return obj


def parse_override(text: str) -> tuple[str, Any]:
    """'a.b=v' -> ('a.b', v) with v read as a YAML scalar or list ('3', '1e-3', '[1, 2]', 'true')."""
    if "=" not in text:
        raise UserError(f"override {text!r} is not of the form key=value (e.g. train.lr=1e-3)")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise UserError(f"override {text!r} has an empty key; expected e.g. model.d_model=64")
    try:
        value = yaml_values(raw) if raw.strip() else ""
    except (yaml.YAMLError, RecursionError):
        value = raw  # not valid YAML (or not a value, e.g. a date): keep it as the literal string
    if isinstance(value, str):
        value = _maybe_number(value)
    return key, value


def _maybe_number(text: str) -> Any:
    # YAML 1.1 leaves 1e-3 (no dot) as a string; researchers mean a number.
    try:
        return float(text) if any(c in text for c in "eE.") else int(text)
    except ValueError:
        return text


def validate_key(cls: type, key: str, data: dict | None = None) -> None:
    """Raise UserError if the dotted `key` is not a field path of the dataclass `cls`.

    Inside a tagged union, the member is chosen by the tag in `data` when present, else any member
    that has the field is accepted.
    """
    parts = key.split(".")
    candidates: list[type] = [cls]
    node: Any = data
    for i, part in enumerate(parts):
        nxt: list[type] = []
        found_any = False
        names: list[str] = []
        for c in candidates:
            hints = _hints(c)
            names.extend(f.name for f in _fields(c))
            if part in hints:
                found_any = True
                nxt.extend(
                    _dataclass_members(
                        hints[part], node.get(part) if isinstance(node, dict) else None
                    )
                )
        if not found_any:
            prefix = ".".join(parts[:i])
            where = f" in {prefix!r}" if prefix else ""
            uniq = list(dict.fromkeys(names))
            raise UserError(
                f"unknown key {key!r}: no field {part!r}{where}{did_you_mean(part, uniq)}; "
                f"allowed: {', '.join(uniq)}"
            )
        node = node.get(part) if isinstance(node, dict) else None
        if i < len(parts) - 1 and not nxt:
            # dict[str, X] fields take arbitrary sub-keys; anything else has no sub-fields
            return
        candidates = nxt


def _dataclass_members(tp: Any, data: Any) -> list[type]:
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return [tp]
    if _is_union(tp):
        members = [a for a in get_args(tp) if dataclasses.is_dataclass(a) and isinstance(a, type)]
        if len(members) > 1 and isinstance(data, dict):
            tag = _tag_field(tuple(members))
            if tag and tag in data:
                chosen = [m for m in members if data[tag] in _tag_values(m, tag)]
                if chosen:
                    return chosen
        return members
    return []


def set_dotted(data: dict, key: str, value: Any) -> None:
    """Set `data[a][b] = value` for key 'a.b', creating intermediate mappings."""
    parts = key.split(".")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def apply_overrides(data: dict, overrides: list[str], cls: type | None = None) -> dict:
    """A copy of `data` with each 'a.b=v' applied; with `cls`, keys are checked against its fields."""
    out = json.loads(json.dumps(data)) if data else {}
    for text in overrides:
        key, value = parse_override(text)
        if cls is not None:
            validate_key(cls, key, out)
        set_dotted(out, key, value)
    return out


MAX_CONFIG_BYTES = 10_000_000  # a config file is values only: megabytes mean a wrong file
# Aliases let a small file describe an exponentially large value ("billion laughs"): the value a file
# expands to is bounded (in nodes, aliases counted each time they are used) before it is built.
MAX_CONFIG_NODES = 1_000_000


class _ConfigLoader(yaml.SafeLoader):
    """YAML for configs: values only (mappings, lists, strings, numbers, booleans, null).

    Refused, each with the line it is on: duplicate keys (YAML would keep the last one silently),
    dates and times, sets, binary data and ordered pairs (not config values: a date meant as text
    must be quoted), a value that refers to itself, and aliases expanding to more than
    MAX_CONFIG_NODES nodes."""

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None:
            _check_expansion(node)
        return node

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *base` then a key of its own: an override, not a duplicate
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue  # an unhashable key: the base class says so
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (each key may appear once)",
                        key_node.start_mark,
                    )  # fmt: skip
        return super().construct_mapping(node, deep=deep)


_NOT_VALUES = {
    "timestamp": "a date or time",
    "set": "a set",
    "binary": "binary data",
    "omap": "an ordered mapping",
    "pairs": "a list of pairs",
}


def _refuse_tag(loader: yaml.SafeLoader, node: Any) -> Any:
    kind = _NOT_VALUES.get(node.tag.rsplit(":", 1)[-1], node.tag)
    shown = f" ({node.value!r})" if isinstance(node, yaml.ScalarNode) else ""
    raise yaml.constructor.ConstructorError(
        None, None,
        f"{kind}{shown} is not a config value; configs hold numbers, text, booleans, lists and "
        "mappings (quote it to mean text)",
        node.start_mark,
    )  # fmt: skip


for _tag in _NOT_VALUES:
    _ConfigLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse_tag)


def _check_expansion(root: Any) -> None:
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise yaml.composer.ComposerError(
                None, None, "a value that contains itself (a recursive alias)", node.start_mark
            )
        open_nodes.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        open_nodes.discard(key)
        if total > MAX_CONFIG_NODES:
            raise yaml.composer.ComposerError(
                None, None,
                f"its aliases expand to more than {MAX_CONFIG_NODES:,} values (a config is small)",
                node.start_mark,
            )  # fmt: skip
        sizes[key] = total
        return total

    size(root)


def yaml_values(text: str) -> Any:
    """`text` read as config YAML (`_ConfigLoader`: values only, no duplicate keys, bounded)."""
    return yaml.load(text, Loader=_ConfigLoader)  # a SafeLoader subclass: no Python tags


def load_yaml(path: str | Path) -> dict:
    """Read a YAML mapping; a missing file or bad YAML is a UserError naming the file (and line)."""
    if isinstance(path, str) and not path.strip():
        raise UserError(f"config file {path!r} is an empty path; give a .yaml file")
    path = Path(path)
    try:
        if path.is_dir():
            raise UserError(f"config file {str(path)!r} is a folder; give a .yaml file")
        if not path.is_file():  # a FIFO is never opened: reading it waits for a writer
            what = (
                "is not a regular file (a FIFO or a device)" if path.exists() else "does not exist"
            )
            raise UserError(f"config file {str(path)!r} {what}; give a .yaml file")
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise UserError(
                f"config file {str(path)!r} has {path.stat().st_size:,} bytes; a config file may "
                f"have at most {MAX_CONFIG_BYTES:,}"
            )
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(
            f"config file {str(path)!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); "
            "save it as UTF-8"
        ) from None
    except OSError as exc:  # unreadable, or a name longer than the file system allows
        raise UserError(
            f"config file {str(path)!r} cannot be read: {exc.strerror or type(exc).__name__}"
        ) from None
    try:
        data = yaml_values(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UserError(f"{path}:{where} is not valid YAML: {problem}") from None
    except RecursionError:
        raise UserError(f"{path}: the YAML nests too deeply to be a config") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def canonical_json(data: Any) -> str:
    return json.dumps(to_dict(data), sort_keys=True, separators=(",", ":"), allow_nan=True)


# Field metadata marking a setting added after runs were stored: at its default it is left out of the
# run id, so adding it does not change the id (and orphan the results) of any run stored before.
HASH_OMIT_DEFAULT = {"hash": "omit_default"}


def _hashed(obj: Any) -> Any:
    """`to_dict(obj)` without the HASH_OMIT_DEFAULT fields that hold their default."""
    if hasattr(type(obj), "__dataclass_fields__") and not isinstance(obj, type):
        out = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if f.metadata.get("hash") == "omit_default" and value == _field_default(f):
                continue
            out[f.name] = _hashed(value)
        return out
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if isinstance(obj, (list, tuple)):
        return [_hashed(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _hashed(v) for k, v in obj.items()}
    return to_dict(obj)


def config_hash(job: str, config: Any) -> str:
    """Stable id of a run: sha256 of the sorted JSON of job + resolved config, 16 hex digits.

    Pass the config dataclass (not its `to_dict` form) so fields marked HASH_OMIT_DEFAULT are
    recognised."""
    # (_hashed gives plain data already: no second to_dict pass, the same text as canonical_json)
    data = {"job": job, "config": _hashed(config)}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- the key listing (`learnability config show JOB`) -----------------------------------------------------
@dataclass(frozen=True)
class KeyInfo:
    """One settable key of a config: its dotted path, type, default, range and one line of help.

    `variant` names the tagged-union member the key belongs to (e.g. "model.arch=gpt"; "" outside
    unions); `range` is what the config's own checks say when given an out-of-range value."""

    key: str
    type: str
    default: Any
    range: str
    help: str
    variant: str = ""


def describe(cls: type, prefix: str = "", variant: str = "") -> list[KeyInfo]:
    """Every key of the config dataclass `cls`, nested ones dotted, every member of a tagged union
    listed with its `variant`. Nothing here is written by hand: types and defaults come from the
    dataclass, help from the field's `help` metadata or its source comment, ranges from probing the
    config's own checks (`__post_init__`) with out-of-range values and reading their messages."""
    out: list[KeyInfo] = []
    hints = _hints(cls)
    comments = _field_comments(cls)
    for f in _fields(cls):
        key = f"{prefix}{f.name}"
        tp = hints[f.name]
        default = _field_default(f)
        help_text = str(f.metadata.get("help") or comments.get(f.name, ""))
        members = _dataclass_members(tp, None)
        if members and len(members) > 1 and _tag_field(tuple(members)):
            tag = _tag_field(tuple(members))
            assert tag is not None
            chosen = getattr(default, tag, None)
            for m in sorted(members, key=lambda m: (_tag_values(m, tag)[0] != chosen, m.__name__)):
                value = _tag_values(m, tag)[0]
                label = f"{key}.{tag}={value}" + (" (default)" if value == chosen else "")
                out.extend(describe(m, f"{key}.", label))
            continue
        if members and len(members) == 1 and not _is_union(tp):
            out.extend(describe(members[0], f"{key}.", variant))
            continue
        shown = to_dict(default) if default is not _MISSING else "(required)"
        out.append(
            KeyInfo(key, _type_name(tp), shown, _probe_range(cls, f.name, tp), help_text, variant)
        )
    return out


def _field_comments(cls: type) -> dict[str, str]:
    """{field: its comment}: the comment on the field's own lines, else the comment lines just above."""
    import ast
    import inspect
    import io
    import textwrap
    import tokenize

    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    notes: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                notes[tok.start[0]] = tok.string.lstrip("#").strip()
    except tokenize.TokenError:
        return {}
    lines = source.splitlines()
    body = ast.parse(source).body[0]
    out: dict[str, str] = {}
    for node in getattr(body, "body", []):
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        own = [
            notes[i] for i in range(node.lineno, (node.end_lineno or node.lineno) + 1) if i in notes
        ]
        above: list[str] = []
        i = node.lineno - 1
        while i >= 1 and i in notes and lines[i - 1].strip().startswith("#"):
            above.insert(0, notes[i])
            i -= 1
        text = " ".join(own or above)
        if text:
            out[node.target.id] = text
    return out


_INT_PROBES = (-1, 10**30)
_FLOAT_PROBES = (-1.0, 2.0, 1e30)


def _probe_range(cls: type, name: str, tp: Any) -> str:
    """What the config's checks say about `name` when it is out of range ("" when nothing is refused)."""
    args = get_args(tp)
    optional = _is_union(tp) and type(None) in args
    base = tuple(a for a in args if a is not type(None)) if _is_union(tp) else (tp,)
    if get_origin(tp) is Literal or any(get_origin(b) is Literal for b in base):
        return ""  # the type lists the choices
    if base == (bool,):
        return ""
    probes: list[Any] = []
    if int in base:
        probes += list(_INT_PROBES)
    if float in base:
        probes += list(_FLOAT_PROBES)
    if not probes and len(base) == 1 and get_origin(base[0]) is list:
        item = get_args(base[0])[0] if get_args(base[0]) else Any
        probes = [[-1]] if item is int else [[-1.0]] if item is float else []
    if not probes and base == (str,):
        probes = ["?"]  # a checked text field (a device) says what it allows
    said: list[str] = []
    for value in probes:
        try:
            from_dict(cls, {name: value})
        except UserError as exc:
            clause = _clause(str(exc), name)
            if isinstance(value, str) and len(clause) > 60:
                continue  # a parser's whole grammar, not a range: the help says what it takes
            if clause and clause not in said:
                said.append(clause)
        except Exception:  # a check that is not a UserError: say nothing rather than guess
            continue
    text = "; ".join(said)
    return f"{text}, or null" if text and optional else text


def _clause(message: str, name: str) -> str:
    """The 'what is allowed' part of a check's message about field `name`, or ""."""
    if name not in message:
        return ""  # refused for another reason (a check of another field)
    for marker in ("it must be ", "must be ", "need ", "allowed: "):
        if marker in message:
            text = message.split(marker, 1)[1]
            text = text.split("; ", 1)[0]
            return ("allowed: " + text if marker == "allowed: " else text).strip().rstrip(".")
    return message.split("; ", 1)[1] if "; " in message else ""


def save_resolved(config: Any, path: str | Path) -> Path:
    """Write the resolved config (defaults included) as YAML."""
    return atomic_write_text(Path(path), yaml.safe_dump(to_dict(config), sort_keys=False))
