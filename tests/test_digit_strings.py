"""The digit-reversal task and the accuracy-by-length helpers shared by notebooks 01 and 03."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

from attention_course import digit_strings as ds  # noqa: E402
from attention_course.length_curves import (LengthCurve, accuracy_by_length, load_length_curve,  # noqa: E402
                                            plot_accuracy_by_length, save_length_curve)


def test_pairs_are_seeded_reversals_within_the_length_range():
    pairs = ds.make_pairs(200, seed=5)
    assert pairs == ds.make_pairs(200, seed=5)
    assert all(target == source[::-1] and ds.MIN_LEN <= len(source) <= ds.MAX_LEN for source, target in pairs)
    per_length = ds.make_pairs(2, seed=5, per_length=True)
    assert len(per_length) == 2 * (ds.MAX_LEN - ds.MIN_LEN + 1)


def test_sources_are_left_padded_and_targets_right_padded():
    assert ds.encode_sources(["31"], length=4).tolist() == [[ds.PAD_ID, ds.PAD_ID, 3, 1]]
    assert ds.encode_targets(["13"], length=4).tolist() == [[1, 3, ds.PAD_ID, ds.PAD_ID]]
    assert ds.decode_ids(ds.encode_sources(["90417"])[0]) == "90417"
    assert ds.one_hot(np.array([[0, ds.PAD_ID]])).shape == (1, 2, ds.VOCAB_SIZE)


def test_committed_splits_load_with_the_documented_sizes():
    test = ds.load_arrays("test")
    assert test.X.shape == (3600, ds.TX, ds.VOCAB_SIZE) and test.Y.shape == (3600, ds.TY)
    assert np.bincount(test.lengths)[ds.MIN_LEN:].tolist() == [100] * (ds.MAX_LEN - ds.MIN_LEN + 1)
    assert len(ds.load_split("train")) == 20_000 and len(ds.load_split("dev")) == 1800


def test_accuracy_by_length_counts_whole_strings_and_digits(tmp_path):
    targets = ds.encode_targets(["12", "34", "567"], length=4)
    predicted = targets.copy()
    predicted[1, 0] = 9  # one wrong digit in the second length-2 string
    curve = accuracy_by_length("toy", np.array([2, 2, 3]), predicted, targets)
    assert curve.lengths.tolist() == [2, 3] and curve.n_examples.tolist() == [2, 1]
    assert curve.exact_match.tolist() == [0.5, 1.0] and curve.digit_accuracy.tolist() == [0.75, 1.0]
    path = save_length_curve(curve, tmp_path / "toy.csv")
    assert path.read_text().splitlines()[0] == "length,n_examples,exact_match,digit_accuracy"


def test_shipped_encoder_decoder_curve_falls_with_length():
    curve = load_length_curve("encoder_decoder")
    assert isinstance(curve, LengthCurve) and curve.lengths.tolist() == list(range(ds.MIN_LEN, ds.MAX_LEN + 1))
    assert curve.exact_match[:3].mean() > 0.85 and curve.exact_match[-10:].max() < 0.05
    ax = plot_accuracy_by_length({"no attention": curve, "copy": curve}, metric="digit_accuracy")
    assert ax.get_xlabel() == "input length (digits)" and len(ax.get_lines()) == 2
