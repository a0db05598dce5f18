"""What every config shares (text and vision alike): frozen, to and from a JSON-ready dict,
unknown keys and wrong types refused by name."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar

from aiayn.config.checks import check_keys, check_types

ConfigT = TypeVar("ConfigT", bound="FrozenConfig")


class FrozenConfig:
    """What every config shares (text and vision alike): to and from a JSON-ready dict, and a
    changed copy; an unknown key is an error that lists the valid ones."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls: type[ConfigT], values: dict[str, Any], source: str = "config") -> ConfigT:
        """Build from a mapping (read from a file), rejecting unknown keys with the list of
        valid ones and values of the wrong type."""
        check_keys(cls, values, source)
        check_types(cls, values, source)
        try:
            return cls(**values)
        except ValueError as err:  # out of range: say which file holds the value
            raise ValueError(f"{source}: {err}") from None

    def replace(self: ConfigT, **changes: Any) -> ConfigT:
        """A copy with some fields changed; unknown names are an error that lists the valid ones."""
        check_keys(type(self), changes, "override")
        return dataclasses.replace(self, **changes)
