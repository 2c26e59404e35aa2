"""Wrong and differently written answers for notebook 05 (attention in LSTMs, CNNs, hierarchies, images)."""

ASSIGNMENT = "05_attention_in_models"

_POOL_HEAD = '''
class AttentionPooling(layers.Layer):
    def __init__(self, units=16, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.supports_masking = True

    def build(self, input_shape):
        d = input_shape[-1]
        self.W = self.add_weight(name="W", shape=(d, self.units), initializer="glorot_uniform")
        self.b = self.add_weight(name="b", shape=(self.units,), initializer="zeros")
        self.v = self.add_weight(name="v", shape=(self.units,), initializer="glorot_uniform")

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        return {**super().get_config(), "units": self.units}

    def call(self, h, mask=None, return_weights=False):
'''


def _pool(body):
    return _POOL_HEAD + "\n".join("        " + line if line else "" for line in body.strip("\n").splitlines()) + "\n"


_SCORES = "scores = ops.tensordot(ops.tanh(ops.tensordot(h, self.W, axes=1) + self.b), self.v, axes=1)"
_SAFE_TAIL = '''
exp_scores = ops.exp(scores - ops.max(scores, axis=-1, keepdims=True)) * mask
weights = exp_scores / ops.maximum(ops.sum(exp_scores, axis=-1, keepdims=True), 1e-9)
context = ops.sum(ops.expand_dims(weights, -1) * h, axis=-2)
return (context, weights) if return_weights else context
'''


def _masked(scores_line, mask_line="mask = ops.cast(mask, scores.dtype)"):
    return f'''
{scores_line}
if mask is None:
    mask = ops.ones_like(scores)
{mask_line}
scores = ops.where(mask > 0, scores, ops.full_like(scores, -1e9))
''' + _SAFE_TAIL


_LSTM = '''
def build_lstm_classifier(pooling, vocab_size, n_classes, embed_dim=16, units=16, attention_units=16):
    if pooling not in ("last", "mean", "attention"):
        raise ValueError(pooling)
    tokens = keras.Input(shape=(None,), dtype="int32")
    embedded = layers.Embedding(vocab_size, EMBED_DIM, mask_zero=MASK)(tokens)
    if pooling == LAST:
        pooled = layers.LSTM(units)(embedded)
    else:
        states = layers.LSTM(units, return_sequences=True)(embedded)
        if pooling == MEAN:
            pooled = layers.GlobalAveragePooling1D()(POOLED_INPUT)
        else:
            pooled = AttentionPooling(ATTENTION_UNITS)(POOLED_INPUT)
    return keras.Model(tokens, layers.Dense(n_classes, activation="softmax")(pooled))
'''


def _lstm(mask="True", last='"last"', mean='"mean"', pooled_input="states", embed_dim="embed_dim",
          attention_units="attention_units"):
    return (_LSTM.replace("MASK", mask).replace("LAST", last).replace("MEAN", mean)
            .replace("POOLED_INPUT", pooled_input).replace("EMBED_DIM", embed_dim)
            .replace("ATTENTION_UNITS", attention_units))


_CNN = '''
def build_cnn_attention_classifier(vocab_size, n_classes, pooling="attention", embed_dim=16, filters=16,
                                   kernel_size=3, attention_units=16):
    if pooling not in ("attention", "max"):
        raise ValueError(pooling)
    tokens = keras.Input(shape=(None,), dtype="int32")
    embedded = layers.Embedding(vocab_size, embed_dim)(tokens)
    features = layers.Conv1D(FILTERS, KERNEL_SIZE, padding=PADDING, activation=ACTIVATION)(embedded)
    if pooling == ATTENTION:
        pooled = ATTENTION_LAYER(POOLED_INPUT)
    else:
        pooled = layers.GlobalMaxPooling1D()(features)
    return keras.Model(tokens, layers.Dense(n_classes, activation="softmax")(pooled))
'''


def _cnn(padding='"same"', activation='"relu"', attention='"attention"', layer="AttentionPooling(attention_units)",
         pooled_input="features", filters="filters", kernel_size="kernel_size"):
    return (_CNN.replace("PADDING", padding).replace("ACTIVATION", activation).replace("ATTENTION_LAYER", layer)
            .replace("ATTENTION", attention).replace("POOLED_INPUT", pooled_input).replace("FILTERS", filters)
            .replace("KERNEL_SIZE", kernel_size))


