"""Protected spans on the command line: on by default (URLs, paths, identifiers, numbers,
placeholders), more with --protect REGEX or --protect-file FILE, none with --no-protect."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiayn.documents.protect import Protector


def add_protect(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--protect",
        action="append",
        default=[],
        metavar="REGEX",
        help="also keep verbatim what this regular expression matches (repeatable); URLs, "
        "e-mail addresses, paths, file names, identifiers, numbers and placeholders are kept "
        "without asking (docs/translation.md, Protected spans)",
    )
    p.add_argument(
        "--protect-file",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a file of regular expressions to keep verbatim, one a line (# comments)",
    )
    p.add_argument(
        "--no-protect",
        action="store_true",
        help="translate every span, URLs and placeholders too (with --protect: only those)",
    )


def protector_of(args: argparse.Namespace) -> Protector | None:
    """The spans the command line protects (patterns checked now); None: none."""
    from aiayn.documents.protect import Protector

    if args.no_protect and not (args.protect or args.protect_file):
        return None
    return Protector.load(tuple(args.protect), tuple(args.protect_file), not args.no_protect)
