"""Input in another language than the model's source is said once per file or request."""

from fastapi.testclient import TestClient

from aiayn.cli import main
from aiayn.evaluate.mismatch import mismatch_warning, model_source_language
from aiayn.serve.app import create_app

GERMAN = "Der Hund sieht die Katze und läuft schnell nach Hause.\nDie Katze schläft im Garten.\n"


def test_the_models_source_language_is_read_from_its_runs_data(tiny_run, tmp_path):
    assert model_source_language(tiny_run) == "en"  # tiny_data was prepared en -> de
    assert model_source_language(tiny_run / "checkpoints") == "en"
    assert model_source_language(tmp_path) is None  # a directory that does not say


def test_a_warning_names_the_language_found_and_what_to_do():
    said = mismatch_warning(GERMAN.splitlines(), "en", "in.txt")
    assert "in.txt" in said and "reads as de" in said and "give it en text" in said
    assert mismatch_warning(["The dog sees the cat and runs home."], "en", "in.txt") == ""
    assert mismatch_warning(GERMAN.splitlines(), None, "in.txt") == ""  # nothing to compare
    assert mismatch_warning(["Hund."], "en", "in.txt") == ""  # too little to tell


def test_translate_says_it_once_per_file(tiny_run, tmp_path, capsys):
    (tmp_path / "in.txt").write_text(GERMAN, encoding="utf-8")
    argv = ["translate", "--model", str(tiny_run), "--input", str(tmp_path / "in.txt")]
    assert main([*argv, "--beam", "1", "--max-len-b", "4"]) == 0
    assert capsys.readouterr().err.count("reads as de") == 1


def test_the_api_says_it_in_warnings(tiny_run):
    with TestClient(create_app(tiny_run)) as client:
        got = client.post("/translate", json={"text": GERMAN.splitlines(), "beam": 1}).json()
        assert "reads as de" in got["warnings"][0]
        fine = client.post("/translate", json={"text": "The dog sees a cat.", "beam": 1}).json()
        assert "warnings" not in fine
        doc = client.post("/translate", json={"text": GERMAN, "format": "text"}).json()
        assert "reads as de" in doc["warnings"][0]
