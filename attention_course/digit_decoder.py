"""The digit-reversal model that feeds its own outputs back in (notebook 01, "pick the most likely string").

Notebook 01's `build_seq2seq` gives every output step the same context C and nothing else, so its
outputs are independent given the input and greedy decoding is already the most likely string. To
make search matter, this model's decoder also reads the previous output token, as in the
encoder-decoder frame y_i = g(C, y_1, ..., y_{i-1}): it models P(y_i | x, y_<i). The encoder's last
LSTM state (h, c) is the decoder's initial state: still one fixed context, no attention.

- Token ids: the digits 0-9 and `<pad>` of `digit_strings` (ids 0-10); the first `<pad>` the decoder
  writes ends the string, so END_ID = PAD_ID. START_ID = 11 is fed in before the first output only.
- `build_digit_decoder(units)` -> (model, encoder): the training model maps
  (one-hot source (batch, TX, 11), one-hot previous tokens (batch, T, 12)) to softmax (batch, T, 11);
  `encoder` maps the source to the initial state, concatenated [h, c]: (batch, 2 * units).
- `teacher_forcing_arrays(arrays)` -> (decoder inputs, targets) for `model.fit`.
- `DigitStepper(model, encoder)`: `initial_states(X)` and `step(token_ids, states) -> (log_probs, states)`,
  one decoder step in NumPy for any number of hypotheses at once; what beam search calls.
- `greedy_ids(stepper, X)`: the argmax chain for a whole batch at once, (n, STEPS) ids.
- `ids_to_digits(ids)`: the digits of one output, up to its end token.

Trained by `course_build/train_digit_decoder.py`; the weights ship in datasets/encoder_decoder/.
"""
import json

import numpy as np

from attention_course import digit_strings as ds
from attention_course.datafiles import verified_path
from attention_course.prediction import predict_in_chunks

END_ID = ds.PAD_ID
START_ID = ds.VOCAB_SIZE
DECODER_VOCAB = ds.VOCAB_SIZE + 1  # the output tokens and START
STEPS = ds.TY + 1  # 40 digits and the end token
UNITS = 64
WEIGHTS = "encoder_decoder/digit_decoder.weights.h5"
HISTORY = "encoder_decoder/digit_decoder_history.json"


def build_digit_decoder(units=UNITS):
    """Keras encoder-decoder whose decoder reads the previous token; returns (model, encoder)."""
    import keras

    source = keras.Input(shape=(ds.TX, ds.VOCAB_SIZE), name="source")  # (batch, TX, 11)
    _, h, c = keras.layers.LSTM(units, return_state=True, name="encoder")(source)  # (batch, units) each
    previous = keras.Input(shape=(None, DECODER_VOCAB), name="previous_tokens")  # (batch, T, 12)
    states = keras.layers.LSTM(units, return_sequences=True, name="decoder")(previous, initial_state=[h, c])
    probs = keras.layers.Dense(ds.VOCAB_SIZE, activation="softmax", name="next_token")(states)  # (batch, T, 11)
    model = keras.Model([source, previous], probs)
    encoder = keras.Model(source, keras.layers.Concatenate(name="context")([h, c]))  # (batch, 2 * units)
    return model, encoder


def target_ids(targets):
    """Right-padded ids (n, STEPS): the digits, then END (= `<pad>`) for every remaining step."""
    return ds.encode_targets(targets, length=STEPS)


def teacher_forcing_arrays(arrays):
    """(previous tokens one-hot (n, STEPS, 12), next-token ids (n, STEPS)) for training."""
    targets = target_ids(arrays.targets)  # (n, STEPS)
    previous = np.concatenate([np.full((len(targets), 1), START_ID), targets[:, :-1]], axis=1)  # (n, STEPS)
    return ds.one_hot(previous, depth=DECODER_VOCAB), targets


def load_history():
    """Per-epoch training record of the shipped weights (written by course_build/train_digit_decoder.py)."""
    return json.loads(verified_path(HISTORY).read_text())


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free logistic


class DigitStepper:
    """One decoder step of a trained `build_digit_decoder` model, in NumPy, for a stack of hypotheses.

    A state row is [h, c] of the decoder LSTM: (k, 2 * units) for k hypotheses. Keras' LSTM order of
    gates in its weight matrices is input, forget, cell, output.
    """

    def __init__(self, model, encoder):
        self.encoder = encoder
        decoder, output = model.get_layer("decoder"), model.get_layer("next_token")
        self.kernel, self.recurrent, self.bias = (np.asarray(w, dtype=np.float64) for w in decoder.get_weights())
        self.out_kernel, self.out_bias = (np.asarray(w, dtype=np.float64) for w in output.get_weights())
        self.units = self.recurrent.shape[0]

    def initial_states(self, X):
        """Decoder start states for a batch of one-hot sources (n, TX, 11): (n, 2 * units)."""
        X = np.asarray(X, dtype=np.float32)
        return np.asarray(predict_in_chunks(self.encoder, X), dtype=np.float64).reshape(len(X), 2 * self.units)

    def step(self, token_ids, states):
        """Log-probabilities of the next token (k, 11) and the new states (k, 2 * units)."""
        token_ids = np.asarray(token_ids, dtype=int).reshape(-1)  # (k,)
        states = np.asarray(states, dtype=np.float64).reshape(len(token_ids), 2 * self.units)
        h, c = states[:, :self.units], states[:, self.units:]  # (k, units) each
        # A one-hot input times the kernel is the kernel's row for that token.
        z = self.kernel[token_ids] + h @ self.recurrent + self.bias  # (k, 4 * units)
        i, f, g, o = np.split(z, 4, axis=-1)  # (k, units) each
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        logits = h @ self.out_kernel + self.out_bias  # (k, 11)
        logits = logits - logits.max(axis=-1, keepdims=True)
        log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        return log_probs, np.concatenate([h, c], axis=-1)  # (k, 11), (k, 2 * units)


def greedy_ids(stepper, X):
    """Greedy decoding of a batch: feed back the most likely token, STEPS times; (n, STEPS) ids."""
    states = stepper.initial_states(X)  # (n, 2 * units)
    tokens = np.full(len(states), START_ID)
    written = np.zeros((len(states), STEPS), dtype=int)  # (n, STEPS)
    for t in range(STEPS):
        log_probs, states = stepper.step(tokens, states)  # (n, 11), (n, 2 * units)
        tokens = log_probs.argmax(axis=-1)
        written[:, t] = tokens
    return written


def ids_to_digits(ids):
    """The digit string of one output: its tokens up to (not including) the first end token."""
    digits = []
    for token in ids:
        if int(token) == END_ID:
            break
        digits.append(ds.DIGITS[int(token)])
    return "".join(digits)
