"""`aiayn translate --format ...` and `--alignments` end to end on a tiny trained run."""

from pathlib import Path

from aiayn.cli import main
from aiayn.documents.skeleton import code_blocks, html_skeleton, markdown_skeleton
from tests.documents.test_html import PAGE

ROOT = Path(__file__).resolve().parents[2]


def translate(run: Path, tmp: Path, name: str, text: str, *flags: str) -> str:
    (tmp / name).write_text(text, encoding="utf-8")
    out = tmp / f"out-{name}"
    argv = ["translate", "--model", str(run), "--input", str(tmp / name), "--output", str(out)]
    assert main([*argv, "--beam", "2", "--max-len-b", "8", *flags]) == 0
    return out.read_text(encoding="utf-8")


def test_markdown_files_of_the_project(talking_model, tmp_path):
    for name in ("README.md", "docs/export.md"):
        source = (ROOT / name).read_text(encoding="utf-8")
        out = translate(talking_model, tmp_path, Path(name).name, source, "--format", "markdown")
        assert markdown_skeleton(out) == markdown_skeleton(source)
        assert code_blocks(out) == code_blocks(source)
        assert out != source


def test_html_page(talking_model, tmp_path):
    out = translate(talking_model, tmp_path, "page.html", PAGE, "--format", "html", "--no-progress")
    assert html_skeleton(out) == html_skeleton(PAGE)


def test_text_gives_line_modes_translations(talking_model, tmp_path, capsys):
    sentences = ["The dog sees a cat.", "A cat runs.", "The bird sings.", "A dog eats."]
    doc = f"{sentences[0]} {sentences[1]}\n\n\n{sentences[2]}\n{sentences[3]}\n"
    out = translate(talking_model, tmp_path, "doc.txt", doc, "--format", "text")
    assert "4/4" in capsys.readouterr().err  # the progress bar
    lines = translate(talking_model, tmp_path, "lines.txt", "\n".join(sentences) + "\n").split("\n")
    assert out == f"{lines[0]} {lines[1]}\n\n\n{lines[2]} {lines[3]}\n"


def test_alignments_in_moses_format(talking_model, tmp_path):
    source = ["The dog sees a cat.", "", "A cat runs."]
    out = translate(talking_model, tmp_path, "a.txt", "\n".join(source) + "\n", "--alignments")
    rows = out.rstrip("\n").split("\n")
    plain = translate(talking_model, tmp_path, "b.txt", "\n".join(source) + "\n").rstrip("\n")
    assert [r.split(" ||| ")[0] for r in rows] == plain.split("\n")
    for line, row in zip(source, rows, strict=True):
        text, pairs = row.split(" ||| ")
        for pair in pairs.split():
            i, j = map(int, pair.split("-"))
            assert 0 <= i < len(line.split()) and 0 <= j < len(text.split())
        assert bool(pairs) == bool(line and text)
