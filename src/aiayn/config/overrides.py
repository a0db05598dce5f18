"""`--set key=value`: settings given on the command line, onto a model config and a training
config (the text side's or the vision side's), each value parsed as its field's type."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from aiayn.config import FrozenConfig

ModelConfigT = TypeVar("ModelConfigT", bound=FrozenConfig)  # ModelConfig, VisionConfig
TrainConfigT = TypeVar("TrainConfigT", bound=FrozenConfig)  # TrainConfig, VisionTrainConfig


def apply_overrides(
    model: ModelConfigT, train: TrainConfigT, items: list[str]
) -> tuple[ModelConfigT, TrainConfigT]:
    """`key=value` strings onto a model config and a training config (the text side's or the
    vision side's); each key must name a field of one of them, its value parses as that type."""
    model_fields = [f.name for f in dataclasses.fields(model)]
    train_fields = [f.name for f in dataclasses.fields(train)]
    model_changes: dict[str, Any] = {}
    train_changes: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep:
            raise ValueError(f"--set {item!r}: write key=value")
        if key in train_fields:
            train_changes[key] = parse_value(text, getattr(train, key), key)
        elif key in model_fields:
            model_changes[key] = parse_value(text, getattr(model, key), key)
        else:
            raise ValueError(
                f"--set {key}: unknown key; model keys: {', '.join(model_fields)}; "
                f"training keys: {', '.join(train_fields)}"
            )
    return model.replace(**model_changes), train.replace(**train_changes)


def parse_value(text: str, current: Any, key: str) -> Any:
    """A string as the type of the field's current value."""
    try:
        if isinstance(current, bool):
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError
            return text.lower() in ("true", "1", "yes")
        return type(current)(text)
    except ValueError:
        raise ValueError(f"--set {key}={text}: expected a {type(current).__name__}") from None
