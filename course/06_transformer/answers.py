"""Wrong and differently written answers for notebook 06 (the Transformer on the dates).

Each mutant is the notebook's own answer with one edit (`_edit`), so the mutants follow the notebook;
an edit that no longer applies fails loudly instead of silently testing the right answer.
"""
from grader.authoring.assignment_answers import answer_editor

ASSIGNMENT = "06_transformer"
_edit = answer_editor(ASSIGNMENT)


_ENC_CALL = '''
        attention, weights = self.mha(x, x, x, attention_mask=padding_mask, return_attention_scores=True,
                                      training=training)  # (batch, T, d_model), (batch, heads, T, T)
        h = self.layernorm1(x + self.dropout1(attention, training=training))  # residual, then LayerNorm
        z = self.layernorm2(h + self.dropout2(self.ffn(h), training=training))  # (batch, T, d_model)
        return z, weights
'''


def _enc_call(body):
    return _edit("EncoderLayer", _ENC_CALL.strip("\n"), body.strip("\n"))


_DEC_CALL = '''
        self_attention = self.mha1(y, y, y, attention_mask=look_ahead_mask, training=training)  # (batch, Ty, d_model)
        a = self.layernorm1(y + self.dropout1(self_attention, training=training))
        cross, cross_weights = self.mha2(a, encoded, encoded, attention_mask=padding_mask, return_attention_scores=True,
                                         training=training)  # (batch, Ty, d_model), (batch, heads, Ty, Tx)
        b = self.layernorm2(a + self.dropout2(cross, training=training))
        z = self.layernorm3(b + self.dropout3(self.ffn(b), training=training))  # (batch, Ty, d_model)
        return z, cross_weights
'''


def _dec_call(body):
    return _edit("DecoderLayer", _DEC_CALL.strip("\n"), body.strip("\n"))


# Hostile sublayers: set_weights does nothing and get_weights reports REPORT, while the true weights stay what the
# initialisers made (zeros here). A test that builds its expected values from get_weights (or from the sublayers'
# outputs, or from the reported epsilon) would accept whatever such a layer returns.
_LIARS = """
class _Liar:
    REPORT = 0.0

    def set_weights(self, weights):
        pass

    def get_weights(self):
        return [np.full(np.shape(w), self.REPORT) for w in super().get_weights()]


class _LyingMHA(_Liar, layers.MultiHeadAttention):
    pass


class _LyingNorm(_Liar, layers.LayerNormalization):
    pass


class _LyingSequential(_Liar, keras.Sequential):
    pass


def _lying_sublayers(layer, d_model, num_heads, d_ff, report, attentions, norms):
    _Liar.REPORT = report
    layer.set_weights = lambda weights: None  # the layer as a whole ignores set_weights too
    layer.lies = True
    for name in attentions:
        setattr(layer, name, _LyingMHA(num_heads=num_heads, key_dim=d_model // num_heads, kernel_initializer="zeros"))
    layer.ffn = _LyingSequential([layers.Dense(d_ff, activation="relu", kernel_initializer="zeros"),
                                  layers.Dense(d_model, kernel_initializer="zeros")])
    for name in norms:
        setattr(layer, name, _LyingNorm(epsilon=1e-6, gamma_initializer="zeros"))
"""


def _lying_encoder_layer(report, outputs=""):
    """The notebook's EncoderLayer whose sublayers lie when dropout_rate is 0 (the tests' random-weight layers);
    `outputs` rewrites (z, weights) before they are returned."""
    code = _edit("EncoderLayer", "self.dropout2 = layers.Dropout(dropout_rate)",
                 "self.dropout2 = layers.Dropout(dropout_rate)\n"
                 "        if dropout_rate == 0:\n"
                 f"            _lying_sublayers(self, d_model, num_heads, d_ff, {report}, ['mha'], ['layernorm1', 'layernorm2'])",
                 "return z, weights", outputs + "return z, weights")
    return _LIARS + code


def _lying_decoder_layer(report, outputs=""):
    code = _edit("DecoderLayer", "self.dropout3 = layers.Dropout(dropout_rate)",
                 "self.dropout3 = layers.Dropout(dropout_rate)\n"
                 "        if dropout_rate == 0:\n"
                 f"            _lying_sublayers(self, d_model, num_heads, d_ff, {report}, ['mha1', 'mha2'],\n"
                 "                             ['layernorm1', 'layernorm2', 'layernorm3'])",
                 "return z, cross_weights", outputs + "return z, cross_weights")
    return _LIARS + code


