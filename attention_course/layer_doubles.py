"""Test doubles: layers with an exercise's interface and plain, known arithmetic, none of its answer.

A hidden test of an exercise that builds an earlier exercise's layer (notebook 06's `Encoder` builds
`EncoderLayer`s, notebook 05's classifiers build `AttentionPooling`) swaps that class for its double
while the model is built (`attention_course.kernel_side.student_globals`), so the later exercise is
graded on what it adds, whatever the earlier layer does. Each double takes the constructor and call
arguments of the layer it stands for, and every argument a later exercise must pass on changes its
output (the masks, `training`, the rate, num_layers, num_heads, the sizes of its weights), so a later
exercise that drops one of them still fails:

- attention is uniform over the keys the mask allows (zero on a row that allows none);
- `training=True` adds 1 to every output, and `dropout_rate` adds the rate;
- each layer holds one trainable `shift` (d_model,), added to its output, so the tests can tell the
  layers apart and their order;
- `AttentionPoolingDouble` keeps the weights `W`, `b`, `v` of the exercise and pools by a weighted
  mean over the real steps, step t weighing t + 1 (so it differs from a plain mean);
- `one_step_attention_double` (notebook 03's attention step, a function of Keras ops, so it builds into
  a functional model as the exercise does) has no weights: the mean of the encoder states plus the
  mean of tanh(s_prev), so a model that feeds it another state than the current s gives other outputs.

The arithmetic of each double is written out in NumPy in `expected_*` below, for the tests.
"""
import numpy as np
from keras import layers, ops

_helper = "__attention_course_helper__"  # the grader sends these classes to the kernel by name


def _uniform(mask, batch: int, rows: int, columns: int, dtype):
    """Weights (batch, rows, columns): uniform over the allowed columns of each row (mask None: all)."""
    allowed = ops.ones((batch, rows, columns), dtype) if mask is None else \
        ops.broadcast_to(ops.cast(mask, dtype), (batch, rows, columns))
    return allowed / ops.maximum(ops.sum(allowed, axis=-1, keepdims=True), 1.0)


def _flag(training) -> float:
    return 1.0 if training else 0.0


