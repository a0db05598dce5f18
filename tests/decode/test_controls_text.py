"""Controls in words, through every door: the Python call, `aiayn translate`, the API, engines."""

import pytest
from fastapi.testclient import TestClient

from aiayn import Controls, DecodeConfig, Glossary, open_translator
from aiayn.cli import main
from aiayn.data.glossary import Term
from aiayn.serve.app import Limits, create_app
from tests.engines.test_one_interface import models  # noqa: F401  (a fixture)

LINES = ["The house is small.", "", "A dog is big.", "The cat is a cat."]
SEARCH = DecodeConfig(max_len_a=1.0, max_len_b=10)


@pytest.fixture(scope="module")
def translator(models):  # noqa: F811
    return open_translator(models["aiayn"])


@pytest.fixture(scope="module")
def tiny_model_dir(models):  # noqa: F811
    return models["aiayn"]


def test_glossary_terms_match_whole_words_case_insensitively_unless_asked():
    terms = (Term("house", "Haus", "g, line 1"), Term("big dog", "großer Hund", "g, line 2"))
    glossary = Glossary(terms)
    assert glossary.terms_for("The HOUSE and the big  dog") == [terms[0]]
    assert glossary.terms_for("A Big dog in the household.") == [terms[1]]
    assert Glossary(terms, case=True).terms_for("The House.") == []
    assert Glossary(terms, case=True).terms_for("The house.") == [terms[0]]


def test_the_python_call_keeps_prefixes_terms_and_suppressed_words(translator):
    plain = translator.translate(LINES, SEARCH)
    prefixes = ("Der Hund", "", "", "Eine")
    with_prefix = translator.translate(LINES, SEARCH, Controls(target_prefix=prefixes))
    for p, out in zip(prefixes, with_prefix, strict=True):
        assert out.startswith(p)
    assert with_prefix[1] == "" and with_prefix[2] == plain[2]  # no prefix: as before

    glossary = Glossary.of([("house", "Katze"), ("dog", "Haus klein")])
    kept = translator.translate(LINES, SEARCH, Controls(glossary=glossary))
    assert "Katze" in kept[0] and "Haus klein" in kept[2]
    assert kept[3] == plain[3]  # no term applies to it
    # suppression itself: tests/decode/test_controls.py (this scrambled model's words are
    # not its pieces); here, that the words reach the search as their pieces
    pieces = translator.tokenizer.encode(["Katze"])[0]
    barred = translator.nbest(LINES, SEARCH, Controls(suppress=("Katze",)))
    assert not any(contains(line[0].tokens, pieces) for line in barred)


def test_words_without_pieces_are_nothing_to_bar_and_no_term(translator):
    """Found by schemathesis (benchmarks/api_fuzz.py): a suppressed word of control characters
    alone has no piece, and ended the search in an IndexError (a 500 from the API)."""
    plain = translator.translate(LINES, SEARCH)
    assert translator.translate(LINES, SEARCH, Controls(suppress=("\u008f", "\x07"))) == plain
    glossary = Glossary.of([("house", "\u008f")], name="api glossary")
    with pytest.raises(ValueError, match=r"api glossary entry 0: target term '.x8f' has no piece"):
        translator.translate(LINES, SEARCH, Controls(glossary=glossary))


def contains(tokens, seq):
    return any(tokens[i : i + len(seq)] == seq for i in range(len(tokens) - len(seq) + 1))


def test_alternatives_are_distinct_words_the_first_the_best(translator):
    line = LINES[0]
    best = translator.translate([line], SEARCH)[0]
    found = translator.alternatives(line, 4, SEARCH)
    assert 2 <= len(found) <= 4
    words = [a.word for a in found]
    assert len(set(words)) == len(words)
    assert found[0].translation.text == best and best.startswith(words[0])
    for a in found:
        assert a.translation.text.startswith(a.word)
    after = translator.alternatives(line, 3, SEARCH, Controls(target_prefix=("Der",)))
    assert (
        after[0].translation.text
        == translator.translate([line], SEARCH, Controls(target_prefix=("Der",)))[0]
    )
    # the best may go on with the prefix's word; the others begin a word of their own
    assert after[0].translation.text.replace(" ", "").startswith("Der" + after[0].word)
    assert all(a.translation.text.startswith("Der " + a.word) for a in after[1:])


