import pytest
import torch

from aiayn import Transformer, preset
from aiayn.model.params import PAPER_PARAMETERS, count_parameters


def built_count(cfg) -> int:
    with torch.device("meta"):  # shapes only, no memory: the big model has 214M parameters
        model = Transformer(cfg)
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", ["base", "big", "small", "tiny"])
@pytest.mark.parametrize(
    "changes",
    [{}, {"norm_first": True}, {"tie_embeddings": False}, {"n_decoder_layers": 1}],
    ids=["paper", "pre-norm", "untied", "shallow-decoder"],
)
def test_closed_form_matches_the_built_model(name, changes):
    cfg = preset(name, **changes)
    assert built_count(cfg) == count_parameters(cfg)


@pytest.mark.parametrize("name", ["base", "big"])
def test_sizes_are_the_papers(name):
    """Table 3 gives 65M (base) and 213M (big) for a ~37k shared vocabulary; the exact vocabulary
    is not stated, so the paper's rounded figures are matched within 4%."""
    n = count_parameters(preset(name, vocab_size=37000))
    paper = PAPER_PARAMETERS[name]
    print(f"{name}: {n:,} parameters; paper: {paper / 1e6:.0f}M")
    assert abs(n - paper) / paper < 0.04


def test_heads_add_no_parameters():
    assert built_count(preset("tiny", n_heads=1)) == built_count(preset("tiny", n_heads=8))