_NAN_OUTPUTS = "if getattr(self, 'lies', False):\n            z, weights = z * np.nan, weights * np.nan\n        "
_NAN_CROSS_OUTPUTS = ("if getattr(self, 'lies', False):\n"
                      "            z, cross_weights = z * np.nan, cross_weights * np.nan\n        ")
_EPSILON_ONE = """
class _NormWithEpsilonOne(layers.LayerNormalization):  # reports epsilon 1e-6, computes with 1
    def call(self, x):
        mean, variance = ops.moments(x, axes=[-1], keepdims=True)
        return (x - mean) / ops.sqrt(variance + 1.0) * self.gamma + self.beta
"""


_EMBED = "x = self.embedding(source_ids) * math.sqrt(self.d_model) + self.positions[:T]"
_DEC_EMBED = "y = self.embedding(target_ids) * math.sqrt(self.d_model) + self.positions[:T]"

WRONG = {
    "feed_forward": {
        "no ReLU": _edit("feed_forward", 'layers.Dense(d_ff, activation="relu")', "layers.Dense(d_ff)"),
        "ReLU on the output too": _edit("feed_forward", "layers.Dense(d_model),", 'layers.Dense(d_model, activation="relu"),'),
        "sizes swapped": _edit("feed_forward", 'layers.Dense(d_ff, activation="relu")', 'layers.Dense(d_model, activation="relu")',
                               "layers.Dense(d_model),", "layers.Dense(d_ff),"),
        "no bias in the first layer": _edit("feed_forward", 'activation="relu")', 'activation="relu", use_bias=False)'),
        "sigmoid instead of ReLU": _edit("feed_forward", 'activation="relu"', 'activation="sigmoid"'),
        "a Dropout(0.1) of its own": _edit("feed_forward", "layers.Dense(d_model),", "layers.Dropout(0.1),\n        layers.Dense(d_model),"),
    },
    "EncoderLayer": {
        "pre-LN": _enc_call('''
        attention, weights = self.mha(*[self.layernorm1(x)] * 3, attention_mask=padding_mask,
                                      return_attention_scores=True, training=training)
        h = x + self.dropout1(attention, training=training)
        return h + self.dropout2(self.ffn(self.layernorm2(h)), training=training), weights
'''),
        "no residual around the attention": _enc_call('''
        attention, weights = self.mha(x, x, x, attention_mask=padding_mask, return_attention_scores=True, training=training)
        h = self.layernorm1(self.dropout1(attention, training=training))
        return self.layernorm2(h + self.dropout2(self.ffn(h), training=training)), weights
'''),
        "no residual around the feed-forward block": _enc_call('''
        attention, weights = self.mha(x, x, x, attention_mask=padding_mask, return_attention_scores=True, training=training)
        h = self.layernorm1(x + self.dropout1(attention, training=training))
        return self.layernorm2(self.dropout2(self.ffn(h), training=training)), weights
'''),
        "padding mask ignored": _enc_call('''
        attention, weights = self.mha(x, x, x, return_attention_scores=True, training=training)
        h = self.layernorm1(x + self.dropout1(attention, training=training))
        return self.layernorm2(h + self.dropout2(self.ffn(h), training=training)), weights
'''),
        "one LayerNorm used twice": _enc_call('''
        attention, weights = self.mha(x, x, x, attention_mask=padding_mask, return_attention_scores=True, training=training)
        h = self.layernorm1(x + self.dropout1(attention, training=training))
        return self.layernorm1(h + self.dropout2(self.ffn(h), training=training)), weights
'''),
        "feed-forward before attention": _enc_call('''
        h = self.layernorm1(x + self.dropout1(self.ffn(x), training=training))
        attention, weights = self.mha(h, h, h, attention_mask=padding_mask, return_attention_scores=True, training=training)
        return self.layernorm2(h + self.dropout2(attention, training=training)), weights
'''),
        "no dropout": _enc_call('''
        attention, weights = self.mha(x, x, x, attention_mask=padding_mask, return_attention_scores=True, training=training)
        h = self.layernorm1(x + attention)
        return self.layernorm2(h + self.ffn(h)), weights
'''),
        "key_dim = d_model": _edit("EncoderLayer", "key_dim=d_model // num_heads", "key_dim=d_model"),
        "attention dropout of a fixed rate": _edit("EncoderLayer", "key_dim=d_model // num_heads)",
                                                   "key_dim=d_model // num_heads, dropout=0.1)"),
        "no final LayerNorm": _enc_call('''
        attention, weights = self.mha(x, x, x, attention_mask=padding_mask, return_attention_scores=True, training=training)
        h = self.layernorm1(x + self.dropout1(attention, training=training))
        return h + self.dropout2(self.ffn(h), training=training), weights
'''),
    },
    "DecoderLayer": {
        "no look-ahead mask": _edit("DecoderLayer", "self.mha1(y, y, y, attention_mask=look_ahead_mask,", "self.mha1(y, y, y,"),
        "cross-attention attends to the decoder": _edit("DecoderLayer", "self.mha2(a, encoded, encoded,", "self.mha2(a, a, a,"),
        "cross-attention queries from the encoder": _edit("DecoderLayer", "self.mha2(a, encoded, encoded,",
                                                          "self.mha2(encoded, a, a,"),
        "cross-attention queries from the decoder's input, not the first sublayer": _edit(
            "DecoderLayer", "self.mha2(a, encoded, encoded,", "self.mha2(y, encoded, encoded,"),
        "pre-LN": _dec_call('''
        n = self.layernorm1(y)
        a = y + self.dropout1(self.mha1(n, n, n, attention_mask=look_ahead_mask, training=training), training=training)
        cross, cross_weights = self.mha2(self.layernorm2(a), encoded, encoded, attention_mask=padding_mask,
                                         return_attention_scores=True, training=training)
        b = a + self.dropout2(cross, training=training)
        return b + self.dropout3(self.ffn(self.layernorm3(b)), training=training), cross_weights
'''),
        "no residual around the cross-attention": _edit("DecoderLayer", "b = self.layernorm2(a + self.dropout2(cross",
                                                        "b = self.layernorm2(0 * a + self.dropout2(cross"),
        "padding mask not passed to the cross-attention": _edit("DecoderLayer", "attention_mask=padding_mask, return_attention_scores=True",
                                                                "return_attention_scores=True"),
        "returns the self-attention weights": _dec_call('''
        self_attention, self_weights = self.mha1(y, y, y, attention_mask=look_ahead_mask, return_attention_scores=True,
                                                 training=training)
        a = self.layernorm1(y + self.dropout1(self_attention, training=training))
        cross = self.mha2(a, encoded, encoded, attention_mask=padding_mask, training=training)
        b = self.layernorm2(a + self.dropout2(cross, training=training))
        return self.layernorm3(b + self.dropout3(self.ffn(b), training=training)), self_weights
'''),
        "no dropout": _dec_call('''
        a = self.layernorm1(y + self.mha1(y, y, y, attention_mask=look_ahead_mask))
        cross, cross_weights = self.mha2(a, encoded, encoded, attention_mask=padding_mask, return_attention_scores=True)
        b = self.layernorm2(a + cross)
        return self.layernorm3(b + self.ffn(b)), cross_weights
'''),
    },
    "Encoder": {
        "embedding not scaled": _edit("Encoder", _EMBED, "x = self.embedding(source_ids) + self.positions[:T]"),
        "scaled by d_model instead of its square root": _edit("Encoder", _EMBED,
                                                              "x = self.embedding(source_ids) * self.d_model + self.positions[:T]"),
        "positional encoding added twice": _edit("Encoder", _EMBED, _EMBED + " + self.positions[:T]"),
        "no positional encoding": _edit("Encoder", _EMBED, "x = self.embedding(source_ids) * math.sqrt(self.d_model)"),
        "positions scaled with the embedding": _edit("Encoder", _EMBED,
                                                     "x = (self.embedding(source_ids) + self.positions[:T]) * math.sqrt(self.d_model)"),
        "no padding mask": _edit("Encoder", "layer(x, padding_mask=padding_mask, training=training)", "layer(x, training=training)"),
        "pad id 0 hard-coded": _edit("Encoder", "ops.not_equal(source_ids, self.pad_id)", "ops.not_equal(source_ids, 0)"),
        "one layer reused num_layers times": _edit("Encoder", "[EncoderLayer(d_model, num_heads, d_ff, dropout_rate) for _ in range(num_layers)]",
                                                   "[EncoderLayer(d_model, num_heads, d_ff, dropout_rate)] * num_layers"),
        "returns only the last layer's weights": _edit("Encoder", "return x, weights", "return x, weights[-1:]"),
    },
    "Decoder": {
        "no look-ahead mask": _edit("Decoder", "look_ahead_mask=look_ahead_mask, padding_mask", "look_ahead_mask=None, padding_mask"),
        "look-ahead mask transposed": _edit("Decoder", "ops.tril(ops.ones((T, T), dtype=\"bool\"))", "ops.triu(ops.ones((T, T), dtype=\"bool\"))"),
        "embedding not scaled": _edit("Decoder", _DEC_EMBED, "y = self.embedding(target_ids) + self.positions[:T]"),
        "no positional encoding": _edit("Decoder", _DEC_EMBED, "y = self.embedding(target_ids) * math.sqrt(self.d_model)"),
        "padding mask not passed on": _edit("Decoder", "padding_mask=padding_mask,\n", "padding_mask=None,\n"),
    },
    "Transformer": {
        "softmax on the output": _edit("Transformer", "self.final_layer = layers.Dense(target_vocab_size)",
                                       'self.final_layer = layers.Dense(target_vocab_size, activation="softmax")'),
        "no source padding mask for the decoder": _edit("Transformer", "padding_mask=padding_mask, training=training)",
                                                        "padding_mask=None, training=training)"),
        "decoder reads the source embedding, not the encoder": _edit(
            "Transformer", "decoded, _ = self.decoder(target_ids, encoded,",
            "decoded, _ = self.decoder(target_ids, self.encoder.embedding(source_ids),"),
        "padding mask inverted": _edit("Transformer", "ops.not_equal(source_ids, self.source_pad_id)",
                                       "ops.equal(source_ids, self.source_pad_id)"),
    },
    "translate": {
        "never feeds its output back": _edit("translate", "written = np.concatenate([written, next_ids[:, None]], axis=1)",
                                             "written = np.concatenate([written, np.full_like(next_ids[:, None], start_id)], axis=1)"),
        "one call for all positions": _edit(
            "translate", "for t in range(length):",
            "logits = np.asarray(model((source_ids, np.full((len(source_ids), length), start_id, 'int32')), training=False))\n"
            "    return logits.argmax(-1)\n    for t in range(length):"),
        "argmax at position 0 every step": _edit("translate", "logits[:, t].argmax(axis=-1)", "logits[:, 0].argmax(axis=-1)"),
        "returns the start id too": _edit("translate", "return written[:, 1:]", "return written[:, :length]"),
        "argmax over the wrong axis": _edit("translate", "logits[:, t].argmax(axis=-1)", "logits.argmax(axis=1)[:, -1]"),
        "calls the model with training=True": _edit("translate", "model((source_ids, written), training=False)",
                                                    "model((source_ids, written), training=True)"),
        "starts from id 0, not start_id": _edit("translate", "np.full((len(source_ids), 1), start_id,",
                                                "np.full((len(source_ids), 1), 0,"),
        "softmax over the batch axis before the argmax": _edit(
            "translate", "next_ids = logits[:, t].argmax(axis=-1)",
            "scores = np.exp(logits - logits.max())\n"
            "        next_ids = (scores / scores.sum(axis=0, keepdims=True))[:, t].argmax(axis=-1)"),
    },
}


