"""The lexical shortlist: decoding over a batch's cut output layer (decode/shortlist.py,
decode/shortlisted.py), its file, and building it (evaluate/shortlist.py, `aiayn shortlist`)."""

import itertools
import shutil

import numpy as np
import pytest
import torch

from aiayn import Controls, DecodeConfig, Glossary, open_translator
from aiayn.cli import main
from aiayn.data.data_dir import DataDir
from aiayn.data.languages import tag
from aiayn.data.token_ids import load_ids
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode import compiled as compiled_module
from aiayn.decode import int8_kernel
from aiayn.decode import shortlist as shortlist_file
from aiayn.decode.compiled import CompiledModel
from aiayn.decode.precision import Int8Linear
from aiayn.decode.shortlist import Shortlist, read_shortlist, write_shortlist
from aiayn.decode.shortlisted import CutLayer, Shortlisting, cut
from aiayn.decode.translate import load_model, nbest_hypotheses, translate_lines
from aiayn.evaluate.shortlist import coverage, lexicon, top_targets
from aiayn.layout import SHORTLIST_FILE
from tests.conftest import talking_model_dir
from tests.data.conftest import make_bible_db

GREEDY = DecodeConfig(beam=1, max_len_a=0.0, max_len_b=8)
BEAM = DecodeConfig(beam=3, max_len_a=0.0, max_len_b=8)


@pytest.fixture(scope="module")
def model_dir(tiny_data, tmp_path_factory):
    """A tiny model of random weights, scrambled so that sentences get outputs of their own."""
    return talking_model_dir(tmp_path_factory.mktemp("shortlist") / "model", tiny_data, seed=3)


@pytest.fixture(scope="module")
def lines(tiny_data):
    return (tiny_data / "test.src.txt").read_text(encoding="utf-8").splitlines()[:10]


def with_shortlist(model_dir, tmp_path, shortlist: Shortlist | None):
    """A copy of the model directory holding `shortlist` (None: none)."""
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy)
    if shortlist is not None:
        write_shortlist(copy, shortlist)
    return copy


def only(pieces, V: int) -> Shortlist:
    """A shortlist of exactly `pieces` (and eos): no source piece adds a candidate."""
    return Shortlist(torch.full((V, 1), -1), torch.tensor(sorted(set(pieces))))


def full_ids(translator, lines, cfg):
    return [h[0].tokens for h in translator.nbest(lines, cfg)]


def test_a_shortlist_holding_the_greedy_choices_decodes_as_the_full_search(
    model_dir, lines, tmp_path
):
    full = open_translator(model_dir)
    assert full.shortlist is None  # no file: the path it always took, the same outputs
    assert full.translate(lines, GREEDY) == translate_lines(*load_model(model_dir), lines, GREEDY)
    chosen = full_ids(full, lines, GREEDY)
    V = full.model.cfg.vocab_size
    pieces = {p for y in chosen for p in y}
    assert len(pieces) < V - 10  # the test cuts the output layer
    cut_dir = with_shortlist(model_dir, tmp_path, only(pieces, V))
    short = open_translator(cut_dir)
    assert short.shortlist is not None
    assert short.translate(lines, GREEDY) == full.translate(lines, GREEDY)
    assert full_ids(short, lines, GREEDY) == chosen


def test_beam_search_over_a_shortlist_of_every_piece_is_the_full_search(model_dir, lines, tmp_path):
    full = open_translator(model_dir)
    V = full.model.cfg.vocab_size
    short = open_translator(with_shortlist(model_dir, tmp_path, only(range(V), V)))
    cfg = BEAM.replace(nbest=2)
    a, b = full.nbest(lines, cfg), short.nbest(lines, cfg)
    assert [[h.tokens for h in x] for x in a] == [[h.tokens for h in x] for x in b]
    np.testing.assert_allclose(
        [h.score for x in a for h in x], [h.score for x in b for h in x], rtol=1e-4
    )


def test_a_piece_left_out_never_appears_and_no_shortlist_brings_it_back(model_dir, lines, tmp_path):
    full = open_translator(model_dir)
    V = full.model.cfg.vocab_size
    for cfg in (GREEDY, BEAM):
        found = full_ids(full, lines, cfg)
        counts = np.bincount([p for y in found for p in y], minlength=V)
        banned = int(counts.argmax())  # the piece the full search uses most
        short = open_translator(
            with_shortlist(model_dir, tmp_path / str(cfg.beam), only(set(range(V)) - {banned}, V))
        )
        assert all(banned not in y for y in full_ids(short, lines, cfg))
        assert full_ids(short, lines, cfg.replace(shortlist=False)) == found


