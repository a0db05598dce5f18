"""Language tags: written, read back, and found in a vocabulary."""

from aiayn.data.languages import split_tag, tag, tag_languages, tagged


def test_a_tag_round_trips():
    line = tagged("In the beginning.", "de")
    assert line == "<2de> In the beginning." and tag("fr") == "<2fr>"
    assert split_tag(line) == ("de", "In the beginning.")
    assert split_tag("<b>bold</b>") == (None, "<b>bold</b>")  # markup is not a tag


def test_a_vocabulary_names_its_languages():
    assert tag_languages(["▁the", "<2fr>", "<2de>", "<2>", "x<2en>"]) == ["de", "fr"]
    assert tag_languages(["▁the", "▁a"]) == []
