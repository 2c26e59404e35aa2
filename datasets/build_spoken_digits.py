"""Build the spoken digit strings of notebook 07 ("listen, attend and spell").

Each utterance reads 3 to 8 random digits as words ("four zero seven" -> transcript "407"; espeak-ng
would read the number 407 as "four hundred and seven"). Per utterance, seeded per split:

1. espeak-ng speaks it with a random voice = language (accent) + variant (speaker), speed
   140-230 words per minute, pitch 25-75 (of 0-99) and a gap of 0-60 ms between words;
2. the 22050 Hz WAV is resampled to 8000 Hz (`resample`: an exact rational polyphase resampler,
   22050 * 160 / 441 = 8000, whose low-pass is a Kaiser-windowed sinc cut at 3.6 kHz so nothing
   above the new 4 kHz Nyquist frequency aliases back into the speech band);
3. leading and trailing silence is cut to 50 ms, the speech is scaled to a random peak level
   (0.3-0.9) and white noise is added at a random SNR (15-35 dB, relative to the mean power of
   the trimmed utterance); the result is rounded to 16 bits, like a recording;
4. its features come from notebook 07's own `log_mel_spectrogram` (the one source of the
   features), quantised to uint8 (attention_course.spoken_digits.quantise_log_mel).

Speaker split: all five accents occur in every split, but each voice variant belongs to one split
only (SPLITS), so dev and test measure how a model copes with speakers it never heard.

Output: datasets/spoken_digits/spoken_digits.npz (per split `<split>_features` uint8 (n, T_max,
N_MELS) padded with code 0, `_n_frames`, `_transcripts`, `_voices`, `_speeds`, `_pitches`,
`_word_gaps`, `_snr_db`) and examples.npz (6 test utterances as int16 waveforms). Run from the repo
root (about 2 minutes):

    python datasets/build_spoken_digits.py && python -m attention_course.datafiles
"""
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from attention_course.audio import (FRAME_LENGTH, HOP_LENGTH, LOG_FLOOR, N_MELS, SAMPLE_RATE,  # noqa: E402
                                    mel_filterbank)
from attention_course.spoken_digits import (DIGITS, LOG_MAX, LOG_MIN, MAX_DIGITS, MIN_DIGITS,  # noqa: E402
                                            quantise_log_mel)

OUT = Path(__file__).resolve().parent / "spoken_digits"
ESPEAK_RATE = 22050
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
LANGUAGES = ("en", "en-us", "en-gb-x-rp", "en-gb-scotland", "en-029")
# Variants are the speakers: human-sounding male and female ones (no whisper, croak or robots).
# train has 2500 utterances, not 3000, to keep spoken_digits.npz under 9 MB (the noise floor is
# what compresses badly).
SPLITS = {  # split -> (n utterances, seed, voice variants used only by this split)
    "train": (2500, 701, ("m1", "m2", "m3", "m4", "m5", "f1", "f2", "f3", "klatt", "david", "paul", "robert")),
    "dev": (300, 702, ("m6", "f4")),
    "test": (500, 703, ("m7", "f5", "edward")),
}
SPEEDS = (140, 230)  # words per minute, inclusive
PITCHES = (25, 75)  # espeak-ng's 0-99 scale, inclusive
WORD_GAPS = (0, 6)  # in 10 ms units, inclusive
SNR_DB = (15.0, 35.0)
PEAKS = (0.3, 0.9)  # peak amplitude of the clean speech
MARGIN = SAMPLE_RATE // 20  # 50 ms of silence kept before and after the speech
N_EXAMPLES = 6


class Utterance(NamedTuple):
    """Everything that decides one utterance; noise_seed seeds its noise alone, so any single
    utterance can be rebuilt without the others."""
    transcript: str
    voice: str
    speed: int
    pitch: int
    word_gap: int
    snr_db: float
    peak: float
    noise_seed: tuple


