"""Hand-made hard cases for sentence splitting, English and German: abbreviations ("z. B.",
"Dr.", "e.g.", "U.S."), decimals, quotes and ellipses. tests/documents/test_sentences.py holds
our splitter to them; experiments/sentence_splitters/sentence_splitters.py compares sentencex and
pysbd on them."""

CASES = [
    (
        "en",
        "Dr. Smith went to Washington. He arrived at 3 p.m. on Monday.",
        ["Dr. Smith went to Washington.", "He arrived at 3 p.m. on Monday."],
    ),
    (
        "en",
        "The U.S. economy grew 2.5 percent. Prices rose.",
        ["The U.S. economy grew 2.5 percent.", "Prices rose."],
    ),
    (
        "en",
        "Bring fruit, e.g. apples or pears. Then leave.",
        ["Bring fruit, e.g. apples or pears.", "Then leave."],
    ),
    ("en", 'He said, "Stop." Then he left.', ['He said, "Stop."', "Then he left."]),
    ("en", "Wait... what happened? Nobody knows!", ["Wait... what happened?", "Nobody knows!"]),
    (
        "en",
        "Version 3.14 is out. It costs $4.99 in the U.K. today.",
        ["Version 3.14 is out.", "It costs $4.99 in the U.K. today."],
    ),
    (
        "en",
        "Mr. and Mrs. Jones live on Elm St. in Boston. They are nice.",
        ["Mr. and Mrs. Jones live on Elm St. in Boston.", "They are nice."],
    ),
    (
        "en",
        "See chapter 4, i.e. the last one. It is short.",
        ["See chapter 4, i.e. the last one.", "It is short."],
    ),
    (
        "de",
        "Wir kaufen Obst, z. B. Äpfel und Birnen. Dann gehen wir.",
        ["Wir kaufen Obst, z. B. Äpfel und Birnen.", "Dann gehen wir."],
    ),
    (
        "de",
        "Dr. Müller kommt am 3. Mai. Er bleibt lange.",
        ["Dr. Müller kommt am 3. Mai.", "Er bleibt lange."],
    ),
    ("de", "Das kostet 2,50 Euro. Das ist billig.", ["Das kostet 2,50 Euro.", "Das ist billig."]),
    ("de", "Er sagte: „Komm her.“ Dann ging er.", ["Er sagte: „Komm her.“", "Dann ging er."]),
    (
        "de",
        "Das ist u. a. wichtig, d. h. sehr wichtig. Gut.",
        ["Das ist u. a. wichtig, d. h. sehr wichtig.", "Gut."],
    ),
    ("de", "Moment... was war das? Keine Ahnung!", ["Moment... was war das?", "Keine Ahnung!"]),
    (
        "de",
        "Die XY GmbH bzw. ihre Tochter zahlt ca. 5 Mio. Euro. Das reicht.",
        ["Die XY GmbH bzw. ihre Tochter zahlt ca. 5 Mio. Euro.", "Das reicht."],
    ),
    (
        "de",
        "Prof. Dr. Schmidt, geb. 1950, lehrt Nr. 5. Sie ist gut.",
        ["Prof. Dr. Schmidt, geb. 1950, lehrt Nr. 5.", "Sie ist gut."],
    ),
]
