"""The steps of `benchmarks/gpu_report.py`, each run in its own child process:

    python benchmarks/gpu_steps.py STEP --device cuda|cpu [--tiny] --data DIR --work DIR --json FILE

tests | matmul | train_speed | fp16 | decode | train_run. Each writes its result as JSON to
FILE; an exception is the parent's to report. `--tiny` runs the same code on tiny shapes (the
test suite runs it on the CPU so that it keeps working until a GPU is lent).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repository root: harness/

from gpu_multilingual import multilingual  # noqa: E402  (benchmarks/, this file's folder)
from gpu_profile import profile_step  # noqa: E402


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn: Callable[[], object], device: torch.device) -> float:
    sync(device)
    start = time.perf_counter()
    fn()
    sync(device)
    return time.perf_counter() - start


def half_dtypes(device: torch.device) -> dict[str, torch.dtype]:
    """bf16 and fp16 on CUDA; the CPU has no fp16 autocast for training: bf16 alone."""
    dtypes = {"bf16": torch.bfloat16}
    if device.type == "cuda":
        dtypes["fp16"] = torch.float16
    return dtypes


# -- 1. the test suite on the device ------------------------------------------------------------


def tests(a: argparse.Namespace) -> dict:
    """pytest with the device as torch's default (tests/conftest.py): the fp16 tests, then the
    model, nn, decoding and training tests (fp32 and bf16 autocast inside them), one folder at a
    time, leaving out those marked `cpu` (they run on the CPU whatever the device). Each folder's
    result is saved when it ends, and pytest's verbose output goes to WORK/tests.log, whose last
    lines the report shows if the step runs out of time."""
    env = os.environ | {"AIAYN_TEST_DEVICE": a.device}
    folders = ["tests/model", "tests/nn", "tests/decode", "tests/train"]  # the longest last
    suites = {"fp16": [*folders, "-k", "fp16"]} | {folder: [folder] for folder in folders}
    if a.tiny:  # a few files: the plumbing, not the suite
        suites = {"tests/decode": ["tests/decode/test_rules.py"]}
        suites["fp16"] = ["tests/train/test_fp16.py"]
    log = Path(a.work) / "tests.log"
    log.unlink(missing_ok=True)
    out = {}
    for name, args in suites.items():
        cmd = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *args]
        cmd += ["-m", "not slow and not cpu"]  # `cpu`: gloo processes, on the CPU anyway
        cmd += ["--continue-on-collection-errors", "--durations=5"]  # a missing package: one file
        cmd += pytest_plugins_args(a.tiny)
        with log.open("a", encoding="utf-8") as written:
            done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=written, stderr=subprocess.STDOUT)
        out[name] = outcome(done.returncode, log.read_text(encoding="utf-8"))
        save(a.json, out)  # a step cut short keeps the suites that ran
    failed = [name for name, found in out.items() if found["exit"]]
    if failed:  # the parent reports the step as failed, with this
        raise RuntimeError(f"tests failed: {json.dumps(out)}")
    return out


def pytest_plugins_args(tiny: bool) -> list[str]:
    """Where the plugins are installed (the lent GPU machine's image has both): the tests in
    parallel workers sharing the GPU (pytest-xdist; on one worker the suite ran past a 15-minute
    loan), and a per-test limit (pytest-timeout) so that one hung test fails alone."""
    from importlib.util import find_spec

    args = []
    if find_spec("xdist") and not tiny:
        args += ["-n", str(min(8, os.cpu_count() or 1))]
    if find_spec("pytest_timeout"):
        args += ["--timeout", "300"]
    return args


def outcome(code: int, log: str) -> dict:
    """One pytest run's exit code, summary line, failures and slowest tests, from its log
    (the last run in it)."""
    lines = log[max(0, log.rfind("= test session starts =")) :].splitlines() or [""]
    slowest = [x for x in lines if x.split(" ", 1)[0].endswith("s") and " call " in x][:5]
    failed = [x for x in lines if x.startswith(("FAILED", "ERROR"))][:20]
    return {"exit": code, "summary": lines[-1].strip("= "), "failed": failed, "slowest": slowest}


# -- 2. the card's matrix-product rate ----------------------------------------------------------


def matmul(a: argparse.Namespace) -> dict:
    """TFLOP/s of a large square matrix product per half-precision type: the peak for MFU."""
    device, size, reps = torch.device(a.device), (256 if a.tiny else 8192), (3 if a.tiny else 20)
    out = {}
    for name, dtype in ({"bf16": torch.bfloat16, "fp16": torch.float16}).items():
        x = torch.randn(size, size, device=device, dtype=dtype)
        x @ x  # warm up
        seconds = timed(lambda x=x: [x @ x for _ in range(reps)], device)
        out[name] = round(2 * size**3 * reps / seconds / 1e12, 3)
    return {"tflops": out, "size": size}


# -- 3. training speed against the peers --------------------------------------------------------


def batches(a: argparse.Namespace, cfg, max_tokens: int, n: int, device: torch.device):
    """`n` token-budget batches with the Bible's real lengths (TokenBatchSampler over the
    prepared training split), random ids of the model's vocabulary, on the device."""
    from aiayn.data.batches.dataset import ParallelData
    from aiayn.data.batches.sampler import TokenBatchSampler

    data = ParallelData(a.data, "train")
    sampler = TokenBatchSampler(data.src_lengths, data.tgt_lengths, max_tokens, seed=1)
    g = torch.Generator(device="cpu").manual_seed(0)  # the batches are made on the CPU
    found = []
    for _, ix in zip(range(n), sampler, strict=False):
        b = data.collate(ix, 8)
        src, tgt_in, tgt_out = (t.clone() for t in (b.src, b.tgt_in, b.tgt_out))
        for t in (src, tgt_in, tgt_out):  # real tokens get ids anywhere in the vocabulary
            real = t > 3
            t[real] = torch.randint(
                4, cfg.vocab_size, (int(real.sum()),), generator=g, device="cpu"
            )
        tgt_in[:, 1:] = tgt_out[:, :-1].masked_fill(tgt_out[:, :-1] == cfg.eos_id, cfg.pad_id)
        found.append((src.to(device), tgt_in.to(device), tgt_out.to(device)))
    return found


