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


def test_text_is_searched_in_line_modes_batches(talking_model, tmp_path, monkeypatch):
    """Cut into calls for its progress bar, a document still searches the batches line mode
    makes of its distinct sentences (a batch's shape can change a translation's last bit)."""
    import aiayn.decode.translate as search
    import aiayn.documents.translate as document

    seen: list[list[tuple[int, ...]]] = []
    batch = search.source_batch
    monkeypatch.setattr(document, "CHUNK", 2)
    monkeypatch.setattr(
        search, "source_batch", lambda ids, *a: seen.append(list(map(tuple, ids))) or batch(ids, *a)
    )
    words = "the dog sees a cat and the bird sings in the old tree by the river"
    sentences = [" ".join(words.split()[: 2 + (7 * k) % 13]).capitalize() + "." for k in range(12)]
    doc = " ".join(sentences[:5]) + "\n\n" + " ".join(sentences[5:] + sentences[:3]) + "\n"
    small = ("--max-tokens", "40")  # several batches
    out = translate(talking_model, tmp_path, "doc.txt", doc, "--format", "text", *small)
    in_document, seen[:] = list(seen), []
    lines = "\n".join(sentences + sentences[:3]) + "\n"  # repeats are searched once there too
    said = translate(talking_model, tmp_path, "lines.txt", lines, *small).split("\n")
    assert in_document == seen and len(seen) > 2
    assert out == " ".join(said[:5]) + "\n\n" + " ".join(said[5:15]) + "\n"


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