def utterance_settings(split):
    """The split's utterances, drawn from its seed: digits, voice and the synthesis settings."""
    n, seed, variants = SPLITS[split]
    rng = np.random.default_rng(seed)
    utterances = []
    for index in range(n):
        length = int(rng.integers(MIN_DIGITS, MAX_DIGITS + 1))
        transcript = "".join(DIGITS[d] for d in rng.integers(0, 10, size=length))
        voice = f"{LANGUAGES[rng.integers(len(LANGUAGES))]}+{variants[rng.integers(len(variants))]}"
        utterances.append(Utterance(
            transcript, voice,
            speed=int(rng.integers(SPEEDS[0], SPEEDS[1] + 1)),
            pitch=int(rng.integers(PITCHES[0], PITCHES[1] + 1)),
            word_gap=int(rng.integers(WORD_GAPS[0], WORD_GAPS[1] + 1)),
            snr_db=round(float(rng.uniform(*SNR_DB)), 1),  # rounded as stored, so a rebuild uses the same value
            peak=float(rng.uniform(*PEAKS)),
            noise_seed=(seed, index),
        ))
    return utterances


def espeak_version():
    """e.g. "1.51": another version speaks differently, so the committed data records it."""
    return subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, check=True).stdout.split()[3]


def synthesise(utterance, folder):
    """espeak-ng's 22050 Hz audio of the utterance as float64 in [-1, 1]."""
    path = Path(folder) / "utterance.wav"
    text = " ".join(WORDS[int(d)] for d in utterance.transcript)
    subprocess.run(
        ["espeak-ng", "-v", utterance.voice, "-s", str(utterance.speed), "-p", str(utterance.pitch),
         "-g", str(utterance.word_gap), "-w", str(path), text],
        check=True, capture_output=True)
    with wave.open(str(path), "rb") as handle:
        assert (handle.getframerate(), handle.getnchannels(), handle.getsampwidth()) == (ESPEAK_RATE, 1, 2)
        samples = np.frombuffer(handle.readframes(handle.getnframes()), dtype="<i2")
    return samples / 32768.0


def _resampling_filter(up, half_width, cutoff, beta):
    """Polyphase table (up, 2 * half_width): row p holds the low-pass taps for an output sample
    that falls p / up of the way between two input samples."""
    offsets = np.arange(-half_width + 1, half_width + 1)[None, :] - np.arange(up)[:, None] / up
    window = np.i0(beta * np.sqrt(np.clip(1 - (offsets / half_width) ** 2, 0, None))) / np.i0(beta)
    return cutoff * np.sinc(cutoff * offsets) * window  # cutoff: a fraction of the input Nyquist frequency


