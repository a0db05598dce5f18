"""A multilingual model's shortlist: each sentence decodes over the table of the language its
source's tag asks for, in a batch of sentences into other languages too."""

from __future__ import annotations

import shutil

import torch

from aiayn import DecodeConfig, open_translator
from aiayn.data.languages import tag, tagged
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.shortlist import Shortlist, write_shortlist
from tests.languages.tiny_multilingual import LANGS, SENTENCES

GREEDY = DecodeConfig(beam=1, max_len_a=0.0, max_len_b=6)
BEAM = DecodeConfig(beam=3, max_len_a=0.0, max_len_b=6)


def by_language(model, out) -> dict[str, set[int]]:
    """A copy of the model whose shortlist gives each language 30 pieces of its own (no source
    piece has candidates); returns each language's pieces."""
    shutil.copytree(model, out)
    tokenizer = Tokenizer(out / "spm.model")
    V = tokenizer.vocab_size
    pieces = (torch.randperm(V - 4, generator=torch.Generator().manual_seed(0)) + 4)[:90]
    frequent = pieces.view(len(LANGS), 30)  # (L, 30): disjoint
    tags = torch.tensor(tokenizer.piece_ids([tag(lang) for lang in LANGS]))
    write_shortlist(out, Shortlist(torch.full((len(LANGS), V, 1), -1), frequent, "test", tags))
    return {lang: set(frequent[i].tolist()) for i, lang in enumerate(LANGS)}


def test_each_sentence_decodes_over_its_target_languages_table(multilingual_model, tmp_path):
    allowed = by_language(multilingual_model, tmp_path / "model")
    lines = SENTENCES["en"][:4]
    mixed = [tagged(line, lang) for line in lines for lang in LANGS]  # one batch, every language
    each = open_translator(tmp_path / "model")  # each line carries its own tag
    assert each.shortlist is not None  # what a server's /health reports
    eos = each.tokenizer.piece_ids(["</s>"])[0]
    for cfg in (GREEDY, BEAM):
        found = [h[0].tokens for h in each.nbest(mixed, cfg)]
        for line, tokens in zip(mixed, found, strict=True):
            assert tokens and set(tokens) - {eos} <= allowed[line[2:4]], line
        into_fr = open_translator(tmp_path / "model", tgt_lang="fr")
        alone = [h[0].tokens for h in into_fr.nbest(lines, cfg)]
        assert alone == found[LANGS.index("fr") :: len(LANGS)]  # its batch mates change nothing
