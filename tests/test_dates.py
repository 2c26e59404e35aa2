"""The committed date dataset: reproducible builder, checked loader, the vocabularies the model needs."""
import importlib.util

from attention_course.dates import PAD, UNK, load_dates, normalise
from grader.course import REPO


def test_splits_have_the_documented_sizes_and_do_not_overlap():
    data = load_dates()
    assert (len(data.train), len(data.dev), len(data.test)) == (10_000, 1_000, 2_000)
    train = {normalise(h) for h, _ in data.train}
    assert not train & {normalise(h) for h, _ in data.test}, "test inputs also appear in train"
    assert not train & {normalise(h) for h, _ in data.dev}, "dev inputs also appear in train"


def test_vocabularies_match_the_coursera_model_sizes():
    data = load_dates()
    assert len(data.human_vocab) == 37 and data.human_vocab[UNK] == 35 and data.human_vocab[PAD] == 36
    assert list(data.machine_vocab) == list("-0123456789")
    assert data.inv_machine_vocab[0] == "-" and len(data.inv_machine_vocab) == 11


def test_targets_are_iso_dates_and_inputs_fit_tx():
    import datetime
    data = load_dates()
    for human, iso in data.train + data.dev + data.test:
        datetime.date.fromisoformat(iso)
        assert len(normalise(human)) <= 30, human


def test_builder_reproduces_the_committed_files(tmp_path):
    spec = importlib.util.spec_from_file_location("build_dates", REPO / "datasets" / "build_dates.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    builder.write(builder.build(), tmp_path)
    for split in ("train", "dev", "test"):
        assert (tmp_path / f"{split}.tsv").read_bytes() == (REPO / "datasets" / "dates" / f"{split}.tsv").read_bytes(), (
            f"datasets/build_dates.py no longer reproduces dates/{split}.tsv (Faker or Babel changed?)"
        )
