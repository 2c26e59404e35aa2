"""attention_course.dropout_patterns: a real Keras Dropout passes; twice, unscaled or NaN outputs fail."""
import numpy as np
import pytest
from keras import layers

from attention_course.dropout_patterns import check_dropout_pattern, keep_patterns

RATE = 0.5


def _layer_norm(v):
    return (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + 1e-6)


@pytest.fixture(scope="module")
def inputs():
    residual = np.random.default_rng(0).normal(size=(4, 10, 6))
    sublayer = np.random.default_rng(1).normal(size=(4, 10, 6))
    expected = [_layer_norm(residual + keep_patterns(6) / (1 - RATE) * sublayer)]  # (64, 4, 10, 6)
    return residual, sublayer, expected


def test_every_pattern_is_tried():
    patterns = keep_patterns(3)[:, 0, 0, :]
    assert patterns.shape == (8, 3)
    assert {tuple(p) for p in patterns} == {(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)}


def test_a_keras_dropout_passes(inputs):
    residual, sublayer, expected = inputs
    dropped = np.asarray(layers.Dropout(RATE)(sublayer.astype("float32"), training=True))
    check_dropout_pattern("one Dropout", _layer_norm(residual + dropped), expected, RATE, hint="")


@pytest.mark.parametrize("mistake", ["twice", "unscaled", "another rate", "nan"])
def test_wrong_dropouts_fail(inputs, mistake):
    residual, sublayer, expected = inputs
    dropout = layers.Dropout(0.1 if mistake == "another rate" else RATE)
    dropped = np.asarray(dropout(sublayer.astype("float32"), training=True))
    if mistake == "twice":
        dropped = np.asarray(dropout(dropped, training=True))
    if mistake == "unscaled":
        dropped = dropped * (1 - RATE)
    got = _layer_norm(residual + dropped)
    if mistake == "nan":
        got[0, 0, 0] = np.nan
    with pytest.raises(AssertionError, match="one Dropout"):
        check_dropout_pattern("one Dropout", got, expected, RATE, hint="")


def test_the_share_dropped_is_checked(inputs):
    residual, sublayer, expected = inputs
    nothing_dropped = _layer_norm(residual + sublayer / (1 - RATE))  # every pattern "all kept": a valid pattern each
    with pytest.raises(AssertionError, match="share of units dropped"):
        check_dropout_pattern("one Dropout", nothing_dropped, expected, RATE, hint="")
