"""Accuracy against input length: measure it, save it, load it, draw it (notebooks 01 and 03).

Notebook 01 measures the encoder-decoder without attention on the digit-reversal task
(attention_course.digit_strings) and ships the curve as ``datasets/length_curves/encoder_decoder.csv``;
notebook 03 draws its attention model's curve beside it with the same function.

Stable API:

- ``LengthCurve(name, lengths, exact_match, digit_accuracy, n_examples)``: numpy arrays, one entry
  per input length; ``exact_match`` is the fraction of examples with every output step right,
  ``digit_accuracy`` the fraction of the first `length` output digits right.
- ``accuracy_by_length(name, lengths, predicted_ids, target_ids)`` -> LengthCurve, from a model's
  predicted ids (n, T) and the target ids (n, T) of examples with input lengths (n,).
- ``save_length_curve(curve, path=None)``: CSV with columns length, n_examples, exact_match,
  digit_accuracy (default path ``datasets/length_curves/<name>.csv``; then refresh SHA256SUMS with
  ``python -m attention_course.datafiles``).
- ``load_length_curve(name)`` -> LengthCurve read from ``datasets/length_curves/<name>.csv``
  (checksum verified).
- ``plot_accuracy_by_length(curves, ax=None, title=None, metric="exact_match")`` -> Axes. ``curves``
  is one LengthCurve, a list of them, or a dict {legend label: LengthCurve}. Accuracy (0..1)
  against input length, one line per curve, colours taken from the course colormap.
"""
import csv
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from attention_course.datafiles import verified_path
from attention_course.heatmaps import COLORMAP
from attention_course.paths import datasets_dir

FIELDS = ("length", "n_examples", "exact_match", "digit_accuracy")
METRIC_LABELS = {"exact_match": "exact-match accuracy", "digit_accuracy": "digit accuracy"}


@dataclass(frozen=True)
class LengthCurve:
    """Accuracy per input length (all arrays have one entry per length, in increasing order)."""
    name: str
    lengths: np.ndarray
    exact_match: np.ndarray
    digit_accuracy: np.ndarray
    n_examples: np.ndarray


def accuracy_by_length(name, lengths, predicted_ids, target_ids):
    """Group examples by input length; exact match over all steps, digit accuracy over the first `length`."""
    lengths = np.asarray(lengths)
    predicted_ids, target_ids = np.asarray(predicted_ids), np.asarray(target_ids)
    if predicted_ids.shape != target_ids.shape or predicted_ids.shape[0] != lengths.shape[0]:
        raise ValueError(f"Need predicted and target ids of one shape (n, T) and n lengths; got "
                         f"{predicted_ids.shape}, {target_ids.shape} and {lengths.shape}")
    right = predicted_ids == target_ids  # (n, T)
    in_string = np.arange(right.shape[1])[None, :] < lengths[:, None]  # (n, T): the digit steps
    digit_right = (right & in_string).sum(axis=1) / lengths  # (n,)
    values = np.unique(lengths)
    return LengthCurve(
        name=name,
        lengths=values,
        exact_match=np.array([right[lengths == v].all(axis=1).mean() for v in values]),
        digit_accuracy=np.array([digit_right[lengths == v].mean() for v in values]),
        n_examples=np.array([(lengths == v).sum() for v in values]),
    )


def save_length_curve(curve, path=None):
    """Write the curve as CSV (default datasets/length_curves/<name>.csv); return the path."""
    path = Path(path) if path else datasets_dir() / "length_curves" / f"{curve.name}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(FIELDS)
        for row in zip(curve.lengths, curve.n_examples, curve.exact_match, curve.digit_accuracy):
            writer.writerow([int(row[0]), int(row[1]), f"{row[2]:.4f}", f"{row[3]:.4f}"])
    return path


def load_length_curve(name):
    """The curve shipped as datasets/length_curves/<name>.csv (checksum verified)."""
    with open(verified_path(f"length_curves/{name}.csv"), encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    column = lambda key, kind: np.array([kind(row[key]) for row in rows])  # noqa: E731
    return LengthCurve(name, column("length", int), column("exact_match", float),
                       column("digit_accuracy", float), column("n_examples", int))


def plot_accuracy_by_length(curves, ax=None, title=None, metric="exact_match"):
    """Accuracy (0..1) against input length, one line per curve; return the Axes."""
    if isinstance(curves, LengthCurve):
        curves = {curves.name: curves}
    elif not isinstance(curves, dict):
        curves = {curve.name: curve for curve in curves}
    if metric not in METRIC_LABELS:
        raise ValueError(f"metric must be one of {', '.join(METRIC_LABELS)}; got {metric!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.8))
    colours = plt.get_cmap(COLORMAP)(np.linspace(0.15, 0.75, max(len(curves), 2)))
    for colour, (label, curve) in zip(colours, curves.items()):
        ax.plot(curve.lengths, getattr(curve, metric), marker="o", markersize=3, color=colour, label=label)
    ax.set_xlabel("input length (digits)")
    ax.set_ylabel(METRIC_LABELS[metric])
    ax.set_ylim(-0.03, 1.03)
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    if title:
        ax.set_title(title)
    return ax
