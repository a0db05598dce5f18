import os

import pytest

from aiayn.files import atomic_write, read_json, replace_dir


def test_atomic_write_replaces_whole_files(tmp_path):
    target = tmp_path / "f.txt"
    atomic_write(target, lambda p: p.write_text("one"))
    atomic_write(target, lambda p: p.write_text("two"))
    assert target.read_text() == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")

    def fail(path):
        path.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, fail)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_read_json_names_the_file_line_and_column(tmp_path):
    path = tmp_path / "state.json"
    path.write_text('{\n "step": 6\n "lr": 1}')
    with pytest.raises(ValueError, match=r"state.json, line 3 column 2: not valid JSON .*; redo"):
        read_json(path, "redo")
    with pytest.raises(FileNotFoundError, match=r"nothing.json: missing; redo"):
        read_json(tmp_path / "nothing.json", "redo")


def test_replace_dir_swaps_a_whole_directory(tmp_path):
    old, new = tmp_path / "data", tmp_path / "new"
    old.mkdir()
    (old / "a").write_text("old")
    new.mkdir()
    (new / "b").write_text("new")
    replace_dir(new, old)
    assert [p.name for p in old.iterdir()] == ["b"] and sorted(os.listdir(tmp_path)) == ["data"]
