"""Wrong and differently written answers for notebook 03 (date translation with attention)."""
ASSIGNMENT = "03_date_translation"

WRONG = {
    "string_to_int": {
        "grows_vocab_with_unknown_characters": '''
def string_to_int(string, length, vocab):
    string = string.lower().replace(",", "")
    for ch in string:
        vocab.setdefault(ch, vocab["<unk>"])  # changes the caller's vocabulary
    rep = [vocab[ch] for ch in string[:length]]
    return rep + [vocab["<pad>"]] * (length - len(rep))
''',
        "unk_as_string": '''
def string_to_int(string, length, vocab):
    string = string.lower().replace(",", "")
    rep = [vocab.get(ch, "<unk>") for ch in string[:length]]
    return rep + [vocab["<pad>"]] * (length - len(rep))
''',
        "strips_whitespace": '''
def string_to_int(string, length, vocab):
    string = string.strip().lower().replace(",", "")
    rep = [vocab.get(ch, vocab["<unk>"]) for ch in string[:length]]
    return rep + [vocab["<pad>"]] * (length - len(rep))
''',
        "no_lower_case": '''
def string_to_int(string, length, vocab):
    string = string.replace(",", "")
    rep = [vocab.get(ch, vocab["<unk>"]) for ch in string[:length]]
    return rep + [vocab["<pad>"]] * (length - len(rep))
''',
        "commas_kept": '''
def string_to_int(string, length, vocab):
    string = string.lower()
    rep = [vocab.get(ch, vocab["<unk>"]) for ch in string[:length]]
    return rep + [vocab["<pad>"]] * (length - len(rep))
''',
        "cut_before_dropping_commas": '''
def string_to_int(string, length, vocab):
    string = string.lower()[:length].replace(",", "")
    rep = [vocab.get(ch, vocab["<unk>"]) for ch in string]
    return rep + [vocab["<pad>"]] * (length - len(rep))
''',
        "pad_is_last_index": '''
def string_to_int(string, length, vocab):
    string = string.lower().replace(",", "")
    rep = [vocab.get(ch, vocab["<unk>"]) for ch in string[:length]]
    return rep + [len(vocab) - 1] * (length - len(rep))
''',
        "unk_is_second_last_index": '''
def string_to_int(string, length, vocab):
    string = string.lower().replace(",", "")
    rep = [vocab.get(ch, len(vocab) - 2) for ch in string[:length]]
    return rep + [vocab["<pad>"]] * (length - len(rep))
''',
        "no_truncation": '''
def string_to_int(string, length, vocab):
    string = string.lower().replace(",", "")
    rep = [vocab.get(ch, vocab["<unk>"]) for ch in string]
    return rep + [vocab["<pad>"]] * (length - len(rep))
''',
    },
    "one_step_attention": {
        "concat_order_swapped": '''
def one_step_attention(a, s_prev):
    s_prev = repeator(s_prev)
    concat = concatenator([s_prev, a])
    alphas = activator(densor2(densor1(concat)))
    return dotor([alphas, a])
''',
        "softmax_over_last_axis": '''
def one_step_attention(a, s_prev):
    s_prev = repeator(s_prev)
    concat = concatenator([a, s_prev])
    alphas = keras.activations.softmax(densor2(densor1(concat)), axis=-1)
    return dotor([alphas, a])
''',
        "s_prev_not_repeated": '''
def one_step_attention(a, s_prev):
    concat = concatenator([a, s_prev])
    alphas = activator(densor2(densor1(concat)))
    return dotor([alphas, a])
''',
        "dot_order_swapped": '''
def one_step_attention(a, s_prev):
    s_prev = repeator(s_prev)
    concat = concatenator([a, s_prev])
    alphas = activator(densor2(densor1(concat)))
    return dotor([a, alphas])
''',
        "tanh_layer_skipped": '''
def one_step_attention(a, s_prev):
    s_prev = repeator(s_prev)
    concat = concatenator([a, s_prev])
    alphas = activator(densor2(concat))
    return dotor([alphas, a])
''',
        "no_softmax": '''
def one_step_attention(a, s_prev):
    s_prev = repeator(s_prev)
    concat = concatenator([a, s_prev])
    energies = densor2(densor1(concat))
    return dotor([energies, a])
''',
    },
    "modelf": {
        "c_is_s0": '''
def modelf(Tx, Ty, n_a, n_s, human_vocab_size, machine_vocab_size):
    X = Input(shape=(Tx, human_vocab_size))
    s0 = Input(shape=(n_s,), name="s0")
    c0 = Input(shape=(n_s,), name="c0")
    s, c = s0, s0
    outputs = []
    a = Bidirectional(LSTM(n_a, return_sequences=True))(X)
    for _ in range(Ty):
        context = one_step_attention(a, s)
        _, s, c = post_activation_LSTM_cell(context, initial_state=[s, c])
        outputs.append(output_layer(s))
    return Model(inputs=[X, s0, c0], outputs=outputs)
''',
        "s_where_c_belongs": '''
def modelf(Tx, Ty, n_a, n_s, human_vocab_size, machine_vocab_size):
    X = Input(shape=(Tx, human_vocab_size))
    s0 = Input(shape=(n_s,), name="s0")
    c0 = Input(shape=(n_s,), name="c0")
    s, c = s0, c0
    outputs = []
    a = Bidirectional(LSTM(n_a, return_sequences=True))(X)
    for _ in range(Ty):
        context = one_step_attention(a, s)
        _, s, c = post_activation_LSTM_cell(context, initial_state=[s, s])
        outputs.append(output_layer(s))
    return Model(inputs=[X, s0, c0], outputs=outputs)
''',
        "no_return_sequences": '''
def modelf(Tx, Ty, n_a, n_s, human_vocab_size, machine_vocab_size):
    X = Input(shape=(Tx, human_vocab_size))
    s0 = Input(shape=(n_s,), name="s0")
    c0 = Input(shape=(n_s,), name="c0")
    s, c = s0, c0
    outputs = []
    a = Bidirectional(LSTM(n_a))(X)
    for _ in range(Ty):
        context = one_step_attention(a, s)
        _, s, c = post_activation_LSTM_cell(context, initial_state=[s, c])
        outputs.append(output_layer(s))
    return Model(inputs=[X, s0, c0], outputs=outputs)
''',
        "state_not_updated": '''
def modelf(Tx, Ty, n_a, n_s, human_vocab_size, machine_vocab_size):
    X = Input(shape=(Tx, human_vocab_size))
    s0 = Input(shape=(n_s,), name="s0")
    c0 = Input(shape=(n_s,), name="c0")
    outputs = []
    a = Bidirectional(LSTM(n_a, return_sequences=True))(X)
    for _ in range(Ty):
        context = one_step_attention(a, s0)
        _, s, c = post_activation_LSTM_cell(context, initial_state=[s0, c0])
        outputs.append(output_layer(s))
    return Model(inputs=[X, s0, c0], outputs=outputs)
''',
        "hard_coded_sizes": '''
def modelf(Tx, Ty, n_a, n_s, human_vocab_size, machine_vocab_size):
    X = Input(shape=(30, 37))
    s0 = Input(shape=(64,), name="s0")
    c0 = Input(shape=(64,), name="c0")
    s, c = s0, c0
    outputs = []
    a = Bidirectional(LSTM(32, return_sequences=True))(X)
    for _ in range(10):
        context = one_step_attention(a, s)
        _, s, c = post_activation_LSTM_cell(context, initial_state=[s, c])
        outputs.append(output_layer(s))
    return Model(inputs=[X, s0, c0], outputs=outputs)
''',
        "new_output_layer_each_step": '''
def modelf(Tx, Ty, n_a, n_s, human_vocab_size, machine_vocab_size):
    X = Input(shape=(Tx, human_vocab_size))
    s0 = Input(shape=(n_s,), name="s0")
    c0 = Input(shape=(n_s,), name="c0")
    s, c = s0, c0
    outputs = []
    a = Bidirectional(LSTM(n_a, return_sequences=True))(X)
    for _ in range(Ty):
        context = one_step_attention(a, s)
        _, s, c = post_activation_LSTM_cell(context, initial_state=[s, c])
        outputs.append(Dense(machine_vocab_size, activation="softmax")(s))
    return Model(inputs=[X, s0, c0], outputs=outputs)
''',
        "output_from_cell_state": '''
def modelf(Tx, Ty, n_a, n_s, human_vocab_size, machine_vocab_size):
    X = Input(shape=(Tx, human_vocab_size))
    s0 = Input(shape=(n_s,), name="s0")
    c0 = Input(shape=(n_s,), name="c0")
    s, c = s0, c0
    outputs = []
    a = Bidirectional(LSTM(n_a, return_sequences=True))(X)
    for _ in range(Ty):
        context = one_step_attention(a, s)
        _, s, c = post_activation_LSTM_cell(context, initial_state=[s, c])
        outputs.append(output_layer(c))
    return Model(inputs=[X, s0, c0], outputs=outputs)
''',
    },
    "compile_model": {
        "learning_rate_0_01": '''
def compile_model(model):
    model.compile(optimizer=Adam(learning_rate=0.01, beta_1=0.9, beta_2=0.999), loss="categorical_crossentropy")
    return model
''',
        "sparse_loss": '''
def compile_model(model):
    model.compile(optimizer=Adam(learning_rate=0.005, beta_1=0.9, beta_2=0.999),
                  loss="sparse_categorical_crossentropy")
    return model
''',
        "from_logits": '''
def compile_model(model):
    model.compile(optimizer=Adam(learning_rate=0.005, beta_1=0.9, beta_2=0.999),
                  loss=keras.losses.CategoricalCrossentropy(from_logits=True))
    return model
''',
        "beta_1_0_99": '''
def compile_model(model):
    model.compile(optimizer=Adam(learning_rate=0.005, beta_1=0.99, beta_2=0.999), loss="categorical_crossentropy")
    return model
''',
        "sgd": '''
def compile_model(model):
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.005), loss="categorical_crossentropy")
    return model
''',
        "mean_squared_error": '''
def compile_model(model):
    model.compile(optimizer=Adam(learning_rate=0.005, beta_1=0.9, beta_2=0.999), loss="mse")
    return model
''',
        "coursera_metrics_list": '''
def compile_model(model):
    model.compile(optimizer=Adam(learning_rate=0.005, beta_1=0.9, beta_2=0.999), loss="categorical_crossentropy",
                  metrics=["accuracy"])
    return model
''',
        "compiles_the_global_model": '''
def compile_model(model_to_compile):
    model.compile(optimizer=Adam(learning_rate=0.005, beta_1=0.9, beta_2=0.999), loss="categorical_crossentropy")
    return model
''',
    },
}

