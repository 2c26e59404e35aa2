"""The course's schematic diagrams (boxes and arrows, no data), one function per picture.

Every notebook draws its diagrams from here, in the course's colormap, so they look alike.
"""
from functools import partial

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from attention_course.heatmaps import COLORMAP


def _text_box(ax, x, y, text, colour="#dde8f5"):
    """A rounded box of text centred on (x, y), in the style of the attention-step schematics."""
    ax.text(x, y, text, ha="center", va="center", fontsize=10,
            bbox=dict(boxstyle="round,pad=0.3", fc=colour, ec="#4a6a8a", lw=1))


def _canvas(ax, figsize):
    """The axes of an attention-step schematic: a 10 x 6 drawing area without axis lines."""
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 6)
    ax.axis("off")
    return ax


def _arrow(ax, x0, y0, x1, y1):
    ax.annotate("", xy=(x1, y1), xytext=(x0, y0), arrowprops=dict(arrowstyle="->", color="#333333", lw=1))


def draw_encoder_decoder(source, target, highlight=None, ax=None, title=None):
    """Encoder cells a_t over the source tokens, the context C, decoder cells s_i under the target tokens
    (notebook 01). `highlight` (\"cell\", \"encoder\", \"context\", \"step\", \"feedback\") colours one part."""
    colours = plt.get_cmap(COLORMAP)([0.25, 0.85])
    plain, marked = "#f2f2f2", colours[1]
    m, n = len(source), len(target)
    if ax is None:
        _, ax = plt.subplots(figsize=(1.1 * (m + n) + 2.5, 3.4))
    ax.set_xlim(-0.8, m + n + 1.4)
    ax.set_ylim(-2.0, 2.1)
    ax.axis("off")

    def box(x, y, text, on):
        ax.add_patch(FancyBboxPatch((x - 0.32, y - 0.28), 0.64, 0.56, boxstyle="round,pad=0.04",
                                    facecolor=marked if on else plain, edgecolor="black"))
        ax.text(x, y, text, ha="center", va="center", fontsize=11)

    def arrow(start, end, on=False, rad=0.0):
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12,
                                     connectionstyle=f"arc3,rad={rad}",
                                     color=colours[0] if on else "grey", lw=2.2 if on else 1.0))

    c_x = m + 0.2
    decoder_x = [m + 1.4 + i for i in range(n)]
    for t, token in enumerate(source):
        on = highlight == "encoder" or (highlight == "cell" and t == 1)
        ax.text(t, -1.45, token, ha="center", va="center", fontsize=12, fontweight="bold")
        arrow((t, -1.25), (t, -0.32), on)
        box(t, 0, f"$a_{{{t + 1}}}$", on)
        if t + 1 < m:
            arrow((t + 0.34, 0), (t + 0.66, 0), highlight == "encoder" or (highlight == "cell" and t == 0))
    arrow((m - 1 + 0.34, 0), (c_x - 0.34, 0), highlight == "encoder")
    box(c_x, 0, "$C$", highlight == "context")
    for i, (x, token) in enumerate(zip(decoder_x, target)):
        on = highlight == "step" and i == 1
        box(x, 0, f"$s_{{{i + 1}}}$", on or highlight == "feedback")
        arrow((c_x + 0.1, -0.3), (x - 0.1, -0.3), highlight in ("context", "step") and (highlight == "context" or i == 1),
              rad=0.35 if i else 0.0)
        if i:
            arrow((x - 0.66, 0), (x - 0.34, 0), on)
        arrow((x, 0.32), (x, 1.2), on)
        ax.text(x, 1.45, token, ha="center", va="center", fontsize=12, fontweight="bold")
        if i == 0:  # the start token plays the part of y_0
            ax.text(x - 0.75, 1.45, "<go>", ha="center", va="center", fontsize=10, color="grey")
        arrow((x - 1 + 0.15 if i else x - 0.65, 1.3), (x - 0.2, 0.3),
              highlight == "feedback" or (highlight == "step" and i == 1), rad=-0.25)
    ax.text((m - 1) / 2, 1.2, "encoder  $C = F(x_1, \\dots, x_m)$", ha="center", fontsize=11)
    ax.text(decoder_x[0] + (n - 1) / 2, -1.75, "decoder  $y_i = g(C, y_1, \\dots, y_{i-1})$",
            ha="center", fontsize=11)
    ax.text(-0.75, -1.45, "input", ha="right", va="center", fontsize=10)
    ax.text(decoder_x[-1] + 0.55, 1.45, "output", ha="left", va="center", fontsize=10)
    if title:
        ax.set_title(title)
    return ax


