"""06_transformer: one wrong answer for every answer cell, the "all wrong" student (tests/test_all_wrong.py).

Each keeps the exercise's names, signature and output shapes but computes nothing right; a notebook of them
must score 0. ALL_WRONG = {grade_id: code}; each code replaces the whole answer cell."""

ALL_WRONG = {
    "feed_forward": '''
class OutputsZeros(layers.Layer):
    def call(self, x):
        return ops.zeros_like(x)


def feed_forward(d_model, d_ff):
    return keras.Sequential([layers.Dense(d_ff, activation="relu"), layers.Dense(d_model), OutputsZeros()])
''',
    "EncoderLayer": '''
class EncoderLayer(layers.Layer):
    def __init__(self, d_model, num_heads, d_ff, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.mha = layers.MultiHeadAttention(num_heads=num_heads, key_dim=d_model // num_heads)
        self.ffn = feed_forward(d_model, d_ff)
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(dropout_rate)
        self.dropout2 = layers.Dropout(dropout_rate)

    def call(self, x, padding_mask=None, training=False):
        self.mha(x, x, x)  # builds the sublayers, whose results are then ignored
        self.layernorm2(self.layernorm1(self.ffn(x)))
        T = ops.shape(x)[1]
        return ops.zeros_like(x), ops.zeros((ops.shape(x)[0], self.num_heads, T, T))
''',
    "DecoderLayer": '''
class DecoderLayer(layers.Layer):
    def __init__(self, d_model, num_heads, d_ff, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.mha1 = layers.MultiHeadAttention(num_heads=num_heads, key_dim=d_model // num_heads)
        self.mha2 = layers.MultiHeadAttention(num_heads=num_heads, key_dim=d_model // num_heads)
        self.ffn = feed_forward(d_model, d_ff)
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm3 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(dropout_rate)
        self.dropout2 = layers.Dropout(dropout_rate)
        self.dropout3 = layers.Dropout(dropout_rate)

    def call(self, y, encoded, look_ahead_mask=None, padding_mask=None, training=False):
        self.mha1(y, y, y)  # builds the sublayers, whose results are then ignored
        self.mha2(y, encoded, encoded)
        self.layernorm3(self.layernorm2(self.layernorm1(self.ffn(y))))
        shape = (ops.shape(y)[0], self.num_heads, ops.shape(y)[1], ops.shape(encoded)[1])
        return ops.zeros_like(y), ops.zeros(shape)
''',
    "Encoder": '''
class Encoder(layers.Layer):
    def __init__(self, num_layers, d_model, num_heads, d_ff, vocab_size, max_len, pad_id, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.pad_id = d_model, pad_id
        self.positions = positional_encoding(max_len, d_model)
        self.embedding = layers.Embedding(vocab_size, d_model)
        self.enc_layers = [EncoderLayer(d_model, num_heads, d_ff, dropout_rate) for _ in range(num_layers)]
        self.dropout = layers.Dropout(dropout_rate)

    def call(self, source_ids, training=False):
        x = self.embedding(source_ids) * 0.0  # (batch, T, d_model) of zeros
        weights = [layer(x)[1] for layer in self.enc_layers]
        return x, weights
''',
    "Decoder": '''
class Decoder(layers.Layer):
    def __init__(self, num_layers, d_model, num_heads, d_ff, vocab_size, max_len, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.d_model = d_model
        self.positions = positional_encoding(max_len, d_model)
        self.embedding = layers.Embedding(vocab_size, d_model)
        self.dec_layers = [DecoderLayer(d_model, num_heads, d_ff, dropout_rate) for _ in range(num_layers)]
        self.dropout = layers.Dropout(dropout_rate)

    def call(self, target_ids, encoded, padding_mask=None, training=False):
        y = self.embedding(target_ids) * 0.0  # (batch, Ty, d_model) of zeros
        cross_weights = [layer(y, encoded)[1] for layer in self.dec_layers]
        return y, cross_weights
''',
    "Transformer": '''
class Transformer(keras.Model):
    def __init__(self, num_layers, d_model, num_heads, d_ff, source_vocab_size, target_vocab_size, max_len,
                 source_pad_id, dropout_rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.source_pad_id = source_pad_id
        self.encoder = Encoder(num_layers, d_model, num_heads, d_ff, source_vocab_size, max_len, source_pad_id,
                               dropout_rate)
        self.decoder = Decoder(num_layers, d_model, num_heads, d_ff, target_vocab_size, max_len, dropout_rate)
        self.final_layer = layers.Dense(target_vocab_size)

    def call(self, inputs, training=False):
        source_ids, target_ids = inputs
        encoded, _ = self.encoder(source_ids)
        decoded, _ = self.decoder(target_ids, encoded)
        return self.final_layer(decoded * 0.0)  # the same logits whatever the inputs
''',
    "translate": '''
def translate(model, source_ids, start_id, length):
    return np.zeros((len(source_ids), length), dtype="int32")
''',
    
}
