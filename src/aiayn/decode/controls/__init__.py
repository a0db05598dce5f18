"""The translator's controls: what a user asks of one call besides the source (`words.py`: a
target prefix, a glossary, suppressed words, alternatives) and how the search obeys it
(`steering.py` and the constraint, prefix and suppression states it holds)."""
