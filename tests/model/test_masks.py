import torch

from aiayn.model.masks import causal_mask, decoder_mask, padding_mask


def test_padding_mask_is_true_for_real_tokens():
    tokens = torch.tensor([[5, 6, 0], [7, 0, 0]])
    mask = padding_mask(tokens, pad_id=0)
    assert mask.shape == (2, 1, 1, 3)
    assert mask[:, 0, 0].tolist() == [[True, True, False], [True, False, False]]


def test_causal_mask_after_cached_steps():
    assert causal_mask(2, 3).tolist() == [
        [True, True, True, True, False],
        [True, True, True, True, True],
    ]
    assert torch.equal(causal_mask(4, 0), torch.ones(4, 4, dtype=torch.bool).tril())


def test_decoder_mask_choices():
    assert decoder_mask(5, 0) == (None, True)  # fused causal kernel
    assert decoder_mask(1, 0) == (None, False)
    assert decoder_mask(1, 7) == (None, False)  # one step sees all before it
    mask, is_causal = decoder_mask(3, 2)
    assert not is_causal and torch.equal(mask, causal_mask(3, 2))
