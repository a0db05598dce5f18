"""`aiayn translate` and `aiayn evaluate` with beam search, on a run trained for a few steps."""

import pytest

from aiayn.cli import main
from aiayn.config import DecodeConfig


@pytest.fixture
def run(tiny_run):
    return tiny_run


def test_nbest_output(run, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("The dog sees a cat.\n\nThe old man reads a book.\n")
    assert (
        main(
            [
                "translate",
                "--model",
                str(run),
                "--input",
                str(src),
                "--nbest",
                "3",
                "--max-len-b",
                "5",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    fields = [line.split(" ||| ") for line in lines]
    assert all(len(f) == 3 for f in fields)
    assert [f[0] for f in fields] == ["0", "0", "0", "1", "2", "2", "2"]  # the empty line: one
    for sentence in ("0", "2"):
        scores = [float(f[2]) for f in fields if f[0] == sentence]
        assert scores == sorted(scores, reverse=True)


def test_beam_and_greedy_from_the_command_line(run, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("The dog sees a cat.\nThe old man reads a book.\n")
    outputs = {}
    for beam in ("1", "4"):
        assert (
            main(
                [
                    "translate",
                    "--model",
                    str(run),
                    "--input",
                    str(src),
                    "--beam",
                    beam,
                    "--output",
                    str(tmp_path / f"b{beam}.txt"),
                ]
            )
            == 0
        )
        outputs[beam] = (tmp_path / f"b{beam}.txt").read_text().splitlines()
    assert len(outputs["1"]) == len(outputs["4"]) == 2
    assert (
        main(["translate", "--model", str(run), "--input", str(src), "--nbest", "5", "--beam", "4"])
        == 2
    )
    assert "need 1 <= nbest (5) <= beam (4)" in capsys.readouterr().err


def test_evaluate_reports_the_search(run, tiny_data, capsys):
    assert (
        main(
            [
                "evaluate",
                "--model",
                str(run),
                "--data",
                str(tiny_data),
                "--beam",
                "2",
                "--length-penalty",
                "power",
                "--alpha",
                "1.0",
                "--no-repeat-ngram",
                "0",
                "--stutter-guard",
                "0",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    said = "beam 2\nlength setting: power alpha 1, stop bound (--alpha, --length-penalty set on "
    assert said + "the command line, the rest: " in out
    assert "BLEU" in out and "chrF" in out and "repetition" in out


def test_the_repetition_guards_are_said_once(run, tiny_data, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("The dog sees a cat.\n")
    guards = ["--no-repeat-ngram", "3", "--stutter-guard", "2"]
    said = ", no repeated 3-gram, stutter guard 2"
    for search, first, then in (("4", "beam 4", f"stop bound{said} ("), ("1", f"greedy{said}", "")):
        common = ["--model", str(run), "--beam", search, "--length-penalty", "gnmt", *guards]
        assert main(["translate", *common, "--input", str(src)]) == 0
        assert main(["evaluate", *common, "--data", str(tiny_data)]) == 0
        out = capsys.readouterr()
        # with a beam, the length setting's words name the guards and the search's do not
        assert f"search: {first}; " in out.err and then in out.err, out.err
        assert f"reference(s), {first}\n" in out.out and then in out.out, out.out


def test_sampling_and_bf16_from_the_command_line(run, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("The dog sees a cat.\nThe old man reads a book.\n")
    outs = []
    for _ in range(2):
        assert (
            main(
                [
                    "translate",
                    "--model",
                    str(run),
                    "--input",
                    str(src),
                    "--sample",
                    "--top-p",
                    "0.9",
                    "--seed",
                    "5",
                    "--max-len-b",
                    "8",
                ]
            )
            == 0
        )
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and len(outs[0].splitlines()) == 2
    assert (
        main(
            [
                "translate",
                "--model",
                str(run),
                "--input",
                str(src),
                "--precision",
                "bf16",
                "--max-len-b",
                "8",
            ]
        )
        == 0
    )
    assert len(capsys.readouterr().out.splitlines()) == 2


@pytest.mark.slow
def test_translate_with_a_compiled_step_gives_the_same_lines(run, tmp_path, capsys):
    """`--compile` (AOTInductor, about 20 s) in float32: the lines of the eager decoder."""
    src = tmp_path / "in.txt"
    src.write_text("The dog sees a cat.\nthe old man reads a book\n")
    args = ["translate", "--model", str(run), "--input", str(src), "--beam", "1"]
    assert main(args) == 0
    eager = capsys.readouterr().out
    assert main([*args, "--compile"]) == 0
    assert capsys.readouterr().out == eager and len(eager.splitlines()) == 2
    assert main([*args, "--compile", "--engine", "onnx"]) == 2
    assert "--compile is for our own engine" in capsys.readouterr().err


def test_over_long_lines_follow_the_named_policy(run, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("The dog sees a cat.\n" + "the old man reads a book " * 20 + "\n")
    args = [
        "translate",
        "--model",
        str(run),
        "--input",
        str(src),
        "--max-input-tokens",
        "40",
        "--max-len-b",
        "4",
    ]
    assert main(args) == 0  # split, the default: the long line in chunks, nothing to say
    captured = capsys.readouterr()
    assert "longer than" not in captured.err and len(captured.out.splitlines()) == 2
    assert main([*args, "--too-long", "truncate"]) == 0
    captured = capsys.readouterr()
    assert "1 line(s) longer than 40 pieces (line 2): truncated" in captured.err
    assert len(captured.out.splitlines()) == 2
    assert main([*args, "--too-long", "skip"]) == 0
    captured = capsys.readouterr()
    assert "skipped" in captured.err and captured.out.splitlines()[1] == ""
    assert main([*args, "--too-long", "error"]) == 2
    assert "raise --max-input-tokens" in capsys.readouterr().err


def test_src_lang_names_the_splitters_language_or_finds_it(run, tmp_path, capsys, monkeypatch):
    """One flag for the source language: a code for the sentence splitter (default en), or auto,
    which identifies each line's and splits by the language found most."""
    import aiayn.documents

    seen, real = [], aiayn.documents.translate_document

    def spy(translator, text, fmt, cfg, options):
        seen.append(options.language)
        return real(translator, text, fmt, cfg, options)

    monkeypatch.setattr(aiayn.documents, "translate_document", spy)
    src = tmp_path / "in.txt"
    src.write_text("Der alte Mann liest ein Buch. Der Hund sieht die Katze.\n\nDas Haus ist alt.\n")
    argv = ["translate", "--model", str(run), "--input", str(src), "--format", "text"]
    flags = ["--no-progress", "--beam", "1", "--max-len-b", "4"]
    for given in (["--src-lang", "fr"], ["--src-lang", "auto"], []):
        assert main([*argv, *flags, *given]) == 0
    assert seen == ["fr", "de", "en"]
    assert "source language (py3langid, per line): de 2 line(s)" in capsys.readouterr().err


def test_the_stopping_rule_and_int8_on_the_command_line():
    import argparse

    from aiayn.commands.options.decoding import add_decoding
    from aiayn.commands.options.engine import engine_config, search_options

    parser = argparse.ArgumentParser()
    add_decoding(parser)
    args = parser.parse_args(["--model", "m", "--stop", "k-finished", "--precision", "int8"])
    given, opened = search_options(args), engine_config(args)
    assert (given["stop"], opened.precision) == ("k-finished", "int8")
    assert "stop" not in search_options(parser.parse_args(["--model", "m"]))
    with pytest.raises(SystemExit):
        parser.parse_args(["--model", "m", "--stop", "early"])


def test_the_command_line_and_the_server_take_their_defaults_from_decode_config():
    """One home for decoding settings: with no options, every command gives DecodeConfig()
    (the length setting left to the model: its tuned one, else the paper's) and opens its model
    as EngineConfig() says."""
    import argparse

    from aiayn.commands import evaluate, serve, translate
    from aiayn.commands.options.engine import engine_config, search_options
    from aiayn.config import EngineConfig
    from aiayn.serve.request import TranslateRequest

    commands = argparse.ArgumentParser().add_subparsers(dest="command")
    for module in (translate, evaluate, serve):
        module.add(commands)
    for command in ("translate", "evaluate"):
        args = commands.choices[command].parse_args(["--model", "m"])
        given = search_options(args)
        assert not set(given) & {"alpha", "length_penalty", "stop"}, command
        assert DecodeConfig(**given) == DecodeConfig(), command
    for command in ("translate", "evaluate", "serve"):
        args = commands.choices[command].parse_args(["--model", "m"])
        assert engine_config(args) == EngineConfig(), command
    request = TranslateRequest(text="a")
    assert (request.beam, request.nbest) == (DecodeConfig().beam, DecodeConfig().nbest)


def test_the_document_formats_have_one_home():
    """--format and the API's "format" take config's DocumentFormat; aiayn.documents reads
    exactly those (its readers, and lines)."""
    from aiayn.config import DOCUMENT_FORMATS
    from aiayn.documents import FORMATS

    assert DOCUMENT_FORMATS == FORMATS