CORRECT = {
    "string_to_int": {
        "loop_and_numpy": '''
def string_to_int(string, length, vocab):
    cleaned = "".join(ch for ch in string.lower() if ch != ",")
    rep = np.full(length, vocab["<pad>"], dtype=np.int64)
    for i, ch in enumerate(cleaned[:length]):
        rep[i] = vocab[ch] if ch in vocab else vocab["<unk>"]
    return rep
''',
        "coursera_style": '''
def string_to_int(string, length, vocab):
    string = string.lower()
    string = string.replace(',', '')
    if len(string) > length:
        string = string[:length]
    rep = list(map(lambda x: vocab.get(x, vocab['<unk>']), string))
    if len(string) < length:
        rep += [vocab['<pad>']] * (length - len(string))
    return rep
''',
    },
    "one_step_attention": {
        "keras_ops": '''
def one_step_attention(a, s_prev):
    steps = a.shape[1]
    s_rep = keras.ops.repeat(keras.ops.expand_dims(s_prev, 1), steps, axis=1)  # (m, Tx, n_s)
    concat = keras.ops.concatenate([a, s_rep], axis=-1)  # (m, Tx, 2 n_a + n_s)
    alphas = activator(densor2(densor1(concat)))  # (m, Tx, 1)
    return keras.ops.sum(alphas * a, axis=1, keepdims=True)  # (m, 1, 2 n_a)
''',
        "einsum_context": '''
def one_step_attention(a, s_prev):
    alphas = activator(densor2(densor1(concatenator([a, repeator(s_prev)]))))  # (m, Tx, 1)
    return keras.ops.einsum("mtk,mtd->mkd", alphas, a)  # (m, 1, 2 n_a)
''',
    },
    "modelf": {
        "keyword_calls_other_order": '''
def modelf(Tx, Ty, n_a, n_s, human_vocab_size, machine_vocab_size):
    s0 = keras.Input(shape=(n_s,), name="s0")
    c0 = keras.Input(shape=(n_s,), name="c0")
    X = keras.Input(shape=(Tx, human_vocab_size))
    a = Bidirectional(LSTM(units=n_a, return_sequences=True), merge_mode="concat")(X)
    s, c = s0, c0
    outputs = []
    for t in range(Ty):
        context = one_step_attention(a, s)
        s, _, c = post_activation_LSTM_cell(context, initial_state=[s, c])
        outputs.append(output_layer(inputs=s))
    return Model(inputs=[X, s0, c0], outputs=outputs)
''',
    },
    "compile_model": {
        "loss_object_defaults": '''
def compile_model(model):
    model.compile(loss=keras.losses.CategoricalCrossentropy(), optimizer=keras.optimizers.Adam(0.005),
                  metrics=[["accuracy"]] * len(model.outputs))
    return model
''',
        "loss_per_output": '''
def compile_model(model):
    model.compile(optimizer=Adam(learning_rate=5e-3, beta_1=0.9, beta_2=0.999),
                  loss=["categorical_crossentropy"] * len(model.outputs))
    return model
''',
    },
}

# An encoder that keeps zero weights whatever the test sets (so the model never reads the date): a test whose
# reference encoder took the model's own encoder weights would accept it.
from grader.authoring.assignment_answers import answer_editor  # noqa: E402

_edit = answer_editor(ASSIGNMENT)
WRONG["modelf"].update({
    "the encoder keeps zero weights (set_weights does nothing)": '''
class _FrozenBidirectional(Bidirectional):
    def set_weights(self, weights):
        pass
''' + _edit("modelf", "Bidirectional(LSTM(n_a, return_sequences=True))",
            "_FrozenBidirectional(LSTM(n_a, return_sequences=True, kernel_initializer='zeros', "
            "recurrent_initializer='zeros'))"),
})
