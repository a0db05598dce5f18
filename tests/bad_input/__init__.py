"""The bad-input suite: every way a new user can go wrong, tried on a tiny run through the
command line, with the exit code, the message and whether data was kept.

kit.py builds the cases; general.py and one module per newer area hold them (`CASES`);
suite.py gathers them; test_bad_input.py asserts every row; `python -m tests.bad_input` prints
the table.
"""
