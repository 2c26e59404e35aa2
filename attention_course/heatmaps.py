"""The one heatmap helper of the course: every matrix figure uses the same colormap."""
import matplotlib.pyplot as plt
import numpy as np

COLORMAP = "viridis"


def plot_matrix(matrix, row_labels=None, col_labels=None, *, ax=None, title=None,
                xlabel=None, ylabel=None, vmin=None, vmax=None, colorbar_label=None,
                annotate=False, fmt="{:.2f}"):
    """Draw a 2-D array with labelled rows/columns and a colour bar; return the Axes."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"plot_matrix needs a 2-D array, got shape {matrix.shape}")
    n_rows, n_cols = matrix.shape
    for labels, n, what in ((row_labels, n_rows, "row"), (col_labels, n_cols, "column")):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{len(labels)} {what} labels for {n} {what}s of a {matrix.shape} matrix")
    if ax is None:
        width = min(2 + 0.45 * n_cols, 16)
        height = min(1.5 + 0.4 * n_rows, 12)
        _, ax = plt.subplots(figsize=(max(width, 4), max(height, 2.5)))
    image = ax.imshow(matrix, cmap=COLORMAP, vmin=vmin, vmax=vmax, aspect="auto")
    colorbar = ax.figure.colorbar(image, ax=ax)
    if colorbar_label:
        colorbar.set_label(colorbar_label)
    if row_labels is not None:
        ax.set_yticks(range(n_rows), labels=[str(t) for t in row_labels])
    if col_labels is not None:
        rotation = 90 if max((len(str(t)) for t in col_labels), default=0) > 3 else 0
        ax.set_xticks(range(n_cols), labels=[str(t) for t in col_labels], rotation=rotation)
    if annotate:
        middle = (np.nanmin(matrix) + np.nanmax(matrix)) / 2 if vmin is None else (vmin + vmax) / 2
        for i in range(n_rows):
            for j in range(n_cols):
                colour = "black" if matrix[i, j] > middle else "white"
                ax.text(j, i, fmt.format(matrix[i, j]), ha="center", va="center", color=colour, fontsize=9)
    if title:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    return ax


def plot_attention(weights, query_tokens, key_tokens, *, ax=None, title=None,
                   query_label="query (output)", key_label="key (input)", annotate=None):
    """Heatmap of attention weights (Tq, Tk) on a fixed 0..1 scale, tokens on both axes.

    Rows are queries (what is being produced), columns are keys (what is attended to).
    Values are annotated when the map is small enough to read them.
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(
            f"plot_attention draws one map of shape (Tq, Tk); got shape {weights.shape}. "
            "Select one example and one head first, e.g. weights[0]."
        )
    if annotate is None:
        annotate = weights.size <= 64
    return plot_matrix(weights, query_tokens, key_tokens, ax=ax, title=title,
                       xlabel=key_label, ylabel=query_label, vmin=0.0, vmax=1.0,
                       colorbar_label="attention weight", annotate=annotate)


def plot_attention_grid(weights, row_labels, col_labels, *, row_titles=None, col_titles=None,
                        query_label="query", key_label="key", cell_size=(3.2, 2.4), suptitle=None):
    """A grid of attention maps (rows of the grid: e.g. layers; columns: e.g. heads); return the Figure.

    weights: (n_rows, n_cols, Tq, Tk), or (n_cols, Tq, Tk) for one row, values 0..1. Every map gets
    the tokens on both axes (`row_labels`: the Tq queries, `col_labels`: the Tk keys), the course's
    colormap on the fixed 0..1 scale, and the figure one shared colour bar.
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim == 3:
        weights = weights[None]
    if weights.ndim != 4:
        raise ValueError(f"plot_attention_grid needs weights of shape (rows, columns, Tq, Tk); got {weights.shape}")
    n_rows, n_cols, n_queries, n_keys = weights.shape
    for labels, n, what in ((row_labels, n_queries, "query"), (col_labels, n_keys, "key")):
        if len(labels) != n:
            raise ValueError(f"{len(labels)} {what} labels for {n} {what} positions of maps of shape {weights.shape[2:]}")
    width = cell_size[0] * max(n_keys / 12, 1.0) * n_cols + 1.2
    height = cell_size[1] * max(n_queries / 12, 1.0) * n_rows + 0.6
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(width, height), squeeze=False, constrained_layout=True)
    image = None
    for i in range(n_rows):
        for j in range(n_cols):
            ax = axes[i, j]
            image = ax.imshow(weights[i, j], cmap=COLORMAP, vmin=0.0, vmax=1.0, aspect="auto")
            ax.set_xticks(range(n_keys), labels=[str(t) for t in col_labels], fontsize=7)
            ax.set_yticks(range(n_queries), labels=[str(t) for t in row_labels], fontsize=7)
            title = " · ".join(t for t in ((row_titles[i] if row_titles else ""), (col_titles[j] if col_titles else "")) if t)
            if title:
                ax.set_title(title, fontsize=9)
            if i == n_rows - 1:
                ax.set_xlabel(key_label, fontsize=8)
            if j == 0:
                ax.set_ylabel(query_label, fontsize=8)
    fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def plot_region_attention(image, maps, words, *, columns=5, panel_size=2.4):
    """The image once per word, with that word's attention over the regions laid on top; return the Figure.

    image (S, S, 3); maps (n_words, H, W), the weights on the region grid (each map sums to 1);
    words: the n_words generated words. One colour scale for all panels (0 to the largest weight),
    the course's colormap, one colour bar; at most `columns` panels per row.
    """
    maps = np.asarray(maps, dtype=float)
    if maps.ndim != 3 or len(maps) != len(words):
        raise ValueError(f"plot_region_attention needs maps of shape (n_words, H, W) and one word per map; "
                         f"got maps of shape {maps.shape} and {len(words)} words")
    size = image.shape[0]
    n_panels = len(words) + 1
    n_rows = -(-n_panels // columns)
    fig, axes = plt.subplots(n_rows, columns, figsize=(panel_size * columns + 1, panel_size * n_rows + 0.4),
                             squeeze=False, constrained_layout=True)
    axes = axes.ravel()
    axes[0].imshow(image)
    axes[0].set_title("image", fontsize=10)
    top = maps.max()
    overlay = None
    for ax, word, weights in zip(axes[1:], words, maps):
        ax.imshow(image)
        overlay = ax.imshow(weights, cmap=COLORMAP, vmin=0.0, vmax=top, alpha=0.65, extent=(0, size, size, 0),
                            interpolation="nearest")
        ax.set_title(word, fontsize=11)
    for ax in axes[:n_panels]:
        ax.set_xticks([0, size // 2, size])
        ax.set_yticks([0, size // 2, size])
        ax.tick_params(labelsize=7)
        ax.set_xlabel("x (pixels)", fontsize=7)
        ax.set_ylabel("y (pixels)", fontsize=7)
    for ax in axes[n_panels:]:
        ax.axis("off")
    fig.colorbar(overlay, ax=axes.tolist(), shrink=0.8, label="attention weight")
    return fig
