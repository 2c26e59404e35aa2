"""05_attention_in_models: one wrong answer for every answer cell, the "all wrong" student (tests/test_all_wrong.py).

Each keeps the exercise's names, signature and output shapes but computes nothing right; a notebook of them
must score 0. ALL_WRONG = {grade_id: code}; each code replaces the whole answer cell."""

from grader.authoring.assignment_answers import answers

_POOL_HEAD = answers("05_attention_in_models")._POOL_HEAD

ALL_WRONG = {
    "AttentionPooling": _POOL_HEAD + '''\
        context = ops.sum(h, axis=-2) * 0.0  # (..., d) of zeros
        weights = ops.sum(h, axis=-1) * 0.0  # (..., T) of zeros
        return (context, weights) if return_weights else context
''',
    "build_lstm_classifier": '''
def build_lstm_classifier(pooling, vocab_size, n_classes, embed_dim=16, units=16, attention_units=16):
    if pooling not in ("last", "mean", "attention"):
        raise ValueError(f"unknown pooling {pooling!r}")
    tokens = keras.Input(shape=(None,), dtype="int32")
    embedded = layers.Embedding(vocab_size, embed_dim, mask_zero=True)(tokens)
    if pooling == "last":
        pooled = layers.LSTM(units)(embedded)
    else:
        states = layers.LSTM(units, return_sequences=True)(embedded)
        pooled = layers.GlobalAveragePooling1D()(states) if pooling == "mean" else AttentionPooling(attention_units)(states)
    return keras.Model(tokens, layers.Dense(n_classes, activation="softmax")(pooled * 0.0))  # ignores the text
''',
    "build_cnn_attention_classifier": '''
def build_cnn_attention_classifier(vocab_size, n_classes, pooling="attention", embed_dim=16, filters=16,
                                   kernel_size=3, attention_units=16):
    if pooling not in ("attention", "max"):
        raise ValueError(f"unknown pooling {pooling!r}")
    tokens = keras.Input(shape=(None,), dtype="int32")
    features = layers.Conv1D(filters, kernel_size, padding="same", activation="relu")(
        layers.Embedding(vocab_size, embed_dim)(tokens))
    pooled = AttentionPooling(attention_units)(features) if pooling == "attention" else layers.GlobalMaxPooling1D()(features)
    return keras.Model(tokens, layers.Dense(n_classes, activation="softmax")(pooled * 0.0))  # ignores the text
''',
    "build_han": '''
def build_han(vocab_size, n_sentences, n_words, n_classes, embed_dim=16, gru_units=8, attention_units=16):
    ids = keras.Input((n_sentences, n_words), dtype="int32")
    words = layers.Embedding(vocab_size, embed_dim, mask_zero=True)(ids)
    word_states = layers.TimeDistributed(layers.Bidirectional(layers.GRU(gru_units, return_sequences=True)),
                                         name="word_encoder")(words)
    sentences, word_weights = AttentionPooling(attention_units, name="word_attention")(word_states, return_weights=True)
    sentence_states = layers.Bidirectional(layers.GRU(gru_units, return_sequences=True), name="sentence_encoder")(sentences)
    document, sentence_weights = AttentionPooling(attention_units, name="sentence_attention")(
        sentence_states, return_weights=True)
    probabilities = layers.Dense(n_classes, activation="softmax")(document * 0.0)  # ignores the document
    return keras.Model(ids, probabilities), keras.Model(ids, [word_weights, sentence_weights])
''',
    "spatial_attention": '''
def spatial_attention(features, query, W_f, W_q, v):
    return ops.sum(features, axis=(-3, -2)) * 0.0, ops.sum(features, axis=-1) * 0.0  # (..., C), (..., H, W) of zeros
''',
    
}