class EncoderLayerDouble(layers.Layer):
    """EncoderLayer(d_model, num_heads, d_ff, dropout_rate); call(x, padding_mask=None, training=False)
    -> (0.5 x + A x + shift + rate + [training], weights (batch, num_heads, T, T)), A uniform over the mask."""

    def __init__(self, d_model, num_heads, d_ff, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.num_heads, self.rate = int(num_heads), float(dropout_rate)
        self.shift = self.add_weight(name="shift", shape=(int(d_model),), initializer="zeros")

    def call(self, x, padding_mask=None, training=False):
        batch, steps = ops.shape(x)[0], ops.shape(x)[1]
        weights = _uniform(padding_mask, batch, steps, steps, x.dtype)  # (batch, T, T)
        out = 0.5 * x + ops.matmul(weights, x) + self.shift + self.rate + _flag(training)
        return out, ops.repeat(ops.expand_dims(weights, 1), self.num_heads, axis=1)


class DecoderLayerDouble(layers.Layer):
    """DecoderLayer(d_model, num_heads, d_ff, dropout_rate);
    call(y, encoded, look_ahead_mask=None, padding_mask=None, training=False)
    -> (0.5 y + A_self y + A_cross encoded + shift + rate + [training], cross weights (batch, heads, Ty, Tx))."""

    def __init__(self, d_model, num_heads, d_ff, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.num_heads, self.rate = int(num_heads), float(dropout_rate)
        self.shift = self.add_weight(name="shift", shape=(int(d_model),), initializer="zeros")

    def call(self, y, encoded, look_ahead_mask=None, padding_mask=None, training=False):
        batch, ty, tx = ops.shape(y)[0], ops.shape(y)[1], ops.shape(encoded)[1]
        own = _uniform(look_ahead_mask, batch, ty, ty, y.dtype)  # (batch, Ty, Ty)
        cross = _uniform(padding_mask, batch, ty, tx, y.dtype)  # (batch, Ty, Tx)
        out = 0.5 * y + ops.matmul(own, y) + ops.matmul(cross, encoded) + self.shift + self.rate + _flag(training)
        return out, ops.repeat(ops.expand_dims(cross, 1), self.num_heads, axis=1)


class EncoderDouble(layers.Layer):
    """Encoder(num_layers, d_model, num_heads, d_ff, vocab_size, max_len, pad_id, dropout_rate);
    call(source_ids, training=False) -> (embedding[ids] + A embedding[ids] + num_layers + rate + [training],
    num_layers weights (batch, num_heads, T, T)), A uniform over the tokens that are not pad_id."""

    def __init__(self, num_layers, d_model, num_heads, d_ff, vocab_size, max_len, pad_id, dropout_rate=0.1,
                 **kwargs):
        super().__init__(**kwargs)
        self.num_layers, self.num_heads, self.pad_id = int(num_layers), int(num_heads), pad_id
        self.rate = float(dropout_rate)
        self.embedding = layers.Embedding(int(vocab_size), int(d_model))

    def call(self, source_ids, training=False):
        x = self.embedding(source_ids)  # (batch, T, d_model)
        batch, steps = ops.shape(x)[0], ops.shape(x)[1]
        weights = _uniform(ops.expand_dims(ops.not_equal(source_ids, self.pad_id), 1), batch, steps, steps, x.dtype)
        out = x + ops.matmul(weights, x) + self.num_layers + self.rate + _flag(training)
        maps = ops.repeat(ops.expand_dims(weights, 1), self.num_heads, axis=1)
        return out, [maps] * self.num_layers


class DecoderDouble(layers.Layer):
    """Decoder(num_layers, d_model, num_heads, d_ff, vocab_size, max_len, dropout_rate);
    call(target_ids, encoded, padding_mask=None, training=False) -> (embedding[ids] + A_cross encoded
    + num_layers + rate + [training], num_layers cross weights (batch, heads, Ty, Tx))."""

    def __init__(self, num_layers, d_model, num_heads, d_ff, vocab_size, max_len, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.num_layers, self.num_heads, self.rate = int(num_layers), int(num_heads), float(dropout_rate)
        self.embedding = layers.Embedding(int(vocab_size), int(d_model))

    def call(self, target_ids, encoded, padding_mask=None, training=False):
        y = self.embedding(target_ids)  # (batch, Ty, d_model)
        batch, ty, tx = ops.shape(y)[0], ops.shape(y)[1], ops.shape(encoded)[1]
        cross = _uniform(padding_mask, batch, ty, tx, y.dtype)  # (batch, Ty, Tx)
        out = y + ops.matmul(cross, encoded) + self.num_layers + self.rate + _flag(training)
        maps = ops.repeat(ops.expand_dims(cross, 1), self.num_heads, axis=1)
        return out, [maps] * self.num_layers


class AttentionPoolingDouble(layers.Layer):
    """AttentionPooling(units): the exercise's weights W (d, units), b (units,), v (units,), but pooling by a mean
    over the real steps in which step t weighs t + 1; call(h, mask=None, return_weights=False) -> context (..., d)
    [, weights (..., T)]."""

    def __init__(self, units=16, **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)
        self.supports_masking = True

    def build(self, input_shape):
        d = int(input_shape[-1])
        self.W = self.add_weight(name="W", shape=(d, self.units), initializer="zeros")
        self.b = self.add_weight(name="b", shape=(self.units,), initializer="zeros")
        self.v = self.add_weight(name="v", shape=(self.units,), initializer="zeros")

    def compute_mask(self, inputs, mask=None):
        return None

    def call(self, h, mask=None, return_weights=False):
        real = ops.ones(ops.shape(h)[:-1], h.dtype) if mask is None else ops.cast(mask, h.dtype)  # (..., T)
        real = real * (ops.cast(ops.arange(ops.shape(h)[-2]), h.dtype) + 1.0)
        weights = real / ops.maximum(ops.sum(real, axis=-1, keepdims=True), 1.0)
        context = ops.sum(ops.expand_dims(weights, -1) * h, axis=-2)  # (..., d)
        return (context, weights) if return_weights else context


def one_step_attention_double(a, s_prev):
    """one_step_attention(a (m, Tx, 2 n_a), s_prev (m, n_s)) -> context (m, 1, 2 n_a):
    mean over Tx of a, plus the mean of tanh(s_prev) (one number per example)."""
    query = ops.mean(ops.tanh(s_prev), axis=-1)  # (m,)
    return ops.mean(a, axis=1, keepdims=True) + ops.expand_dims(ops.expand_dims(query, -1), -1)  # (m, 1, 2 n_a)


for _double in (EncoderLayerDouble, DecoderLayerDouble, EncoderDouble, DecoderDouble, AttentionPoolingDouble,
                one_step_attention_double):
    setattr(_double, _helper, True)


# -- the same arithmetic in NumPy, for the tests' expected values ---------------------------------------------
def uniform_weights(mask, batch: int, rows: int, columns: int) -> np.ndarray:
    allowed = np.ones((batch, rows, columns)) if mask is None else \
        np.broadcast_to(np.asarray(mask, dtype=float), (batch, rows, columns))
    return allowed / np.maximum(allowed.sum(-1, keepdims=True), 1.0)


def expected_encoder_layer(x, padding_mask, shift, rate, training):
    weights = uniform_weights(padding_mask, x.shape[0], x.shape[1], x.shape[1])
    return 0.5 * x + weights @ x + shift + rate + _flag(training), weights


def expected_decoder_layer(y, encoded, look_ahead_mask, padding_mask, shift, rate, training):
    own = uniform_weights(look_ahead_mask, y.shape[0], y.shape[1], y.shape[1])
    cross = uniform_weights(padding_mask, y.shape[0], y.shape[1], encoded.shape[1])
    return 0.5 * y + own @ y + cross @ encoded + shift + rate + _flag(training), cross


def expected_pooling(h, mask):
    real = np.ones(h.shape[:-1]) if mask is None else np.asarray(mask, dtype=float)
    real = real * (np.arange(h.shape[-2]) + 1.0)
    weights = real / np.maximum(real.sum(-1, keepdims=True), 1.0)
    return (weights[..., None] * h).sum(-2), weights


def expected_encoder(table, ids, pad_id, num_layers, rate, training):
    x = np.asarray(table)[ids]
    weights = uniform_weights((np.asarray(ids) != pad_id)[:, None, :], x.shape[0], x.shape[1], x.shape[1])
    return x + weights @ x + num_layers + rate + _flag(training)


def expected_decoder(table, ids, encoded, padding_mask, num_layers, rate, training):
    y = np.asarray(table)[ids]
    cross = uniform_weights(padding_mask, y.shape[0], y.shape[1], encoded.shape[1])
    return y + cross @ encoded + num_layers + rate + _flag(training)
