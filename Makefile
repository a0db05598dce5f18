# Everyday commands. `make test` and `make demo` work on a fresh clone: they set up first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup test lint format demo clean

setup: $(STAMP)

# torch is pinned and installed first: a CPU wheel lies on this disk, while a loose `torch`
# requirement would pull a multi-GB CUDA build. The package's own range is then satisfied.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

test: lint
	$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: setup
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

DATA ?= data/en-de

demo: setup
	$(VENV)/bin/aiayn prepare --out $(DATA)
	$(VENV)/bin/aiayn params --preset small --vocab-size 8000
	@echo "Data ready in $(DATA). Training, evaluation and translation join the demo with the training issue."

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
