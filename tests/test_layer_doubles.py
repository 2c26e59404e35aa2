"""The course's test doubles (attention_course.layer_doubles) compute what their NumPy twins say, depend on every
argument, and exist for every name attention_course.dependencies.DOUBLES lists."""
import keras
import numpy as np

from attention_course import dependencies, layer_doubles


def test_every_listed_double_exists_and_is_sent_by_name():
    for name, double in dependencies.DOUBLES.items():
        assert getattr(getattr(layer_doubles, double), "__attention_course_helper__", False), name


def test_the_layer_doubles_match_their_numpy_arithmetic_and_use_every_argument():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4, 6)).astype("float32")
    encoded = rng.normal(size=(2, 3, 6)).astype("float32")
    mask = np.array([[1, 1, 1, 0], [1, 0, 0, 0]], dtype=bool)[:, None, :]
    layer = layer_doubles.EncoderLayerDouble(6, 2, 8, dropout_rate=0.25)
    layer(x)
    layer.set_weights([np.arange(6.0)])
    out, weights = layer(x, padding_mask=mask, training=True)
    expected, expected_weights = layer_doubles.expected_encoder_layer(x, mask, np.arange(6.0), 0.25, True)
    assert np.allclose(out, expected, atol=1e-5) and np.allclose(np.asarray(weights)[:, 1], expected_weights)
    assert not np.allclose(layer(x, padding_mask=mask, training=False)[0], out), "training changes the output"
    assert not np.allclose(layer(x, training=True)[0], out), "the mask changes the output"
    ahead = np.tril(np.ones((4, 4), dtype=bool))
    cross_mask = np.array([[1, 1, 0], [1, 1, 1]], dtype=bool)[:, None, :]
    decoder = layer_doubles.DecoderLayerDouble(6, 3, 8, dropout_rate=0.5)
    out, cross = decoder(x, encoded, look_ahead_mask=ahead, padding_mask=cross_mask, training=False)
    expected, expected_cross = layer_doubles.expected_decoder_layer(x, encoded, ahead, cross_mask, 0.0, 0.5, False)
    assert np.allclose(out, expected, atol=1e-5) and np.asarray(cross).shape == (2, 3, 4, 3)
    assert np.allclose(np.asarray(cross)[:, 2], expected_cross)
    ids = np.array([[1, 2, 0], [3, 0, 0]])
    encoder = layer_doubles.EncoderDouble(2, 6, 2, 8, 5, 7, 0, dropout_rate=0.1)
    encoder(ids)
    table = rng.normal(size=(5, 6))
    encoder.embedding.set_weights([table])
    assert np.allclose(encoder(ids, training=True)[0], layer_doubles.expected_encoder(table, ids, 0, 2, 0.1, True),
                       atol=1e-5)
    target = np.array([[1, 4], [2, 2]])
    decoder = layer_doubles.DecoderDouble(3, 6, 2, 8, 5, 7, dropout_rate=0.2)
    decoder(target, encoded)
    decoder.embedding.set_weights([table])
    assert np.allclose(decoder(target, encoded, padding_mask=cross_mask)[0],
                       layer_doubles.expected_decoder(table, target, encoded, cross_mask, 3, 0.2, False), atol=1e-5)
    pooling = layer_doubles.AttentionPoolingDouble(5)
    states = rng.normal(size=(2, 4, 6)).astype("float32")
    real = np.array([[1, 1, 0, 0], [0, 0, 0, 0]], dtype=bool)
    context, pooled_weights = pooling(states, mask=real, return_weights=True)
    expected_context, expected_weights = layer_doubles.expected_pooling(states, real)
    assert np.allclose(context, expected_context, atol=1e-6) and np.allclose(pooled_weights, expected_weights)
    assert np.allclose(np.asarray(pooled_weights)[0, :2], [1 / 3, 2 / 3]) and not np.asarray(pooled_weights)[1].any()
    assert [tuple(w.shape) for w in pooling.get_weights()] == [(6, 5), (5,), (5,)], "the exercise's weights"


def test_the_attention_step_double_builds_into_a_functional_model_and_uses_both_arguments():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(2, 5, 4)).astype("float32")
    s_prev = rng.normal(size=(2, 3)).astype("float32")
    context = np.asarray(layer_doubles.one_step_attention_double(a, s_prev))
    expected = a.mean(axis=1, keepdims=True) + np.tanh(s_prev).mean(-1)[:, None, None]
    assert context.shape == (2, 1, 4) and np.allclose(context, expected, atol=1e-6)
    assert not np.allclose(layer_doubles.one_step_attention_double(a, 2 * s_prev), context), "s_prev matters"
    a_in, s_in = keras.Input((5, 4)), keras.Input((3,))
    model = keras.Model([a_in, s_in], layer_doubles.one_step_attention_double(a_in, s_in))
    assert model.count_params() == 0 and np.allclose(model([a, s_prev]), expected, atol=1e-6)
