"""Shipped weights and evaluation for notebook 03 (date translation with attention).

The weights are stored by layer *role* (encoder, attention dense layers, post-attention LSTM,
output layer), not by layer name, so they load into any model with the notebook's architecture
whatever its layer names or the order its layers were created in.
"""
import numpy as np

from attention_course.datafiles import verified_path
from attention_course.prediction import predict_in_chunks
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
    """The model's outputs for X with s0 = c0 = 0, as a list of arrays (one per output)."""
    X = np.asarray(X, dtype="float32")
    zeros = [np.zeros((len(X),) + tuple(int(d) for d in t.shape[1:]), dtype="float32") for t in model.inputs[1:]]
    outputs = predict_in_chunks(model, [X] + zeros, batch_size)
    return outputs if isinstance(outputs, list) else [outputs]


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
