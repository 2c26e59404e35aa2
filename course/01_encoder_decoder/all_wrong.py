"""01_encoder_decoder: one wrong answer for every answer cell, the "all wrong" student (tests/test_all_wrong.py).

Each keeps the exercise's names, signature and output shapes but computes nothing right; a notebook of them
must score 0. ALL_WRONG = {grade_id: code}; each code replaces the whole answer cell."""

ALL_WRONG = {
    "rnn_cell_forward": '''
def rnn_cell_forward(x_t, a_prev, params):
    return np.zeros((np.shape(x_t)[0], np.shape(params["W_aa"])[1]))
''',
    "encode": '''
def encode(X, params):
    batch, Tx, _ = np.shape(X)
    n_a = np.shape(params["W_aa"])[1]
    return np.zeros((batch, Tx, n_a)), np.zeros((batch, n_a))
''',
    "decoder_step": '''
def decoder_step(y_prev, s_prev, context, params):
    n_y = np.shape(params["W_sy"])[1]
    return np.zeros(np.shape(s_prev)), np.full((np.shape(y_prev)[0], n_y), 1.0 / n_y)  # uniform probabilities
''',
    "greedy_decode": '''
def greedy_decode(context, params, Ty, start_id):
    return np.zeros((np.shape(context)[0], Ty), dtype=int)
''',
    "build_seq2seq": '''
def build_seq2seq(Tx, Ty, n_a, n_s, in_vocab_size, out_vocab_size):
    X = keras.Input(shape=(Tx, in_vocab_size))
    context = keras.layers.LSTM(n_a)(X * 0.0)  # the right layers, but the input never reaches them
    repeated = keras.layers.RepeatVector(Ty)(context)
    states = keras.layers.LSTM(n_s, return_sequences=True)(repeated)
    return keras.Model(X, keras.layers.Dense(out_vocab_size, activation="softmax")(states))
''',
    "length_normalized_score": '''
def length_normalized_score(total_log_prob, length, alpha):
    return 0.0 * np.asarray(total_log_prob, dtype=float)
''',
    "beam_search": '''
def beam_search(step_fn, initial_state, start_id, end_id, beam_width, max_len, n_best=1, alpha=0.0):
    return [([end_id], 0.0)] * n_best
''',
    "modified_precision": '''
def modified_precision(candidates, references, n):
    return 0, 0
''',
    "bleu": '''
def bleu(candidates, references, max_n=4):
    return 0.0
''',
    "sequence_log_probability": '''
def sequence_log_probability(step_fn, initial_state, start_id, ids):
    return 0.0
''',
    "error_analysis": '''
def error_analysis(references, outputs, reference_scores, output_scores):
    return {"search": 0, "model": 0}
''',
    
}