def train_flops(cfg, src, tgt_in) -> float:
    from train_bench import model_flops

    S, T = src.shape[1], tgt_in.shape[1]
    B = src.shape[0]
    return model_flops(cfg, B * S, B * T, B * S * S, B * T * T)


def aiayn_step(cfg, device: torch.device, compiled: bool, tiny: bool = False):
    """aiayn's training step as `aiayn train` runs it: the projection and label-smoothed loss
    on real target positions only, fused Adam, bf16 autocast."""
    from aiayn.model import Transformer
    from aiayn.train.loss import projected_smoothed_loss

    model = Transformer(cfg).to(device).train()
    # --tiny checks the plumbing: torch.compile without Inductor's minute of compiling on a CPU
    net = torch.compile(model, backend="eager" if tiny else "inductor") if compiled else model
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9, fused=True)

    def step(src, tgt_in, tgt_out) -> None:
        real = tgt_out != cfg.pad_id
        with torch.autocast(device.type, dtype=torch.bfloat16):
            states = net(src, tgt_in, real, project=False)
            loss, _ = projected_smoothed_loss(
                states, model.output_weight, tgt_out[real], 0.1, cfg.pad_id
            )
        (loss / real.sum()).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def peer_step(model, forward, device: torch.device):
    """A plain training step as a torch or Hugging Face user writes it: their cross-entropy."""
    model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98))
    pad = model_pad(model)

    def step(src, tgt_in, tgt_out) -> None:
        with torch.autocast(device.type, dtype=torch.bfloat16):
            logits = forward(src, tgt_in)
        loss = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1).float(), tgt_out.flatten(), ignore_index=pad, label_smoothing=0.1
        )
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def model_pad(model) -> int:
    return model.cfg.pad_id if hasattr(model, "cfg") else model.config.pad_token_id


