"""The lexical shortlist in a CTranslate2 export: written as its vocabulary map (vmap.txt) and
used by `--engine ctranslate2` as our own search uses the shortlist."""

import shutil

import pytest
import torch

from aiayn import DecodeConfig, open_translator
from aiayn.cli import main
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.shortlist import Shortlist, write_shortlist
from aiayn.export.ctranslate2 import vocabulary_map
from aiayn.layout import VMAP_FILE
from tests.conftest import talking_model_dir

GREEDY = DecodeConfig(beam=1, max_len_a=0.0, max_len_b=8, length_penalty="power")


@pytest.fixture(scope="module")
def model_dir(tiny_data, tmp_path_factory):
    return talking_model_dir(tmp_path_factory.mktemp("ct2-shortlist") / "model", tiny_data, 3)


@pytest.fixture(scope="module")
def lines(tiny_data):
    return (tiny_data / "test.src.txt").read_text(encoding="utf-8").splitlines()[:12]


def exported(model_dir, tmp_path, shortlist: Shortlist | None, *flags: str):
    """A copy of the model holding `shortlist`, exported to CTranslate2 with `flags`."""
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy)
    if shortlist is not None:
        write_shortlist(copy, shortlist)
    out = tmp_path / "ct2"
    argv = ["export", str(copy), "--format", "ctranslate2", "--out", str(out), *flags]
    assert main(argv) == 0
    return copy, out


def pieces_of(translator, lines, cfg) -> set[int]:
    return {p for hyps in translator.nbest(lines, cfg) for p in hyps[0].tokens}


def narrow(model_dir, lines) -> tuple[Shortlist, set[int]]:
    """A shortlist of a few pieces the full greedy search does not all choose: each source
    piece's candidates are two pieces of its own, the frequent ones two more."""
    full = open_translator(model_dir)
    V = full.model.cfg.vocab_size
    g = torch.Generator().manual_seed(0)
    candidates = torch.randint(4, V, (V, 2), generator=g)
    frequent = torch.tensor([4, 5])
    return Shortlist(candidates, frequent), pieces_of(full, lines, GREEDY)


def test_the_map_holds_each_source_pieces_candidates_and_the_frequent_ones(tiny_data):
    tok = Tokenizer(tiny_data / "spm.model")
    V = tok.vocab_size
    candidates = torch.full((V, 3), -1)
    candidates[7] = torch.tensor([9, 10, -1])
    text = vocabulary_map(Shortlist(candidates, torch.tensor([4, 5])), tok)
    names = tok.pieces(range(V))
    assert text.splitlines() == [f"\t{names[4]} {names[5]}", f"{names[7]}\t{names[9]} {names[10]}"]


def test_tables_per_language_merge_and_each_languages_frequent_pieces_follow_its_tag(tiny_data):
    tok = Tokenizer(tiny_data / "spm.model")
    V = tok.vocab_size
    candidates = torch.full((2, V, 2), -1)
    candidates[0, 7], candidates[1, 7] = torch.tensor([9, -1]), torch.tensor([10, 9])
    tags = torch.tensor([11, 12])  # (any pieces, here: the map only names them)
    shortlist = Shortlist(candidates, torch.tensor([[4, 6], [5, 6]]), "by hand", tags)
    names = tok.pieces(range(V))
    assert vocabulary_map(shortlist, tok).splitlines() == [
        f"\t{names[6]}",  # frequent in every language
        f"{names[11]}\t{names[4]} {names[6]}",  # the first language's, after its tag
        f"{names[12]}\t{names[5]} {names[6]}",
        f"{names[7]}\t{names[9]} {names[10]}",  # its candidates in either language, once
    ]


def test_ctranslate2_decodes_over_the_exported_shortlist_as_our_search_does(
    model_dir, lines, tmp_path
):
    shortlist, full_pieces = narrow(model_dir, lines)
    model, out = exported(model_dir, tmp_path, shortlist)
    assert (out / VMAP_FILE).is_file()
    ours = open_translator(model)
    theirs = open_translator(out, engine="ctranslate2")
    assert theirs.shortlist is not None
    # CTranslate2 normalizes over the batch's union, ours over each sentence's own pieces: the
    # same where it translates each line alone
    cut = [theirs.translate([line], GREEDY)[0] for line in lines]
    assert cut == ours.translate(lines, GREEDY)  # the same cut layer, the same choices
    # The map narrows the output: pieces the full search chose are gone...
    allowed = set(shortlist.candidates.flatten().tolist()) | {4, 5, 2, 1, 3, 0}
    assert pieces_of(theirs, lines, GREEDY) <= allowed
    assert not full_pieces <= allowed  # ...which the test made sure of
    # ...and `shortlist=False` (--no-shortlist) decodes with the full layer again.
    full = theirs.translate(lines, GREEDY.replace(shortlist=False))
    assert full == open_translator(model_dir).translate(lines, GREEDY)
    assert full != cut


def test_export_no_shortlist_writes_no_map(model_dir, lines, tmp_path):
    shortlist, _ = narrow(model_dir, lines)
    _, out = exported(model_dir, tmp_path, shortlist, "--no-shortlist")
    assert not (out / VMAP_FILE).exists()
    theirs = open_translator(out, engine="ctranslate2")
    assert theirs.shortlist is None
    assert theirs.translate(lines, GREEDY) == open_translator(model_dir).translate(lines, GREEDY)
