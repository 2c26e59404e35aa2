"""Notebook 06's shipped artefacts meet the issue's numbers.

- The pretrained weights (datasets/transformer/) load into the notebook's own Transformer (its code
  cells run by course_build/train_transformer.py) and give >= 99.9% exact match on the 2,000 held-out
  test dates, decoding greedily with the notebook's `translate`, with all eight example dates right.
- The recorded training runs the notebook's comparison table reads are complete and consistent.
- The Transformer's accuracy-by-length curve covers the lengths and test strings of notebooks 01 and 03.
"""
import os

import numpy as np
import pytest

from attention_course.dates import EXAMPLE_DATES

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

EXAMPLES = EXAMPLE_DATES


@pytest.fixture(scope="module")
def notebook():
    from attention_course.shipped_weights import load_shipped_weights
    from attention_course.transformer import WEIGHTS_FILE
    from course_build.train_transformer import notebook_namespace
    nb = notebook_namespace()
    return nb, load_shipped_weights(nb["make_transformer"](compile_model=False), WEIGHTS_FILE)


def test_shipped_weights_reach_99_9_percent_on_test(notebook):
    nb, model = notebook
    predicted = nb["translate"](model, nb["X_test"], nb["START_ID"], nb["Ty"])
    accuracy = float((predicted == nb["Y_test"]).all(axis=1).mean())
    assert len(nb["X_test"]) == 2000
    assert accuracy >= 0.999, f"test exact match {accuracy:.4f} < 0.999"


def test_shipped_weights_translate_the_notebook_examples(notebook):
    nb, model = notebook
    ids = nb["translate"](model, nb["encode_sources"](list(EXAMPLES)), nb["START_ID"], nb["Ty"])
    got = [nb["ids_to_text"](row) for row in ids]
    wrong = {text: out for (text, want), out in zip(EXAMPLES.items(), got) if out != want}
    assert not wrong, f"wrong translations: {wrong}"


def test_attention_maps_are_read_from_the_model(notebook):
    nb, model = notebook
    source = nb["encode_sources"](["Tuesday 09 Oct 1993"])
    encoded, self_weights = model.encoder(source, training=False)
    output = nb["translate"](model, source, nb["START_ID"], nb["Ty"])
    _, cross = model.decoder(nb["shift_right"](output), encoded, padding_mask=(source != nb["PAD_ID"])[:, None, :])
    size = nb["MODEL_SIZE"]
    assert len(self_weights) == len(cross) == size["num_layers"]
    for weights, shape in ((self_weights[0], (1, size["num_heads"], 30, 30)), (cross[0], (1, size["num_heads"], 10, 30))):
        weights = np.asarray(weights)
        assert weights.shape == shape
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
        assert np.abs(weights[..., len("tuesday 09 oct 1993"):]).max() < 1e-6  # the padding gets nothing


def test_training_records_are_complete(notebook):
    from attention_course.training_records import load_training_record
    from attention_course.transformer import seconds_to_reach
    _, model = notebook
    transformer, baseline = load_training_record("transformer"), load_training_record("date_attention")
    assert transformer["parameters"] == model.count_params()
    assert baseline["parameters"] == 52_960
    for record in (transformer, baseline):
        epoch, seconds = seconds_to_reach(record, 0.995)
        assert epoch is not None and seconds > 0, f"{record['model']} never reached 99.5% dev exact match"
        assert record["test_exact_match"] >= 0.999 and record["translate_seconds"] > 0
        times = [row["seconds"] for row in record["history"]]
        assert times == sorted(times)


def test_transformer_length_curve_matches_the_other_curves():
    from attention_course.length_curves import load_length_curve
    transformer, baseline = load_length_curve("transformer"), load_length_curve("encoder_decoder")
    np.testing.assert_array_equal(transformer.lengths, baseline.lengths)
    np.testing.assert_array_equal(transformer.n_examples, baseline.n_examples)
