"""Wrong and differently written answers for notebook 01 (encoder-decoder, fixed context)."""

ASSIGNMENT = "01_encoder_decoder"

_CELL = '''
def rnn_cell_forward(x_t, a_prev, params):
{body}
'''
_ENCODE = '''
def encode(X, params):
{body}
'''
_STEP = '''
def decoder_step(y_prev, s_prev, context, params):
{body}
'''
_GREEDY = '''
def greedy_decode(context, params, Ty, start_id):
{body}
'''
_BUILD = '''
def build_seq2seq(Tx, Ty, n_a, n_s, in_vocab_size, out_vocab_size):
{body}
'''

_STEP_STATE = '''    s_next = np.tanh(y_prev @ params["W_ys"] + s_prev @ params["W_ss"]
                     + context @ params["W_cs"] + params["b_s"])
'''
_GREEDY_START = '''    batch = context.shape[0]
    n_s, n_y = params["W_sy"].shape
    s = np.zeros((batch, n_s))
    y = np.zeros((batch, n_y))
    y[:, start_id] = 1.0
    ids = np.zeros((batch, Ty), dtype=int)
'''

WRONG = {
    "rnn_cell_forward": {
        "missing_bias": _CELL.format(body='    return np.tanh(x_t @ params["W_ax"] + a_prev @ params["W_aa"])'),
        "sigmoid_activation": _CELL.format(
            body='    z = x_t @ params["W_ax"] + a_prev @ params["W_aa"] + params["b_a"]\n'
                 '    return 1 / (1 + np.exp(-z))'),
        "relu_activation": _CELL.format(
            body='    return np.maximum(0, x_t @ params["W_ax"] + a_prev @ params["W_aa"] + params["b_a"])'),
        "transposed_recurrent_weight": _CELL.format(
            body='    return np.tanh(x_t @ params["W_ax"] + a_prev @ params["W_aa"].T + params["b_a"])'),
        "transposed_input_weight": _CELL.format(
            body='    return np.tanh((params["W_ax"] @ x_t.T).T + a_prev @ params["W_aa"] + params["b_a"])'),
        "no_activation": _CELL.format(
            body='    return x_t @ params["W_ax"] + a_prev @ params["W_aa"] + params["b_a"]'),
        "ignores_previous_state": _CELL.format(body='    return np.tanh(x_t @ params["W_ax"] + params["b_a"])'),
    },
    "encode": {
        "first_state_as_context": _ENCODE.format(body='''    batch, Tx, _ = X.shape
    a = np.zeros((batch, params["W_aa"].shape[1]))
    states = []
    for t in range(Tx):
        a = rnn_cell_forward(X[:, t, :], a, params)
        states.append(a)
    A = np.stack(states, axis=1)
    return A, A[:, 0, :]'''),
        "state_not_carried": _ENCODE.format(body='''    batch, Tx, _ = X.shape
    a0 = np.zeros((batch, params["W_aa"].shape[1]))
    A = np.stack([rnn_cell_forward(X[:, t, :], a0, params) for t in range(Tx)], axis=1)
    return A, A[:, -1, :]'''),
        "time_major_stack": _ENCODE.format(body='''    batch, Tx, _ = X.shape
    a = np.zeros((batch, params["W_aa"].shape[1]))
    states = []
    for t in range(Tx):
        a = rnn_cell_forward(X[:, t, :], a, params)
        states.append(a)
    return np.stack(states, axis=0), a'''),
        "initial_state_ones": _ENCODE.format(body='''    batch, Tx, _ = X.shape
    a = np.ones((batch, params["W_aa"].shape[1]))
    states = []
    for t in range(Tx):
        a = rnn_cell_forward(X[:, t, :], a, params)
        states.append(a)
    return np.stack(states, axis=1), a'''),
        "reads_backwards": _ENCODE.format(body='''    batch, Tx, _ = X.shape
    a = np.zeros((batch, params["W_aa"].shape[1]))
    states = []
    for t in reversed(range(Tx)):
        a = rnn_cell_forward(X[:, t, :], a, params)
        states.append(a)
    return np.stack(states[::-1], axis=1), a'''),
        "state_before_update_stored": _ENCODE.format(body='''    batch, Tx, _ = X.shape
    a = np.zeros((batch, params["W_aa"].shape[1]))
    states = []
    for t in range(Tx):
        states.append(a)
        a = rnn_cell_forward(X[:, t, :], a, params)
    return np.stack(states, axis=1), a'''),
    },
    "decoder_step": {
        "missing_context": _STEP.format(body='''    s_next = np.tanh(y_prev @ params["W_ys"] + s_prev @ params["W_ss"] + params["b_s"])
    z = s_next @ params["W_sy"] + params["b_y"]
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return s_next, e / e.sum(axis=-1, keepdims=True)'''),
        "missing_bias": _STEP.format(body='''    s_next = np.tanh(y_prev @ params["W_ys"] + s_prev @ params["W_ss"] + context @ params["W_cs"])
    z = s_next @ params["W_sy"] + params["b_y"]
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return s_next, e / e.sum(axis=-1, keepdims=True)'''),
        "softmax_over_batch": _STEP.format(body=_STEP_STATE + '''    z = s_next @ params["W_sy"] + params["b_y"]
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return s_next, e / e.sum(axis=0, keepdims=True)'''),
        "logits_not_probabilities": _STEP.format(body=_STEP_STATE + '''    return s_next, s_next @ params["W_sy"] + params["b_y"]'''),
        "unstable_softmax": _STEP.format(body=_STEP_STATE + '''    e = np.exp(s_next @ params["W_sy"] + params["b_y"])
    return s_next, e / e.sum(axis=-1, keepdims=True)'''),
        "output_from_previous_state": _STEP.format(body=_STEP_STATE + '''    z = s_prev @ params["W_sy"] + params["b_y"]
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return s_next, e / e.sum(axis=-1, keepdims=True)'''),
        "sigmoid_state": _STEP.format(body='''    s_next = 1 / (1 + np.exp(-(y_prev @ params["W_ys"] + s_prev @ params["W_ss"]
                               + context @ params["W_cs"] + params["b_s"])))
    z = s_next @ params["W_sy"] + params["b_y"]
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return s_next, e / e.sum(axis=-1, keepdims=True)'''),
    },
    "greedy_decode": {
        "no_feedback": _GREEDY.format(body=_GREEDY_START + '''    for i in range(Ty):
        s, y_hat = decoder_step(y, s, context, params)
        ids[:, i] = np.argmax(y_hat, axis=-1)
    return ids'''),
        "feeds_back_probabilities": _GREEDY.format(body=_GREEDY_START + '''    for i in range(Ty):
        s, y_hat = decoder_step(y, s, context, params)
        ids[:, i] = np.argmax(y_hat, axis=-1)
        y = y_hat
    return ids'''),
        "state_not_carried": _GREEDY.format(body=_GREEDY_START + '''    for i in range(Ty):
        _, y_hat = decoder_step(y, s, context, params)
        ids[:, i] = np.argmax(y_hat, axis=-1)
        y = np.eye(n_y)[ids[:, i]]
    return ids'''),
        "time_major_output": _GREEDY.format(body=_GREEDY_START + '''    out = []
    for i in range(Ty):
        s, y_hat = decoder_step(y, s, context, params)
        out.append(np.argmax(y_hat, axis=-1))
        y = np.eye(n_y)[out[-1]]
    return np.stack(out, axis=0)'''),
        "includes_start_token": _GREEDY.format(body=_GREEDY_START + '''    out = [np.full(batch, start_id)]
    for i in range(Ty - 1):
        s, y_hat = decoder_step(y, s, context, params)
        out.append(np.argmax(y_hat, axis=-1))
        y = np.eye(n_y)[out[-1]]
    return np.stack(out, axis=1)'''),
        "ignores_start_id": _GREEDY.format(body=_GREEDY_START.replace("y[:, start_id] = 1.0", "y[:, 0] = 1.0")
                                           + '''    for i in range(Ty):
        s, y_hat = decoder_step(y, s, context, params)
        ids[:, i] = np.argmax(y_hat, axis=-1)
        y = np.eye(n_y)[ids[:, i]]
    return ids'''),
    },
    "build_seq2seq": {
        "no_softmax": _BUILD.format(body='''    X = keras.Input(shape=(Tx, in_vocab_size))
    C = keras.layers.LSTM(n_a)(X)
    s = keras.layers.LSTM(n_s, return_sequences=True)(keras.layers.RepeatVector(Ty)(C))
    return keras.Model(X, keras.layers.Dense(out_vocab_size)(s))'''),
        "swapped_sizes": _BUILD.format(body='''    X = keras.Input(shape=(Tx, in_vocab_size))
    C = keras.layers.LSTM(n_s)(X)
    s = keras.layers.LSTM(n_a, return_sequences=True)(keras.layers.RepeatVector(Ty)(C))
    return keras.Model(X, keras.layers.Dense(out_vocab_size, activation="softmax")(s))'''),
        "gru_encoder": _BUILD.format(body='''    X = keras.Input(shape=(Tx, in_vocab_size))
    C = keras.layers.GRU(n_a)(X)
    s = keras.layers.LSTM(n_s, return_sequences=True)(keras.layers.RepeatVector(Ty)(C))
    return keras.Model(X, keras.layers.Dense(out_vocab_size, activation="softmax")(s))'''),
        "decoder_without_sequences": _BUILD.format(body='''    X = keras.Input(shape=(Tx, in_vocab_size))
    C = keras.layers.LSTM(n_a)(X)
    s = keras.layers.LSTM(n_s)(keras.layers.RepeatVector(Ty)(C))
    return keras.Model(X, keras.layers.Dense(out_vocab_size, activation="softmax")(s))'''),
        "repeats_input_length": _BUILD.format(body='''    X = keras.Input(shape=(Tx, in_vocab_size))
    C = keras.layers.LSTM(n_a)(X)
    s = keras.layers.LSTM(n_s, return_sequences=True)(keras.layers.RepeatVector(Tx)(C))
    return keras.Model(X, keras.layers.Dense(out_vocab_size, activation="softmax")(s))'''),
        "decoder_starts_from_encoder_state": _BUILD.format(body='''    X = keras.Input(shape=(Tx, in_vocab_size))
    C, h, c = keras.layers.LSTM(n_a, return_state=True)(X)
    s = keras.layers.LSTM(n_s, return_sequences=True)(keras.layers.RepeatVector(Ty)(C), initial_state=[h, c])
    return keras.Model(X, keras.layers.Dense(out_vocab_size, activation="softmax")(s))'''),
        "relu_decoder": _BUILD.format(body='''    X = keras.Input(shape=(Tx, in_vocab_size))
    C = keras.layers.LSTM(n_a)(X)
    s = keras.layers.LSTM(n_s, activation="relu", return_sequences=True)(keras.layers.RepeatVector(Ty)(C))
    return keras.Model(X, keras.layers.Dense(out_vocab_size, activation="softmax")(s))'''),
    },
}

