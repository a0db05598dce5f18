"""Reading corpora: each kind of bad input gets a clear error or a counted drop."""

import bz2
import gzip
import lzma

import pytest

from aiayn.data.clean import INVALID_UTF8, NUL_BYTE, CleanReport
from aiayn.data.sources import DataError, count_lines, read_input, read_tsv, read_two_files


def read_all(reader, *paths):
    report = CleanReport()
    pairs = list(reader(*paths, report))
    return pairs, report


def test_tsv_pairs_are_read_and_normalized(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_bytes("Hello  world\tHallo Welt\n\tleer\nCafe\u0301 \tKaffee\n".encode())
    pairs, report = read_all(read_tsv, path)
    assert [(p.src, p.tgt) for p in pairs] == [
        ("Hello world", "Hallo Welt"),
        ("", "leer"),  # the filter drops it later, as an empty side
        ("Café", "Kaffee"),  # NFC
    ]
    assert pairs[2].where == "c.tsv:3" and report.read == 3


def test_tsv_with_a_wrong_column_count_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("a\tb\nc\td\te\nf\tg\n")
    with pytest.raises(DataError, match=r"c\.tsv, line 2: expected 2 tab-separated columns.*3"):
        read_all(read_tsv, path)
    path.write_text("a\tb\nno tab here\n")
    with pytest.raises(DataError, match=r"line 2: .*found 1"):
        read_all(read_tsv, path)


def test_bom_crlf_nul_and_invalid_utf8(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_bytes(
        b"\xef\xbb\xbfone\teins\r\n"  # BOM + CRLF: repaired, noted
        b"two\tzw\x00ei\n"  # NUL byte: dropped
        b"thr\xffee\tdrei\n"  # invalid UTF-8: dropped
        b"four\tvier\r\n"
    )
    pairs, report = read_all(read_tsv, path)
    assert [(p.src, p.tgt) for p in pairs] == [("one", "eins"), ("four", "vier")]
    assert report.read == 4
    assert report.dropped[NUL_BYTE] == 1 and report.examples[NUL_BYTE] == ["c.tsv:2"]
    assert report.dropped[INVALID_UTF8] == 1 and report.examples[INVALID_UTF8] == ["c.tsv:3"]
    assert report.notes["byte-order mark"] == 1 and report.notes["CRLF line end"] == 2


def test_blank_tsv_line_is_an_empty_pair(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("a\tb\n\nc\td\n")
    pairs, _ = read_all(read_tsv, path)
    assert [(p.src, p.tgt) for p in pairs] == [("a", "b"), ("", ""), ("c", "d")]


def test_two_files_are_read_in_step(tmp_path):
    (tmp_path / "s.txt").write_text("one\ntwo\n")
    (tmp_path / "t.txt").write_bytes(b"eins\nzw\xffei\n")
    pairs, report = read_all(read_two_files, tmp_path / "s.txt", tmp_path / "t.txt")
    assert [(p.src, p.tgt) for p in pairs] == [("one", "eins")]
    assert report.examples[INVALID_UTF8] == ["t.txt:2"]


@pytest.mark.parametrize(("n_src", "n_tgt"), [(5, 3), (3, 5)])
def test_mismatched_line_counts_name_both_counts_and_where(tmp_path, n_src, n_tgt):
    (tmp_path / "s.txt").write_text("".join(f"s{i}\n" for i in range(n_src)))
    (tmp_path / "t.txt").write_text("".join(f"t{i}\n" for i in range(n_tgt)))
    pattern = rf"s\.txt has {n_src} lines but .*t\.txt has {n_tgt}: the files diverge at line 4"
    with pytest.raises(DataError, match=pattern):
        read_all(read_two_files, tmp_path / "s.txt", tmp_path / "t.txt")


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match=r"nope\.tsv: no such file"):
        read_all(read_tsv, tmp_path / "nope.tsv")


def test_count_lines(tmp_path):
    (tmp_path / "f").write_text("a\nb\nc\n")
    assert count_lines(tmp_path / "f") == 3


COMPRESSORS = {".gz": gzip.compress, ".xz": lzma.compress, ".bz2": bz2.compress}


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
def test_compressed_corpora_are_read_transparently(tmp_path, suffix):
    text = "Hello world\tHallo Welt\nA cat\tEine Katze\n"
    plain, packed = tmp_path / "c.tsv", tmp_path / f"c.tsv{suffix}"
    plain.write_text(text)
    packed.write_bytes(COMPRESSORS[suffix](text.encode()))
    pairs = [[(p.src, p.tgt) for p in read_all(read_tsv, path)[0]] for path in (plain, packed)]
    assert pairs[0] == pairs[1] == [("Hello world", "Hallo Welt"), ("A cat", "Eine Katze")]
    assert count_lines(packed) == 2 and read_input(packed) == text.encode()


def test_a_damaged_compressed_file_is_named(tmp_path):
    packed = tmp_path / "c.tsv.gz"
    packed.write_bytes(gzip.compress(b"Hello\tHallo\n" * 1000)[:40])
    with pytest.raises(DataError, match=r"c.tsv.gz: the compressed file is damaged or cut short"):
        count_lines(packed)


def test_translate_reads_compressed_input(tiny_run, tmp_path, capsys):
    from aiayn.cli import main

    src = tmp_path / "in.txt"
    src.write_text("The dog sees a cat.\nThe old man reads.\n")
    (tmp_path / "in.txt.xz").write_bytes(lzma.compress(src.read_bytes()))
    outputs = []
    for name in ("in.txt", "in.txt.xz"):
        assert main(["translate", "--model", str(tiny_run), "--input", str(tmp_path / name)]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == 2
