"""The report of `aiayn prepare --langs`, per language: the verses its version gave and what
cleaning dropped (and why), its training pairs, and its pieces (how finely the joint vocabulary
cuts it, and how often it has no piece at all); per direction: pairs kept and dropped."""

from __future__ import annotations

import json

import numpy as np

from aiayn.data.clean import CleanReport
from aiayn.data.prepare.report import case_copies_text, tokens_and_time
from aiayn.data.prepare.vocab import vocabulary_lines
from aiayn.data.token_ids import load_ids
from aiayn.data.tokenizer import UNK_ID
from aiayn.layout import DataFiles


class DropReport(CleanReport):
    """Counts read, kept and dropped by any reason (a version's verses, a direction's pairs)."""

    def to_dict(self) -> dict:
        return {
            "read": self.read,
            "kept": self.kept,
            "dropped": dict(self.dropped),
            "examples": self.examples,
        }


def piece_counts(files: DataFiles, directions: list[str], vocab_size: int) -> dict[str, dict]:
    """Per language, over the training pairs: verses (sides) in the language, their pieces
    (a source's tag not counted), pieces per verse, and the share of unknown pieces.

    The pairs of a direction are contiguous (written direction by direction), so each is one
    slice of the id files: memory stays that of one slice."""
    dirs = np.load(files.directions("train"), allow_pickle=False)
    bounds = np.searchsorted(dirs, np.arange(len(directions) + 1))  # (D+1,) pair ranges
    found: dict[str, dict] = {}
    for side in ("src", "tgt"):
        ids, offsets = load_ids(files.ids("train", side), vocab_size)
        for d, name in enumerate(directions):
            lang = name.split("-")[0 if side == "src" else 1]
            a, b = offsets[bounds[d]], offsets[bounds[d + 1]]
            n = int(bounds[d + 1] - bounds[d])
            stats = found.setdefault(lang, {"verses": 0, "pieces": 0, "unknown": 0})
            stats["verses"] += n
            stats["pieces"] += int(b - a) - (n if side == "src" else 0)  # less the tags
            stats["unknown"] += int(np.count_nonzero(np.asarray(ids[a:b]) == UNK_ID))
    for stats in found.values():
        stats["pieces_per_verse"] = round(stats["pieces"] / max(stats["verses"], 1), 1)
        stats["unknown_rate"] = round(stats["unknown"] / max(stats["pieces"], 1), 6)
    return found


def write_multi_report(files: DataFiles, result: dict) -> None:
    files.report_text.write_text("\n".join(render(result)) + "\n", encoding="utf-8")
    text = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    files.report_json.write_text(text, encoding="utf-8")


def render(result: dict) -> list[str]:
    """The human-readable report."""
    dirs = result["directions"]
    lines = [f"corpus: {result['corpus']}", f"directions: {len(dirs)} ({', '.join(dirs)})"]
    lines.append("language  version  verses kept  train sides  pieces/verse  unknown  dropped")
    for lang, info in result["languages"].items():
        v, p = info["verses"], result["pieces"].get(lang, {})
        dropped = "; ".join(
            f"{reason} {n:,} (e.g. {', '.join(v['examples'].get(reason, [])[:2])})"
            for reason, n in v["dropped"].items()
        )
        lines.append(
            f"{lang:<8}  {info['version']:<7}  {v['kept']:>6,}/{v['read']:,}  "
            f"{p.get('verses', 0):>11,}  {p.get('pieces_per_verse', 0):>12}  "
            f"{100 * p.get('unknown_rate', 0):6.3f}%  {dropped or 'none'}"
        )
    lines.append("train pairs per direction (dropped):")
    for name, r in dirs.items():
        dropped = ", ".join(f"{reason} {n:,}" for reason, n in r["dropped"].items())
        lines.append(
            f"  {name}: {r['kept']:,} of {r['read']:,}" + (f" ({dropped})" * bool(dropped))
        )
    split = result["split"]
    lines.append(
        f"splits (seed {split['seed']}, held out by {split['unit']}): "
        + ", ".join(f"{s} {n:,} pairs" for s, n in split["sizes"].items())
        + "; held-out verses per language: "
        + ", ".join(f"{s} {n:,}" for s, n in split["verses"].items())
    )
    for name, groups in split["held_out_groups"].items():
        more = f", ... ({len(groups)} in all)" if len(groups) > 12 else ""
        lines.append(f"  {name} chapters: {', '.join(groups[:12])}{more}")
    vocab = result["vocabulary"]
    if "from" in vocab:  # prepare --vocab MODEL
        return lines + vocabulary_lines(vocab) + tokens_and_time(result)
    lines.append(
        f"vocabulary: {vocab['size']:,} {vocab['type']} pieces ({vocab['model']}), character "
        f"coverage {vocab['character_coverage']}, learned on {vocab['mix']}"
        + case_copies_text(vocab)
        + "; tags "
        + " ".join(vocab["tags"])
    )
    return lines + tokens_and_time(result)
