"""Tags put back on a translation by its word alignment: none vanishes or repeats, siblings keep
their order, nesting stays valid."""

from aiayn.documents.inline import Span, Tagged, payloads, plain, project, source_nodes, text_of


def reverse_pairs(n: int) -> set[tuple[int, int]]:
    return {(i, n - 1 - i) for i in range(n)}


def test_a_tag_follows_its_aligned_words():
    tagged = Tagged("the big dog", (Span(4, 7, "b"),))  # "big"
    out = project(tagged, "DOG BIG THE", reverse_pairs(3))
    assert out == ["DOG", " ", ("b", ["BIG"]), " THE"]


def test_siblings_keep_their_order_when_the_words_swap():
    tagged = Tagged("a b", (Span(0, 1, "x"), Span(2, 3, "y")))
    out = project(tagged, "B A", reverse_pairs(2))
    assert payloads(out) == ["x", "y"]  # the order of the source, never swapped
    assert text_of(out).split() == ["B", "A"]


def test_nested_tags_stay_nested_and_inside_their_parent():
    inner = Span(4, 7, "i")
    outer = Span(0, 7, "b", children=(inner,))
    tagged = Tagged("one two three", (outer,))
    out = project(tagged, "THREE TWO ONE", reverse_pairs(3))
    assert payloads(out) == ["b", "i"]
    b = next(n for n in out if not isinstance(n, str))
    assert b[0] == "b" and any(not isinstance(k, str) and k[0] == "i" for k in b[1])


def test_void_and_unaligned_tags_are_kept():
    tagged = Tagged("x y z", (Span(2, 2, "img", void=True), Span(4, 5, "u")))
    out = project(tagged, "Z Y X", set())  # no alignment at all
    assert payloads(out) == ["img", "u"]
    assert text_of(out).split() == ["Z", "Y", "X"]


def test_plain_and_source_nodes_round_trip():
    nodes = ["Hello  ", ("b", ["big\n world"]), ", ", ("br", None), "again"]
    text, spans = plain(nodes)
    assert text == "Hello big world, again"
    assert source_nodes(Tagged(text, spans)) == [
        "Hello ",
        ("b", ["big world"]),
        ", ",
        ("br", None),
        "again",
    ]
