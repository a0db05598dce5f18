"""The length setting chosen on validation, kept with the model it was chosen for.

`aiayn tune` (and `aiayn train` when a run closes) decodes the validation split under a grid of
length settings and writes the best to `search.json` in the model directory (layout.py). Every
engine opened on that directory takes it as its default search; options given by the user
still override it. CTranslate2 cannot express GNMT's penalty: it takes the best |Y|^alpha
setting of the same grid, kept in the same file.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from aiayn.config import LENGTH_PENALTIES, STOP_RULES, DecodeConfig
from aiayn.evaluate.search_grid import SearchSetting
from aiayn.files import atomic_write, read_json, require_keys
from aiayn.layout import SEARCH_FILE

SEARCH_FIX = "delete it (the paper's search is then used) or run `aiayn tune` again"


@dataclass(frozen=True)
class TunedSearch:
    """What `search.json` holds: the chosen setting, and how it was chosen."""

    setting: SearchSetting  # the best validation BLEU
    power: SearchSetting | None = None  # the best with |Y|^alpha (for CTranslate2), if tried
    tuned_on: dict[str, Any] = field(default_factory=dict)  # data, split, sentences, beam, ...
    grid: list[dict[str, Any]] = field(default_factory=list)  # every setting and its scores
    # the best for sentences with glossary terms (validation with a reference word per line)
    terms: SearchSetting | None = None

    def search(self, our_search: bool = True) -> SearchSetting | None:
        """The setting an engine can run: ours runs any; another search (CTranslate2's) knows
        only the |Y|^alpha penalty, so it gets the best of those, where one was tried."""
        return self.setting if our_search else self.power

    def config(self, base: DecodeConfig, our_search: bool = True) -> DecodeConfig | None:
        """base with the settings an engine can run (None: none it can express); the terms'
        setting only for our own search (another engine takes no glossary)."""
        setting = self.search(our_search)
        if setting is None:
            return None
        cfg = setting.apply(base)
        return self.terms.apply_to_terms(cfg) if self.terms and our_search else cfg

    def summary(self) -> str:
        """The setting, how it was chosen, the length ratios and the cost, in one line."""
        on, ratio = self.tuned_on, "length ratio {:.3f} (the paper's {:.3f}); {:.0f} s"
        text = f"{self.setting}, {self.describe(terms=False)}"
        with contextlib.suppress(KeyError, TypeError, ValueError):  # an edited file: no ratios
            text += "; " + ratio.format(on["length_ratio"], on["paper_length_ratio"], on["seconds"])
        return text + self.repeats_text() + self.terms_text()

    def repeats_text(self) -> str:
        """E.g. "; repetition 2.1%, stutter 0.0% (at most 11.6%, 0.1%; the paper's 9.8%, 0.4%)";
        empty where the file predates them."""
        on, keys = self.tuned_on, ("repetition", "stutter")
        found = [on.get(k) for k in keys]
        most = [on.get(f"max_{k}") for k in keys]
        paper = [on.get(f"paper_{k}") for k in keys]
        if not all(isinstance(x, int | float) for x in found + most + paper):
            return ""
        pct = "{:.1%}, {:.1%}".format
        return (
            f"; repetition, stutter {pct(*found)} (at most {pct(*most)}; the paper's {pct(*paper)})"
        )

    def as_record(self) -> dict[str, Any]:
        """For metrics.jsonl: the setting and how it was chosen."""
        return {"setting": str(self.setting), **self.tuned_on}

    def describe(self, terms: bool = True) -> str:
        """E.g. "chosen on valid (1014 lines): BLEU 19.02, the paper's 18.38", then the
        setting for sentences with glossary terms where there is one."""
        on = self.tuned_on
        n, of = on.get("sentences", "?"), on.get("of_sentences")
        lines = f"{n} of {of} lines" if isinstance(of, int) and of != n else f"{n} lines"
        text = f"chosen on {on.get('split', 'validation')} ({lines})"
        bleu, paper = on.get("bleu"), on.get("paper_bleu")
        if isinstance(bleu, int | float) and isinstance(paper, int | float):
            text += f": BLEU {bleu:.2f}, the paper's {paper:.2f}"
        if on.get("carried_from"):
            text += f", for {on['carried_from']}"
        return text + (self.terms_text() if terms else "")

    def terms_text(self) -> str:
        """E.g. "; with glossary terms gnmt alpha 1.2, stop k-finished (BLEU 16.75, 15.50
        under the setting above; 241 s)"; empty where there is no such setting."""
        if self.terms is None:
            return ""
        on, found = self.tuned_on, []
        bleu, plain, took = (
            on.get(k) for k in ("terms_bleu", "terms_bleu_at_setting", "terms_seconds")
        )
        if isinstance(bleu, int | float) and isinstance(plain, int | float):
            found.append(f"BLEU {bleu:.2f}, {plain:.2f} under the setting above")
        if isinstance(took, int | float):
            found.append(f"{took:.0f} s")
        return f"; with glossary terms {self.terms}" + (f" ({'; '.join(found)})" if found else "")


