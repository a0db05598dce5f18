# Everyday commands. `make test` and `make demo` work on a fresh clone: they set up first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup browser allocator test lint format demo gpu-report clean

setup: $(STAMP)

# $(call apt_get,PACKAGE): Debian's package, installed when make runs as root with apt-get;
# fails otherwise, for the caller to say what to do.
apt_get = { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && apt-get update -qq \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1); }

# The page test drives Debian's chromium headless (Playwright uses it; it downloads nothing).
browser:
	@command -v chromium >/dev/null 2>&1 || $(call apt_get,chromium) || { \
		echo "the page test needs chromium: sudo apt-get install chromium"; exit 1; }

# `aiayn train` runs on tcmalloc where it is installed (src/aiayn/train/host_memory.py: about a
# fifth faster on a CPU than glibc's malloc with the heap trim that bounds its memory). Optional:
# without it, a note, and the slower path.
allocator:
	@/sbin/ldconfig -p 2>/dev/null | grep -q libtcmalloc || $(call apt_get,libtcmalloc-minimal4) \
		|| echo "note: CPU training is faster with tcmalloc: sudo apt-get install libtcmalloc-minimal4"

# torch is pinned and installed first: a CPU wheel lies on this disk, while a loose `torch`
# requirement would pull a multi-GB CUDA build. The package's own range is then satisfied.
# --no-cache-dir: the wheels are not kept a second time in ~/.cache (a small disk filled up once).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-cache-dir "torch==2.13.0"
	$(PY) -m pip install --quiet --no-cache-dir -e ".[dev]"
	touch $(STAMP)

# Every test: the quick ones (`pytest -q` alone leaves out those marked slow) and the slow ones.
test: lint browser allocator
	$(PY) -m pytest -q -m "not slow or slow"

# ruff, then mypy over src/ (pyproject.toml's [tool.mypy]): the model's stand-ins (compiled,
# ONNX, the tests' scripted model) and the engines are held to their protocols.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: setup
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# The demo: the default corpus, the `small` preset with the `short` recipe (bf16, fp32 on a CPU
# without AVX-512; a shorter warmup and a gentler peak than the paper's 100k-step recipe, the
# last checkpoints averaged) for a fixed DEMO_STEPS updates - the same training on every machine
# of a kind, whatever its clock; the run closes by choosing its length penalty on validation - then the test BLEU and translations.
DATA         ?= data/en-de
RUN          ?= runs/demo
DEMO_STEPS   ?= 1000
AIAYN        := $(VENV)/bin/aiayn

demo: setup allocator
	$(AIAYN) prepare --out $(DATA) --no-progress
	rm -rf $(RUN)
	$(AIAYN) train --data $(DATA) --out $(RUN) --preset small --recipe short \
		--max-steps $(DEMO_STEPS)
	$(AIAYN) evaluate --model $(RUN) --data $(DATA) --split test
	printf '%s\n' \
		"In the beginning God created the heavens and the earth." \
		"The king said to his servants: Go and bring water to the city." \
		"Love your neighbor as yourself." \
		| $(AIAYN) translate --model $(RUN)

# The GPU report (benchmarks/gpu_report.py): every CUDA check and measurement in one command,
# written to gpu-report/. Run where python3 holds a CUDA build of PyTorch (and transformers,
# sacrebleu, sentencepiece); aiayn runs from src/, uninstalled. It prepares the Bible into
# DATA unless it is there already.
GPU_PYTHON ?= python3

gpu-report:
	PYTHONPATH=src $(GPU_PYTHON) benchmarks/gpu_report.py --data $(DATA)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
