"""Notebook 04's `multi_head_attention` equals `keras.layers.MultiHeadAttention` given the same weights.

The notebook shows the equality on "Thinking Machines", but skips that cell while grading so that
autograding never pays TensorFlow's start-up; its hidden tests compare students with a loop reference
instead. This test checks, to 1e-5, that the reference solution (and so that loop reference, which
the mutant tests hold to the same numbers) matches the real Keras layer, at several sizes.
"""
import math
import os

import nbformat
import numpy as np
import pytest

from grader.course import SOLUTIONS, nbgrader_meta

ASSIGNMENT = "04_self_attention"
ANSWERS = ("project_qkv", "scaled_dot_product_attention", "self_attention", "multi_head_attention")


@pytest.fixture(scope="module")
def solution():
    """The source notebook's answer cells, run in a fresh namespace."""
    notebook = nbformat.read(SOLUTIONS / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    namespace = {"np": np, "math": math}
    for cell in notebook.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution") and meta.get("grade_id") in ANSWERS:
            exec(cell.source, namespace)
    return namespace


@pytest.fixture(scope="module")
def keras():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    return keras


def keras_multi_head(keras, X, W_Q, W_K, W_V, W_O):
    heads, d_model, d_k = W_Q.shape
    layer = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=d_k, value_dim=W_V.shape[-1],
                                            output_shape=W_O.shape[1], use_bias=False)
    x = X.astype("float32")
    layer(x, x)  # builds the weights
    layer.set_weights([W.transpose(1, 0, 2) for W in (W_Q, W_K, W_V)] + [W_O.reshape(heads, W_V.shape[-1], -1)])
    output, weights = layer(x, x, return_attention_scores=True)
    return np.asarray(output), np.asarray(weights)


def thinking_machines():
    from attention_course.thinking_machines import load_thinking_machines
    tm = load_thinking_machines()
    return tm.X[None], tm.heads_W_Q, tm.heads_W_K, tm.heads_W_V, tm.W_O


def random_case(seed, batch, T, d_model, heads, d_k, d_v):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(batch, T, d_model)),
            rng.normal(scale=d_model ** -0.5, size=(heads, d_model, d_k)),
            rng.normal(scale=d_model ** -0.5, size=(heads, d_model, d_k)),
            rng.normal(scale=d_model ** -0.5, size=(heads, d_model, d_v)),
            rng.normal(scale=(heads * d_v) ** -0.5, size=(heads * d_v, d_model)))


CASES = {
    "thinking_machines_8_heads": thinking_machines,
    "batch2_T6_d12_H3_dk4_dv5": lambda: random_case(1, 2, 6, 12, 3, 4, 5),
    "batch3_T1_d8_H2_dk4_dv4": lambda: random_case(2, 3, 1, 8, 2, 4, 4),
    "batch1_T9_d16_H4_dk3_dv6": lambda: random_case(3, 1, 9, 16, 4, 3, 6),
}


@pytest.mark.filterwarnings("ignore:You are using a softmax over axis")  # Keras warns when T = 1
@pytest.mark.parametrize("case", CASES)
def test_multi_head_attention_equals_keras(solution, keras, case):
    X, W_Q, W_K, W_V, W_O = CASES[case]()
    ours_out, ours_weights = solution["multi_head_attention"](X, W_Q, W_K, W_V, W_O)
    keras_out, keras_weights = keras_multi_head(keras, X, W_Q, W_K, W_V, W_O)
    np.testing.assert_allclose(ours_weights, keras_weights, atol=1e-5, rtol=0,
                               err_msg=f"{case}: attention weights differ from Keras")
    np.testing.assert_allclose(ours_out, keras_out, atol=1e-5, rtol=0, err_msg=f"{case}: output differs from Keras")