_HAN = '''
def build_han(vocab_size, n_sentences, n_words, n_classes, embed_dim=16, gru_units=8, attention_units=16):
    ids = keras.Input(shape=(n_sentences, n_words), dtype="int32")
    words = layers.Embedding(vocab_size, embed_dim, mask_zero=MASK)(ids)
    word_states = WORD_ENCODER
    sentences, word_weights = AttentionPooling(attention_units, name="word_attention")(WORDS, return_weights=True)
    sentence_mask = SENTENCE_MASK
    sentence_states = SENTENCE_ENCODER
    document, sentence_weights = AttentionPooling(attention_units, name="sentence_attention")(
        sentence_states, mask=sentence_mask, return_weights=True)
    probabilities = layers.Dense(n_classes, activation="softmax")(document)
    return keras.Model(ids, probabilities), keras.Model(ids, OUTPUTS)
'''
_WORD_ENCODER = ('layers.TimeDistributed(layers.Bidirectional(layers.GRU(gru_units, return_sequences=True)), '
                 'name="word_encoder")(words)')
_SENTENCE_ENCODER = ('layers.Bidirectional(layers.GRU(gru_units, return_sequences=True), name="sentence_encoder")('
                     'sentences, mask=sentence_mask)')


def _han(mask="True", words="word_states", sentence_mask="ops.any(ops.not_equal(ids, 0), axis=-1)",
         outputs="[word_weights, sentence_weights]", word_encoder=_WORD_ENCODER, sentence_encoder=_SENTENCE_ENCODER):
    return (_HAN.replace("SENTENCE_MASK", sentence_mask).replace("SENTENCE_ENCODER", sentence_encoder)
            .replace("WORD_ENCODER", word_encoder).replace("MASK", mask).replace("WORDS", words)
            .replace("OUTPUTS", outputs))


_SPATIAL = '''
def spatial_attention(features, query, W_f, W_q, v):
    projected_query = ops.expand_dims(ops.expand_dims(QUERY_TERM, -2), -2)
    scores = ops.tensordot(ACT(ops.tensordot(features, W_f, axes=1) + projected_query), v, axes=1)
    grid = ops.shape(scores)
SOFTMAX
    context = ops.sum(ops.expand_dims(weights, -1) * features, axis=(-3, -2))
    return context, weights
'''
_JOINT_SOFTMAX = '''    flat = ops.reshape(scores, (-1, grid[-2] * grid[-1]))
    weights = ops.reshape(ops.softmax(flat, axis=-1), grid)'''


def _spatial(query_term="ops.tensordot(query, W_q, axes=1)", act="ops.tanh", softmax=_JOINT_SOFTMAX):
    return _SPATIAL.replace("QUERY_TERM", query_term).replace("ACT", act).replace("SOFTMAX", softmax)