def test_no_shortlist_on_the_command_line_decodes_with_the_full_layer(model_dir, lines, tmp_path):
    V = open_translator(model_dir).model.cfg.vocab_size
    cut_dir = with_shortlist(model_dir, tmp_path, only([3, 4, 5], V))
    (tmp_path / "src.txt").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    outputs = {}
    for flags in ([], ["--no-shortlist"]):
        out = tmp_path / f"out{len(flags)}.txt"
        command = ["translate", "--model", str(cut_dir), "--input", str(tmp_path / "src.txt")]
        assert main([*command, "--output", str(out), "--beam", "1", *flags]) == 0
        outputs[len(flags)] = out.read_text(encoding="utf-8").splitlines()
    assert outputs[1] == open_translator(model_dir).translate(lines, DecodeConfig(beam=1))
    assert outputs[0] != outputs[1]


def test_a_glossary_terms_pieces_join_the_shortlist(model_dir, lines, tmp_path):
    translator = open_translator(with_shortlist(model_dir, tmp_path, None))
    V = translator.model.cfg.vocab_size
    short = open_translator(with_shortlist(model_dir, tmp_path / "cut", only([3], V)))
    glossary = Glossary.of([(lines[0].split()[0], "Katze")])
    kept = short.translate(lines[:1], BEAM, Controls(glossary=glossary))
    assert "Katze" in kept[0]
    pieces = translator.tokenizer.encode(["Katze"])[0]
    assert not set(pieces) <= {3}  # they were not in the shortlist itself


def test_the_compiled_step_decodes_over_the_shortlist_as_the_eager_one(model_dir, lines):
    model, tokenizer = load_model(model_dir)
    V = model.cfg.vocab_size
    picks = torch.randint(-1, V, (V, 1), generator=torch.Generator().manual_seed(0))  # (V, 1)
    shortlist = Shortlist(picks, torch.tensor([5, 6]))
    compiled = CompiledModel(model, compile=False)
    eager = Shortlisting(model, model, shortlist)
    stepped = Shortlisting(compiled, model, shortlist)
    few = lines[:4]
    for cfg in (GREEDY, BEAM):
        a = translate_lines(model, tokenizer, few, cfg, shortlist=eager)
        assert a == translate_lines(compiled, tokenizer, few, cfg, shortlist=stepped)
        assert a != translate_lines(model, tokenizer, few, cfg)  # the shortlist changed them


@pytest.mark.parametrize("cfg", [GREEDY, BEAM], ids=["greedy", "beam"])
def test_a_sentence_gets_the_translation_it_gets_alone_whatever_its_batch(model_dir, lines, cfg):
    """Each row chooses among its own candidates, not the batch's union (as a server batches
    requests): the same outputs and scores alone and batched, eager and compiled steps."""
    model, tokenizer = load_model(model_dir)
    V = model.cfg.vocab_size
    picks = torch.randint(-1, V, (V, 3), generator=torch.Generator().manual_seed(1))  # (V, 3)
    shortlist = Shortlist(picks, torch.tensor([5, 6]))
    for runner in (model, CompiledModel(model, compile=False)):
        narrowed = Shortlisting(runner, model, shortlist)
        batched = nbest_hypotheses(runner, tokenizer, lines, cfg, shortlist=narrowed)
        alone = [
            nbest_hypotheses(runner, tokenizer, [x], cfg, shortlist=narrowed)[0] for x in lines
        ]
        assert [h[0][1].tokens for h in batched] == [h[0][1].tokens for h in alone]
        for (_, b), (_, a) in zip((h[0] for h in batched), (h[0] for h in alone), strict=True):
            assert b.score == pytest.approx(a.score, abs=1e-4)


def test_a_compiled_model_with_a_shortlist_warms_up_the_steps_it_decodes_with(
    model_dir, tmp_path, monkeypatch
):
    """`aiayn serve --compile` warms up, then runs any step not built uncompiled: with a
    shortlist those are the steps that stop at the decoder states, so they are built too."""
    built = []
    monkeypatch.setattr(compiled_module, "compile_step", lambda step, path: built.append(step))
    V = load_model(model_dir)[0].cfg.vocab_size
    for shortlist, states in ((None, [False]), (only([5, 6], V), [False, True])):
        directory = with_shortlist(model_dir, tmp_path / str(len(states)), shortlist)
        open_translator(directory, compile=True).warm_up([1, 3])
        assert {(s.group, s.states) for s in built} == {(k, x) for k in (1, 3) for x in states}
        built.clear()


