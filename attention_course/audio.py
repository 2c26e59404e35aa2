"""Audio constants and the mel filterbank of notebook 07 (listen, attend and spell).

Given code, not an exercise: cutting a waveform into frames and taking its log-mel spectrogram are
the student's job in the notebook (and the spoken-digits builder uses the notebook's own functions).

The speech is 8 kHz telephone-band audio; frames are 32 ms long every 20 ms, so one second of
speech gives about 50 frames, and each frame is summarised by N_MELS mel-band energies.
"""
import matplotlib.pyplot as plt
import numpy as np

from attention_course.heatmaps import COLORMAP

SAMPLE_RATE = 8000  # Hz
FRAME_LENGTH = 256  # samples: 32 ms
HOP_LENGTH = 160  # samples: 20 ms between frame starts
N_FFT = 256  # FFT points per frame: N_FFT // 2 + 1 = 129 frequency bins, 31.25 Hz apart
N_MELS = 32
LOG_FLOOR = 1e-6  # added to the mel energies before the log, so silence gives log(LOG_FLOOR), not -inf


def hz_to_mel(f):
    """Frequency in Hz -> mel (HTK formula): 2595 log10(1 + f / 700)."""
    return 2595.0 * np.log10(1.0 + np.asarray(f, dtype=np.float64) / 700.0)


def mel_to_hz(m):
    """Mel -> frequency in Hz, the inverse of hz_to_mel."""
    return 700.0 * (10.0 ** (np.asarray(m, dtype=np.float64) / 2595.0) - 1.0)


def mel_filterbank(n_mels=N_MELS, n_fft=N_FFT, sample_rate=SAMPLE_RATE, f_min=0.0, f_max=None):
    """Triangular mel filters as a float32 matrix (n_mels, n_fft // 2 + 1).

    Filter m rises from edge m to a peak of 1 at edge m + 1 and falls to 0 at edge m + 2, where the
    n_mels + 2 edges are equally spaced on the mel scale from f_min to f_max (default: the Nyquist
    frequency, sample_rate / 2). The filters are not area-normalised, so a pure tone at a filter's
    centre gives that filter its full power. Mel energies of power spectra (..., n_bins) are
    `power @ mel_filterbank().T`.
    """
    f_max = sample_rate / 2 if f_max is None else f_max
    edges = mel_to_hz(np.linspace(hz_to_mel(f_min), hz_to_mel(f_max), n_mels + 2))  # (n_mels + 2,)
    bins = np.arange(n_fft // 2 + 1) * sample_rate / n_fft  # (n_bins,) centre frequency of each FFT bin
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]  # (n_mels, 1) each
    rising = (bins - lower) / (centre - lower)
    falling = (upper - bins) / (upper - centre)
    return np.maximum(0.0, np.minimum(rising, falling)).astype(np.float32)  # (n_mels, n_bins)


def plot_spectrogram(log_mel, seconds_per_frame, *, title=None, ax=None):
    """Draw a log-mel spectrogram (n_frames, n_mels): time in seconds across, mel bands up; return the Axes."""
    log_mel = np.asarray(log_mel, dtype=float)
    if log_mel.ndim != 2:
        raise ValueError(f"plot_spectrogram draws one spectrogram of shape (n_frames, n_mels); got {log_mel.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 2.6))
    image = ax.imshow(log_mel.T, origin="lower", aspect="auto", cmap=COLORMAP,
                      extent=(0, len(log_mel) * seconds_per_frame, -0.5, log_mel.shape[1] - 0.5))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("mel band")
    ax.figure.colorbar(image, ax=ax, label="log mel energy")
    if title:
        ax.set_title(title)
    return ax