PAPER = SearchSetting(DecodeConfig().alpha, DecodeConfig().length_penalty, DecodeConfig().stop)


def write_tuned(model_dir: Path, tuned: TunedSearch) -> Path:
    """MODEL/search.json, written whole or not at all."""
    path = Path(model_dir) / SEARCH_FILE
    text = json.dumps(asdict(tuned), indent=2) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return path


def read_tuned(model_dir: str | Path) -> TunedSearch | None:
    """MODEL/search.json, or None where there is none; a damaged one is an error that names it."""
    path = Path(model_dir) / SEARCH_FILE
    if not path.is_file():
        return None
    raw = read_json(path, SEARCH_FIX)
    require_keys(raw, ["setting"], path, SEARCH_FIX)
    return TunedSearch(
        setting=_setting(raw["setting"], path),
        power=None if raw.get("power") is None else _setting(raw["power"], path),
        tuned_on=raw["tuned_on"] if isinstance(raw.get("tuned_on"), dict) else {},
        grid=raw["grid"] if isinstance(raw.get("grid"), list) else [],
        terms=None if raw.get("terms") is None else _setting(raw["terms"], path),
    )


GUARDS = ("no_repeat_ngram", "stutter_guard")  # optional: a file written before them has none


def _setting(raw: Any, path: Path) -> SearchSetting:
    """A SearchSetting from JSON, every field checked: the file may have been edited."""
    keys = {"alpha", "length_penalty", "stop"}
    ok = isinstance(raw, dict) and keys <= set(raw) <= keys | set(GUARDS)
    alpha = raw.get("alpha") if ok else None
    guards = [raw.get(g, 0) for g in GUARDS] if ok else []
    if (
        not ok
        or isinstance(alpha, bool)
        or not isinstance(alpha, int | float)
        or not 0 <= alpha <= 10
        or raw["length_penalty"] not in LENGTH_PENALTIES
        or raw["stop"] not in STOP_RULES
        or not all(type(g) is int and 0 <= g <= 10 for g in guards)
    ):
        raise ValueError(
            f"{path}: {json.dumps(raw)} is not a search setting (alpha from 0 to 10, "
            f"length_penalty one of {', '.join(LENGTH_PENALTIES)}, stop one of "
            f"{', '.join(STOP_RULES)}; {' and '.join(GUARDS)} from 0 to 10 where given); "
            f"{SEARCH_FIX}"
        )
    return SearchSetting(float(alpha), raw["length_penalty"], raw["stop"], *guards)


def carry_tuned(source: Path, target: Path, note: str = "") -> TunedSearch | None:
    """Copy the length setting stored in `source` (a model directory) to `target`, read and
    checked first; `note` (where it was chosen, when `target` holds other weights) is kept in
    it. None where `source` has none."""
    tuned = read_tuned(source)
    if tuned is not None:
        on = tuned.tuned_on | ({"carried_from": note} if note else {})
        tuned = replace(tuned, tuned_on=on)
        write_tuned(target, tuned)
    return tuned