WRONG = {
    "AttentionPooling": {
        "softmax_over_feature_axis_of_T_by_1": _pool(f'''
{_SCORES}
weights = ops.squeeze(ops.softmax(ops.expand_dims(scores, -1), axis=-1), -1)  # softmax over a size-1 axis: all ones
if mask is not None:
    weights = weights * ops.cast(mask, weights.dtype)
context = ops.sum(ops.expand_dims(weights, -1) * h, axis=-2)
return (context, weights) if return_weights else context
'''),
        "softmax_over_batch": _pool(f'''
{_SCORES}
if mask is None:
    mask = ops.ones_like(scores)
mask = ops.cast(mask, scores.dtype)
scores = ops.where(mask > 0, scores, ops.full_like(scores, -1e9))
exp_scores = ops.exp(scores - ops.max(scores, axis=0, keepdims=True)) * mask
weights = exp_scores / ops.maximum(ops.sum(exp_scores, axis=0, keepdims=True), 1e-9)
context = ops.sum(ops.expand_dims(weights, -1) * h, axis=-2)
return (context, weights) if return_weights else context
'''),
        "mask_ignored": _pool(_masked(_SCORES, "mask = ops.ones_like(scores)")),
        "mask_inverted": _pool(_masked(_SCORES, "mask = 1.0 - ops.cast(mask, scores.dtype)")),
        "no_bias": _pool(_masked("scores = ops.tensordot(ops.tanh(ops.tensordot(h, self.W, axes=1)), self.v, axes=1)")),
        "no_tanh": _pool(_masked("scores = ops.tensordot(ops.tensordot(h, self.W, axes=1) + self.b, self.v, axes=1)")),
        "minus_inf_mask_gives_nan": _pool(f'''
{_SCORES}
if mask is not None:
    scores = ops.where(ops.cast(mask, "bool"), scores, ops.full_like(scores, -float("inf")))
weights = ops.softmax(scores, axis=-1)
context = ops.sum(ops.expand_dims(weights, -1) * h, axis=-2)
return (context, weights) if return_weights else context
'''),
        "fully_masked_row_uniform": _pool(f'''
{_SCORES}
if mask is not None:
    scores = scores + (1.0 - ops.cast(mask, scores.dtype)) * -1e9
weights = ops.softmax(scores, axis=-1)
context = ops.sum(ops.expand_dims(weights, -1) * h, axis=-2)
return (context, weights) if return_weights else context
'''),
        "no_max_shift_overflows": _pool(f'''
{_SCORES}
if mask is None:
    mask = ops.ones_like(scores)
mask = ops.cast(mask, scores.dtype)
exp_scores = ops.exp(scores) * mask
weights = exp_scores / ops.maximum(ops.sum(exp_scores, axis=-1, keepdims=True), 1e-9)
context = ops.sum(ops.expand_dims(weights, -1) * h, axis=-2)
return (context, weights) if return_weights else context
'''),
    },
    "build_lstm_classifier": {
        "mask_zero_missing": _lstm(mask="False"),
        "embed_dim_ignored": _lstm(embed_dim="16"),
        "attention_units_ignored": _lstm(attention_units=""),
        "attention_pools_embeddings": _lstm(pooled_input="embedded"),
        "mean_pools_embeddings": _lstm(pooled_input="embedded").replace(
            "AttentionPooling(attention_units)(embedded)", "AttentionPooling(attention_units)(states)"),
        "last_and_mean_swapped": _lstm(last='"mean"', mean='"last"'),
    },
    "build_cnn_attention_classifier": {
        "attention_before_conv": _cnn(pooled_input="embedded"),
        "valid_padding": _cnn(padding='"valid"'),
        "kernel_size_ignored": _cnn(kernel_size="3"),
        "filters_ignored": _cnn(filters="16"),
        "attention_units_ignored": _cnn(layer="AttentionPooling()"),
        "no_relu": _cnn(activation="None"),
        "max_and_attention_swapped": _cnn(attention='"max"'),
        "average_instead_of_attention": _cnn(layer="layers.GlobalAveragePooling1D()"),
    },
    "build_han": {
        "mask_zero_missing": _han(mask="False"),
        "no_sentence_mask": _han(sentence_mask="None"),
        "words_and_sentences_swapped": _han(words="ops.transpose(word_states, (0, 2, 1, 3))"),
        "no_word_encoder": _han(word_encoder="words"),
        "no_sentence_encoder": _han(sentence_encoder="sentences"),
        "unidirectional_word_encoder": _han(word_encoder='layers.TimeDistributed(layers.GRU(2 * gru_units, '
                                                         'return_sequences=True), name="word_encoder")(words)'),
        "sentence_encoder_without_mask": _han(sentence_encoder=_SENTENCE_ENCODER.replace(", mask=sentence_mask", "")),
        "gru_units_from_embed_dim": _han(word_encoder=_WORD_ENCODER.replace("GRU(gru_units", "GRU(embed_dim"),
                                         sentence_encoder=_SENTENCE_ENCODER.replace("GRU(gru_units", "GRU(embed_dim")),
        "encoders_return_last_state_only": _han(
            sentence_encoder='layers.RepeatVector(n_sentences)(layers.Bidirectional(layers.GRU(gru_units), '
                             'name="sentence_encoder")(sentences, mask=sentence_mask))'),
        "weights_outputs_swapped": _han(outputs="[sentence_weights, word_weights]"),
    },
    "spatial_attention": {
        "softmax_per_row": _spatial(softmax="    weights = ops.softmax(scores, axis=-1)"),
        "query_ignored": _spatial(query_term="ops.zeros_like(ops.tensordot(query, W_q, axes=1))"),
        "no_tanh": _spatial(act=""),
        "grid_axes_swapped": _spatial(softmax='''    flat = ops.reshape(scores, (-1, grid[-2] * grid[-1]))
    weights = ops.reshape(ops.softmax(flat, axis=-1), (-1, grid[-1], grid[-2]))'''),
        "no_max_shift_overflows": _spatial(softmax='''    flat = ops.exp(ops.reshape(scores, (-1, grid[-2] * grid[-1])))
    weights = ops.reshape(flat / ops.sum(flat, axis=-1, keepdims=True), grid)'''),
    },
}

