"""`aiayn prepare` of several corpora: weights, a held-out set per corpus, tagged synthetic data."""

import json
from collections import Counter

import pytest

from aiayn.cli import main
from aiayn.data.bt_tag import BT_TAG
from aiayn.data.clean import source_key
from aiayn.data.data_dir import DataDir
from aiayn.data.prepare.mixing import CorpusSpec, copies
from aiayn.data.prepare.options import PrepareOptions
from aiayn.data.prepare.pipeline import prepare
from aiayn.data.tokenizer import Tokenizer
from tests.data.conftest import synthetic_pairs, write_tsv

SMALL = dict(valid_size=20, test_size=20, vocab_size=120, progress=False)


def read_lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def exclaimed(pairs):
    """Pairs told apart from synthetic_pairs' by their end: '!' for '.'."""
    return [(s[:-1] + "!", t[:-1] + "!") for s, t in pairs]


def questioned(pairs):
    return [(s[:-1] + "?", t[:-1] + "?") for s, t in pairs]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mix")
    general = write_tsv(tmp / "general.tsv", synthetic_pairs(300, seed=1))
    domain = write_tsv(tmp / "domain.tsv", exclaimed(synthetic_pairs(150, seed=2)))
    bt = write_tsv(tmp / "bt.tsv", questioned(synthetic_pairs(200, seed=3)))
    return tmp, general, domain, bt


@pytest.fixture(scope="module")
def mixed(corpora):
    """general x1, domain x3, bt x1 synthetic: the directory and its report."""
    tmp, general, domain, bt = corpora
    mix = (
        CorpusSpec(str(general)),
        CorpusSpec(str(domain), weight=3),
        CorpusSpec(str(bt), synthetic=True),
    )
    result = prepare(PrepareOptions(out=tmp / "data", corpora=mix, **SMALL))
    return tmp / "data", result


def test_weights_repeat_the_pairs_of_their_corpus(mixed):
    out, result = mixed
    sides = [read_lines(out / f"train.{side}.txt") for side in ("src", "tgt")]
    train = Counter(zip(*sides, strict=True))
    by_end = {".": set(), "!": set(), "?": set()}
    for (_src, tgt), n in train.items():
        by_end[tgt[-1]].add(n)
    assert by_end == {".": {1}, "!": {3}, "?": {1}}
    per_corpus = {c["corpus"].split("/")[-1]: c for c in result["corpora"]}
    assert per_corpus["domain.tsv (TSV)"]["weight"] == 3
    distinct_domain = sum(1 for (_s, t) in train if t.endswith("!"))
    assert per_corpus["domain.tsv (TSV)"]["train_pairs"] == 3 * distinct_domain
    assert result["split"]["sizes"]["train"] == sum(train.values())


def test_each_real_corpus_holds_out_its_own_sets(mixed):
    out, result = mixed
    meta = DataDir.open(out).meta
    assert list(meta.sizes) == ["train", "valid", "test", "valid-domain", "test-domain"]
    assert all(line.endswith(".") for line in read_lines(out / "valid.src.txt"))
    assert all(line.endswith("!") for line in read_lines(out / "valid-domain.src.txt"))
    train = {source_key(s) for s in read_lines(out / "train.src.txt")}
    for split in ("valid", "test", "valid-domain", "test-domain"):
        held = read_lines(out / f"{split}.src.txt")
        assert held and not {source_key(s) for s in held} & train
        assert not any(BT_TAG in line or line.endswith("?") for line in held)  # training only
    text = (out / "report.txt").read_text(encoding="utf-8")
    bt = result["corpora"][2]
    assert bt["read"] == 200 and bt["held_out"] == {}
    assert (
        f"bt.tsv (TSV): 200 / {bt['kept']} / {bt['train_pairs']}, x1, synthetic; none held" in text
    )
    assert "valid-domain" in text


def test_synthetic_sources_and_only_they_begin_with_one_bt_piece(mixed):
    out, _ = mixed
    sources = read_lines(out / "train.src.txt")
    tagged = [s for s in sources if s.startswith(BT_TAG + " ")]
    assert tagged and all(s.endswith("?") for s in tagged)
    assert not any(s.endswith("?") and not s.startswith(BT_TAG) for s in sources)
    tokenizer = Tokenizer(out / "spm.model")
    tag_id = tokenizer.piece_ids([BT_TAG])[0]
    assert tag_id != tokenizer.unk_id
    ids = tokenizer.encode([tagged[0]])[0]
    assert ids.count(tag_id) == 1 and tokenizer.pieces(ids).count(BT_TAG) == 1


def test_a_translation_never_shows_the_tag(mixed):
    out, _ = mixed
    tokenizer = Tokenizer(out / "spm.model")
    tag_id = tokenizer.piece_ids([BT_TAG])[0]
    words = tokenizer.encode(["Der Hund ist klein."])[0]
    ids = [tag_id, *words[:2], tag_id, *words[2:], tag_id]  # an output that emits the tag
    assert tokenizer.decode([ids]) == tokenizer.decode([words]) == ["Der Hund ist klein."]
    assert BT_TAG not in tokenizer.join(tokenizer.pieces(ids))


def test_untagged_back_translation_has_no_tag_piece(corpora):
    tmp, general, _, bt = corpora
    mix = (CorpusSpec(str(general)), CorpusSpec(str(bt), synthetic=True))
    prepare(PrepareOptions(out=tmp / "untagged", corpora=mix, bt_tag=False, **SMALL))
    sources = read_lines(tmp / "untagged" / "train.src.txt")
    assert 190 < sum(s.endswith("?") for s in sources) <= 200  # less duplicates
    assert not any(BT_TAG in s for s in sources)
    tokenizer = Tokenizer(tmp / "untagged" / "spm.model")
    assert tokenizer.piece_ids([BT_TAG])[0] == tokenizer.unk_id


def test_a_fractional_weight_subsamples_the_same_pairs_each_run(corpora):
    tmp, general, domain, _ = corpora
    mix = (CorpusSpec(str(general)), CorpusSpec(str(domain), weight=0.5))
    runs = []
    for name in ("half-a", "half-b"):
        prepare(PrepareOptions(out=tmp / name, corpora=mix, **SMALL))
        runs.append(read_lines(tmp / name / "train.tgt.txt"))
    assert runs[0] == runs[1]
    domain_lines = [t for t in runs[0] if t.endswith("!")]
    assert len(set(domain_lines)) == len(domain_lines)  # none repeated
    assert 0.3 * 130 < len(domain_lines) < 0.7 * 130  # about half of its ~130 training pairs
    draws = [copies(1.5, 1, 0, f"s{i}", "t") for i in range(400)]
    assert set(draws) == {1, 2} and 150 < draws.count(2) < 250


def test_the_cli_mixes_in_the_order_given(corpora, tmp_path):
    _, general, domain, bt = corpora
    argv = ["prepare", "--out", str(tmp_path / "d"), "--corpus", str(general)]
    argv += ["--synthetic", str(bt), "--corpus", str(domain), "--weights", "1,0.5,2"]
    argv += ["--valid-size", "20", "--test-size", "20", "--vocab-size", "120", "--no-progress"]
    assert main(argv) == 0
    report = json.loads((tmp_path / "d" / "report.json").read_text(encoding="utf-8"))
    found = [(c["weight"], c["synthetic"]) for c in report["corpora"]]
    assert found == [(1, False), (0.5, True), (2, False)]
    assert "valid-domain" in report["split"]["sizes"]
