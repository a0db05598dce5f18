"""What the `aiayn` subcommands share, one module per concern: the model and its length setting
(`engine.py`), the search (`decoding.py`), a translation's controls (`controls.py`), the
languages (`languages.py`), documents (`documents.py`), reading input (`reading.py`) and old
flag spellings still accepted for a release (`renamed.py`).

A command module imports from here, never from another command module.
"""
