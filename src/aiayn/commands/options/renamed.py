"""Old spellings of renamed flags, accepted for one more release (STYLE rule 18: one name per
idea): an old spelling does what its new one does, and says on stderr what to write instead.

`old_spelling(parser, "--source-lang", new)` is the one mechanism every renamed flag uses; the
old spelling is left out of `--help`. It cannot stand in for a flag that is required.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast


class Renamed(argparse.Action):
    """A flag's old spelling: it warns, naming the new one, then acts as the new one does."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: argparse.Action) -> None:
        super().__init__(
            option_strings,
            dest,
            nargs=new.nargs,
            const=new.const,
            default=argparse.SUPPRESS,
            type=cast(Callable[[str], Any] | None, new.type),  # a function, as ours all are
            choices=new.choices,
            metavar=new.metavar,
            help=argparse.SUPPRESS,
        )
        self.new = new

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        spelling = self.new.option_strings[0]
        print(
            f"{parser.prog}: warning: {option_string} is now {spelling}; the old spelling "
            "will be removed in the next release",
            file=sys.stderr,
        )
        self.new(parser, namespace, values, spelling)


def old_spelling(parser: argparse.ArgumentParser, old: str, new: argparse.Action) -> None:
    """Accept `old` for the flag `new` (what `add_argument` returned), with a warning."""
    parser.add_argument(old, action=Renamed, dest=new.dest, new=new)
