"""`python -m tests.bad_input`: run every case and print the table."""

import sys

from tests.bad_input.suite import main_table

sys.exit(main_table())
