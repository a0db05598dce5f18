"""Bad target languages and directions for a multilingual model (issue 31): each names the
model's languages (or the data directory's) and what to do."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.bad_input.kit import (
    Case,
    Fixtures,
    Outcome,
    aiayn,
    argv_case,
    serve_request,
    translate_with,
)
from tests.languages.tiny_multilingual import make_data, make_model


def multilingual(*argv: str, command: str = "translate") -> Callable[[Fixtures, Path], Outcome]:
    """`aiayn translate` (or evaluate, with the multilingual data) on the tiny multilingual
    model (de, en, fr), made afresh in the case's directory."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        model = make_model(tmp / "model")
        (tmp / "in.txt").write_text("The dog sees a cat.\n", encoding="utf-8")
        given = ["--input", str(tmp / "in.txt")]
        if command == "evaluate":
            given = ["--data", str(make_data(tmp / "data"))]
        return aiayn([command, "--model", str(model), *given, "--beam", "1", *argv])

    return case


CASES = [
    Case(
        "--tgt-lang the multilingual model was not trained on",
        multilingual("--tgt-lang", "es"),
        2,
        ("--tgt-lang es", "not trained to translate into it", "de, en, fr"),
    ),
    Case(
        "--tgt-lang that is not a language code",
        multilingual("--tgt-lang", "deutsch"),
        2,
        ("--tgt-lang 'deutsch'", "not a language code", "ISO 639-1", "de, en, fr"),
    ),
    Case(
        "multilingual model without --tgt-lang",
        multilingual(),
        2,
        ("line 1", "no target language", "de, en, fr", "--tgt-lang"),
    ),
    Case(
        "line tagged with a language the model lacks",
        lambda f, tmp: multilingual_tagged(tmp, "<2sw> Habari."),
        2,
        ("line 1", "<2sw>", "not trained", "de, en, fr"),
    ),
    Case(
        "--tgt-lang for a bilingual model",
        translate_with("--tgt-lang", "de"),
        2,
        ("--tgt-lang de", "bilingual", "drop --tgt-lang"),
    ),
    Case(
        "evaluate --directions the data directory lacks",
        multilingual("--directions", "en-de,en-es", command="evaluate"),
        2,
        ("--directions en-es", "test.es.txt", "de, en, fr"),
    ),
    Case(
        "evaluate --directions that is not a direction",
        multilingual("--directions", "english-german", command="evaluate"),
        2,
        ("'english-german' is not a direction", "en-de,de-fr"),
    ),
    Case(
        "evaluate --directions with a bilingual model",
        argv_case("evaluate", "--model", "RUN", "--data", "DATA", "--directions", "all"),
        2,
        ("--directions", "bilingual model", "--src-file/--ref-file"),
    ),
    Case(
        "evaluate --directions --n 0",
        multilingual("--directions", "all", "--n", "0", command="evaluate"),
        2,
        ("--n 0", "1 or more"),
    ),
    Case(
        "plot directions of a file that holds none",
        lambda f, tmp: plot_directions(tmp, '{"bleu": 3}'),
        2,
        ("TMP/results.json", "no list of directions", "aiayn evaluate --directions all --json"),
    ),
    Case(
        "API tgt_lang for a bilingual model",
        serve_request('{"text": "The dog sees.", "tgt_lang": "de"}'),
        422,
        ("tgt_lang de", "bilingual", "drop tgt_lang"),
    ),
]


def multilingual_tagged(tmp: Path, line: str) -> Outcome:
    model = make_model(tmp / "model")
    (tmp / "in.txt").write_text(line + "\n", encoding="utf-8")
    return aiayn(["translate", "--model", str(model), "--input", str(tmp / "in.txt")])


def plot_directions(tmp: Path, text: str) -> Outcome:
    (tmp / "results.json").write_text(text, encoding="utf-8")
    return aiayn(["plot", "directions", str(tmp / "results.json"), "--out", str(tmp / "d.png")])
