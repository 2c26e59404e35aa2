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
        "feeds_back_tokens_above_one_half": _GREEDY.format(body=_GREEDY_START + '''    for i in range(Ty):
        s, y_hat = decoder_step(y, s, context, params)
        ids[:, i] = np.argmax(y_hat, axis=-1)
        y = (y_hat > 0.5).astype(float)  # a one-hot only while the top probability is above one half
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


# --- The decoding part: beam search, length normalisation, BLEU, error analysis -------------------
def _changed(source, old, new):
    """`source` with one piece replaced; fails at import if the piece is gone (a stale mutant)."""
    assert old in source, f"mutant template no longer contains {old!r}"
    return source.replace(old, new)


_NORM_HEAD = "def length_normalized_score(total_log_prob, length, alpha):\n"
_BEAM = '''def beam_search(step_fn, initial_state, start_id, end_id, beam_width, max_len, n_best=1, alpha=0.0):
    live = [([], 0.0)]
    states = np.asarray(initial_state)[None]
    finished = []
    for _ in range(max_len):
        last_tokens = np.array([ids[-1] if ids else start_id for ids, _ in live])
        log_probs, new_states = step_fn(last_tokens, states)
        totals = np.array([total for _, total in live])[:, None] + np.asarray(log_probs)
        best = np.argsort(-totals, axis=None, kind="stable")[:beam_width]
        rows, tokens = np.unravel_index(best, totals.shape)
        next_live, keep_rows = [], []
        for row, token in zip(rows, tokens):
            candidate = (live[row][0] + [int(token)], float(totals[row, token]))
            if token == end_id:
                finished.append(candidate)
            else:
                next_live.append(candidate)
                keep_rows.append(row)
        live = next_live
        if not live:
            break
        states = np.asarray(new_states)[keep_rows]
    finished.extend(live)
    ranked = sorted(((ids, float(length_normalized_score(total, len(ids), alpha))) for ids, total in finished),
                    key=lambda pair: -pair[1])
    return ranked[:n_best]
'''
_PRECISION = '''def modified_precision(candidates, references, n):
    matches = total = 0
    for candidate, candidate_references in zip(candidates, references):
        counts = Counter(tuple(candidate[i:i + n]) for i in range(len(candidate) - n + 1))
        most_in_a_reference = Counter()
        for reference in candidate_references:
            for gram, count in Counter(tuple(reference[i:i + n]) for i in range(len(reference) - n + 1)).items():
                most_in_a_reference[gram] = max(most_in_a_reference[gram], count)
        matches += sum(min(count, most_in_a_reference[gram]) for gram, count in counts.items())
        total += sum(counts.values())
    return matches, total
'''
_BLEU = '''def bleu(candidates, references, max_n=4):
    c = sum(len(candidate) for candidate in candidates)
    r = sum(min((len(ref) for ref in refs), key=lambda length: (abs(length - len(candidate)), length))
            for candidate, refs in zip(candidates, references))
    log_precisions = []
    for n in range(1, max_n + 1):
        matches, total = modified_precision(candidates, references, n)
        if matches == 0:
            return 0.0
        log_precisions.append(np.log(matches / total))
    brevity_penalty = 1.0 if c > r else np.exp(1 - r / c)
    return float(brevity_penalty * np.exp(np.mean(log_precisions)))
'''
_SEQUENCE = '''def sequence_log_probability(step_fn, initial_state, start_id, ids):
    states = np.asarray(initial_state)[None]
    previous, total = start_id, 0.0
    for token in ids:
        log_probs, states = step_fn(np.array([previous]), states)
        total += float(np.asarray(log_probs)[0, token])
        previous = token
    return total
'''
_BLAME = '''def error_analysis(references, outputs, reference_scores, output_scores):
    counts = {"search": 0, "model": 0}
    for reference, output, reference_score, output_score in zip(references, outputs, reference_scores, output_scores):
        if list(reference) != list(output):
            counts["search" if reference_score > output_score else "model"] += 1
    return counts
'''

WRONG.update({
    "length_normalized_score": {
        "divides_by_length_ignoring_alpha": _NORM_HEAD + "    return total_log_prob / length\n",
        "multiplies_by_length_to_the_alpha": _NORM_HEAD + "    return total_log_prob * length ** alpha\n",
        "divides_by_alpha_times_length": _NORM_HEAD + "    return total_log_prob / (alpha * length) if alpha else total_log_prob\n",
        "subtracts_alpha_log_length": _NORM_HEAD + "    return total_log_prob - alpha * np.log(length)\n",
        "scalars_only": _NORM_HEAD + "    import math\n    return total_log_prob / math.pow(length, alpha)\n",
    },
    "beam_search": {
        "multiplies_probabilities": _changed(_changed(_changed(
            _BEAM, "live = [([], 0.0)]", "live = [([], 1.0)]"),
            "totals = np.array([total for _, total in live])[:, None] + np.asarray(log_probs)",
            "totals = np.array([total for _, total in live])[:, None] * np.exp(np.asarray(log_probs))"),
            "length_normalized_score(total, len(ids), alpha)",
            "length_normalized_score(np.log(total) if total > 0 else -np.inf, len(ids), alpha)"),
        "keeps_beam_width_per_hypothesis": _changed(
            _BEAM, "best = np.argsort(-totals, axis=None, kind=\"stable\")[:beam_width]\n"
                   "        rows, tokens = np.unravel_index(best, totals.shape)",
            "top = np.argsort(-totals, axis=1, kind=\"stable\")[:, :beam_width]\n"
            "        rows = np.repeat(np.arange(len(live)), top.shape[1])\n"
            "        tokens = top.reshape(-1)"),
        "finished_hypotheses_keep_growing": _changed(
            _BEAM, "            if token == end_id:\n                finished.append(candidate)\n            else:\n"
                   "                next_live.append(candidate)\n                keep_rows.append(row)",
            "            next_live.append(candidate)\n            keep_rows.append(row)"),
        "drops_finished_hypotheses": _changed(_BEAM, "                finished.append(candidate)", "                pass"),
        "state_of_the_wrong_hypothesis": _changed(
            _BEAM, "states = np.asarray(new_states)[keep_rows]", "states = np.asarray(new_states)[:len(keep_rows)]"),
        "ranks_by_the_last_token_only": _changed(
            _BEAM, "totals = np.array([total for _, total in live])[:, None] + np.asarray(log_probs)",
            "totals = 0 * np.array([total for _, total in live])[:, None] + np.asarray(log_probs)"),
        "start_token_in_the_ids": _changed(_BEAM, "live = [([], 0.0)]", "live = [([start_id], 0.0)]").replace(
            "ids[-1] if ids else start_id", "ids[-1]"),
        "end_token_left_out": _changed(
            _BEAM, "finished.append(candidate)", "finished.append((candidate[0][:-1], candidate[1]))"),
        "worst_first": _changed(_BEAM, "key=lambda pair: -pair[1])", "key=lambda pair: pair[1])"),
        "ignores_alpha": _changed(_BEAM, "length_normalized_score(total, len(ids), alpha)", "total"),
        "one_step_too_many": _changed(_BEAM, "for _ in range(max_len):", "for _ in range(max_len + 1):"),
        # The other beam convention: finished hypotheses do not use up slots; B live ones are kept each step.
        "finished_hypotheses_free_their_slots": _changed(
            _BEAM, "best = np.argsort(-totals, axis=None, kind=\"stable\")[:beam_width]",
            "order = np.argsort(-totals, axis=None, kind=\"stable\")\n"
            "        ends = np.unravel_index(order, totals.shape)[1] == end_id\n"
            "        best = order[:np.searchsorted(np.cumsum(~ends), beam_width) + 1]"),
        "end_id_taken_as_the_last_id": _changed(_BEAM, "            if token == end_id:",
                                                "            if token == totals.shape[1] - 1:"),
        "starts_from_token_0": _changed(_BEAM, "ids[-1] if ids else start_id", "ids[-1] if ids else 0"),
        "hypotheses live at max_len dropped": _changed(_BEAM, "    finished.extend(live)\n", ""),
    },
    "modified_precision": {
        "no_clipping": _changed(_PRECISION, "matches += sum(min(count, most_in_a_reference[gram]) for gram, count in counts.items())",
                                "matches += sum(count for gram, count in counts.items() if most_in_a_reference[gram])"),
        "clips_by_the_sum_over_references": _changed(
            _PRECISION, "most_in_a_reference[gram] = max(most_in_a_reference[gram], count)",
            "most_in_a_reference[gram] += count"),
        "counts_across_sentences": '''def modified_precision(candidates, references, n):
    candidate = [token for sentence in candidates for token in sentence]
    counts = Counter(tuple(candidate[i:i + n]) for i in range(len(candidate) - n + 1))
    most = Counter()
    for refs in references:
        for reference in refs:
            for gram, count in Counter(tuple(reference[i:i + n]) for i in range(len(reference) - n + 1)).items():
                most[gram] = max(most[gram], count)
    return sum(min(count, most[gram]) for gram, count in counts.items()), sum(counts.values())
''',
        "reference_ngrams_in_the_denominator": _changed(
            _PRECISION, "total += sum(counts.values())",
            "total += sum(len(r) - n + 1 for r in candidate_references[:1] if len(r) >= n)"),
        "first_reference_only": _changed(_PRECISION, "for reference in candidate_references:",
                                         "for reference in candidate_references[:1]:"),
        "ngrams_compared_as_joined_text": _changed(_changed(
            _PRECISION, "Counter(tuple(candidate[i:i + n])", "Counter(\"\".join(candidate[i:i + n])"),
            "Counter(tuple(reference[i:i + n])", "Counter(\"\".join(reference[i:i + n])"),
    },
    "bleu": {
        "no_brevity_penalty": _changed(_BLEU, "brevity_penalty = 1.0 if c > r else np.exp(1 - r / c)", "brevity_penalty = 1.0"),
        "brevity_penalty_always": _changed(_BLEU, "brevity_penalty = 1.0 if c > r else np.exp(1 - r / c)",
                                           "brevity_penalty = np.exp(1 - r / c)"),
        "arithmetic_mean": _changed(_BLEU, "np.exp(np.mean(log_precisions))", "np.mean(np.exp(log_precisions))"),
        "longest_reference": _changed(
            _BLEU, "min((len(ref) for ref in refs), key=lambda length: (abs(length - len(candidate)), length))",
            "max(len(ref) for ref in refs)"),
        "average_of_sentence_scores": '''def bleu(candidates, references, max_n=4):
    def one(candidate, refs):
        r = min((len(ref) for ref in refs), key=lambda length: (abs(length - len(candidate)), length))
        logs = []
        for n in range(1, max_n + 1):
            matches, total = modified_precision([candidate], [refs], n)
            if matches == 0:
                return 0.0
            logs.append(np.log(matches / total))
        return (1.0 if len(candidate) > r else np.exp(1 - r / len(candidate))) * np.exp(np.mean(logs))
    return float(np.mean([one(c, refs) for c, refs in zip(candidates, references)]))
''',
        "always_four_orders": _changed(_BLEU, "for n in range(1, max_n + 1):", "for n in range(1, 5):"),
        "first_listed_reference_on_a_tie": _changed(
            _BLEU, "key=lambda length: (abs(length - len(candidate)), length))",
            "key=lambda length: abs(length - len(candidate)))"),
        "longer_reference_on_a_tie": _changed(
            _BLEU, "key=lambda length: (abs(length - len(candidate)), length))",
            "key=lambda length: (abs(length - len(candidate)), -length))"),
    },
    "sequence_log_probability": {
        "feeds_the_start_token_every_step": _changed(_SEQUENCE, "        previous = token\n", ""),
        "leaves_out_the_last_token": _changed(_SEQUENCE, "for token in ids:", "for token in ids[:-1]:"),
        "keeps_the_first_state": _changed(_SEQUENCE, "log_probs, states = step_fn(np.array([previous]), states)",
                                          "log_probs, _ = step_fn(np.array([previous]), states)"),
        "product_of_probabilities": _changed(_changed(
            _SEQUENCE, "total += float(np.asarray(log_probs)[0, token])", "total *= float(np.exp(np.asarray(log_probs)[0, token]))"),
            "previous, total = start_id, 0.0", "previous, total = start_id, 1.0"),
    },
    "error_analysis": {
        "blames_the_other_side": _changed(_BLAME, 'counts["search" if reference_score > output_score else "model"]',
                                          'counts["model" if reference_score > output_score else "search"]'),
        "counts_right_outputs_too": _changed(_BLAME, "        if list(reference) != list(output):\n            counts",
                                             "        if True:\n            counts"),
        "ties_go_to_the_search": _changed(_BLAME, "reference_score > output_score", "reference_score >= output_score"),
        "outputs_compared_as_joined_text": _changed(_BLAME, "if list(reference) != list(output):",
                                                    "if \"\".join(map(str, reference)) != \"\".join(map(str, output)):"),
    },
})

CORRECT.update({
    "length_normalized_score": {
        "power_operator": _NORM_HEAD + "    return total_log_prob / length ** alpha\n",
        "exp_log_form": _NORM_HEAD + "    return total_log_prob * np.exp(-alpha * np.log(length))\n",
    },
    "beam_search": {
        "heap_of_candidates": '''def beam_search(step_fn, initial_state, start_id, end_id, beam_width, max_len, n_best=1, alpha=0.0):
    import heapq
    beam = [(0.0, [], np.asarray(initial_state))]
    done = []
    for _ in range(max_len):
        if not beam:
            break
        log_probs, new_states = step_fn(np.array([ids[-1] if ids else start_id for _, ids, _ in beam]),
                                        np.stack([state for _, _, state in beam]))
        log_probs, new_states = np.asarray(log_probs), np.asarray(new_states)
        candidates = [(total + log_probs[row, token], ids + [token], row)
                      for row, (total, ids, _) in enumerate(beam) for token in range(log_probs.shape[1])]
        beam = []
        for total, ids, row in heapq.nlargest(beam_width, candidates, key=lambda c: c[0]):
            if ids[-1] == end_id:
                done.append((total, ids))
            else:
                beam.append((total, ids, new_states[row]))
    done += [(total, ids) for total, ids, _ in beam]
    scored = [(ids, float(total / len(ids) ** alpha)) for total, ids in done]
    scored.sort(key=lambda pair: pair[1], reverse=True)
    return scored[:n_best]
''',
        "tensorflow_top_k": _changed(
            _BEAM, "best = np.argsort(-totals, axis=None, kind=\"stable\")[:beam_width]",
            "import tensorflow as tf\n"
            "        best = tf.math.top_k(tf.reshape(totals, [-1]), k=min(beam_width, totals.size)).indices.numpy()"),
    },
    "modified_precision": {
        "zip_ngrams_and_dicts": '''def modified_precision(candidates, references, n):
    def grams(tokens):
        counts = {}
        for gram in zip(*(tokens[i:] for i in range(n))):
            counts[gram] = counts.get(gram, 0) + 1
        return counts
    matches = total = 0
    for candidate, refs in zip(candidates, references):
        ref_counts = [grams(ref) for ref in refs]
        for gram, count in grams(candidate).items():
            matches += min(count, max((rc.get(gram, 0) for rc in ref_counts), default=0))
            total += count
    return matches, total
''',
        "counter_union": _changed(_changed(
            _PRECISION, "        most_in_a_reference = Counter()\n        for reference in candidate_references:\n"
            "            for gram, count in Counter(tuple(reference[i:i + n]) for i in range(len(reference) - n + 1)).items():\n"
            "                most_in_a_reference[gram] = max(most_in_a_reference[gram], count)\n",
            "        most_in_a_reference = Counter()\n        for reference in candidate_references:\n"
            "            most_in_a_reference |= Counter(tuple(reference[i:i + n]) for i in range(len(reference) - n + 1))\n"),
            "sum(min(count, most_in_a_reference[gram]) for gram, count in counts.items())",
            "sum((counts & most_in_a_reference).values())"),
    },
    "bleu": {
        "math_module_and_product": '''def bleu(candidates, references, max_n=4):
    import math
    c = sum(map(len, candidates))
    r = 0
    for candidate, refs in zip(candidates, references):
        r += sorted((abs(len(ref) - len(candidate)), len(ref)) for ref in refs)[0][1]
    product = 1.0
    for n in range(1, max_n + 1):
        matches, total = modified_precision(candidates, references, n)
        if not matches:
            return 0.0
        product *= matches / total
    return (math.exp(1 - r / c) if c <= r else 1.0) * product ** (1 / max_n)
''',
    },
    "sequence_log_probability": {
        "teacher_forced_ids_list": '''def sequence_log_probability(step_fn, initial_state, start_id, ids):
    inputs = [start_id] + list(ids[:-1])
    state = np.expand_dims(initial_state, 0)
    scores = []
    for fed, wanted in zip(inputs, ids):
        log_probs, state = step_fn(np.array([fed]), state)
        scores.append(log_probs[0][wanted])
    return float(np.sum(scores))
''',
    },
    "error_analysis": {
        "collections_counter": '''def error_analysis(references, outputs, reference_scores, output_scores):
    from collections import Counter as Tally
    tally = Tally(search=0, model=0)
    for ref, out, p_ref, p_out in zip(references, outputs, reference_scores, output_scores):
        if tuple(ref) == tuple(out):
            continue
        tally["search" if p_ref > p_out else "model"] += 1
    return dict(tally)
''',
    },
})

# Models that ignore their input, and a model that keeps its own weights whatever the test sets: tests whose
# expected values are properties (shapes, sums to 1) or come from the model's own weights would pass them.
from grader.authoring.assignment_answers import answer_editor  # noqa: E402

_edit = answer_editor(ASSIGNMENT)
WRONG["build_seq2seq"].update({
    "the input never reaches the encoder (X * 0)": _edit("build_seq2seq", "keras.layers.LSTM(n_a)(X)",
                                                         "keras.layers.LSTM(n_a)(X * 0.0)"),
    "set_weights does nothing": '''
class _Frozen(keras.Model):
    def set_weights(self, weights):
        pass
''' + _edit("build_seq2seq", "return keras.Model(X, probabilities)", "return _Frozen(X, probabilities)"),
})
