"""What the benchmarks and the tests share: reference models, a live server, the API fuzzer.

- `peers`: the models aiayn is measured against (`torch.nn.Transformer`, Hugging Face Marian),
  and the same models with aiayn's weights, which the parity tests compare logits with;
- `live`: `aiayn serve` on a loopback port and a bounded load driver (the serve benchmarks and
  the slow page tests);
- `api_fuzz`: schemathesis against the app's own OpenAPI schema (`tests/serve/test_fuzz.py`
  for ~500 requests, `benchmarks/api_fuzz.py` for the long run);
- `machine`: the CPU's model name, printed with every figure.

Why a package of its own at the repository root: no `aiayn` command needs this code (Hugging
Face `transformers` and schemathesis are dev dependencies), so it stays out of the installed
package; the tests import nothing from `benchmarks/` or `experiments/`, so it stays out of
those; and it is no test, so it stays out of `tests/`. It is not installed: pytest puts the
repository root on the import path (`pythonpath` in pyproject.toml), and a script in
`benchmarks/` or `experiments/` does it in one commented line, so `from harness.peers import
hf_marian` reads the same in both.
"""
