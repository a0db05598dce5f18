from aiayn.data.clean import (
    DUPLICATE,
    EMPTY,
    RATIO,
    TOO_LONG,
    CleanOptions,
    CleanReport,
    PairFilter,
    normalize,
)


def test_normalize():
    assert normalize("  a\u00ad b\t\tc\u200b\x01 ") == "a b c"
    assert normalize("Cafe\u0301") == "Café"


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
    for i, (src, tgt, expected) in enumerate(cases):
        assert keep.keep(src, tgt, f"line {i}") is expected, (src, tgt)
    assert report.dropped == {EMPTY: 1, TOO_LONG: 1, RATIO: 1, DUPLICATE: 1}
    assert report.examples[DUPLICATE] == ["line 5"]
    text = "\n".join(report.lines())
    assert "dropped (duplicate pair): 1  e.g. line 5" in text


def test_duplicates_can_be_kept():
    keep = PairFilter(CleanOptions(dedup=False), CleanReport())
    assert keep.keep("a", "b", "1") and keep.keep("a", "b", "2")