def train_speed(a: argparse.Namespace) -> dict:
    """Target tokens/s and MFU of one bf16 training step, systems interleaved, medians."""
    from aiayn.config import preset
    from harness.peers import TorchTransformer, hf_marian

    device = torch.device(a.device)
    torch.set_default_device(device)  # the peers build their masks without a device
    peak = matmul(a)["tflops"]["bf16"] * 1e12
    out = {}
    sizes = [("tiny", 300, 3)] if a.tiny else [("base", 25_000, 8)]
    for name, max_tokens, n in sizes:
        cfg = preset(name, vocab_size=64 if a.tiny else 37_000, dropout=0.1)
        data = batches(a, cfg, max_tokens, n, device)
        torch_model, marian = TorchTransformer(cfg), hf_marian(cfg)

        def marian_forward(src, tgt_in, marian=marian, pad=cfg.pad_id):
            return marian(input_ids=src, attention_mask=src != pad, decoder_input_ids=tgt_in).logits

        systems = {
            "aiayn eager": aiayn_step(cfg, device, compiled=False),
            "aiayn torch.compile": aiayn_step(cfg, device, compiled=True, tiny=a.tiny),
            "torch.nn.Transformer": peer_step(torch_model, torch_model, device),
            "HF Marian": peer_step(marian, marian_forward, device),
        }
        out[name] = measure_training(
            systems, data, cfg, device, peak, a.repeats, partial(a, out, name, peak)
        )
    out["trainer"] = trainer_speed(a, device, peak, out)
    if not a.tiny:  # the big model, aiayn alone
        cfg = preset("big", vocab_size=37_000, dropout=0.3)
        data = batches(a, cfg, 25_000, 8, device)
        out["big"] = measure_training(
            {"aiayn eager": aiayn_step(cfg, device, False)},
            data,
            cfg,
            device,
            peak,
            a.repeats,
            partial(a, out, "big", peak),
        )
    return {"peak_bf16_tflops": round(peak / 1e12, 3), "presets": out}


def trainer_speed(a: argparse.Namespace, device: torch.device, peak: float, out: dict) -> dict:
    """aiayn's own Trainer (`aiayn train`'s update: bf16, the losses read once per update)
    against the same Trainer reading each batch's losses and the gradient norm at once (as
    it did before), on the prepared corpus's vocabulary, interleaved, medians."""
    from gpu_profile import base_config, make_trainer, trainer_step

    cfg = base_config(a)
    max_tokens, n = (300, 3) if a.tiny else (25_000, 8)
    systems = {
        f"Trainer {name}": trainer_step(make_trainer(a, f"speed-{on}", cfg, max_tokens, on))
        for name, on in (("one read per update", False), ("reads per batch", True))
    }
    data = batches(a, cfg, max_tokens, n, device)
    return measure_training(
        systems, data, cfg, device, peak, a.repeats, partial(a, out, "trainer", peak)
    )


def partial(a: argparse.Namespace, out: dict, name: str, peak: float) -> Callable[[dict], None]:
    """Saves train_speed's figures so far, preset `name` holding `found`."""

    def saved(found: dict) -> None:
        presets = out | {name: found}
        save(a.json, {"peak_bf16_tflops": round(peak / 1e12, 3), "presets": presets})

    return saved


def measure_training(
    systems: dict, data: list, cfg, device, peak: float, repeats: int, saved=None
) -> dict:
    """Interleaved rounds over the systems, round 0 to warm up (and compile); after each
    round, `saved` gets the figures so far (a step cut short keeps them)."""
    tokens = sum(int((t != cfg.pad_id).sum()) for _, _, t in data)
    flops = sum(train_flops(cfg, s, t) for s, t, _ in data)
    rates: dict[str, list[float]] = {name: [] for name in systems}
    out: dict = {}
    for repeat in range(repeats + 1):
        for name, step in systems.items():
            seconds = timed(lambda step=step: [step(*b) for b in data], device)
            if repeat:
                rates[name].append(tokens / seconds)
        if repeat:
            out = {name: summary(r, flops / tokens / peak) for name, r in rates.items()}
            if saved:
                saved(out | {"repeats": repeat})
    return out


def summary(rates: list[float], flops_per_token_over_peak: float) -> dict:
    median = statistics.median(rates)
    return {
        "tokens_per_s": round(median),
        "min": round(min(rates)),
        "max": round(max(rates)),
        "mfu": round(flops_per_token_over_peak * median, 4),
    }


# -- 4. fp16: the gradient scaler and the out-of-memory message ---------------------------------


