"""`aiayn vision train | evaluate | predict | sample`: ViT, DETR and SETR on real digits."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from aiayn.vision.config import TASKS, VISION_PRESETS


def add(commands) -> None:
    p = commands.add_parser("vision", help="ViT, DETR and SETR: classify, detect, segment")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    t = sub.add_parser("train", help="train a vision model on the digits or digit scenes")
    t.add_argument("--task", choices=TASKS, help="required for a new run")
    t.add_argument("--out", type=Path, required=True, help="run directory")
    t.add_argument("--preset", choices=list(VISION_PRESETS), help="default: the task's own")
    t.add_argument(
        "--set",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="change a model or training setting, e.g. --set lr=5e-4 max_steps=900",
    )
    t.add_argument("--resume", action="store_true", help="continue the run in --out")
    _common(t)
    t.set_defaults(run=run_train)

    e = sub.add_parser("evaluate", help="score a run or model on a split")
    e.add_argument("--model", type=Path, required=True, help="run, checkpoint or model directory")
    e.add_argument("--split", choices=["valid", "test"], default="test")
    e.add_argument("--count", type=int, default=500, help="scenes scored (detect, segment)")
    e.add_argument("--picture", type=Path, help="also draw the first test predictions (PNG/SVG)")
    _common(e)
    e.set_defaults(run=run_evaluate)

    r = sub.add_parser("predict", help="classify an image, or draw its boxes or mask into a PNG")
    r.add_argument("image", type=Path, metavar="IMAGE")
    r.add_argument("--model", type=Path, required=True, help="run, checkpoint or model directory")
    r.add_argument("--out", type=Path, help="the drawing (detect, segment); default IMAGE-pred.png")
    r.add_argument("--threshold", type=float, default=0.5, help="detect: least score drawn")
    _common(r)
    r.set_defaults(run=run_predict)

    s = sub.add_parser("sample", help="write a held-out digit or scene as a PNG, to predict on")
    s.add_argument("--task", choices=TASKS, default="detect")
    s.add_argument("--split", choices=["train", "valid", "test"], default="test")
    s.add_argument("--index", type=int, default=0)
    s.add_argument("--size", type=int, default=32, help="scene side in pixels")
    s.add_argument("--out", type=Path, required=True)
    s.set_defaults(run=run_sample, threads=None)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=int, help="CPU threads for torch (default: torch's)")
    p.add_argument("--no-progress", action="store_true")


def _threads(args: argparse.Namespace) -> None:
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)


def run_train(args: argparse.Namespace) -> int:
    from aiayn import layout
    from aiayn.config.overrides import apply_overrides
    from aiayn.layout import RUN_CONFIG
    from aiayn.vision.config import VisionTrainConfig, vision_preset
    from aiayn.vision.trainer import VisionTrainer, read_run, write_run

    _threads(args)
    if args.resume and (args.out / RUN_CONFIG).is_file():
        model_cfg, train_cfg = read_run(args.out)
        changed, train_cfg = apply_overrides(model_cfg, train_cfg, args.set)
        if changed != model_cfg:
            raise ValueError("a resumed run keeps its model; --set only training settings")
    else:
        if args.task is None:
            raise ValueError("--task is required for a new run (classify, detect or segment)")
        layout.check_new_run(args.out)
        base = vision_preset(args.preset or args.task)
        if base.task != args.task:
            raise ValueError(f"--preset {args.preset} is a {base.task} model, not {args.task}")
        model_cfg, train_cfg = apply_overrides(base, VisionTrainConfig(), args.set)
    write_run(args.out, model_cfg, train_cfg)
    trainer = VisionTrainer(model_cfg, train_cfg, args.out, progress=not args.no_progress)
    last = layout.latest(args.out) if args.resume else None
    if last is not None:
        from aiayn.train.metrics import forget_metrics_after

        trainer.resume(last.path)
        forget_metrics_after(args.out, last.step)
        print(f"resumed from {last.path} (step {last.step})", file=sys.stderr)
    print(json.dumps(trainer.train(), indent=2))
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    from aiayn.layout import model_dir
    from aiayn.vision.build import load_vision_model
    from aiayn.vision.evaluate import evaluate_images

    _threads(args)
    path = model_dir(args.model)
    model, cfg = load_vision_model(path)
    scores = evaluate_images(model, cfg, args.split, args.count)
    print(json.dumps({"model": str(path), "task": cfg.task, "split": args.split, **scores}))
    if args.picture:
        from aiayn.vision.show import draw_examples

        print(f"wrote {draw_examples(model, cfg, args.split, args.picture)}", file=sys.stderr)
    return 0


def run_predict(args: argparse.Namespace) -> int:
    from aiayn.layout import model_dir
    from aiayn.vision.build import load_vision_model
    from aiayn.vision.images import read_image
    from aiayn.vision.show import predict_image

    _threads(args)
    model, cfg = load_vision_model(model_dir(args.model))
    image = read_image(args.image, cfg.image_size)
    out = args.out or args.image.with_name(f"{args.image.stem}-pred.png")
    print(json.dumps(predict_image(model, cfg, image, out, args.threshold)))
    return 0


def run_sample(args: argparse.Namespace) -> int:
    from aiayn.vision.data import digits, make_scene
    from aiayn.vision.images import write_image

    if args.task == "classify":
        images, labels = digits(args.split)
        if not 0 <= args.index < len(labels):
            raise ValueError(
                f"--index {args.index}: the {args.split} split has {len(labels)} "
                f"digits; choose 0 to {len(labels) - 1}"
            )
        write_image(images[args.index][None], args.out)
        print(json.dumps({"out": str(args.out), "label": int(labels[args.index])}))
        return 0
    scene = make_scene(args.split, args.index, args.size)
    write_image(scene.image, args.out)
    print(json.dumps({"out": str(args.out), "labels": scene.labels.tolist()}))
    return 0
