"""Helpers for notebook 06 (the Transformer on the dates): positions, the shipped weights, the
recorded training runs, and a schematic of the model.

`positional_encoding` is the sinusoidal encoding of notebook 04 (Vaswani et al. 2017), given here so
that notebook 06 can use it without asking for it again. Nothing here builds a layer of the model:
the graded classes live only in the notebook.
"""
import json

import numpy as np

from attention_course.datafiles import verified_path

WEIGHTS_FILE = "transformer/transformer_dates.weights.h5"
RECORDS = ("transformer", "date_attention", "transformer_digits")


def positional_encoding(max_len, d_model):
    """Sinusoidal positions, float32 (max_len, d_model): sin on even dimensions, cos on odd ones."""
    positions = np.arange(max_len)[:, None]  # (max_len, 1)
    pair = np.arange(d_model)[None, :] // 2  # (1, d_model): dimensions 2i and 2i+1 share a frequency
    angles = positions / np.power(10000.0, 2 * pair / d_model)  # (max_len, d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles)).astype("float32")


def weights_path(relative=WEIGHTS_FILE) -> str:
    """Checked path of the shipped Transformer weights (made by grader/train_transformer.py)."""
    return str(verified_path(relative))


def load_training_record(name: str) -> dict:
    """A training run recorded by grader/train_transformer.py (checksum verified).

    Keys: `model`, `parameters`, `history` (one dict per epoch: `epoch`, `seconds` since the start of
    training, `dev_exact_match`), `test_exact_match`, `translate_seconds` (the 2,000 test dates),
    `command`, `cores`, `date`, `note`.
    """
    if name not in RECORDS:
        raise ValueError(f"Unknown training record {name!r}; choose one of {', '.join(RECORDS)}")
    with open(verified_path(f"transformer/{name}_training.json"), encoding="utf-8") as handle:
        return json.load(handle)


def seconds_to_reach(record: dict, threshold: float):
    """(epoch, seconds) of the first epoch whose dev exact match reached `threshold`, or (None, None)."""
    for row in record["history"]:
        if row["dev_exact_match"] >= threshold:
            return row["epoch"], row["seconds"]
    return None, None


def draw_transformer(ax=None, num_layers="N"):
    """Schematic of the encoder-decoder Transformer of Vaswani et al. (2017), post-LN as in the paper."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from attention_course.heatmaps import COLORMAP

    if ax is None:
        _, ax = plt.subplots(figsize=(10, 7.5))
    cmap = plt.get_cmap(COLORMAP)
    colours = {"embed": cmap(0.85), "attn": cmap(0.55), "norm": cmap(0.95), "ffn": cmap(0.35), "out": cmap(0.7)}

    def box(x, y, text, kind, width=2.6, height=0.5):
        ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.05",
                                    facecolor=colours[kind], edgecolor="black", linewidth=0.8, alpha=0.9))
        ax.text(x, y, text, ha="center", va="center", fontsize=9,
                color="white" if kind in ("attn", "ffn") else "black")

    def arrow(start, end, **style):
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, linewidth=1, **style))

    enc_x, dec_x = 2.0, 6.5
    enc = [(1.0, "source ids → Embedding × √d_model\n+ positional encoding", "embed"),
           (2.2, "multi-head self-attention\n(padding mask)", "attn"), (3.0, "add & LayerNorm", "norm"),
           (3.9, "feed-forward (ReLU)", "ffn"), (4.7, "add & LayerNorm", "norm")]
    dec = [(1.0, "target ids (shifted right) → Embedding\n× √d_model + positional encoding", "embed"),
           (2.2, "masked multi-head self-attention\n(look-ahead mask)", "attn"), (3.0, "add & LayerNorm", "norm"),
           (3.9, "cross-attention: Q from decoder,\nK, V from encoder (padding mask)", "attn"),
           (4.7, "add & LayerNorm", "norm"), (5.6, "feed-forward (ReLU)", "ffn"), (6.4, "add & LayerNorm", "norm"),
           (7.5, "Dense → logits over the target vocabulary", "out")]
    for (y, text, kind) in enc:
        box(enc_x, y, text, kind, width=3.2, height=0.62 if "\n" in text else 0.45)
    for (y, text, kind) in dec:
        box(dec_x, y, text, kind, width=3.4, height=0.62 if "\n" in text else 0.45)
    for stack, x in ((enc, enc_x), (dec, dec_x)):
        for (y0, _, _), (y1, _, _) in zip(stack, stack[1:]):
            arrow((x, y0 + 0.33), (x, y1 - 0.3))
    # residual connections: around each sublayer into its add & norm
    for x, pairs in ((enc_x, [(1.0, 3.0), (3.0, 4.7)]), (dec_x, [(1.0, 3.0), (3.0, 4.7), (4.7, 6.4)])):
        for y0, y1 in pairs:
            arrow((x - 1.75, y0 + 0.2), (x - 1.75, y1), connectionstyle="arc3,rad=0", color="grey", linestyle="--")
    arrow((enc_x + 1.6, 4.7), (dec_x - 1.7, 3.9), connectionstyle="arc3,rad=-0.2", color="black")
    for x, y0, y1 in ((enc_x, 1.8, 5.1), (dec_x, 1.8, 6.8)):
        ax.add_patch(FancyBboxPatch((x - 2.0, y0), 4.0, y1 - y0, boxstyle="round,pad=0.1", fill=False,
                                    linestyle=":", edgecolor="grey"))
        ax.text(x + 2.05, y1, f"× {num_layers}", fontsize=10, va="top")
    ax.text(enc_x, 5.45, "Encoder", ha="center", fontsize=11, weight="bold")
    ax.text(dec_x, 8.05, "Decoder", ha="center", fontsize=11, weight="bold")
    ax.text(0.02, 0.0, "dashed: residual connections (x + sublayer(x), then LayerNorm: post-LN)",
            transform=ax.transAxes, fontsize=8, color="grey")
    ax.set_xlim(-0.3, 9.0)
    ax.set_ylim(0.1, 8.4)
    ax.axis("off")
    return ax
