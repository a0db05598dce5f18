"""Upper- and title-casing of a line (casing.py): pure Python, the rest of a word kept."""

import pytest

from aiayn.data.casing import CASES, apply_case, title_case, upper_case


def test_upper_case_capitalises_every_letter():
    assert upper_case("God said, let there be light.") == "GOD SAID, LET THERE BE LIGHT."


def test_german_sharp_s_upper_cases_to_ss_and_umlauts_to_capitals():
    assert upper_case("Die Straße über dem Fluß") == "DIE STRASSE ÜBER DEM FLUSS"
    assert title_case("straße über öl") == "Straße Über Öl"


def test_title_case_capitalises_each_word_and_keeps_the_rest():
    # str.title would write "The Lord'S Day" and lower "LORD"
    assert title_case("the LORD's day") == "The LORD's Day"
    assert title_case("don't say it's well-known") == "Don't Say It's Well-known"


def test_title_case_finds_the_first_letter_behind_punctuation_not_digits():
    assert title_case('(and \'tis "so"') == '(And \'Tis "So"'
    assert title_case("the 2nd day, 3 times") == "The 2nd Day, 3 Times"


def test_white_space_is_kept_as_it_was():
    assert title_case("  two\tspaced  words ") == "  Two\tSpaced  Words "
    assert upper_case("") == title_case("") == ""


@pytest.mark.parametrize(
    "line",
    ["起初神创造天地。", "في البدء خلق الله السماوات والأرض", "आदि में परमेश्वर ने", "はじめに神は"],
)
def test_scripts_without_case_are_unchanged(line):
    assert upper_case(line) == line
    assert title_case(line) == line


def test_cyrillic_and_greek_have_case():
    assert upper_case("в начале") == "В НАЧАЛЕ"
    assert title_case("ἐν ἀρχῇ ἦν") == "Ἐν Ἀρχῇ Ἦν"


def test_tags_are_left_as_they_are():
    assert upper_case("<2de> in the beginning") == "<2de> IN THE BEGINNING"
    assert title_case("<2de>in the <b>beginning") == "<2de>In The <b>Beginning"


def test_apply_case_names_the_cases_and_refuses_others():
    line = "the house"
    assert [apply_case(line, case) for case in CASES] == [line, "THE HOUSE", "The House"]
    with pytest.raises(ValueError, match="unknown case 'lower'; choose one of as-is, upper"):
        apply_case(line, "lower")
