"""Input in another language than the model's source (German sent to an en->de model): said
once per file or request, not "translated" in silence.

The model's source language is what `aiayn prepare` wrote for the data it was trained on (a
run directory, or a checkpoint inside one, names that data); a model directory alone or a
multilingual model does not say, and then nothing is checked. The input is identified by
py3langid (langid.py) where it is installed (the `multilingual` extra): one call on a sample
of the input, a few milliseconds; without it nothing is checked.
"""

from __future__ import annotations

import json
from pathlib import Path

from aiayn import layout
from aiayn.data.data_dir import DataMeta
from aiayn.evaluate.langid import UNKNOWN, Identifier

SAMPLE_CHARS = 2000  # enough text for a sure answer, little enough to cost nothing
MULTI = "multi"  # a multilingual data directory's src_lang


def model_source_language(model: str | Path) -> str | None:
    """The language a model translates from, where its run's data says; else None."""
    path = Path(model).resolve()
    for folder in [path, *path.parents][:4]:  # RUN, RUN/checkpoints/step_..., RUN/best
        config = folder / layout.RUN_CONFIG
        if config.is_file():
            try:
                data = json.loads(config.read_text(encoding="utf-8"))["data"]
                lang = DataMeta.load(Path(data)).src_lang
            except (OSError, ValueError, KeyError, TypeError):
                return None  # a damaged or moved run: nothing to compare with
            return None if lang == MULTI else lang
    return None


def mismatch_warning(texts: list[str], expected: str | None, name: str) -> str:
    """A warning when `texts` read as another language than `expected`; "" when they do not,
    when there is too little text to say, or when nothing can tell (no `expected`, no
    py3langid)."""
    sample = " ".join(t.strip() for t in texts if t.strip())[:SAMPLE_CHARS]
    if expected is None or len(sample.split()) < 3:
        return ""
    try:
        found = Identifier()(sample)
    except ValueError:  # py3langid is not installed
        return ""
    if found in (UNKNOWN, expected):
        return ""
    return (
        f"warning: {name}: the input reads as {found} (py3langid), but this model translates "
        f"from {expected}: its output will be poor; give it {expected} text, or use a model "
        f"trained from {found}"
    )