def test_the_batch_vocabulary_is_the_union_of_candidates_frequent_eos_and_controls():
    candidates = torch.tensor([[-1, -1], [7, -1], [8, 9], [-1, -1], [4, 7]])  # V = 5... ids < 10
    candidates = torch.cat([candidates, torch.full((5, 2), -1)])  # (10, 2)
    shortlist = Shortlist(candidates, torch.tensor([3]))
    src = torch.tensor([[1, 2, 0], [4, 0, 0]])  # 0 = padding: no candidates
    assert shortlist.vocabulary(src, eos_id=2).tolist() == [2, 3, 4, 7, 8, 9]
    assert shortlist.vocabulary(src[1:], eos_id=2, extra=[5]).tolist() == [2, 3, 4, 5, 7]


def test_coverage_counts_the_lines_whose_every_piece_is_in_their_shortlist():
    """A line is whole (its greedy output unchanged by the shortlist) only if all its pieces are."""
    candidates = torch.full((10, 2), -1)
    candidates[1] = torch.tensor([5, 6])
    candidates[4] = torch.tensor([7, -1])
    shortlist = Shortlist(candidates, torch.tensor([3]))
    sources, eos = [[1, 2], [4, 2], [1, 4, 2]], 2
    outputs = [[5, 3, 6], [7, 5], [6, 7, 3, 8]]  # whole; 5 is not 4's; 8 is nobody's
    found = coverage(shortlist, sources, outputs, eos)
    assert found.sentences == pytest.approx(1 / 3)
    assert found.covered == pytest.approx(7 / 9)
    assert found.mean_size == pytest.approx((4 + 3 + 5) / 3)  # {2, 3, 5, 6}, {2, 3, 7}, both


@pytest.mark.parametrize("kernel", ["1", "0"])
def test_a_cut_int8_layer_gives_the_full_layers_rows(monkeypatch, kernel):
    """On aiayn's int8 kernel (the cut packed again) and on PyTorch's weight-only one."""
    monkeypatch.setenv("AIAYN_INT8_KERNEL", kernel)
    torch.manual_seed(0)
    layer = Int8Linear(torch.nn.Linear(16, 40, bias=True))
    h = torch.randn(3, 1, 16, dtype=torch.bfloat16)
    vocab = torch.tensor([0, 5, 17, 39])
    rows = cut(CutLayer(layer.weight, layer.bias, layer.scale, layer.packed), vocab)
    assert (rows.packed is not None) == (kernel == "1" and int8_kernel.available())
    torch.testing.assert_close(rows(h), layer(h)[..., vocab])


def test_the_file_is_written_atomically_and_read_back(tmp_path, monkeypatch):
    V = 12
    stored = Shortlist(torch.randint(-1, V, (V, 3)), torch.tensor([1, 4]), "by hand")
    write_shortlist(tmp_path, stored)
    back = read_shortlist(tmp_path, V)
    assert back is not None and back.origin == "by hand"
    assert back.candidates.tolist() == stored.candidates.tolist()
    assert back.frequent.tolist() == stored.frequent.tolist()
    assert read_shortlist(tmp_path / "nothing", V) is None

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(shortlist_file, "save_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_shortlist(tmp_path, Shortlist(torch.zeros(V, 1, dtype=torch.long), torch.tensor([0])))
    assert [p.name for p in tmp_path.iterdir()] == [SHORTLIST_FILE]  # no half-written file
    again = read_shortlist(tmp_path, V)
    assert again is not None and again.candidates.tolist() == stored.candidates.tolist()


def test_each_source_piece_keeps_its_most_often_linked_targets():
    s = np.array([1, 1, 1, 1, 2, 2, 3])
    t = np.array([5, 6, 6, 7, 5, 5, 9])
    table = top_targets(s, t, V=10, k=2)
    assert table[1].tolist() == [6, 5]  # 6 twice; 5 and 7 once each: the lower id first
    assert table[2].tolist() == [5, -1]
    assert table[3].tolist() == [9, -1]
    assert table[0].tolist() == [-1, -1]


def test_aiayn_shortlist_builds_it_from_the_training_pairs(tiny_run, tiny_data, tmp_path, capsys):
    model, data = tmp_path / "model", tmp_path / "data"  # copies: the fixtures stay as they are
    shutil.copytree(tiny_run / "checkpoints" / "best", model)
    shutil.copytree(tiny_data, data)
    args = ["shortlist", "--model", str(model), "--data", str(data), "--k", "5"]
    assert main([*args, "--frequent", "10"]) == 0
    printed = capsys.readouterr().out
    assert "reference pieces" in printed and "wrote" in printed
    found = read_shortlist(model, 64)
    assert (
        found is not None
        and found.candidates.shape == (1, 64, 5)
        and found.frequent.shape == (1, 10)
    )
    assert (found.candidates[0, 4:] >= 0).any()  # the pieces of the training sources have some
    assert main([*args, "--choose", "--sentences", "6"]) == 0  # decodes 6 validation lines
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("k ")]
    assert len(rows) == 25 and all("of lines whole: unchanged by it" in row for row in rows)


