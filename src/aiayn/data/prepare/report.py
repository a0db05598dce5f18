"""The report of `aiayn prepare`, for people: what was read, dropped, split, learned and
written (`report.txt`), and the same as JSON (`report.json`)."""

from __future__ import annotations

import json

from aiayn.data.clean import CleanReport
from aiayn.data.prepare.vocab import vocabulary_lines
from aiayn.layout import DataFiles


def write_report(
    files: DataFiles, result: dict, report: CleanReport, given: dict[str, CleanReport]
) -> None:
    text = "\n".join(render_report(result, report, given)) + "\n"
    files.report_text.write_text(text, encoding="utf-8")
    report_json = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    files.report_json.write_text(report_json, encoding="utf-8")


def render_report(result: dict, report: CleanReport, given: dict[str, CleanReport]) -> list[str]:
    """The human-readable report: what was read, dropped, split, learned and written."""
    lines = [f"corpus: {result['corpus']}", *report.lines()]
    for split, r in given.items():
        lines += [f"{split} files given:", *("  " + line for line in r.lines())]
    split = result["split"]
    sizes = split["sizes"]
    lines.append(
        f"splits (seed {split['seed']}, held out by {split['unit']}): "
        + ", ".join(f"{s} {n:,}" for s, n in sizes.items())
    )
    for name, groups in split["held_out_groups"].items():
        shown = ", ".join(groups[:12]) + (
            f", ... ({len(groups)} in all)" if len(groups) > 12 else ""
        )
        lines.append(f"  {name} {split['unit']}: {shown}")
    vocab = result["vocabulary"]
    if "from" in vocab:  # prepare --vocab MODEL
        return lines + vocabulary_lines(vocab) + tokens_and_time(result)
    lines.append(
        f"vocabulary: {vocab['size']:,} {vocab['type']} pieces ({vocab['model']})"
        + case_copies_text(vocab)
    )
    return lines + tokens_and_time(result)


def case_copies_text(vocab: dict) -> str:
    """What `--case-copies` added to the vocabulary's learning text, if anything."""
    share = vocab.get("case_copies")
    copies = f", also learned on cased copies of {share:.0%} of its lines" if share else ""
    markup = {
        "all": ", on lower-cased words with their capitals as markers",
        "upper": ", on words in capitals lower-cased inside region markers",
        "truecase": ", on words in capitals truecased inside region markers",
    }.get(vocab.get("case_markup") or "", "")
    return copies + markup


def tokens_and_time(result: dict) -> list[str]:
    """The report's last lines: tokens per split and side, and the time each stage took."""
    tokens = "; ".join(
        f"{s} {t['src']:,} src / {t['tgt']:,} tgt" for s, t in result["tokens"].items()
    )
    stages = ", ".join(f"{k} {v} s" for k, v in result["stage_seconds"].items())
    return [f"tokens: {tokens}", f"time: {result['seconds']} s ({stages})"]