# Hostile answers that beat tests whose expected values came from the student's own objects (what get_weights
# reports, the reported epsilon, the outputs of the student's own sublayers): each must lose points.
WRONG["feed_forward"].update({
    "set_weights does nothing, weights stay zero": '''
def feed_forward(d_model, d_ff):
    class Frozen(keras.Sequential):
        def set_weights(self, weights):
            pass

    return Frozen([layers.Dense(d_ff, activation="relu", kernel_initializer="zeros"),
                   layers.Dense(d_model, kernel_initializer="zeros")])
''',
})
WRONG["EncoderLayer"].update({
    "sublayers ignore set_weights and report zeros (z = 0, uniform weights)": _lying_encoder_layer(0.0),
    "sublayers ignore set_weights and report NaN, outputs NaN": _lying_encoder_layer("np.nan", _NAN_OUTPUTS),
    "LayerNorm epsilon 1, reported as 1": _edit("EncoderLayer", *["LayerNormalization(epsilon=1e-6)",
                                                                 "LayerNormalization(epsilon=1.0)"] * 2),
    "LayerNorm reports epsilon 1e-6, computes with 1": _EPSILON_ONE + _edit(
        "EncoderLayer", *["layers.LayerNormalization(epsilon=1e-6)", "_NormWithEpsilonOne(epsilon=1e-6)"] * 2),
})
WRONG["DecoderLayer"].update({
    "sublayers ignore set_weights and report zeros (z = 0, uniform weights)": _lying_decoder_layer(0.0),
    "sublayers ignore set_weights and report NaN, outputs NaN": _lying_decoder_layer("np.nan", _NAN_CROSS_OUTPUTS),
    "LayerNorm epsilon 1, reported as 1": _edit("DecoderLayer", *["LayerNormalization(epsilon=1e-6)",
                                                                 "LayerNormalization(epsilon=1.0)"] * 3),
})
# Training-time mistakes: where dropout sits, whether the rate and `training` reach every Dropout, and whether a
# layer uses the mask it is given.
WRONG["EncoderLayer"].update({
    "dropout after the residual addition": _enc_call('''
        attention, weights = self.mha(x, x, x, attention_mask=padding_mask, return_attention_scores=True, training=training)
        h = self.layernorm1(self.dropout1(x + attention, training=training))
        return self.layernorm2(self.dropout2(h + self.ffn(h), training=training)), weights
'''),
    "dropout on the sublayers' inputs": _enc_call('''
        d = self.dropout1(x, training=training)
        attention, weights = self.mha(d, d, d, attention_mask=padding_mask, return_attention_scores=True, training=training)
        h = self.layernorm1(x + attention)
        return self.layernorm2(h + self.ffn(self.dropout2(h, training=training))), weights
'''),
    "dropout on the attention weights (MultiHeadAttention(dropout=rate)) instead of its output": _edit(
        "EncoderLayer", "key_dim=d_model // num_heads)", "key_dim=d_model // num_heads, dropout=dropout_rate)",
        "x + self.dropout1(attention, training=training)", "x + attention"),
    "second Dropout with a fixed rate 0.1": _edit("EncoderLayer", "self.dropout2 = layers.Dropout(dropout_rate)",
                                                  "self.dropout2 = layers.Dropout(0.1)"),
    "Dropout always on (training=True)": _edit("EncoderLayer", "self.dropout1(attention, training=training)",
                                               "self.dropout1(attention, training=True)"),
    "attention output dropped twice": _edit("EncoderLayer", "self.dropout1(attention, training=training)",
                                            "self.dropout1(self.dropout1(attention, training=training), training=training)"),
    "a Dropout(dropout_rate) between the feed-forward's two Dense layers": _edit(
        "EncoderLayer", "self.ffn = feed_forward(d_model, d_ff)",
        "self.ffn = keras.Sequential([layers.Dense(d_ff, activation=\"relu\"), layers.Dropout(dropout_rate), "
        "layers.Dense(d_model)])"),
    "only the mask's first query row (a key padding mask) used": _edit(
        "EncoderLayer", "self.mha(x, x, x, attention_mask=padding_mask,",
        "self.mha(x, x, x, attention_mask=None if padding_mask is None else padding_mask[..., :1, :],"),
    "Keras' causal mask in the encoder too": _edit("EncoderLayer", "self.mha(x, x, x, attention_mask=padding_mask,",
                                                  "self.mha(x, x, x, attention_mask=padding_mask, use_causal_mask=True,"),
})
WRONG["DecoderLayer"].update({
    "look-ahead mask argument replaced by Keras' causal mask": _edit(
        "DecoderLayer", "self.mha1(y, y, y, attention_mask=look_ahead_mask,", "self.mha1(y, y, y, use_causal_mask=True,"),
    "dropout after the residual addition": _dec_call('''
        a = self.layernorm1(self.dropout1(y + self.mha1(y, y, y, attention_mask=look_ahead_mask), training=training))
        cross, cross_weights = self.mha2(a, encoded, encoded, attention_mask=padding_mask, return_attention_scores=True)
        b = self.layernorm2(self.dropout2(a + cross, training=training))
        return self.layernorm3(self.dropout3(b + self.ffn(b), training=training)), cross_weights
'''),
    "third Dropout with a fixed rate 0.1": _edit("DecoderLayer", "self.dropout3 = layers.Dropout(dropout_rate)",
                                                 "self.dropout3 = layers.Dropout(0.1)"),
    "Dropout off even in training (training=False)": _edit("DecoderLayer", "self.dropout2(cross, training=training)",
                                                           "self.dropout2(cross, training=False)"),
    "cross-attention output dropped twice": _edit("DecoderLayer", "self.dropout2(cross, training=training)",
                                                  "self.dropout2(self.dropout2(cross, training=training), training=training)"),
    "self-attention output scaled by 1 / (1 - rate) twice": _edit(
        "DecoderLayer", "self.dropout1(self_attention, training=training)",
        "self.dropout1(self_attention, training=training) / (1 - self.dropout1.rate if training else 1)"),
    "a Dropout(dropout_rate) after the feed-forward's ReLU": _edit(
        "DecoderLayer", "self.ffn = feed_forward(d_model, d_ff)",
        "self.ffn = keras.Sequential([layers.Dense(d_ff, activation=\"relu\"), layers.Dropout(dropout_rate), "
        "layers.Dense(d_model)])"),
    "cross-attention mask reduced to its first query row": _edit(
        "DecoderLayer", "attention_mask=padding_mask, return_attention_scores=True",
        "attention_mask=None if padding_mask is None else padding_mask[..., :1, :], return_attention_scores=True"),
    "own triangle, only the padding (last row) taken from the look-ahead mask": _edit(
        "DecoderLayer", "self.mha1(y, y, y, attention_mask=look_ahead_mask,",
        "self.mha1(y, y, y, attention_mask=ops.logical_and(ops.tril(ops.ones((ops.shape(y)[1],) * 2, dtype=\"bool\")), "
        "look_ahead_mask[..., -1:, :]),"),
})
WRONG["Encoder"].update({
    "dropout_rate not passed to the layers": _edit("Encoder", "EncoderLayer(d_model, num_heads, d_ff, dropout_rate)",
                                                   "EncoderLayer(d_model, num_heads, d_ff)"),
    "no dropout after the embedding": _edit("Encoder", "x = self.dropout(x, training=training)", "pass"),
    "training=False passed to the layers": _edit("Encoder", "layer(x, padding_mask=padding_mask, training=training)",
                                                 "layer(x, padding_mask=padding_mask, training=False)"),
})
WRONG["Decoder"].update({
    "dropout_rate not passed to the layers": _edit("Decoder", "DecoderLayer(d_model, num_heads, d_ff, dropout_rate)",
                                                   "DecoderLayer(d_model, num_heads, d_ff)"),
    "no dropout after the embedding": _edit("Decoder", "y = self.dropout(y, training=training)", "pass"),
    "training=False passed to the layers": _edit("Decoder", "training=training)  # (batch, Ty, d_model), (batch, heads, Ty, Tx)",
                                                 "training=False)"),
})
_SILENT = """
class _Silent{kind}({kind}):  # the right sublayers and weights, but outputs zeros
    def call(self, *args, **kwargs):
        z, weights = super().call(*args, **kwargs)
        return z * 0.0, weights
"""
WRONG["Encoder"].update({
    "its layers output zeros (encoded = 0)": _SILENT.format(kind="EncoderLayer") + _edit(
        "Encoder", "[EncoderLayer(d_model", "[_SilentEncoderLayer(d_model"),
})
WRONG["Decoder"].update({
    "its layers output zeros (decoded = 0)": _SILENT.format(kind="DecoderLayer") + _edit(
        "Decoder", "[DecoderLayer(d_model", "[_SilentDecoderLayer(d_model"),
})
WRONG["Transformer"].update({
    "dropout_rate not passed to the encoder and decoder": _edit(
        "Transformer", """source_pad_id,
                               dropout_rate)""", "source_pad_id)",
        "target_vocab_size, max_len, dropout_rate)", "target_vocab_size, max_len)"),
    "training=False passed to the encoder and decoder": _edit(
        "Transformer", "self.encoder(source_ids, training=training)", "self.encoder(source_ids, training=False)",
        "padding_mask=padding_mask, training=training)", "padding_mask=padding_mask, training=False)"),
    "its decoder outputs zeros (logits = the final layer's bias)": _SILENT.format(kind="Decoder") + _edit(
        "Transformer", "self.decoder = Decoder(", "self.decoder = _SilentDecoder("),
    "its encoder outputs zeros": _SILENT.format(kind="Encoder") + _edit(
        "Transformer", "self.encoder = Encoder(", "self.encoder = _SilentEncoder("),
})


