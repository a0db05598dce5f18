"""The split of a multilingual Bible directory: whole chapters held out, the same in every
language, and the training pairs of each direction, cleaned with a length ratio that allows
for the scripts (a Chinese verse has a third of the characters of its English one)."""

from __future__ import annotations

from aiayn.data.clean import DUPLICATE, RATIO, TOO_LONG
from aiayn.data.multilingual.options import MultiOptions
from aiayn.data.multilingual.report import DropReport
from aiayn.data.multilingual.verses import Verse
from aiayn.data.prepare.splits import choose_groups

HELD_OUT_TEXT = "text in valid/test"  # a verse whose text is a held-out verse's, in its language
Chapter = tuple[int, int]


def held_out_keys(
    verses: dict[str, dict[Verse, str]],
    names: dict[Chapter, str],
    seed: int,
    valid_size: int,
    test_size: int,
) -> tuple[dict[str, list[Verse]], dict[str, list[str]]]:
    """The held-out verses of each split, the same in every language, and their chapters.

    Whole chapters are chosen once (`choose_groups`, by their names: "Genesis 13") among the
    verses that every language has; a held-out chapter is then out of training in every
    language, verses that some language lacks included.

    Returns:
        ({split: verse keys in canonical order}, {split: chapter names in the order chosen}).
    """
    langs = list(verses)
    common = set(verses[langs[0]]).intersection(*(verses[lang] for lang in langs[1:]))
    sizes: dict[Chapter, int] = {}
    for key in common:
        sizes[key[:2]] = sizes.get(key[:2], 0) + 1
    label = {c: names.get(c, f"{c[0]} {c[1]}") for c in sizes}
    chosen = choose_groups({label[c]: n for c, n in sizes.items()}, seed, valid_size, test_size)
    held: dict[str, list[Verse]] = {split: [] for split in ("valid", "test")}
    for key in sorted(common):
        split = chosen.get(label[key[:2]])
        if split is not None:
            held[split].append(key)
    chapters = {split: [g for g, s in chosen.items() if s == split] for split in held}
    return held, chapters


def directions_pairs(
    opts: MultiOptions,
    verses: dict[str, dict[Verse, str]],
    train_chapters: set[Chapter],
    held_texts: dict[str, set[str]],
    names: dict[Chapter, str],
) -> tuple[dict[str, list[Verse]], dict[str, DropReport]]:
    """Each direction's training verses (both languages have them, in a training chapter),
    less those the filters drop: too long, a length ratio beyond `max_ratio` once each side is
    measured against its language's mean verse length, repeated pairs, and texts that are a
    held-out verse's in their language (no leakage, as in the bilingual split)."""
    mean = {lang: sum(map(len, v.values())) / max(len(v), 1) for lang, v in verses.items()}
    held_verses = {
        lang: {k for k, t in v.items() if t.casefold() in held_texts[lang]}
        for lang, v in verses.items()
    }
    o = opts.clean
    pairs, reports = {}, {}
    for name in opts.directions:
        s, t = name.split("-")
        source, target = verses[s], verses[t]
        report = reports[name] = DropReport()
        kept, seen = [], set()
        for key in sorted(k for k in source if k in target and k[:2] in train_chapters):
            report.read += 1
            src, tgt = source[key], target[key]
            if key in held_verses[s] or key in held_verses[t]:
                reason = HELD_OUT_TEXT
            elif max(src.count(" "), tgt.count(" ")) + 1 > o.max_words:
                reason = TOO_LONG
            elif _ratio_too_far(len(src) * 100 / mean[s], len(tgt) * 100 / mean[t], o):
                reason = RATIO
            elif o.dedup and (src, tgt) in seen:
                reason = DUPLICATE
            else:
                seen.add((src, tgt))
                kept.append(key)
                continue
            report.drop(reason, f"{names.get(key[:2], key[:2])}:{key[2]}")
        report.kept = len(kept)
        pairs[name] = kept
    return pairs, reports


def _ratio_too_far(a: float, b: float, o) -> bool:
    """Lengths in % of their language's mean verse: the bilingual rule on comparable units."""
    longer, shorter = max(a, b), min(a, b)
    return longer >= o.ratio_min_chars and longer > o.max_ratio * shorter
