"""What the configs check in values read from a file (or given by name): unknown keys, and
values not of their field's type."""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from typing import Any


def check_keys(cls: type, values: dict[str, Any], source: str) -> None:
    """Raise a readable error if `values` names fields that `cls` does not have."""
    if not isinstance(values, dict):
        raise ValueError(
            f"{source}: expected a JSON object of {cls.__name__} settings, found "
            f"{type(values).__name__}"
        )
    valid = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(values) - set(valid))
    if unknown:
        raise ValueError(
            f"{source}: unknown {cls.__name__} key(s) {unknown}; valid keys are {', '.join(valid)}"
        )


# The JSON values a field of each type takes (an int is a float too; a bool is no number).
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "str": (str,),
}


def check_types(cls: type, values: dict[str, Any], source: str) -> None:
    """Raise a readable error where a value read from a file is not of its field's type (a
    string "64" for an int, a list, NaN, a choice not among a `Literal`'s), before the config
    checks its range. Found by the fuzzed readers: such values escaped as TypeErrors from deep
    inside."""
    for field in dataclasses.fields(cls):
        if field.name not in values:
            continue
        value = values[field.name]
        choices = literal_choices(cls, field.name)
        if choices is not None:
            if value not in choices or isinstance(value, bool):
                raise ValueError(
                    f"{source}: {field.name} is {json.dumps(value)[:40]}; write one of "
                    f"{', '.join(map(json.dumps, choices))} (the default is {field.default!r})"
                )
            continue
        allowed = JSON_TYPES.get(str(field.type))
        if allowed is None:
            continue
        wrong_bool = isinstance(value, bool) and bool not in allowed
        not_finite = isinstance(value, float) and not math.isfinite(value)
        if not isinstance(value, allowed) or wrong_bool or not_finite:
            raise ValueError(
                f"{source}: {field.name} is {json.dumps(value)[:40]}, not a finite "
                f"{field.type}; write it as one (the default is {field.default!r})"
            )


def literal_choices(cls: type, name: str) -> tuple[Any, ...] | None:
    """The values a `Literal[...]` field (or `Literal[...] | None`) takes, None included where
    it may be None; None for any other field."""
    try:
        hint = typing.get_type_hints(cls)[name]
    except (NameError, TypeError):  # an annotation only the type checker can resolve
        return None
    options = (
        typing.get_args(hint)
        if typing.get_origin(hint) in (typing.Union, types.UnionType)
        else (hint,)
    )
    found: list[Any] = []
    for option in options:
        if typing.get_origin(option) is typing.Literal:
            found.extend(typing.get_args(option))
        elif option is type(None):
            found.append(None)
        else:
            return None
    return tuple(found) if any(x is not None for x in found) else None
