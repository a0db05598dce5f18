"""The bad-input cases of issue 16 and after that belong to no newer area, tried as a new user
would, on a tiny run.

Each case sets up its own copy of a prepared directory or a run, does one bad thing through the
command line (in process, as `aiayn ...`), and reports the exit code, the message and whether
data was lost. suite.py gathers them with the other areas' cases.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import torch

from aiayn import Transformer, layout, preset
from tests.bad_input.kit import (
    SMALL_PREPARE,
    TINY,
    Case,
    Fixtures,
    Outcome,
    aiayn,
    argv_case,
    copy,
    cut,
    digest,
    serve_request,
    translate_with,
    with_data,
)

# -- the cases: (fixtures, a fresh directory) -> Outcome ---------------------------------------


def average_into_the_run(f: Fixtures, tmp: Path) -> Outcome:
    run = copy(f.run, tmp / "run")
    before = digest(run / "checkpoints")
    out = aiayn(["average", str(run), "--out", str(run)])
    return Outcome(out.code, out.message, digest(run / "checkpoints") == before, out.traceback)


def prepare_again_with_a_bad_corpus(f: Fixtures, tmp: Path) -> Outcome:
    data = copy(f.data, tmp / "data")
    before = digest(data)
    lines = f.corpus.read_text().splitlines()
    lines[56] += "\tthird column"  # line 57
    bad = tmp / "bad.tsv"
    bad.write_text("\n".join(lines) + "\n")
    out = aiayn(["prepare", "--out", str(data), "--corpus", str(bad), *SMALL_PREPARE])
    return Outcome(out.code, out.message, digest(data) == before, out.traceback)


def repeated_set_groups(f: Fixtures, tmp: Path) -> Outcome:
    run = tmp / "run"
    argv = [
        "train",
        "--data",
        str(f.data),
        "--out",
        str(run),
        "--preset",
        "tiny",
        "--no-progress",
        "--max-steps",
        "2",
        "--set",
        "save_every=2",
        "--set",
        "log_every=1",
    ]
    out = aiayn(argv)
    train = json.loads((run / "run.json").read_text())["train"]
    kept = (train["save_every"], train["log_every"]) == (2, 1)
    return Outcome(out.code, out.message, kept, out.traceback)


def old_mac_line_ends(f: Fixtures, tmp: Path) -> Outcome:
    corpus = tmp / "mac.tsv"
    corpus.write_bytes(f.corpus.read_bytes().replace(b"\n", b"\r"))
    return aiayn(["prepare", "--out", str(tmp / "data"), "--corpus", str(corpus), *SMALL_PREPARE])


def divergence_names_a_sane_checkpoint(f: Fixtures, tmp: Path) -> Outcome:
    run = copy(f.run, tmp / "run")  # 6 good steps; now a learning rate a million times larger
    return aiayn(
        [
            "train",
            "--out",
            str(run),
            "--resume",
            "--max-steps",
            "60",
            "--no-progress",
            "--set",
            "lr_scale=1e6",
            "save_every=1",
        ]
    )


def ids_file_cut(fraction: float) -> Callable[[Fixtures, Path], Outcome]:
    def case(f: Fixtures, tmp: Path) -> Outcome:
        data = copy(f.data, tmp / "data")
        ids = data / "train.src.ids"
        size = ids.stat().st_size
        cut(ids, size - 1 if fraction == 1 else int(size * fraction) // 2 * 2)  # odd: not whole
        run = with_data(copy(f.run, tmp / "run"), data)
        return aiayn(["train", "--out", str(run), "--resume", "--max-steps", "8", "--no-progress"])

    return case


def damaged_newest_checkpoint(damage: Callable[[Path], None]) -> Callable:
    def case(f: Fixtures, tmp: Path) -> Outcome:
        run = copy(f.run, tmp / "run")
        newest = layout.latest(run)
        damage(newest.path)
        out = aiayn(["train", "--out", str(run), "--resume", "--max-steps", "8", "--no-progress"])
        resumed = "resumed from" in out.message and "step_00000004 (step 4)" in out.message
        aside = (run / "checkpoints" / f"damaged-{newest.path.name}").is_dir()  # kept, renamed
        return Outcome(out.code, out.message, resumed and aside and layout.latest(run).step == 8)

    return case


def half(name: str) -> Callable[[Path], None]:
    return lambda checkpoint: cut(checkpoint / name, (checkpoint / name).stat().st_size // 2)


def invalid_json(name: str) -> Callable[[Path], None]:
    return lambda directory: (directory / name).write_text('{"step": 6 "oops": 1}')


def damaged_run_json(f: Fixtures, tmp: Path) -> Outcome:
    run = copy(f.run, tmp / "run")
    invalid_json("run.json")(run)
    return aiayn(["train", "--out", str(run), "--resume", "--no-progress"])


def damaged_meta(change: Callable[[Path], None]) -> Callable:
    def case(f: Fixtures, tmp: Path) -> Outcome:
        data = copy(f.data, tmp / "data")
        change(data)
        return aiayn(["train", "--data", str(data), "--out", str(tmp / "run"), *TINY])

    return case


def without_vocab_size(data: Path) -> None:
    meta = json.loads((data / "meta.json").read_text())
    del meta["vocab_size"]
    (data / "meta.json").write_text(json.dumps(meta))


def torn_metrics_line(f: Fixtures, tmp: Path) -> Outcome:
    run = copy(f.run, tmp / "run")
    with open(run / "metrics.jsonl", "a") as out:
        out.write('{"kind": "train", "step": 7, "lo')  # killed mid-write
    out = aiayn(["plot", "metrics", str(run), "--out", str(tmp / "m.png")])
    return Outcome(out.code, out.message, (tmp / "m.png").is_file(), out.traceback)


def foreign_vocabulary(bigger_model: bool) -> Callable:
    def case(f: Fixtures, tmp: Path) -> Outcome:
        model = tmp / "model"
        if bigger_model:
            torch.manual_seed(0)
            Transformer(preset("tiny", vocab_size=100)).save(model)
            shutil.copyfile(f.data / "spm.model", model / "spm.model")  # 64 pieces
        else:
            copy(layout.latest(f.run).path, model)  # a 64-piece model
            shutil.copyfile(f.big_data / "spm.model", model / "spm.model")
        (tmp / "in.txt").write_text("The dog sees a cat.\n")
        return aiayn(["translate", "--model", str(model), "--input", str(tmp / "in.txt")])

    return case


def disk_full_while_saving(f: Fixtures, tmp: Path) -> Outcome:
    """Simulated: torch.save fails as it does on a full disk, and 10 kB are left free."""
    run = copy(f.run, tmp / "run")
    before = digest(run / "checkpoints")

    def full(obj, path, *args, **kwargs):
        Path(path).write_bytes(b"\0" * 100)
        raise RuntimeError(
            "[enforce fail at inline_container.cc:664] . basic_ios::clear: iostream error"
        )

    usage = shutil.disk_usage(tmp)._replace(free=10_000)
    with (
        mock.patch.object(torch, "save", full),
        mock.patch.object(shutil, "disk_usage", return_value=usage),
    ):
        out = aiayn(["train", "--out", str(run), "--resume", "--max-steps", "8", "--no-progress"])
    kept = digest(run / "checkpoints") == before and not list(run.glob("checkpoints/.tmp-*"))
    return Outcome(out.code, out.message, kept, out.traceback)


def serve_a_huge_body(f: Fixtures, tmp: Path) -> Outcome:
    """50 MB in one request: refused by its declared size, before it is read."""
    return serve_request('{"text": "' + "x" * 50_000_000 + '"}')(f, tmp)


def one_bad_request_in_a_batch(f: Fixtures, tmp: Path) -> Outcome:
    """Eight requests in one dynamic batch, the model failing on one of them (a stand-in that
    answers each text distinctly); the code is the number of good requests that failed."""
    from aiayn.serve.batcher import DynamicBatcher

    def translate(texts: list[str], beam: int, nbest: int) -> list[list[tuple[str, float]]]:
        if "BAD" in texts:
            raise RuntimeError("the model failed on text 'BAD'")
        return [[(text[::-1], 0.0)] for text in texts]

    async def scenario() -> list:
        batcher = DynamicBatcher(translate, wait_ms=50)
        batcher.start()
        texts = [f"text {i}" for i in range(7)] + ["BAD"]
        got = await asyncio.gather(
            *(batcher.submit([t], 1, 1) for t in texts), return_exceptions=True
        )
        await batcher.stop()
        return got

    got = asyncio.run(scenario())
    good = [g for g in got[:7] if not isinstance(g, Exception)]
    right = [g[0][0][0] for g in good] == [f"text {i}"[::-1] for i in range(7)]
    return Outcome(7 - len(good), f"the bad request got: {got[7]}", right)


def compile_without_a_compiler(f: Fixtures, tmp: Path) -> Outcome:
    """`translate --compile` where no C++ compiler is to be found (and nothing compiled yet)."""
    (tmp / "in.txt").write_text("The dog sees a cat.\n")
    env = {"CXX": "no-such-c++", "AIAYN_COMPILE_CACHE": str(tmp / "compiled")}
    with mock.patch.dict(os.environ, env):
        return aiayn(
            ["translate", "--model", str(f.run), "--input", str(tmp / "in.txt"), "--compile"]
        )


def damaged_search_file(text: str) -> Callable[[Fixtures, Path], Outcome]:
    """`translate` on a run whose stored length setting (best/search.json) was damaged."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        run = copy(f.run, tmp / "run")
        (layout.best_dir(run) / layout.SEARCH_FILE).write_text(text)
        (tmp / "in.txt").write_text("The dog sees a cat.\n")
        return aiayn(["translate", "--model", str(run), "--input", str(tmp / "in.txt")])

    return case