def resample(x, rate_in=ESPEAK_RATE, rate_out=SAMPLE_RATE, half_width=96, cutoff_hz=3600.0, beta=8.6):
    """Band-limited resampling by an exact rational factor (22050 -> 8000 is 160 / 441).

    Output sample n sits at input position n * down / up, found with integer arithmetic, so only
    `up` filter phases exist and are computed once. The filter is a sinc low-pass at cutoff_hz
    (below the output Nyquist frequency, leaving room for the transition band) under a Kaiser
    window of 2 * half_width input samples (beta 8.6: about 85 dB stop-band attenuation).
    """
    gcd = np.gcd(rate_in, rate_out)
    up, down = rate_out // gcd, rate_in // gcd
    table = _resampling_filter(up, half_width, 2 * cutoff_hz / rate_in, beta)  # (up, 2 * half_width)
    n_out = -(-len(x) * up // down)  # ceil
    position = np.arange(n_out) * down  # in units of 1 / up input samples
    first, phase = position // up, position % up  # (n_out,) each
    padded = np.pad(x, (half_width, half_width))
    taps = padded[first[:, None] + np.arange(1, 2 * half_width + 1)[None, :]]  # (n_out, 2 * half_width)
    return np.einsum("nk,nk->n", taps, table[phase])


def trim_silence(x, margin=MARGIN, threshold=0.01):
    """x cut to the speech (samples above threshold * peak) plus `margin` samples each side."""
    loud = np.flatnonzero(np.abs(x) > threshold * np.abs(x).max())
    return x[max(loud[0] - margin, 0): loud[-1] + margin + 1]


def render(utterance, folder):
    """The utterance as a noisy 16-bit recording at SAMPLE_RATE (int16)."""
    speech = trim_silence(resample(synthesise(utterance, folder)))
    speech *= utterance.peak / np.abs(speech).max()
    noise_power = np.mean(speech ** 2) / 10 ** (utterance.snr_db / 10)
    noise = np.random.default_rng(utterance.noise_seed).normal(0.0, np.sqrt(noise_power), size=len(speech))
    return np.clip(np.round((speech + noise) * 32768), -32768, 32767).astype(np.int16)


def notebook_log_mel():
    """Notebook 07's own log_mel_spectrogram(waveform, filterbank, frame_length, hop_length)."""
    from course_build.notebook_code import run_cells

    namespace = run_cells("07_attention_applications", ["frame_signal", "log_mel_spectrogram"],
                          namespace={"np": np, "LOG_FLOOR": LOG_FLOOR}, setup=False)
    return namespace["log_mel_spectrogram"]


def log_mel(recording, log_mel_spectrogram):
    """Float log-mel spectrogram (n_frames, N_MELS) of an int16 recording."""
    return log_mel_spectrogram(recording / 32768.0, mel_filterbank(), FRAME_LENGTH, HOP_LENGTH)


def build_split(split, folder, log_mel_spectrogram):
    """(arrays to save under `<split>_...`, the recordings, the raw log-mel range seen)."""
    utterances = utterance_settings(split)
    recordings, codes, low, high = [], [], np.inf, -np.inf
    for utterance in utterances:
        recording = render(utterance, folder)
        values = log_mel(recording, log_mel_spectrogram)
        low, high = min(low, values.min()), max(high, values.max())
        recordings.append(recording)
        codes.append(quantise_log_mel(values))
    n_frames = np.array([len(c) for c in codes], dtype=np.int16)
    padded = np.zeros((len(codes), n_frames.max(), N_MELS), dtype=np.uint8)  # code 0 = LOG_MIN, silence
    for row, c in zip(padded, codes):
        row[:len(c)] = c
    arrays = {
        "features": padded,
        "n_frames": n_frames,
        "transcripts": np.array([u.transcript for u in utterances]),
        "voices": np.array([u.voice for u in utterances]),
        "speeds": np.array([u.speed for u in utterances], dtype=np.int16),
        "pitches": np.array([u.pitch for u in utterances], dtype=np.int16),
        "word_gaps": np.array([u.word_gap for u in utterances], dtype=np.int16),
        "snr_db": np.array([u.snr_db for u in utterances], dtype=np.float32),
    }
    return arrays, recordings, (low, high)


def pick_examples(transcripts, voices):
    """Test indices of one utterance per length 3..N_EXAMPLES + 2, each with a voice not yet picked."""
    picked = []
    for length in range(MIN_DIGITS, MIN_DIGITS + N_EXAMPLES):
        picked.append(next(i for i, (t, v) in enumerate(zip(transcripts, voices))
                           if len(t) == length and v not in {voices[j] for j in picked}))
    return picked


def main():
    start = time.time()
    OUT.mkdir(exist_ok=True)
    log_mel_spectrogram = notebook_log_mel()
    saved = {"espeak_version": np.array(espeak_version()), "log_min": LOG_MIN, "log_max": LOG_MAX}
    with tempfile.TemporaryDirectory() as folder:
        for split in SPLITS:
            arrays, recordings, (low, high) = build_split(split, folder, log_mel_spectrogram)
            saved.update({f"{split}_{name}": value for name, value in arrays.items()})
            if split == "test":
                test_recordings = recordings
            n_frames = arrays["n_frames"]
            print(f"{split}: {len(n_frames)} utterances, frames min/mean/max {n_frames.min()}/"
                  f"{n_frames.mean():.1f}/{n_frames.max()}, log-mel range {low:.2f}..{high:.2f}")
            if high > LOG_MAX:
                print(f"  warning: log-mel values above LOG_MAX = {LOG_MAX} were clipped")
    np.savez_compressed(OUT / "spoken_digits.npz", **saved)

    test = [saved[f"test_{name}"].tolist() for name in ("transcripts", "voices")]
    indices = pick_examples(*test)
    waves = [test_recordings[i] for i in indices]
    padded = np.zeros((len(waves), max(map(len, waves))), dtype=np.int16)
    for row, w in zip(padded, waves):
        row[:len(w)] = w
    np.savez_compressed(OUT / "examples.npz", waveforms=padded, n_samples=np.array([len(w) for w in waves]),
                        test_indices=np.array(indices), transcripts=np.array([test[0][i] for i in indices]))
    for name in ("spoken_digits.npz", "examples.npz"):
        print(f"{name}: {(OUT / name).stat().st_size / 1e6:.2f} MB")
    print(f"built in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