CORRECT = {
    "AttentionPooling": {
        "einsum": _pool('''
u = ops.tanh(ops.einsum("...td,da->...ta", h, self.W) + self.b)
scores = ops.einsum("...ta,a->...t", u, self.v)
valid = ops.ones_like(scores) if mask is None else ops.cast(mask, scores.dtype)
shifted = scores - ops.max(ops.where(valid > 0, scores, -1e9 * ops.ones_like(scores)), axis=-1, keepdims=True)
e = ops.exp(ops.minimum(shifted, 0.0)) * valid
weights = ops.divide_no_nan(e, ops.sum(e, axis=-1, keepdims=True))
context = ops.einsum("...t,...td->...d", weights, h)
if return_weights:
    return context, weights
return context
'''),
        "tensorflow_softmax_then_renormalise": _pool('''
import tensorflow as tf
scores = tf.reduce_sum(tf.tanh(tf.tensordot(h, self.W, axes=1) + self.b) * self.v, axis=-1)
valid = tf.ones_like(scores) if mask is None else tf.cast(mask, scores.dtype)
weights = tf.nn.softmax(scores + (valid - 1.0) * 1e9, axis=-1) * valid
weights = tf.math.divide_no_nan(weights, tf.reduce_sum(weights, axis=-1, keepdims=True))
context = tf.reduce_sum(weights[..., None] * h, axis=-2)
return (context, weights) if return_weights else context
'''),
    },
    "build_lstm_classifier": {
        "sequential": '''
def build_lstm_classifier(pooling, vocab_size, n_classes, embed_dim=16, units=16, attention_units=16):
    poolers = {"last": [], "mean": [layers.GlobalAveragePooling1D()], "attention": [AttentionPooling(attention_units)]}
    if pooling not in poolers:
        raise ValueError(f"unknown pooling {pooling}")
    return keras.Sequential([keras.Input(shape=(None,), dtype="int32"),
                             layers.Embedding(vocab_size, embed_dim, mask_zero=True),
                             layers.LSTM(units, return_sequences=pooling != "last"),
                             *poolers[pooling],
                             layers.Dense(n_classes, activation="softmax")])
''',
    },
    "build_cnn_attention_classifier": {
        "sequential_separate_relu": '''
def build_cnn_attention_classifier(vocab_size, n_classes, pooling="attention", embed_dim=16, filters=16,
                                   kernel_size=3, attention_units=16):
    if pooling == "attention":
        pool = AttentionPooling(attention_units)
    elif pooling == "max":
        pool = layers.GlobalMaxPooling1D()
    else:
        raise ValueError(pooling)
    return keras.Sequential([keras.Input(shape=(None,), dtype="int32"), layers.Embedding(vocab_size, embed_dim),
                             layers.Conv1D(filters, kernel_size, padding="same"), layers.Activation("relu"),
                             pool, layers.Dense(n_classes, activation="softmax")])
''',
    },
    "build_han": {
        "explicit_masks": '''
def build_han(vocab_size, n_sentences, n_words, n_classes, embed_dim=16, gru_units=8, attention_units=16):
    ids = keras.Input(shape=(n_sentences, n_words), dtype="int32")
    word_mask = ops.not_equal(ids, 0)
    words = layers.Embedding(vocab_size, embed_dim, mask_zero=True)(ids)
    encoder = layers.TimeDistributed(layers.Bidirectional(layers.GRU(gru_units, return_sequences=True)),
                                     name="word_encoder")
    word_pool = AttentionPooling(attention_units, name="word_attention")
    sentence_pool = AttentionPooling(attention_units, name="sentence_attention")
    sentences, alpha = word_pool(encoder(words, mask=word_mask), mask=word_mask, return_weights=True)
    sentence_mask = ops.max(ops.cast(word_mask, "int32"), axis=-1) > 0
    states = layers.Bidirectional(layers.GRU(gru_units, return_sequences=True), name="sentence_encoder")(
        sentences, mask=sentence_mask)
    document, beta = sentence_pool(states, mask=sentence_mask, return_weights=True)
    out = layers.Dense(n_classes, activation="softmax")(document)
    return keras.Model(ids, out), keras.Model(ids, [alpha, beta])
''',
        "sentences_flattened_into_the_batch": '''
def build_han(vocab_size, n_sentences, n_words, n_classes, embed_dim=16, gru_units=8, attention_units=16):
    ids = keras.Input(shape=(n_sentences, n_words), dtype="int32")
    flat_ids = ops.reshape(ids, (-1, n_words))  # (batch * S, W): each sentence on its own
    words = layers.Embedding(vocab_size, embed_dim, mask_zero=True)(flat_ids)
    states = layers.Bidirectional(layers.GRU(gru_units, return_sequences=True), name="word_encoder")(words)
    sentences, alpha = AttentionPooling(attention_units, name="word_attention")(states, return_weights=True)
    sentences = ops.reshape(sentences, (-1, n_sentences, 2 * gru_units))
    alpha = ops.reshape(alpha, (-1, n_sentences, n_words))
    sentence_mask = ops.any(ops.not_equal(ids, 0), axis=-1)
    sentence_states = layers.Bidirectional(layers.GRU(gru_units, return_sequences=True), name="sentence_encoder")(
        sentences, mask=sentence_mask)
    document, beta = AttentionPooling(attention_units, name="sentence_attention")(
        sentence_states, mask=sentence_mask, return_weights=True)
    return keras.Model(ids, layers.Dense(n_classes, activation="softmax")(document)), keras.Model(ids, [alpha, beta])
''',
    },
    "spatial_attention": {
        "numpy": '''
def spatial_attention(features, query, W_f, W_q, v):
    features, query = np.asarray(features, dtype=float), np.asarray(query, dtype=float)
    scores = np.tanh(features @ np.asarray(W_f) + (query @ np.asarray(W_q))[..., None, None, :]) @ np.asarray(v)
    flat = scores.reshape(scores.shape[:-2] + (-1,))
    flat = np.exp(flat - flat.max(axis=-1, keepdims=True))
    weights = (flat / flat.sum(axis=-1, keepdims=True)).reshape(scores.shape)
    return np.einsum("...hw,...hwc->...c", weights, features), weights
''',
        "tensorflow_einsum": '''
def spatial_attention(features, query, W_f, W_q, v):
    import tensorflow as tf
    features = tf.convert_to_tensor(features, tf.float32)
    query = tf.convert_to_tensor(query, tf.float32)
    keys = tf.einsum("...hwc,ca->...hwa", features, tf.convert_to_tensor(W_f, tf.float32))
    asked = tf.einsum("...q,qa->...a", query, tf.convert_to_tensor(W_q, tf.float32))[..., None, None, :]
    scores = tf.einsum("...hwa,a->...hw", tf.tanh(keys + asked), tf.convert_to_tensor(v, tf.float32))
    shape = tf.shape(scores)
    flat = tf.reshape(scores, tf.concat([shape[:-2], [-1]], axis=0))
    weights = tf.reshape(tf.nn.softmax(flat, axis=-1), shape)
    return tf.einsum("...hw,...hwc->...c", weights, features), weights
''',
    },
}

