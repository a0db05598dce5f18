import numpy as np

from aiayn.data.clean import (
    DUPLICATE,
    EMPTY,
    RATIO,
    TOO_LONG,
    CleanOptions,
    CleanReport,
    KeySet,
    PairFilter,
    normalize,
)
from aiayn.data.sources import Pair


def test_normalize():
    assert normalize("  a\u00ad b\t\tc\u200b\x01 ") == "a b c"
    assert normalize("Cafe\u0301") == "Café"
    assert normalize("ﬁne\u3000…") == "fine ..."  # NFKC, as SentencePiece normalizes


def test_each_filter_counts_its_drops():
    report = CleanReport()
    keep = PairFilter(CleanOptions(max_words=5, max_ratio=2.0, ratio_min_chars=10), report)
    cases = [
        ("a b c", "x y z", True),
        ("", "x", False),  # empty
        ("a b c d e f", "x", False),  # 6 words > 5
        ("a" * 30, "b" * 10, False),  # ratio 3 > 2
        ("abc", "abcdefgh", True),  # ratio 2.7 but shorter than ratio_min_chars
        ("a b c", "x y z", False),  # duplicate
    ]
    pairs = [Pair(src, tgt, f"line {i}") for i, (src, tgt, _) in enumerate(cases)]
    kept = keep.keep(pairs[:3]) + keep.keep(pairs[3:])  # duplicates found across batches too
    assert kept == [p for p, (_, _, expected) in zip(pairs, cases, strict=True) if expected]
    assert report.dropped == {EMPTY: 1, TOO_LONG: 1, RATIO: 1, DUPLICATE: 1}
    assert report.examples[DUPLICATE] == ["line 5"]
    text = "\n".join(report.lines())
    assert "dropped (duplicate pair): 1  e.g. line 5" in text


def test_duplicates_can_be_kept():
    keep = PairFilter(CleanOptions(dedup=False), CleanReport())
    assert len(keep.keep([Pair("a", "b", "1"), Pair("a", "b", "2")])) == 2


def test_duplicates_within_one_batch_keep_the_first():
    report = CleanReport()
    pairs = [Pair("a", "b", "1"), Pair("c", "d", "2"), Pair("a", "b", "3"), Pair("a", "B", "4")]
    assert [p.where for p in PairFilter(CleanOptions(), report).keep(pairs)] == ["1", "2", "4"]
    assert report.examples[DUPLICATE] == ["3"]


def test_key_set_remembers_across_batches():
    keys = KeySet()
    assert keys.add_new(np.array([5, 3, 5], np.uint64)).tolist() == [True, True, False]
    assert keys.add_new(np.array([3, 9, 1, 9], np.uint64)).tolist() == [False, True, True, False]
    assert len(keys) == 4


def test_whitespace_controls_become_spaces_not_glue():
    assert normalize("Hello\rworld\x0bagain\x1ffine") == "Hello world again fine"