def draw_layer_pipeline(stages, highlight=None, ax=None, title=None):
    """Boxes for a chain of layers, each with its output shape underneath; `highlight` is the index of the
    box to colour (notebook 01's bottleneck). stages: [(layer text, shape text), ...]."""
    if ax is None:
        _, ax = plt.subplots(figsize=(2.2 * len(stages), 2.6))
    marked = plt.get_cmap(COLORMAP)(0.85)
    for k, (layer, shape) in enumerate(stages):
        ax.add_patch(FancyBboxPatch((2.5 * k - 1.0, -0.45), 2.0, 0.9, boxstyle="round,pad=0.05",
                                    facecolor=marked if k == highlight else "#f2f2f2", edgecolor="black"))
        ax.text(2.5 * k, 0, layer, ha="center", va="center", fontsize=10)
        ax.text(2.5 * k, -0.8, shape, ha="center", va="center", fontsize=9, family="monospace")
        if k:
            ax.annotate("", (2.5 * k - 1.07, 0), (2.5 * k - 1.43, 0), arrowprops={"arrowstyle": "-|>"})
    ax.set_xlim(-1.2, 2.5 * len(stages) - 1.3)
    ax.set_ylim(-1.1, 0.7)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax


def draw_beam_search_toy(ax=None):
    """The toy of notebook 01's beam search: the first step's three tokens and the second step's six
    continuations, the candidates a width-2 beam keeps in colour."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.6))
    kept = plt.get_cmap(COLORMAP)(0.85)
    first = {"A": 0.5, "B": 0.4, "end": 0.1}
    second = {"A": {"A": 0.3, "B": 0.3, "end": 0.4}, "B": {"A": 0.05, "B": 0.05, "end": 0.9}}
    ax.text(0, 0, "start", ha="center", va="center", bbox={"boxstyle": "round", "facecolor": "#f2f2f2"})
    for i, (token, p) in enumerate(first.items()):
        y = 1 - i
        ax.annotate("", (1.6, y), (0.35, 0), arrowprops={"arrowstyle": "->", "color": "grey"})
        ax.text(1.9, y, f"{token}\n{p:.2f}", ha="center", va="center",
                bbox={"boxstyle": "round", "facecolor": kept if token in second else "#f2f2f2"})
        for j, (after, q) in enumerate(second.get(token, {}).items()):
            y2 = y + 0.3 - 0.3 * j
            ax.annotate("", (3.95, y2), (2.2, y), arrowprops={"arrowstyle": "->", "color": "grey"})
            in_beam = (token, after) in {("B", "end"), ("A", "end")}
            ax.text(4.0, y2, f"{token} {after}: {p * q:.3f}", ha="left", va="center", fontsize=9,
                    bbox={"boxstyle": "round", "facecolor": kept if in_beam else "#f2f2f2"})
    ax.set_xlim(-0.5, 6.2)
    ax.set_ylim(-1.6, 1.6)
    ax.axis("off")
    ax.set_title("Beam search with B = 2 on the toy: probabilities of each string so far; kept ones coloured")
    return ax


def draw_attention_step(ax=None):
    """Schematic of one attention step of the date model (what `one_step_attention` computes)."""
    ax = _canvas(ax, figsize=(10, 4.8))
    box, arrow = partial(_text_box, ax), partial(_arrow, ax)

    inputs = [r"$a^{\langle 1\rangle}$", r"$a^{\langle 2\rangle}$", r"$\cdots$", r"$a^{\langle T_x\rangle}$"]
    xs = [1.0, 2.4, 3.8, 5.2]
    for x, label in zip(xs, inputs):
        box(x, 0.6, label)
        arrow(x, 0.95, x, 1.75)
        box(x, 2.1, "Dense tanh\nDense relu", "#f5ecd9")
        arrow(x, 2.5, x, 3.15)
    box(3.1, 3.5, r"softmax over $t'$  $\rightarrow$  $\alpha^{\langle t,1\rangle} \dots \alpha^{\langle t,T_x\rangle}$",
        "#e3f1df")
    box(8.2, 2.1, r"$s^{\langle t-1\rangle}$" + "\n" + r"(RepeatVector $T_x$," + "\n"
        + r"concatenated to each $a^{\langle t'\rangle}$)",
        "#f3e0e8")
    arrow(7.1, 2.1, 5.95, 2.1)
    arrow(3.1, 3.85, 3.1, 4.55)
    box(3.1, 4.9, r"context$^{\langle t\rangle} = \sum_{t'} \alpha^{\langle t,t'\rangle} a^{\langle t'\rangle}$",
        "#e3f1df")
    arrow(5.0, 4.9, 6.9, 4.9)
    box(8.2, 4.9, "post-attention LSTM\n" + r"$\rightarrow s^{\langle t\rangle},\ \hat y^{\langle t\rangle}$",
        "#f3e0e8")
    ax.set_title("One attention step: which input characters matter for output character t?")
    return ax


def draw_transformer(ax=None, num_layers="N"):
    """Schematic of the encoder-decoder Transformer of Vaswani et al. (2017), post-LN as in the paper."""
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


def draw_location_attention(ax=None):
    """Schematic of one location-aware attention step over encoded audio frames (Chorowski et al. 2015)."""
    ax = _canvas(ax, figsize=(10, 4.6))
    box, arrow = partial(_text_box, ax), partial(_arrow, ax)

    xs = [1.0, 2.3, 3.6, 4.9]
    labels = [r"$h_1$", r"$h_2$", r"$\cdots$", r"$h_T$"]
    previous = [r"$\alpha_{t-1,1}$", r"$\alpha_{t-1,2}$", r"$\cdots$", r"$\alpha_{t-1,T}$"]
    for x, label, before in zip(xs, labels, previous):
        box(x, 0.5, label)
        box(x, 1.5, before, "#f5ecd9")
        arrow(x, 0.85, x, 2.45)
        box(x, 2.8, r"$e_{t,j}$", "#e3f1df")
        arrow(x, 3.15, x, 3.75)
    ax.text(6.6, 1.5, r"location features $f_t = F * \alpha_{t-1}$" + "\n(a convolution over time)",
            ha="left", va="center", fontsize=9)
    ax.text(6.6, 0.5, "encoded frames (keys and values)", ha="left", va="center", fontsize=9)
    box(8.3, 2.8, r"decoder state $s_t$" + "\n(the query)", "#f3e0e8")
    arrow(7.3, 2.8, 5.45, 2.8)
    ax.text(6.4, 3.45, r"$e_{t,j} = w^\top\tanh(W s_t + V h_j + U f_{t,j} + b)$", ha="center", fontsize=9)
    box(2.95, 4.1, r"softmax over the frames $j$ $\rightarrow$ $\alpha_{t,1} \dots \alpha_{t,T}$", "#e3f1df")
    arrow(2.95, 4.45, 2.95, 5.0)
    box(2.95, 5.35, r"context $c_t = \sum_j \alpha_{t,j} h_j$", "#e3f1df")
    ax.annotate("", xy=(5.6, 1.5), xytext=(5.6, 4.1), arrowprops=dict(arrowstyle="->", color="#8a5a2a", lw=1,
                                                                        linestyle="--", connectionstyle="arc3,rad=-0.4"))
    ax.text(6.0, 4.3, r"$\alpha_t$ becomes $\alpha_{t-1}$ at the next step", fontsize=9, color="#8a5a2a")
    ax.set_title("Location-aware attention: where to listen for character t?")
    return ax


def draw_region_grid(image, grid, ax=None):
    """An image with its grid x grid regions drawn and numbered in row-major order (the order of reshape)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(4.6, 4.6))
    size = image.shape[0]
    ax.imshow(image, extent=(0, size, size, 0))
    step = size / grid
    for k in range(1, grid):
        ax.axhline(k * step, color="white", lw=0.6, alpha=0.7)
        ax.axvline(k * step, color="white", lw=0.6, alpha=0.7)
    for row in range(grid):
        for col in range(grid):
            ax.text((col + 0.5) * step, (row + 0.5) * step, str(row * grid + col), ha="center", va="center",
                    fontsize=8, color="white", alpha=0.9)
    ax.set_xlabel("x (pixels); columns of regions")
    ax.set_ylabel("y (pixels); rows of regions")
    ax.set_title(f"{grid} x {grid} regions, numbered row by row")
    return ax