CORRECT = {
    "rnn_cell_forward": {
        "einsum": _CELL.format(body='''    z = (np.einsum("bx,xa->ba", x_t, params["W_ax"]) + np.einsum("bh,ha->ba", a_prev, params["W_aa"])
         + params["b_a"][None, :])
    return np.tanh(z)'''),
        "tensorflow": "import tensorflow as tf\n" + _CELL.format(
            body='    return tf.tanh(tf.matmul(x_t, params["W_ax"]) + tf.matmul(a_prev, params["W_aa"]) + params["b_a"])'),
        "tanh_from_exponentials": _CELL.format(body='''    z = np.dot(x_t, params["W_ax"]) + np.dot(a_prev, params["W_aa"]) + params["b_a"]
    return 1 - 2 / (np.exp(2 * np.clip(z, -50, 50)) + 1)'''),
    },
    "encode": {
        "list_then_stack": _ENCODE.format(body='''    a = np.zeros((X.shape[0], params["W_aa"].shape[1]))
    states = []
    for x_t in np.moveaxis(X, 1, 0):
        a = rnn_cell_forward(x_t, a, params)
        states.append(a)
    A = np.stack(states, axis=1)
    return A, A[:, -1]'''),
        "inline_cell": _ENCODE.format(body='''    a = np.zeros((X.shape[0], params["W_aa"].shape[0]))
    A = np.empty((X.shape[0], X.shape[1], a.shape[1]))
    for t in range(X.shape[1]):
        a = np.tanh(X[:, t] @ params["W_ax"] + a @ params["W_aa"] + params["b_a"])
        A[:, t] = a
    return A, A[:, X.shape[1] - 1].copy()'''),
    },
    "decoder_step": {
        "log_sum_exp": _STEP.format(body='''    pre = (np.einsum("by,ys->bs", y_prev, params["W_ys"]) + np.einsum("bs,st->bt", s_prev, params["W_ss"])
           + np.einsum("ba,as->bs", context, params["W_cs"]) + params["b_s"])
    s_next = np.tanh(pre)
    z = s_next @ params["W_sy"] + params["b_y"]
    m = np.max(z, axis=1, keepdims=True)
    log_p = z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return s_next, np.exp(log_p)'''),
        "tensorflow": "import tensorflow as tf\n" + _STEP.format(body='''    s_next = tf.tanh(tf.matmul(y_prev, params["W_ys"]) + tf.matmul(s_prev, params["W_ss"])
                     + tf.matmul(context, params["W_cs"]) + params["b_s"])
    return s_next, tf.nn.softmax(tf.matmul(s_next, params["W_sy"]) + params["b_y"], axis=-1)'''),
        "concatenated_weights": _STEP.format(body='''    inputs = np.concatenate([y_prev, s_prev, context], axis=1)
    W = np.concatenate([params["W_ys"], params["W_ss"], params["W_cs"]], axis=0)
    s_next = np.tanh(inputs @ W + params["b_s"])
    z = s_next @ params["W_sy"] + params["b_y"]
    z = z - np.max(z, axis=-1)[:, None]
    return s_next, np.exp(z) / np.exp(z).sum(axis=-1)[:, None]'''),
    },
    "greedy_decode": {
        "list_of_steps": _GREEDY.format(body='''    n_y = params["b_y"].shape[0]
    s = np.zeros((context.shape[0], params["W_ss"].shape[0]))
    token = np.full(context.shape[0], start_id)
    out = []
    for _ in range(Ty):
        s, y_hat = decoder_step(np.eye(n_y)[token], s, context, params)
        token = y_hat.argmax(axis=1)
        out.append(token)
    return np.array(out, dtype=np.int64).T'''),
        "tensorflow_argmax": "import tensorflow as tf\n" + _GREEDY.format(body='''    n_y = int(params["b_y"].shape[0])
    s = np.zeros((context.shape[0], params["W_ss"].shape[0]))
    y = tf.one_hot(tf.fill([context.shape[0]], start_id), n_y, dtype=tf.float64)
    chosen = []
    for _ in range(Ty):
        s, y_hat = decoder_step(y.numpy(), s, context, params)
        k = tf.argmax(y_hat, axis=-1)
        chosen.append(k)
        y = tf.one_hot(k, n_y, dtype=tf.float64)
    return tf.stack(chosen, axis=1)'''),
    },
    "build_seq2seq": {
        "sequential_time_distributed": _BUILD.format(body='''    return keras.Sequential([
        keras.Input(shape=(Tx, in_vocab_size)),
        keras.layers.LSTM(n_a, return_sequences=False),
        keras.layers.RepeatVector(Ty),
        keras.layers.LSTM(n_s, return_sequences=True),
        keras.layers.TimeDistributed(keras.layers.Dense(out_vocab_size, activation="softmax")),
    ])'''),
        "sequential_input_shape_argument": _BUILD.format(body='''    return keras.Sequential([
        keras.layers.LSTM(n_a, input_shape=(Tx, in_vocab_size)),
        keras.layers.RepeatVector(Ty),
        keras.layers.LSTM(n_s, return_sequences=True),
        keras.layers.Dense(out_vocab_size, activation="softmax"),
    ])'''),
        "separate_softmax_and_state_output": _BUILD.format(body='''    inputs = keras.Input(shape=(Tx, in_vocab_size))
    _, C, _ = keras.layers.LSTM(n_a, return_sequences=True, return_state=True)(inputs)
    decoded = keras.layers.LSTM(n_s, return_sequences=True)(keras.layers.RepeatVector(Ty)(C))
    logits = keras.layers.Dense(out_vocab_size)(decoded)
    return keras.Model(inputs=inputs, outputs=keras.layers.Softmax(axis=-1)(logits))'''),
    },
}
