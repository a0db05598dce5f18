"""Special ids come from the data's vocabulary: an override that contradicts it is an error."""

import pytest

from aiayn.cli import main


@pytest.mark.parametrize(("name", "value", "data"), [("pad_id", 5, 0), ("eos_id", 7, 2)])
def test_a_special_id_that_contradicts_the_data_is_refused(
    tiny_data, tmp_path, capsys, name, value, data
):
    out = tmp_path / "run"
    args = ["--preset", "tiny", "--max-steps", "1", "--set", f"{name}={value}"]
    code = main(["train", "--data", str(tiny_data), "--out", str(out), *args])
    err = capsys.readouterr().err
    assert code != 0
    assert f"the model's {name} {value} differs from the data's {data}" in err
    assert "spm.model" in err and f"drop --set {name}" in err
    assert not (out / "checkpoints").exists(), "nothing may be trained with the wrong ids"
