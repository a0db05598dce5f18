"""The README's Python example runs as written."""

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_python_example_runs(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "README has no Python example"
    script = tmp_path / "example.py"
    script.write_text(blocks[0] + "\nprint(tuple(logits.shape))\n", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("(2, 3, 8000)")
    assert (tmp_path / "my-model" / "model.safetensors").is_file()
