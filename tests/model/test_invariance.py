"""Padding and future target tokens change nothing they must not."""

import torch

from tests.conftest import padded_batch, tiny_model


def test_future_target_tokens_do_not_change_earlier_positions(norm_first):
    model = tiny_model(seed=21, norm_first=norm_first)
    src = padded_batch([7, 5], model.cfg, seed=1)
    tgt_in = padded_batch([8, 8], model.cfg, seed=2, start_with_bos=True)
    changed = tgt_in.clone()
    changed[:, 5:] = torch.randint(3, model.cfg.vocab_size, (2, 3))
    with torch.no_grad():
        a, b = model(src, tgt_in), model(src, changed)
    torch.testing.assert_close(a[:, :5], b[:, :5], rtol=0, atol=0)
    assert (a[:, 5:] - b[:, 5:]).abs().max() > 1e-3  # and the later positions do change


def test_extra_padding_changes_nothing(norm_first):
    model = tiny_model(seed=22, norm_first=norm_first)
    src = padded_batch([6, 3], model.cfg, seed=3)
    tgt_in = padded_batch([5, 2], model.cfg, seed=4, start_with_bos=True)
    pad = model.cfg.pad_id
    more_src = torch.cat((src, torch.full((2, 4), pad)), dim=1)
    more_tgt = torch.cat((tgt_in, torch.full((2, 3), pad)), dim=1)
    with torch.no_grad():
        a, b = model(src, tgt_in), model(more_src, more_tgt)
        memory_a = model.encode(src).memory
        memory_b = model.encode(more_src).memory
    torch.testing.assert_close(b[:, :5], a, rtol=0, atol=1e-5)
    torch.testing.assert_close(memory_b[0, :6], memory_a[0, :6], rtol=0, atol=1e-5)


def test_a_sentence_alone_equals_the_same_sentence_in_a_padded_batch(norm_first):
    model = tiny_model(seed=23, norm_first=norm_first)
    src = padded_batch([3, 9, 6, 1], model.cfg, seed=5)
    tgt_in = padded_batch([4, 7, 2, 5], model.cfg, seed=6, start_with_bos=True)
    with torch.no_grad():
        batch = model(src, tgt_in)
        for i, (s_len, t_len) in enumerate([(3, 4), (9, 7), (6, 2), (1, 5)]):
            alone = model(src[i : i + 1, :s_len], tgt_in[i : i + 1, :t_len])
            torch.testing.assert_close(alone[0], batch[i, :t_len], rtol=0, atol=1e-5)


def test_dropout_is_active_in_training_only():
    model = tiny_model(seed=24)
    src = padded_batch([5], model.cfg, seed=7)
    tgt_in = padded_batch([5], model.cfg, seed=8, start_with_bos=True)
    with torch.no_grad():
        eval_a, eval_b = model(src, tgt_in), model(src, tgt_in)
        model.train()
        train = model(src, tgt_in)
    torch.testing.assert_close(eval_a, eval_b, rtol=0, atol=0)
    assert (train - eval_a).abs().max() > 1e-3


def test_selected_positions_give_the_same_logits_as_the_full_pass():
    """forward(src, tgt, select) is the full pass's logits at the selected positions."""
    model = tiny_model(seed=4)
    src = padded_batch([5, 3, 6], model.cfg, seed=1)
    tgt = padded_batch([4, 6, 2], model.cfg, seed=2, start_with_bos=True)
    select = tgt != model.cfg.pad_id  # (B, T)
    full = model(src, tgt)  # (B, T, V)
    chosen = model(src, tgt, select)  # (N, V)
    assert chosen.shape == (int(select.sum()), model.cfg.vocab_size)
    torch.testing.assert_close(chosen, full[select], rtol=1e-5, atol=1e-5)
