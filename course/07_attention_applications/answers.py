"""Wrong and differently written answers for notebook 07 (listen, attend and spell; show, attend and tell).

Each mutant is the notebook's own answer with one edit (`_edit`), so the mutants follow the notebook;
an edit that no longer applies fails loudly instead of silently testing the right answer.
"""
from grader.authoring.assignment_answers import answer_editor

ASSIGNMENT = "07_attention_applications"
_edit = answer_editor(ASSIGNMENT)


_FRAMES = "np.asarray(waveform)[..., index]"
_LOCATION_TERM = "\n                          + self.location_dense(location))"
_MASKING = "energies = ops.where(mask, energies, -1e9)"
_SOFTMAX = "weights = ops.softmax(energies, axis=-1)"
_ARGMAX = 'previous = np.asarray(logits).argmax(axis=-1).astype("int32")'
_REGIONS = "ops.reshape(feature_grid, (shape[0], shape[1] * shape[2], shape[3]))"

WRONG = {
    "frame_signal": {
        "frames do not overlap (a hop of frame_length)": _edit("frame_signal", "starts = hop_length *", "starts = frame_length *"),
        "one frame too few": _edit("frame_signal", "n_frames = 1 + (np.shape", "n_frames = (np.shape"),
        "frames as columns": _edit("frame_signal", f"return {_FRAMES}", f"return np.swapaxes({_FRAMES}, -1, -2)"),
        "the batch flattened into one signal": _edit("frame_signal", _FRAMES, "np.asarray(waveform).reshape(-1)[index]"),
        "frames of hop_length samples": _edit("frame_signal", "np.arange(frame_length)[None, :]", "np.arange(hop_length)[None, :]"),
        "a last frame padded with zeros": _edit(
            "frame_signal", "n_frames = 1 + (np.shape(waveform)[-1] - frame_length) // hop_length",
            "n_frames = 1 + -(-(np.shape(waveform)[-1] - frame_length) // hop_length)\n"
            "    waveform = np.concatenate([np.asarray(waveform), np.zeros(np.shape(waveform)[:-1] + (hop_length,))], axis=-1)"),
    },
    "log_mel_spectrogram": {
        "no window": _edit("log_mel_spectrogram", " * np.hanning(frame_length)", ""),
        "magnitude instead of power": _edit("log_mel_spectrogram", "axis=-1)) ** 2", "axis=-1))"),
        "log10 instead of the natural log": _edit("log_mel_spectrogram", "np.log(mel + LOG_FLOOR)", "np.log10(mel + LOG_FLOOR)"),
        "no floor before the log": _edit("log_mel_spectrogram", "np.log(mel + LOG_FLOOR)", "np.log(np.maximum(mel, 1e-30))"),
        "mel bands as rows (n_mels, n_frames)": _edit("log_mel_spectrogram", "return np.log(mel + LOG_FLOOR)",
                                                      "return np.swapaxes(np.log(mel + LOG_FLOOR), -1, -2)"),
        "an FFT of frame_length points": _edit("log_mel_spectrogram", "n=n_fft", "n=frame_length"),
        "a periodic Hann window": _edit("log_mel_spectrogram", "* np.hanning(frame_length)  #", "* np.hanning(frame_length + 1)[:-1]  #"),
    },
    "LocationAwareAttention": {
        "content only (no location term)": _edit("LocationAwareAttention", "+ self.key_dense(keys)  # (batch, T, units)" + _LOCATION_TERM,
                                                 "+ self.key_dense(keys))  # (batch, T, units): no location term"),
        "padding not masked": _edit("LocationAwareAttention", _MASKING, "energies = energies"),
        "mask inverted": _edit("LocationAwareAttention", _MASKING, "energies = ops.where(ops.logical_not(mask), energies, -1e9)"),
        "softmax over the batch": _edit("LocationAwareAttention", _SOFTMAX, "weights = ops.softmax(energies, axis=0)"),
        "mask applied after the softmax, not renormalised": _edit(
            "LocationAwareAttention", _MASKING, "energies = energies",
            _SOFTMAX, 'weights = ops.softmax(energies, axis=-1) * ops.cast(mask, "float32")'),
        "no tanh": _edit("LocationAwareAttention", "hidden = ops.tanh(", "hidden = ("),
        "context is the mean frame": _edit("LocationAwareAttention", 'ops.einsum("bt,btd->bd", weights, keys)',
                                           "ops.mean(keys, axis=1)"),
        "location convolution across the frames' axis": _edit("LocationAwareAttention", "ops.expand_dims(previous_weights, -1)",
                                                              "ops.expand_dims(previous_weights, 1)"),
    },
    "transcribe": {
        "carry never passed on": _edit("transcribe", "logits, carry, weights = spell_step(previous, carry, keys, key_mask)",
                                       "logits, _, weights = spell_step(previous, None, keys, key_mask)"),
        "always feeds <start>": _edit("transcribe", _ARGMAX, 'choice = np.asarray(logits).argmax(axis=-1).astype("int32")',
                                      "ids.append(previous)", "ids.append(choice)"),
        "argmax over the batch": _edit("transcribe", "argmax(axis=-1)", "argmax(axis=0)"),
        "maps stacked on the first axis": _edit("transcribe", "np.stack(maps, axis=1)", "np.stack(maps, axis=0)"),
        "keeps <start>, drops the last id": _edit("transcribe", "        ids.append(previous)\n", "",
                                                  "        logits, carry, weights = spell_step(",
                                                  "        ids.append(previous)\n        logits, carry, weights = spell_step("),
        "listens without the mask": _edit("transcribe", "key_mask = listen(features, mask)", "key_mask = listen(features, np.ones_like(mask))"),
        "softmax over the batch axis before the argmax": _edit(
            "transcribe", 'previous = np.asarray(logits).argmax(axis=-1).astype("int32")',
            'scores = np.exp(np.asarray(logits))\n'
            '        previous = (scores / scores.sum(axis=0, keepdims=True)).argmax(axis=-1).astype("int32")'),
        "starts from <pad> (id 0), not <start>": _edit("transcribe", "np.full(len(features), spoken_digits.START_ID,",
                                                        "np.full(len(features), 0,"),
    },
    "RegionAttention": {
        "regions flattened column by column": _edit("RegionAttention", _REGIONS,
                                                    "ops.reshape(ops.transpose(feature_grid, (0, 2, 1, 3)), "
                                                    "(shape[0], shape[1] * shape[2], shape[3]))"),
        "softmax over the batch": _edit("RegionAttention", "ops.squeeze(energies, -1), axis=-1)",
                                        "ops.squeeze(energies, -1), axis=0)"),
        "weights over the feature channels": _edit("RegionAttention", "weights = ops.softmax(ops.squeeze(energies, -1), axis=-1)",
                                                   "weights = ops.softmax(ops.mean(self.feature_dense(regions), axis=1), axis=-1)"),
        "decoder state ignored": _edit("RegionAttention", " + hidden_terms", ""),
        "no tanh": _edit("RegionAttention", "ops.tanh(self.feature_dense(regions) + hidden_terms)",
                         "self.feature_dense(regions) + hidden_terms"),
        "context is the mean region": _edit("RegionAttention", 'ops.einsum("br,brc->bc", weights, regions)',
                                            "ops.mean(regions, axis=1)"),
    },
    "caption_images": {
        "maps in column-major order": _edit("caption_images", ".reshape(-1, H, W)", ".reshape(-1, W, H).swapaxes(-1, -2)"),
        "maps of shape (W, H)": _edit("caption_images", ".reshape(-1, H, W)", ".reshape(-1, W, H)"),
        "carry never passed on": _edit("caption_images", "logits, carry, weights = tell_step(previous, carry, feature_grid)",
                                       "logits, _, weights = tell_step(previous, None, feature_grid)"),
        "always feeds <start>": _edit("caption_images", _ARGMAX, 'choice = np.asarray(logits).argmax(axis=-1).astype("int32")',
                                      "ids.append(previous)", "ids.append(choice)"),
        "maps left flat": _edit("caption_images", "np.asarray(weights).reshape(-1, H, W)", "np.asarray(weights)"),
        "softmax over the batch axis before the argmax": _edit(
            "caption_images", 'previous = np.asarray(logits).argmax(axis=-1).astype("int32")',
            'scores = np.exp(np.asarray(logits))\n'
            '        previous = (scores / scores.sum(axis=0, keepdims=True)).argmax(axis=-1).astype("int32")'),
        "starts from <pad> (id 0), not <start>": _edit("caption_images", "np.full(len(images), captioned_scenes.START_ID,",
                                                        "np.full(len(images), 0,"),
    },
}