# Models whose output layer keeps zero weights whatever the test sets (uniform probabilities, the text ignored),
# and models that ignore their input: tests whose expected values came from the model's own layers, or only from
# properties (sums to 1, padding changes nothing), would accept them.
from grader.authoring.assignment_answers import answer_editor  # noqa: E402

_edit = answer_editor(ASSIGNMENT)
_FROZEN_DENSE = '''
class _FrozenDense(layers.Dense):
    def set_weights(self, weights):
        pass
'''
_FROZEN_MODEL = '''
class _FrozenModel(keras.Model):
    def set_weights(self, weights):
        pass
'''
WRONG["build_lstm_classifier"].update({
    "output layer keeps zero weights (set_weights does nothing)": _FROZEN_DENSE + _edit(
        "build_lstm_classifier", 'layers.Dense(n_classes, activation="softmax")',
        '_FrozenDense(n_classes, activation="softmax", kernel_initializer="zeros")'),
    "the text never reaches the classifier": _edit("build_lstm_classifier", "(pooled)  # (batch, n_classes)",
                                                   "(pooled * 0.0)  # (batch, n_classes)"),
})
WRONG["build_cnn_attention_classifier"].update({
    "output layer keeps zero weights (set_weights does nothing)": _FROZEN_DENSE + _edit(
        "build_cnn_attention_classifier", 'layers.Dense(n_classes, activation="softmax")',
        '_FrozenDense(n_classes, activation="softmax", kernel_initializer="zeros")'),
    "the text never reaches the classifier": _edit("build_cnn_attention_classifier", "(pooled))", "(pooled * 0.0))"),
})
WRONG["build_han"].update({
    "output layer keeps zero weights, the model ignores set_weights": _FROZEN_DENSE + _FROZEN_MODEL + _edit(
        "build_han", 'layers.Dense(n_classes, activation="softmax")',
        '_FrozenDense(n_classes, activation="softmax", kernel_initializer="zeros")',
        "return keras.Model(ids, probabilities)", "return _FrozenModel(ids, probabilities)"),
})