def test_the_command_line_takes_a_prefix_file_a_glossary_and_suppressed_words(
    tiny_model_dir, tmp_path, translator
):
    src = tmp_path / "in.txt"
    src.write_text("".join(x + "\n" for x in LINES), encoding="utf-8")
    (tmp_path / "prefix.txt").write_text("Der Hund\n\n\nEine\n", encoding="utf-8")
    (tmp_path / "terms.tsv").write_text("HOUSE\tKatze\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    model = [
        "--model",
        str(tiny_model_dir),
        "--max-len-b",
        "10",
        "--input",
        str(src),
        "--output",
        str(out),
    ]
    assert main(["translate", *model, "--target-prefix", str(tmp_path / "prefix.txt")]) == 0
    prefixes = ("Der Hund", "", "", "Eine")
    assert out.read_text(encoding="utf-8").splitlines() == translator.translate(
        LINES, SEARCH, Controls(target_prefix=prefixes)
    )
    assert main(["translate", *model, "--glossary", str(tmp_path / "terms.tsv")]) == 0
    assert "Katze" in out.read_text(encoding="utf-8").splitlines()[0]
    assert (
        main(["translate", *model, "--glossary", str(tmp_path / "terms.tsv"), "--glossary-case"])
        == 0
    )
    assert out.read_text(encoding="utf-8").splitlines() == translator.translate(LINES, SEARCH)
    assert main(["translate", *model, "--suppress", "Katze", "Hund"]) == 0
    assert not {"Katze", "Hund"} & set(" ".join(out.read_text(encoding="utf-8").split()).split())


def test_the_api_takes_controls_and_returns_alternatives(tiny_model_dir, translator):
    app = create_app(
        tiny_model_dir, Limits(max_chars=200, max_texts=4), search_options={"max_len_b": 10}
    )
    with TestClient(app) as client:
        answer = client.post(
            "/translate",
            json={"text": LINES[0], "target_prefix": "Der", "alternatives": 3},
        ).json()["translations"][0]
        assert answer["text"].startswith("Der")
        words = [a["word"] for a in answer["alternatives"]]
        assert (
            len(set(words)) == len(words) >= 2
            and answer["alternatives"][0]["text"] == answer["text"]
        )
        answer = client.post(
            "/translate", json={"text": [LINES[0], LINES[2]], "glossary": [["house", "Katze"]]}
        ).json()["translations"]
        assert "Katze" in answer[0]["text"]
        refused = client.post(
            "/translate",
            json={"text": LINES[0], "glossary": [["house", "Katze"]], "suppress": ["Katze"]},
        )
        assert refused.status_code == 422 and "also suppressed" in refused.json()["detail"]


CONTROLLED = Controls(
    target_prefix=("Der", "", "Ein Hund", ""),
    glossary=Glossary.of([("house", "Katze"), ("cat", "Haus")]),
    suppress=("Hund klein",),
)


@pytest.mark.parametrize("engine", ["onnx", "compile"])
def test_onnx_and_compiled_steps_run_every_control_as_our_engine_does(engine, models, translator):  # noqa: F811
    """The same search over another model: prefixes go piece by piece there, the same outputs."""
    options = {"engine": "onnx"} if engine == "onnx" else {"compile": True}
    other = open_translator(models[options.get("engine", "aiayn")], **options)
    search = SEARCH.replace(length_penalty="power")
    expected = translator.translate(LINES, search, CONTROLLED)
    assert other.translate(LINES, search, CONTROLLED) == expected
    assert [a.word for a in other.alternatives(LINES[0], 3, search)] == [
        a.word for a in translator.alternatives(LINES[0], 3, search)
    ]


def test_ctranslate2_takes_prefixes_and_alternatives_and_refuses_the_rest(models):  # noqa: F811
    ct2 = open_translator(models["ctranslate2"], engine="ctranslate2")
    search = SEARCH.replace(length_penalty="power")
    prefixes = Controls(target_prefix=("Der", "", "Ein Hund", ""))
    found = ct2.translate(LINES, search, prefixes)
    assert found[0].startswith("Der") and found[2].startswith("Ein Hund") and found[1] == ""
    alternatives = ct2.alternatives(LINES[0], 3, search)
    assert alternatives[0].translation.text == ct2.translate([LINES[0]], search)[0]
    assert len({a.word for a in alternatives}) == len(alternatives)
    for refused, what in ((CONTROLLED, "glossary"), (Controls(suppress=("x",)), "suppressed")):
        with pytest.raises(ValueError, match=f"CTranslate2 has no .*{what}.*--engine aiayn"):
            ct2.translate(LINES, search, refused)