def tune_a_lone_model(f: Fixtures, tmp: Path) -> Outcome:
    """`aiayn tune` on a model directory outside any run, without --data."""
    model = copy(layout.best_dir(f.run), tmp / "model")
    return aiayn(["tune", str(model)])


def tune_with_negative_alphas(f: Fixtures, tmp: Path) -> Outcome:
    run = copy(f.run, tmp / "run")
    before = digest(run)
    out = aiayn(["tune", str(run), "--alphas", "0.6", "-1"])
    return Outcome(out.code, out.message, digest(run) == before, out.traceback)


def resume_with_moved_data(f: Fixtures, tmp: Path) -> Outcome:
    """The data directory moved after the run began: `--resume --data NEW` takes it (same
    data), and run.json records where it is now."""
    run = with_data(copy(f.run, tmp / "run"), copy(f.data, tmp / "old"))
    (tmp / "old").rename(tmp / "new")
    argv = ["train", "--out", str(run), "--resume", "--data", str(tmp / "new")]
    out = aiayn([*argv, "--max-steps", "8", "--no-progress"])
    kept = json.loads((run / "run.json").read_text())["data"] == str((tmp / "new").resolve())
    return Outcome(out.code, out.message, kept, out.traceback)


def resume_with_other_data(f: Fixtures, tmp: Path) -> Outcome:
    run = copy(f.run, tmp / "run")
    before = digest(run)
    argv = ["train", "--out", str(run), "--resume", "--data", str(f.big_data), "--max-steps", "8"]
    out = aiayn([*argv, "--no-progress"])
    return Outcome(out.code, out.message, digest(run) == before, out.traceback)