def test_a_server_says_whether_it_decodes_over_the_shortlist(model_dir, tmp_path):
    """/health tells; `aiayn serve --no-shortlist` turns it off (to compare, as translate's)."""
    from fastapi.testclient import TestClient

    from aiayn.cli import build_parser
    from aiayn.serve.app import create_app

    V = open_translator(model_dir).model.cfg.vocab_size
    cut_dir = with_shortlist(model_dir, tmp_path, only([3, 4, 5], V))
    for flags, expected in (([], True), (["--no-shortlist"], False)):
        args = build_parser().parse_args(["serve", "--model", str(cut_dir), *flags])
        given = {} if args.shortlist else {"shortlist": False}  # what run_serve gives
        with TestClient(create_app(cut_dir, search_options=given)) as client:
            search = client.get("/health").json()["search"]
        assert search["shortlist"] is expected
        assert search["origin"] != "set when the server started"  # the length setting's


def by_language() -> Shortlist:
    """Two tables: into the first language source piece 5 has candidate 7, into the second 9;
    the frequent pieces are 3 and 4; tags 10 and 11 name the languages."""
    candidates = torch.full((2, 12, 1), -1)
    candidates[0, 5, 0], candidates[1, 5, 0] = 7, 9
    return Shortlist(candidates, torch.tensor([[3], [4]]), "by hand", torch.tensor([10, 11]))


def test_a_sentence_reads_the_table_of_the_language_its_tag_asks_for():
    src = torch.tensor([[10, 5, 0], [11, 5, 0], [5, 0, 0], [10, 11, 5]])  # a tag each; none; both
    rows = by_language().per_row(src, eos_id=2, pad_id=0, extra=[[], [], [], []])
    assert [torch.nonzero(r).flatten().tolist() for r in rows] == [
        [2, 3, 7],  # the first language's candidate and frequent piece, eos
        [2, 4, 9],  # the second's
        [2, 3, 4, 7, 9],  # no tag: every table
        [2, 3, 4, 7, 9],  # two: every table
    ]


def test_tables_per_language_are_written_and_read_back_with_their_tags(tmp_path):
    stored = by_language()
    write_shortlist(tmp_path, stored)
    back = read_shortlist(tmp_path, 12)
    assert back is not None and back.tags.tolist() == [10, 11]
    assert back.candidates.tolist() == stored.candidates.tolist()
    assert back.frequent.tolist() == [[3], [4]]


@pytest.fixture(scope="module")
def two_languages(tmp_path_factory) -> DataDir:
    """A multilingual directory (en-de, de-en) of a small synthetic Bible."""
    tmp = tmp_path_factory.mktemp("two-languages")
    db = make_bible_db(tmp / "bible.db", n_books=2, n_chapters=5, n_verses=12)
    argv = ["prepare", "--langs", "de,en", "--bible-db", str(db), "--out", str(tmp / "data")]
    small = ["--valid-size", "12", "--test-size", "12", "--vocab-size", "90", "--no-progress"]
    assert main([*argv, *small]) == 0
    return DataDir.open(tmp / "data")


def test_a_multilingual_lexicon_has_a_table_per_target_language(two_languages):
    """Each language's candidates and frequent pieces come from the pairs into it: a German
    sentence's shortlist holds German pieces, not the English ones one table would mix in."""
    data = two_languages
    tokenizer = Tokenizer(data.tokenizer)
    lex = lexicon(data, k_max=5)
    assert lex.tags.tolist() == tokenizer.piece_ids([tag("de"), tag("en")])
    V = data.meta.vocab_size
    assert lex.table.shape == (2, V, 5) and lex.by_frequency.shape == (2, V)
    tgt, at = load_ids(data.ids("train", "tgt"), V)
    directions = np.load(data.directions("train"))
    into = {"de": set(), "en": set()}
    for pair, (a, b) in enumerate(itertools.pairwise(at)):
        into[data.meta.directions[directions[pair]].split("-")[1]] |= set(tgt[a:b].tolist())
    assert into["de"] - into["en"] and into["en"] - into["de"]  # the languages' pieces differ
    for table, frequent, lang in zip(lex.table, lex.by_frequency, ("de", "en"), strict=True):
        found = set(table[table >= 0].tolist())
        assert found and found <= into[lang]
        assert set(frequent[: len(into[lang])].tolist()) == into[lang]
