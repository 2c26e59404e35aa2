"""Loaders for notebook 05's synthetic tasks (datasets/attention_in_models, built by
datasets/build_attention_in_models.py); its models' shipped weights load with
attention_course.shipped_weights.load_shipped_weights."""
import numpy as np

from attention_course.datafiles import verified_path
from attention_course.kernel_side import beside_the_model

TASKS = ("marker", "majority", "pairs", "reviews", "scenes", "images")


def load_task(name: str) -> dict:
    """All arrays of one task (checksums verified): token ids as int32, string lists as lists.

    Keys: `x_train`, `y_train`, `x_test`, `y_test` (or `a_*`/`b_*` for pairs, `q_*` questions for
    scenes, `images_*`/`shapes_*`/`cells_*` for images), plus `vocab`, `labels` and similar names.
    """
    if name not in TASKS:
        raise ValueError(f"Unknown task {name!r}; choose one of {', '.join(TASKS)}")
    with np.load(verified_path(f"attention_in_models/{name}.npz")) as data:
        arrays = {key: data[key] for key in data.files}
    out = {}
    for key, value in arrays.items():
        if value.dtype.kind == "U":
            out[key] = [str(v) for v in value]
        elif key.startswith("images"):
            out[key] = value.astype(np.float32) / 255.0  # (n, 32, 32, 3) in 0..1
        else:
            out[key] = value.astype(np.int32)
    return out


@beside_the_model
def masked_probe(pooling_layer, vocab_size: int, embed_dim: int, length: int):
    """(probe, embedding): a Keras model token ids -> pooling_layer(Embedding(mask_zero=True)(ids),
    return_weights=True), to test that a pooling layer honours the mask Keras passes it."""
    import keras

    tokens = keras.Input(shape=(length,), dtype="int32")
    embedding = keras.layers.Embedding(vocab_size, embed_dim, mask_zero=True)
    return keras.Model(tokens, pooling_layer(embedding(tokens), return_weights=True)), embedding