def out_is_a_file(command: str) -> Callable[[Fixtures, Path], Outcome]:
    """`--out` names an existing regular file: refused, and the file left as it was."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        target = tmp / "notes.txt"
        target.write_text("my notes\n")
        argv = {
            "prepare": ["prepare", "--corpus", str(f.corpus), *SMALL_PREPARE],
            "train": ["train", "--data", str(f.data), *TINY, "--max-steps", "2"],
            "average": ["average", str(f.run), "--last", "2"],
        }[command]
        out = aiayn([*argv, "--out", str(target)])
        kept = target.is_file() and target.read_text() == "my notes\n"
        return Outcome(out.code, out.message, kept, out.traceback)

    return case


def prepare_on_a_read_only_place(f: Fixtures, tmp: Path) -> Outcome:
    """The file system refuses the temporary directory (as a read-only one does, even to root)."""
    refused = OSError(30, "Read-only file system")
    with mock.patch("aiayn.files.tempfile.mkdtemp", side_effect=refused):
        out = aiayn(
            ["prepare", "--corpus", str(f.corpus), "--out", str(tmp / "data"), *SMALL_PREPARE]
        )
    return Outcome(out.code, out.message, ".tmp-" not in out.message, out.traceback)


def prepare_a_blank_corpus(f: Fixtures, tmp: Path) -> Outcome:
    (tmp / "blank.tsv").write_text("\n" * 4 + "  \t \n")
    return aiayn(["prepare", "--corpus", str(tmp / "blank.tsv"), "--out", str(tmp / "data")])


def import_marian_without_vocab(f: Fixtures, tmp: Path) -> Outcome:
    from tests.interop.test_marian import marian_dir

    marian_dir(f.data, tmp / "marian")
    (tmp / "marian" / "vocab.json").unlink()
    return aiayn(["import", "marian", str(tmp / "marian"), "--out", str(tmp / "ours")])


CASES = [
    Case(
        "train --resume --data DIR after the data moved",
        resume_with_moved_data,
        0,
        ("data:", "new"),
    ),
    Case(
        "train --resume --data OTHER (another vocabulary)",
        resume_with_other_data,
        2,
        ("--data", "not the data this run was trained on", "spm.model", "another --out"),
    ),
    Case("prepare --out FILE", out_is_a_file("prepare"), 2, ("notes.txt", "is a file")),
    Case("train --out FILE", out_is_a_file("train"), 2, ("notes.txt", "is a file")),
    Case("average --out FILE", out_is_a_file("average"), 2, ("notes.txt", "is a file")),
    Case(
        "prepare --out on a read-only file system",
        prepare_on_a_read_only_place,
        2,
        ("TMP/data", "cannot write in TMP", "Read-only file system", "a place you can write"),
    ),
    Case(
        "prepare a corpus of blank lines",
        prepare_a_blank_corpus,
        2,
        ("blank.tsv", "all 5 lines are blank"),
    ),
    Case(
        "import marian without vocab.json",
        import_marian_without_vocab,
        2,
        ("vocab.json: missing", "source.spm, vocab.json", "copy the whole model directory"),
    ),
    Case(
        "search.json not JSON",
        damaged_search_file('{"setting": {"alpha": 1.2,'),
        2,
        ("search.json, line", "not valid JSON", "aiayn tune"),
    ),
    Case(
        'search.json with alpha "high"',
        damaged_search_file(
            '{"setting": {"alpha": "high", "length_penalty": "gnmt", "stop": "bound"}}'
        ),
        2,
        ("search.json", "not a search setting", "alpha from 0 to 10", "delete it"),
    ),
    Case(
        'search.json whose setting for glossary terms stops "never"',
        damaged_search_file(
            '{"setting": {"alpha": 1.0, "length_penalty": "gnmt", "stop": "bound"}, '
            '"terms": {"alpha": 1.0, "length_penalty": "gnmt", "stop": "never"}}'
        ),
        2,
        ("search.json", '"stop": "never"', "not a search setting", "k-finished", "delete it"),
    ),
    Case(
        "search.json whose stutter guard is -2",
        damaged_search_file(
            '{"setting": {"alpha": 1.0, "length_penalty": "gnmt", "stop": "bound", '
            '"stutter_guard": -2}}'
        ),
        2,
        ("search.json", '"stutter_guard": -2', "not a search setting", "from 0 to 10", "delete it"),
    ),
    Case(
        "translate --no-repeat-ngram -1",
        translate_with("--no-repeat-ngram", "-1"),
        2,
        ("no_repeat_ngram", "-1", "0 (off)"),
    ),
    Case(
        "translate --stutter-guard -1",
        translate_with("--stutter-guard", "-1"),
        2,
        ("stutter_guard", "-1", "0 (off)", "3 is safe"),
    ),
    Case(
        "tune a model directory outside a run, no --data",
        tune_a_lone_model,
        2,
        ("model", "not inside a run directory", "--data DIR"),
    ),
    Case(
        "tune --alphas 0.6 -1",
        tune_with_negative_alphas,
        2,
        ("--alphas", "from 0 to 10"),
    ),
    Case(
        "average RUN --out RUN",
        average_into_the_run,
        2,
        ("--out", "is or contains", "new directory"),
    ),
    Case(
        "prepare over good data, corpus bad at line 57",
        prepare_again_with_a_bad_corpus,
        2,
        ("bad.tsv, line 57", "expected 2", "fix or remove"),
    ),
    Case("--set save_every=2 --set log_every=1", repeated_set_groups, 0, ()),
    Case(
        "corpus with old Mac (CR) line ends",
        old_mac_line_ends,
        2,
        ("mac.tsv", "bare carriage return", "tr '\\r' '\\n'"),
    ),
    Case(
        "divergence (lr_scale=1e6): the last good checkpoint",
        divergence_names_a_sane_checkpoint,
        3,
        ("non-finite", "step_00000006", "within 1.5x", "lower lr_scale"),
    ),
    Case(
        "train.src.ids cut to half",
        ids_file_cut(0.5),
        2,
        ("train.src.ids", "cut short", "re-run `aiayn prepare"),
    ),
    Case(
        "train.src.ids cut to an odd size",
        ids_file_cut(1.0),
        2,
        ("train.src.ids", "bytes", "re-run `aiayn prepare"),
    ),
    Case(
        "newest model.safetensors truncated",
        damaged_newest_checkpoint(half("model.safetensors")),
        0,
        ("skipped the damaged checkpoint", "step_00000006", "model.safetensors"),
    ),
    Case(
        "newest optimizer.pt truncated",
        damaged_newest_checkpoint(half("optimizer.pt")),
        0,
        ("skipped the damaged checkpoint", "step_00000006", "optimizer.pt"),
    ),
    Case(
        "newest state.json invalid",
        damaged_newest_checkpoint(invalid_json("state.json")),
        0,
        ("skipped the damaged checkpoint", "state.json is not valid JSON"),
    ),
    Case(
        "run.json invalid",
        damaged_run_json,
        2,
        ("run.json, line 1 column 12", "not valid JSON", "repair it"),
    ),
    Case(
        "meta.json invalid",
        damaged_meta(invalid_json("meta.json")),
        2,
        ("meta.json, line 1 column 12", "re-run `aiayn prepare"),
    ),
    Case(
        "meta.json without vocab_size",
        damaged_meta(without_vocab_size),
        2,
        ("meta.json: missing key(s) ['vocab_size']", "re-run `aiayn prepare"),
    ),
    Case(
        "plot metrics, torn last line",
        torn_metrics_line,
        0,
        ("metrics.jsonl, line", "incomplete last record skipped"),
    ),
    Case(
        "spm.model of 100 pieces, model of 64",
        foreign_vocabulary(False),
        2,
        ("100 pieces", "vocabulary of 64", "spm.model"),
    ),
    Case(
        "spm.model of 64 pieces, model of 100",
        foreign_vocabulary(True),
        2,
        ("64 pieces", "vocabulary of 100"),
    ),
    Case(
        "disk full while saving (simulated)",
        disk_full_while_saving,
        2,
        ("is full", "needs about", "MiB", "last whole checkpoint is", "step_00000006"),
    ),
    Case(
        "plot positional --d-model 7",
        argv_case("plot", "positional", "--d-model", "7", "--out", "TMP/p.png"),
        2,
        ("--d-model 7", "even"),
    ),
    Case(
        "average --last -1",
        argv_case("average", "RUN", "--last", "-1", "--out", "TMP/avg"),
        2,
        ("--last -1", "1 or more"),
    ),
    Case(
        "plot lr --warmup 0",
        argv_case("plot", "lr", "--warmup", "0", "--out", "TMP/lr.png"),
        2,
        ("--warmup 0", "1 or more"),
    ),
    Case(
        "serve: a lone surrogate in the text",
        serve_request('{"text": "The dog\\ud800 sees."}'),
        422,
        ("text 0", "lone surrogate (\\ud800) at character 7", "send valid UTF-8"),
    ),
    Case(
        'serve: a misspelt field ("beem": 8)',
        serve_request('{"text": "The dog sees.", "beem": 8}'),
        422,
        ("beem: Extra inputs are not permitted", "known: text, beam, nbest"),
    ),
    Case(
        "serve: a 50 MB body",
        serve_a_huge_body,
        413,
        ("request body of 50000012 bytes", "the limit is 388,608", "fewer or shorter texts"),
    ),
    Case(
        "serve: the model fails on 1 request of a batch of 8",
        one_bad_request_in_a_batch,
        0,
        ("the model failed on text 'BAD'",),
    ),
    Case(
        "train --resume in an empty directory",
        argv_case("train", "--out", "TMP/none", "--resume"),
        2,
        ("TMP/none", "no run to resume", "--data"),
    ),
    Case(  # a GPU that is not there: none on a CPU build, or not this many
        "train --device cuda:99",
        argv_case("train", "--data", "DATA", "--out", "TMP/gpu", "--device", "cuda:99"),
        2,
        ("--device cuda:99", "GPU"),
    ),
    Case(
        "translate --compile, no C++ compiler",
        compile_without_a_compiler,
        2,
        ("--compile", "C++ compiler", "no-such-c++", "without --compile"),
    ),
    Case(
        "evaluate --device cuda:99",
        argv_case("evaluate", "--model", "RUN", "--data", "DATA", "--device", "cuda:99"),
        2,
        ("--device cuda:99", "GPU"),
    ),
    Case(
        "evaluate --split test-nope (no such held-out set)",
        argv_case("evaluate", "--model", "RUN", "--data", "DATA", "--split", "test-nope"),
        2,
        ("--split test-nope", "no such held-out set", "it has valid, test"),
    ),
    Case(
        "tune --lines -1",
        argv_case("tune", "RUN", "--lines", "-1"),
        2,
        ("--lines -1", "give a number of lines, or 0 for all"),
    ),
]