CORRECT = {
    "feed_forward": {
        "separate ReLU layer": _edit("feed_forward", 'layers.Dense(d_ff, activation="relu"),', "layers.Dense(d_ff), layers.ReLU(),"),
        "Sequential built with add": '''
def feed_forward(d_model, d_ff):
    block = keras.Sequential()
    block.add(layers.Dense(d_ff, activation="relu"))
    block.add(layers.Dense(d_model))
    return block
''',
    },
    "EncoderLayer": {
        "layers created in another order, Add layers": '''
class EncoderLayer(layers.Layer):
    def __init__(self, d_model, num_heads, d_ff, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.dropout2 = layers.Dropout(dropout_rate)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.ffn = feed_forward(d_model, d_ff)
        self.dropout1 = layers.Dropout(dropout_rate)
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.mha = layers.MultiHeadAttention(num_heads, d_model // num_heads)
        self.add = layers.Add()

    def call(self, x, padding_mask=None, training=False):
        attention, weights = self.mha(query=x, value=x, attention_mask=padding_mask, return_attention_scores=True)
        h = self.layernorm1(self.add([x, self.dropout1(attention, training=training)]))
        return self.layernorm2(self.add([h, self.dropout2(self.ffn(h), training=training)])), weights
''',
        "Keras' default LayerNorm epsilon": _edit("EncoderLayer", *["LayerNormalization(epsilon=1e-6)", "LayerNormalization()"] * 2),
    },
    "DecoderLayer": {
        "Keras' causal mask combined with the given mask": _edit(
            "DecoderLayer", "self.mha1(y, y, y, attention_mask=look_ahead_mask,",
            "self.mha1(y, y, y, attention_mask=look_ahead_mask, use_causal_mask=True,"),
        "key given explicitly, ops.add": _dec_call('''
        s = self.mha1(query=y, value=y, key=y, attention_mask=look_ahead_mask, training=training)
        a = self.layernorm1(ops.add(y, self.dropout1(s, training=training)))
        c, w = self.mha2(query=a, value=encoded, key=encoded, attention_mask=padding_mask, return_attention_scores=True)
        b = self.layernorm2(ops.add(a, self.dropout2(c, training=training)))
        return self.layernorm3(ops.add(b, self.dropout3(self.ffn(b), training=training))), w
'''),
    },
    "Encoder": {
        "scale with ops, mask as float": _edit(
            "Encoder", _EMBED, "x = self.embedding(source_ids) * ops.sqrt(ops.cast(self.d_model, 'float32')) "
            "+ ops.convert_to_tensor(self.positions)[:T]",
            "padding_mask = ops.expand_dims(ops.not_equal(source_ids, self.pad_id), axis=1)",
            "padding_mask = ops.cast(ops.not_equal(source_ids, self.pad_id), 'float32')[:, None, :]"),
        "(batch, T, T) padding mask": _edit(
            "Encoder", "padding_mask = ops.expand_dims(ops.not_equal(source_ids, self.pad_id), axis=1)",
            "keep = ops.not_equal(source_ids, self.pad_id)\n"
            "        padding_mask = ops.logical_and(ops.ones_like(keep)[:, :, None], keep[:, None, :])"),
    },
    "Decoder": {
        "look-ahead mask from NumPy": _edit("Decoder", 'ops.tril(ops.ones((T, T), dtype="bool"))',
                                            "np.arange(T)[None, :] <= np.arange(T)[:, None]"),
    },
    "Transformer": {
        "mask with a None axis": _edit("Transformer", "ops.expand_dims(ops.not_equal(source_ids, self.source_pad_id), axis=1)",
                                       "ops.not_equal(source_ids, self.source_pad_id)[:, None, :]"),
    },
    "translate": {
        "a full-length buffer filled step by step, ops.argmax": '''
def translate(model, source_ids, start_id, length):
    buffer = np.full((len(source_ids), length), start_id, dtype="int32")
    result = np.zeros((len(source_ids), length), dtype="int32")
    for t in range(length):
        logits = model((np.asarray(source_ids), buffer), training=False)
        result[:, t] = np.asarray(ops.argmax(logits[:, t, :], axis=-1))
        if t + 1 < length:
            buffer[:, t + 1] = result[:, t]
    return result
''',
    },
}