CORRECT = {
    "frame_signal": {
        "sliding_window_view": _edit("frame_signal", f"return {_FRAMES}",
                                     "return np.lib.stride_tricks.sliding_window_view(np.asarray(waveform), frame_length, "
                                     "axis=-1)[..., ::hop_length, :]"),
        "a loop over frames": _edit("frame_signal", f"return {_FRAMES}",
                                    "return np.stack([np.asarray(waveform)[..., s:s + frame_length] for s in starts], axis=-2)"),
    },
    "log_mel_spectrogram": {
        "einsum with the filterbank": _edit("log_mel_spectrogram", "mel = power @ np.asarray(filterbank).T",
                                            'mel = np.einsum("...tf,mf->...tm", power, filterbank)'),
        "power as real^2 + imag^2": _edit("log_mel_spectrogram", "power = np.abs(np.fft.rfft(frames, n=n_fft, axis=-1)) ** 2",
                                          "spectrum = np.fft.rfft(frames, n=n_fft, axis=-1)\n"
                                          "    power = spectrum.real ** 2 + spectrum.imag ** 2"),
        "frames zero-padded by hand": _edit("log_mel_spectrogram", "np.fft.rfft(frames, n=n_fft, axis=-1)",
                                            "np.fft.rfft(np.concatenate([frames, np.zeros(frames.shape[:-1] + "
                                            "(n_fft - frame_length,))], axis=-1), axis=-1)"),
    },
    "LocationAwareAttention": {
        "context by matmul": _edit("LocationAwareAttention", 'context = ops.einsum("bt,btd->bd", weights, keys)',
                                   "context = ops.squeeze(ops.matmul(ops.expand_dims(weights, 1), keys), 1)"),
        "mask by adding a large negative number": _edit("LocationAwareAttention", _MASKING,
                                                        'energies = energies + (1.0 - ops.cast(mask, "float32")) * -1e9'),
    },
    "transcribe": {
        "preallocated arrays": '''def transcribe(listen, spell_step, features, mask, max_length=TRANSCRIPT_LENGTH):
    keys, key_mask = listen(features, mask)
    batch = len(features)
    ids = np.zeros((batch, max_length), dtype=int)
    previous, carry, maps = np.full(batch, spoken_digits.START_ID), None, None
    for t in range(max_length):
        logits, carry, weights = spell_step(previous, carry, keys, key_mask)
        weights = np.asarray(weights)
        if maps is None:
            maps = np.zeros((batch, max_length) + weights.shape[1:])
        previous = np.argmax(np.asarray(logits), axis=1)
        ids[:, t], maps[:, t] = previous, weights
    return ids, maps
''',
    },
    "RegionAttention": {
        "reshape with -1": _edit("RegionAttention", _REGIONS, "ops.reshape(feature_grid, (shape[0], -1, shape[3]))"),
        "context by matmul": _edit("RegionAttention", 'ops.einsum("br,brc->bc", weights, regions)',
                                   "ops.squeeze(ops.matmul(ops.expand_dims(weights, 1), regions), 1)"),
    },
    "caption_images": {
        "np.reshape with the batch size": _edit("caption_images", "np.asarray(weights).reshape(-1, H, W)",
                                                "np.reshape(np.asarray(weights), (len(images), H, W))"),
        "maps reshaped once at the end": _edit("caption_images", "np.asarray(weights).reshape(-1, H, W)", "np.asarray(weights)",
                                               "np.stack(maps, axis=1)  #", "np.stack(maps, axis=1).reshape(len(images), max_length, H, W)  #"),
    },
}

# Layers whose sublayers keep zero weights whatever the test sets (every energy 0: uniform weights over the real
# frames or regions): tests whose references came from the sublayers' own weights would accept them.
_FROZEN = '''
class _FrozenDense(layers.Dense):  # starts at zero and keeps its weights
    def __init__(self, *args, **kwargs):
        super().__init__(*args, kernel_initializer="zeros", **kwargs)

    def set_weights(self, weights):
        pass


class _FrozenConv1D(layers.Conv1D):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, kernel_initializer="zeros", **kwargs)

    def set_weights(self, weights):
        pass
'''


def _frozen(exercise):
    code = answer_editor(ASSIGNMENT)(exercise).replace("layers.Dense(", "_FrozenDense(")
    return _FROZEN + code.replace("layers.Conv1D(", "_FrozenConv1D(")


WRONG["LocationAwareAttention"]["sublayers keep zero weights (set_weights does nothing)"] = _frozen("LocationAwareAttention")
WRONG["RegionAttention"]["sublayers keep zero weights (set_weights does nothing)"] = _frozen("RegionAttention")
