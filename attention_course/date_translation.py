"""Shipped weights and evaluation for notebook 03 (date translation with attention).

The weights are stored by layer *role* (encoder, attention dense layers, post-attention LSTM,
output layer), not by layer name, so they load into any model with the notebook's architecture
whatever its layer names or the order its layers were created in.
"""
import numpy as np

from attention_course.datafiles import verified_path
from attention_course.kernel_side import beside_the_model

WEIGHTS_FILE = "date_translation/date_model_weights.npz"
ROLES = ("encoder", "attention_dense_tanh", "attention_dense_energy", "post_attention_lstm", "output")


def _role_layers(model) -> dict:
    """Map each role to the one layer of `model` that plays it; explain what is missing."""
    found = {}
    output_size = int(model.outputs[0].shape[-1])
    for layer in model.layers:
        kind = type(layer).__name__
        if kind == "Bidirectional":
            role = "encoder"
        elif kind == "LSTM":
            role = "post_attention_lstm"
        elif kind == "Dense":
            units = layer.units
            role = ("attention_dense_energy" if units == 1
                    else "output" if units == output_size else "attention_dense_tanh")
        else:
            continue
        if role in found:
            raise ValueError(f"Two layers play the role {role!r} ({found[role].name} and {layer.name}); "
                             "the shared layers must be created once and reused at every time step.")
        found[role] = layer
    missing = [role for role in ROLES if role not in found]
    if missing:
        raise ValueError(f"The model has no layer for {', '.join(missing)}; compare it with the summary above.")
    return found


def save_role_weights(model, path):
    arrays = {f"{role}/{i}": w for role, layer in _role_layers(model).items()
              for i, w in enumerate(layer.get_weights())}
    np.savez_compressed(path, **arrays)
    return path


def load_date_weights(model, relative=WEIGHTS_FILE):
    """Load the course's pretrained weights into `model` (checksum verified); return the model."""
    with np.load(verified_path(relative)) as stored:
        for role, layer in _role_layers(model).items():
            weights = [stored[f"{role}/{i}"] for i in range(len(layer.get_weights()))]
            shapes = [w.shape for w in layer.get_weights()]
            if [w.shape for w in weights] != shapes:
                raise ValueError(f"Layer {layer.name} ({role}) has weight shapes {shapes}, the shipped weights "
                                 f"{[w.shape for w in weights]}: check its units and inputs.")
            layer.set_weights(weights)
    return model


def run_eagerly(model, X, batch_size=2048):
    """The model's outputs for X with s0 = c0 = 0, as a list of arrays (one per output).

    Calls the model directly in chunks: for a few thousand examples this is faster than
    `model.predict`, which first traces a graph of the whole unrolled model.
    """
    chunks = []
    for start in range(0, len(X), batch_size):
        x = np.asarray(X[start:start + batch_size], dtype="float32")
        zeros = [np.zeros((len(x),) + tuple(int(d) for d in t.shape[1:]), dtype="float32") for t in model.inputs[1:]]
        outputs = model([x] + zeros, training=False)
        outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        chunks.append([np.asarray(o) for o in outputs])
    return [np.concatenate(parts, axis=0) for parts in zip(*chunks)]


def predict_indices(model, X, batch_size=2048):
    """Most likely output index at each step: (m, Ty)."""
    return np.stack(run_eagerly(model, X, batch_size), axis=1).argmax(axis=-1)  # (m, Ty)


def exact_match(model, X, Y, batch_size=2048):
    """Fraction of examples whose whole output string is right. Y is one-hot (m, Ty, vocab)."""
    return float((predict_indices(model, X, batch_size=batch_size) == Y.argmax(-1)).all(axis=1).mean())


@beside_the_model
def attention_maps(model, X, layer_name="attention_weights"):
    """The attention weights the model itself computes for inputs X: (m, Ty, Tx).

    Reads the outputs of every call of the shared softmax layer *inside this model's graph*
    (calls made while building other models are skipped), with the model's real inputs
    X, s0 = 0 and c0 = 0 — nothing about the sizes is assumed.
    """
    import keras

    layer = model.get_layer(layer_name)
    own_nodes = getattr(model, "_nodes", set())
    tensors = [node.output_tensors[0] for index, node in enumerate(layer._inbound_nodes)
               if f"{id(layer)}_ib-{index}" in own_nodes]
    if not tensors:
        raise ValueError(f"No call of layer {layer_name!r} belongs to this model.")
    reader = keras.Model(model.inputs, tensors)
    return np.stack([o[..., 0] for o in run_eagerly(reader, X)], axis=1)  # (m, Ty, Tx)


def dev_exact_match_callback(X, Y):
    """A Keras callback that records the exact-match accuracy on (X, Y) after every epoch."""
    import keras

    class DevExactMatch(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.scores = []

        def on_epoch_end(self, epoch, logs=None):
            self.scores.append(exact_match(self.model, X, Y))

    return DevExactMatch()


def draw_attention_step(ax=None):
    """Schematic of one attention step of the date model (what `one_step_attention` computes)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.8))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 6)
    ax.axis("off")

    def box(x, y, text, colour="#dde8f5", width=1.3):
        ax.text(x, y, text, ha="center", va="center", fontsize=10,
                bbox=dict(boxstyle="round,pad=0.3", fc=colour, ec="#4a6a8a", lw=1, alpha=1.0))

    def arrow(x0, y0, x1, y1):
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0), arrowprops=dict(arrowstyle="->", color="#333333", lw=1))

    inputs = [r"$a^{\langle 1\rangle}$", r"$a^{\langle 2\rangle}$", r"$\cdots$", r"$a^{\langle T_x\rangle}$"]
    xs = [1.0, 2.4, 3.8, 5.2]
    for x, label in zip(xs, inputs):
        box(x, 0.6, label)
        arrow(x, 0.95, x, 1.75)
        box(x, 2.1, "Dense tanh\nDense relu", "#f5ecd9")
        arrow(x, 2.5, x, 3.15)
    box(3.1, 3.5, r"softmax over $t'$  $\rightarrow$  $\alpha^{\langle t,1\rangle} \dots \alpha^{\langle t,T_x\rangle}$",
        "#e3f1df", 4.5)
    box(8.2, 2.1, r"$s^{\langle t-1\rangle}$" + "\n" + r"(RepeatVector $T_x$," + "\n"
        + r"concatenated to each $a^{\langle t'\rangle}$)",
        "#f3e0e8")
    arrow(7.1, 2.1, 5.95, 2.1)
    arrow(3.1, 3.85, 3.1, 4.55)
    box(3.1, 4.9, r"context$^{\langle t\rangle} = \sum_{t'} \alpha^{\langle t,t'\rangle} a^{\langle t'\rangle}$",
        "#e3f1df", 4.5)
    arrow(5.0, 4.9, 6.9, 4.9)
    box(8.2, 4.9, "post-attention LSTM\n" + r"$\rightarrow s^{\langle t\rangle},\ \hat y^{\langle t\rangle}$",
        "#f3e0e8")
    ax.set_title("One attention step: which input characters matter for output character t?")
    return ax
