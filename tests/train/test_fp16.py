"""fp16 training: with the gradient scaler on CUDA (AIAYN_TEST_DEVICE=cuda, as
`benchmarks/gpu_report.py` runs it), refused by name on a CPU."""

import json

from aiayn.cli import main
from tests.conftest import TEST_DEVICE, TINY_RUN


def test_fp16_trains_on_cuda_and_is_refused_on_a_cpu(tiny_data, tmp_path, capsys):
    run = tmp_path / "run"
    args = ["train", "--data", str(tiny_data), "--out", str(run), "--device", str(TEST_DEVICE)]
    code = main([*args, *TINY_RUN, "--max-steps", "4", "--precision", "fp16"])
    if TEST_DEVICE.type == "cuda":
        assert code == 0
        metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
        losses = [m["loss"] for m in metrics if m["kind"] == "train"]
        assert losses and all(loss == loss for loss in losses)  # finite: the scaler worked
    else:
        assert code == 3
        assert "precision=fp16 needs a CUDA GPU; on a CPU use bf16" in capsys.readouterr().err
