"""Word alignments from attention maps: pieces merged to words, argmax per target piece, the
Moses format and AER."""

import numpy as np

from aiayn.decode.attention_maps import Attention
from aiayn.documents.alignment import (
    Choice,
    aer,
    moses,
    parse_moses,
    piece_words,
    word_pairs,
)


def test_pieces_are_merged_to_words():
    assert piece_words(["▁Im", "▁An", "fang", "▁", ",", "▁Gott"]).tolist() == [0, 1, 1, 2, 2, 3]


def test_each_target_piece_goes_to_the_source_piece_it_attends_to_most():
    source = ["▁the", "▁beginn", "ing", "</s>"]  # 2 words
    target = ["▁am", "▁An", "fang", "</s>"]  # 2 words
    last = np.array(
        [
            [0.9, 0.05, 0.05, 0.0],
            [0.1, 0.2, 0.7, 0.0],  # "▁An" -> "ing" (word 1)
            [0.1, 0.8, 0.1, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )
    useless = np.full((4, 4), 0.25)
    maps = Attention("am Anfang", source, ["<s>", *target[:-1]], target, [], [], [last, useless])
    assert word_pairs(maps, 2, 2, Choice(layer=0)) == {(0, 0), (1, 1)}
    assert moses(word_pairs(maps, 2, 2, Choice(layer=0))) == "0-0 1-1"


def test_aer_by_hand():
    sure = [{(0, 0), (1, 1)}]
    assert aer(sure, sure) == 0.0
    assert aer([{(0, 1), (1, 0)}], sure) == 1.0
    assert abs(aer([{(0, 0)}], sure) - (1 - 2 / 3)) < 1e-9
    assert parse_moses("0-0 2-1") == {(0, 0), (2, 1)}
