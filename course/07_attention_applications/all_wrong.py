"""07_attention_applications: one wrong answer for every answer cell, the "all wrong" student (tests/test_all_wrong.py).

Each keeps the exercise's names, signature and output shapes but computes nothing right; a notebook of them
must score 0. ALL_WRONG = {grade_id: code}; each code replaces the whole answer cell."""

ALL_WRONG = {
    "frame_signal": '''
def frame_signal(waveform, frame_length, hop_length):
    n_frames = 1 + (np.shape(waveform)[-1] - frame_length) // hop_length
    return np.zeros(np.shape(waveform)[:-1] + (n_frames, frame_length))
''',
    "log_mel_spectrogram": '''
def log_mel_spectrogram(waveform, filterbank, frame_length, hop_length):
    n_frames = 1 + (np.shape(waveform)[-1] - frame_length) // hop_length
    return np.zeros(np.shape(waveform)[:-1] + (n_frames, np.shape(filterbank)[0]))
''',
    "LocationAwareAttention": '''
class LocationAwareAttention(layers.Layer):
    def __init__(self, units, location_filters, location_kernel, **kwargs):
        super().__init__(**kwargs)
        self.query_dense = layers.Dense(units, use_bias=False)
        self.key_dense = layers.Dense(units)
        self.location_conv = layers.Conv1D(location_filters, location_kernel, padding="same", use_bias=False)
        self.location_dense = layers.Dense(units, use_bias=False)
        self.energy_dense = layers.Dense(1, use_bias=False)

    def call(self, query, keys, previous_weights, mask):
        hidden = self.query_dense(query)[:, None, :] + self.key_dense(keys)  # builds the sublayers, then ignored
        hidden = hidden + self.location_dense(self.location_conv(ops.expand_dims(previous_weights, -1)))
        self.energy_dense(hidden)
        return ops.sum(keys, axis=1) * 0.0, ops.sum(keys, axis=-1) * 0.0  # (batch, d_key), (batch, T) of zeros
''',
    "transcribe": '''
def transcribe(listen, spell_step, features, mask, max_length=TRANSCRIPT_LENGTH):
    keys, key_mask = listen(features, mask)
    batch, frames = np.shape(key_mask)
    return np.zeros((batch, max_length), dtype="int32"), np.zeros((batch, max_length, frames))
''',
    "RegionAttention": '''
class RegionAttention(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.feature_dense = layers.Dense(units)
        self.hidden_dense = layers.Dense(units, use_bias=False)
        self.energy_dense = layers.Dense(1, use_bias=False)

    def call(self, feature_grid, hidden):
        self.energy_dense(self.feature_dense(feature_grid) + self.hidden_dense(hidden)[:, None, None, :])  # builds them
        shape = ops.shape(feature_grid)
        return ops.sum(feature_grid, axis=(1, 2)) * 0.0, ops.zeros((shape[0], shape[1] * shape[2]))
''',
    "caption_images": '''
def caption_images(see, tell_step, images, max_length=CAPTION_LENGTH):
    _, H, W, _ = np.shape(see(images))
    return np.zeros((len(images), max_length), dtype="int32"), np.zeros((len(images), max_length, H, W))
''',
    
}
