"""An update's passes (update_passes.py): the cased copies are one more pass where every
process has some, and none anywhere where one process has none; updates group their batches."""

import numpy as np

from aiayn.data.batches.dataset import collate_pairs
from aiayn.train.update_passes import grouped, update_passes


def batch(*lengths: int):
    """A batch of pairs whose targets have these lengths (target tokens: length + 1 each)."""
    return collate_pairs([(np.arange(4, 7), np.arange(4, 4 + n)) for n in lengths])


def with_another(values: dict[str, float]):
    """Sums over this process and another whose numbers are `values` (tokens, copy tokens,
    whether it has no copies)."""
    theirs = [values["tokens"], values["copy_tokens"], values["without"]]
    return lambda mine: [a + b for a, b in zip(mine, theirs, strict=True)]


def test_without_adding_the_batches_are_the_update():
    one = [batch(3, 5)]
    passes, local, total = update_passes(one, None, False, lambda v: [v[0] + 10])
    assert passes == one and local == 4 + 6 and total == 20


def test_copies_are_one_more_pass_where_every_process_has_some():
    ordinary, copies = [batch(3), batch(2)], batch(3, 3)
    other = with_another({"tokens": 7, "copy_tokens": 2, "without": 0})
    passes, local, total = update_passes(ordinary, copies, True, other)
    assert passes == [*ordinary, copies]
    assert local == 4 + 3 + 8 and total == local + 7 + 2


def test_an_update_goes_without_copies_where_one_process_has_none():
    ordinary, copies = [batch(3)], batch(4)
    other = with_another({"tokens": 7, "copy_tokens": 0, "without": 1})
    passes, local, total = update_passes(ordinary, copies, True, other)
    assert passes == ordinary and (local, total) == (4, 11)
    alone = update_passes(ordinary, None, True, lambda v: v)  # this process has none
    assert alone == (ordinary, 4, 4)


def test_grouped_makes_whole_updates_with_their_copies_in_one_batch():
    pair = (np.arange(4, 9), np.arange(4, 6))
    stream = iter([(batch(1), [pair]), (batch(2), []), (batch(3), [pair, pair]), (batch(4), [])])
    updates = list(grouped(stream, 2, pad_to=8))
    assert len(updates) == 2
    (first, first_copies), (second, second_copies) = updates
    assert len(first) == len(second) == 2
    assert first_copies is not None and first_copies.src.shape == (1, 8)
    assert second_copies is not None and second_copies.src.shape[0] == 2
    tail = iter([(batch(1), []), (batch(2), []), (batch(3), [])])
    assert [c for _, c in grouped(tail, 2, pad_to=1)] == [None]  # the third cannot fill one
