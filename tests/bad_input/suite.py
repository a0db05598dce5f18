"""Every bad-input case, gathered from the tables of this folder (one module per area, each
with its `CASES` built from kit.py), and the table they make: `python -m tests.bad_input`."""

from __future__ import annotations

import tempfile
from pathlib import Path

from tests.bad_input import (
    backtranslate,
    casing,
    controls,
    documents,
    finetune,
    general,
    guided,
    mixing,
    multilingual_decode,
    multilingual_prepare,
    multilingual_train,
    protect,
    readers,
    renamed,
    server,
    shortlist,
    subword,
    terms,
    vocab,
)
from tests.bad_input.kit import Case, Fixtures, Outcome, make_fixtures

# A new area: its module here, and its CASES below.
CASES: list[Case] = [
    *general.CASES,
    *server.CASES,
    *documents.CASES,
    *readers.CASES,
    *controls.CASES,
    *guided.CASES,
    *multilingual_decode.CASES,
    *multilingual_train.CASES,
    *multilingual_prepare.CASES,
    *casing.CASES,
    *renamed.CASES,
    *protect.CASES,
    *subword.CASES,
    *finetune.CASES,
    *mixing.CASES,
    *shortlist.CASES,
    *vocab.CASES,
    *backtranslate.CASES,
    *terms.CASES,
]


def run_case(case: Case, fixtures: Fixtures, tmp: Path) -> Outcome:
    tmp.mkdir(parents=True, exist_ok=True)
    outcome = case.run(fixtures, tmp)
    return Outcome(
        outcome.code, outcome.message.replace(str(tmp), "TMP"), outcome.kept, outcome.traceback
    )


def last_line(message: str) -> str:
    lines = [line for line in message.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def main_table() -> int:
    """Run every case; print a Markdown table and the totals."""
    rows, tracebacks, lost = [], 0, 0
    with tempfile.TemporaryDirectory() as root:
        fixtures = make_fixtures(Path(root))
        for i, case in enumerate(CASES):
            outcome = run_case(case, fixtures, Path(root) / f"case{i}")
            tracebacks += outcome.traceback
            lost += not outcome.kept
            rows.append((case.name, outcome.code, last_line(outcome.message), outcome.kept))
    print("| case | exit code | message (last line) | data kept |")
    print("|---|---|---|---|")
    for name, code, message, kept in rows:
        message = message.replace("|", "\\|")
        print(f"| {name} | {code} | {message} | {'yes' if kept else 'NO'} |")
    print(f"\n{len(rows)} cases, {tracebacks} tracebacks, {lost} with data lost")
    return int(bool(tracebacks or lost))