def fp16(a: argparse.Namespace) -> dict:
    """Through aiayn's own Trainer: an update whose loss overflows is skipped (weights kept,
    the scale lowered) and the next one trains; a CUDA out-of-memory error in a batch ends the
    run with our message (a TrainingError), not a traceback. On the CPU, where fp16 training is
    refused, bf16 runs the same path without a scaler."""
    from aiayn.config import TrainConfig, preset
    from aiayn.data.data_dir import DataDir
    from aiayn.train.distributed import Distributed
    from aiayn.train.run_dir import create_run
    from aiayn.train.step_stats import StopFlags
    from aiayn.train.trainer import Trainer, TrainingError

    precision = "fp16" if a.device.startswith("cuda") else "bf16"
    data = DataDir.open(a.data)
    cfg = preset("tiny" if a.tiny else "small", vocab_size=data.meta.vocab_size)
    train_cfg = TrainConfig(precision=precision, max_tokens=300 if a.tiny else 4096, warmup=10)
    shutil.rmtree(Path(a.work) / "fp16-run", ignore_errors=True)
    run = create_run(Path(a.work) / "fp16-run", data, cfg, train_cfg)
    trainer = Trainer(cfg, train_cfg, run, Distributed.from_env(a.device), progress=False)
    stream = (batch for batch, _ in trainer.batches())  # (its case copies: none here)
    before = [p.detach().clone() for p in trainer.model.parameters()]
    scale = trainer.scaler.get_scale()
    forward = trainer.net.forward
    trainer.net.forward = lambda *x, **k: forward(*x, **k) * float("inf")  # type: ignore[method-assign]
    trainer.update([next(stream)], StopFlags())
    kept = all(torch.equal(p, q) for p, q in zip(before, trainer.model.parameters(), strict=True))
    lowered = trainer.scaler.get_scale() < scale if precision == "fp16" else True
    trainer.net.forward = forward  # type: ignore[method-assign]
    stats = trainer.update([next(stream)], StopFlags())
    moved = any(
        not torch.equal(p, q) for p, q in zip(before, trainer.model.parameters(), strict=True)
    )

    def out_of_memory(*x, **k):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory (forced by gpu_report)")

    trainer.net.forward = out_of_memory  # type: ignore[method-assign]
    try:
        trainer.update([next(stream)], StopFlags())
        message = ""
    except TrainingError as err:
        message = str(err)
    return {
        "precision": precision,
        "overflow_skipped_weights_kept": kept,
        "scale_lowered": lowered,
        "next_update_trained": moved and stats.loss == stats.loss,
        "oom_message": message,
        "ok": kept and lowered and moved and "lower --max-tokens" in message,
    }


# -- 5. decoding against Hugging Face generate --------------------------------------------------


def decode(a: argparse.Namespace) -> dict:
    """Beam 4 at batch 1 and a large batch: aiayn (half precision) against Hugging Face
    `generate` on the same weights; target tokens/s, medians over repeats."""
    from aiayn.config import DecodeConfig, preset
    from aiayn.decode.beam import beam_search
    from aiayn.model import Transformer
    from harness.peers import marian_like

    device = torch.device(a.device)
    torch.manual_seed(0)
    cfg = preset("tiny" if a.tiny else "base", vocab_size=64 if a.tiny else 37_000)
    cfg = cfg.replace(positional="concatenated")  # Marian's layout: the same weights serve both
    ours = Transformer(cfg).eval()
    marian = marian_like(ours).to(device)
    out: dict = {}
    search = DecodeConfig(beam=4, max_len_a=0.0, max_len_b=30)
    for batch in (1, 4) if a.tiny else (1, 64):
        src = torch.randint(4, cfg.vocab_size, (batch, 20), device=device)
        src[:, -1] = cfg.eos_id
        for name, dtype in ({"fp32": torch.float32} | half_dtypes(device)).items():
            model = copy.deepcopy(ours).to(device=device, dtype=dtype).eval()
            found: list = []

            def ours_once(model=model, found=found, src=src) -> None:
                found[:] = beam_search(model, src, search)

            rate = rates(ours_once, device, a.repeats)
            tokens = sum(len(h[0].tokens) + 1 for h in found)
            out[f"aiayn {name} batch {batch}"] = round(tokens * rate)
        hf_found: list = []

        def hf(src=src, hf_found=hf_found) -> None:
            hf_found[:] = [marian.generate(input_ids=src, num_beams=4, max_new_tokens=30)]

        rate = rates(hf, device, a.repeats)
        tokens = int((hf_found[0][:, 1:] != cfg.pad_id).sum())
        out[f"HF generate fp32 batch {batch}"] = round(tokens * rate)
    return {"target_tokens_per_s": out, "cuda_graphs": graphed_beam(a, ours, search, device)}


