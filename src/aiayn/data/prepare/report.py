"""The report of `aiayn prepare`, for people: what was read, dropped, split, learned and
written (`report.txt`), and the same as JSON (`report.json`)."""

from __future__ import annotations

import json
from typing import Any

from aiayn.data.clean import MAX_EXAMPLES, CleanReport
from aiayn.data.prepare.corpus import Corpus
from aiayn.data.prepare.splits import CorpusShare
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
    lines = [f"corpus: {result['corpus']}", *report.lines(), *mix_lines(result["corpora"])]
    for split, r in given.items():
        lines += [f"{split} files given:", *("  " + line for line in r.lines())]
    if "terms" in result:  # prepare --terms
        t = result["terms"]
        lines.append(
            f"terms: {t['annotated_pairs']:,} training sources annotated with {t['annotations']:,} "
            f"terms of {t['termbase']} ({t['terms']:,} terms; their targets used in any form)"
        )
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


def add_report(total: CleanReport, part: CleanReport) -> None:
    """`part`'s counts (one corpus of a mix) added to `total`'s (every corpus together)."""
    total.read += part.read
    total.kept += part.kept
    total.dropped.update(part.dropped)
    total.notes.update(part.notes)
    for reason, places in part.examples.items():
        found = total.examples.setdefault(reason, [])
        found += places[: MAX_EXAMPLES - len(found)]


def mix_report(shares: list[CorpusShare], corpora: list[Corpus]) -> list[dict[str, Any]]:
    """The report's "corpora": per corpus what was read, kept, held out and trained on."""
    return [
        {
            "corpus": corpus.description,
            "weight": share.spec.weight,
            "synthetic": share.spec.synthetic,
            "read": share.clean.read,
            "kept": share.clean.kept,
            "train_pairs": share.train,  # repeats by weight included
            "held_out": share.held_out_sizes(),
        }
        for share, corpus in zip(shares, corpora, strict=True)
    ]


def mix_lines(corpora: list[dict[str, Any]]) -> list[str]:
    """A line per corpus where several are mixed (or one is weighted or synthetic)."""
    if len(corpora) == 1 and corpora[0]["weight"] == 1 and not corpora[0]["synthetic"]:
        return []
    lines = ["corpora (pairs read / kept / training pairs per epoch, weight):"]
    for c in corpora:
        held = ", ".join(f"{s} {n:,}" for s, n in c["held_out"].items()) or "none held out"
        lines.append(
            f"  {c['corpus']}: {c['read']:,} / {c['kept']:,} / {c['train_pairs']:,}, "
            f"x{c['weight']:g}{', synthetic' if c['synthetic'] else ''}; {held}"
        )
    return lines