def graphed_beam(a: argparse.Namespace, ours, search, device: torch.device) -> dict:
    """Batch-1 beam 4, eager against CUDA graphs (decode/cuda_graphs.py) on the same fp32
    weights and sources: target tokens/s, their ratio and whether the outputs are equal. On
    the CPU the static-buffer step runs uncaptured (checks the plumbing)."""
    from aiayn.decode.beam import beam_search
    from aiayn.decode.cuda_graphs import GraphedModel

    model = copy.deepcopy(ours).to(device).eval()
    graphed = GraphedModel(model, capture=device.type == "cuda")
    g = torch.Generator(device="cpu").manual_seed(1)
    sources = []
    for n in (12, 20, 27) if not a.tiny else (5, 9):
        src = torch.randint(4, model.cfg.vocab_size, (1, n + 1), generator=g)
        src[0, n] = model.cfg.eos_id
        sources.append(src.to(device))
    found: dict[str, list] = {"eager": [], "CUDA graphs": []}
    out: dict = {}
    for name, decoder in (("eager", model), ("CUDA graphs", graphed)):

        def once(decoder=decoder, kept=found[name]) -> None:
            kept[:] = [beam_search(decoder, src, search)[0][0].tokens for src in sources]

        rate = rates(once, device, a.repeats)
        out[f"{name} tokens_per_s"] = round(sum(len(t) + 1 for t in found[name]) * rate)
    out["speedup"] = round(out["CUDA graphs tokens_per_s"] / out["eager tokens_per_s"], 2)
    out["outputs_equal"] = found["eager"] == found["CUDA graphs"]
    out["captured"] = graphed.capture
    return out


def rates(fn: Callable[[], object], device: torch.device, repeats: int) -> float:
    """Calls per second: the median over repeats, after one warm-up call."""
    with torch.inference_mode():
        fn()
        return 1 / statistics.median(timed(fn, device) for _ in range(repeats))


# -- 6. a short real training run ---------------------------------------------------------------


def train_run(a: argparse.Namespace) -> dict:
    """`aiayn train` end to end on the prepared corpus, with validation BLEU."""
    run = Path(a.work) / "train-run"
    shutil.rmtree(run, ignore_errors=True)  # a new run each time
    steps = "4" if a.tiny else "600"
    cmd = [sys.executable, "-m", "aiayn", "train", "--data", str(a.data), "--out", str(run)]
    cmd += ["--preset", "tiny" if a.tiny else "small", "--recipe", "short", "--max-steps", steps]
    cmd += ["--device", a.device, "--no-progress"]
    if a.tiny:
        cmd += ["--max-tokens", "300", "--set", "valid_every=0", "valid_bleu_sentences=20"]
        cmd += ["log_every=1"]
    log = Path(a.work) / "train_run.log"  # the report shows its last lines if time runs out
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as written:
        unbuffered = os.environ | {"PYTHONUNBUFFERED": "1"}  # each line as it is printed
        done = subprocess.run(
            cmd, cwd=ROOT, env=unbuffered, stdout=written, stderr=subprocess.STDOUT
        )
    if done.returncode:
        tail = log.read_text(encoding="utf-8")[-2000:]
        raise RuntimeError(f"aiayn train exited {done.returncode}: {tail}")
    metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    valid = [m for m in metrics if m["kind"] in ("valid", "averaged")]
    train = [m["tokens_per_s"] for m in metrics if m["kind"] == "train"]
    return {
        "steps": int(steps),
        "minutes": round((time.monotonic() - started) / 60, 2),
        "valid_bleu": [round(m["bleu"], 2) for m in valid],
        "tokens_per_s": round(statistics.median(train)) if train else None,
    }


STEPS = {f.__name__: f for f in (tests, matmul, train_speed, fp16, decode, train_run)}
STEPS["profile"] = profile_step
STEPS["multilingual"] = multilingual


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=list(STEPS))
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--multi", type=Path, help="the multilingual step's data directory")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, required=True)
    a = parser.parse_args()
    a.json.unlink(missing_ok=True)
    save(a.json, STEPS[a.step](a))


def save(path: Path, result: dict) -> None:
    """Written whole or not at all: the parent may read it after killing this process."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
