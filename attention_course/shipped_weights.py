"""The course's one way to put the shipped (pretrained) weights into a model.

`load_shipped_weights(model, relative_path)` checks the file against datasets/SHA256SUMS and loads it
whatever its format, so every notebook says the same thing: train (or skip training while grading),
show your own result, then `load_shipped_weights(...)`.

- `*.weights.h5`: Keras' own weights file (`model.save_weights`), for models built from the course's
  code (notebook 01's digit decoder, notebook 05's models);
- `*.npz` with keys `arr_0, arr_1, ...`: `model.get_weights()` order (notebook 01's seq2seq);
- `*.npz` with keys `<role>/<i>`: weights by layer role (notebook 03's date model), so they load into any
  correct student model whatever its layer names or creation order.
"""
import numpy as np

from attention_course.datafiles import verified_path


def load_shipped_weights(model, relative_path: str):
    """Load the shipped weights `datasets/<relative_path>` into `model`; return the model."""
    path = verified_path(relative_path)
    if relative_path.endswith(".weights.h5"):
        model.load_weights(str(path))
        return model
    with np.load(path) as stored:
        if all(key.startswith("arr_") for key in stored.files):
            model.set_weights([stored[f"arr_{k}"] for k in range(len(stored.files))])
            return model
    from attention_course.date_translation import load_date_weights  # the by-role format
    return load_date_weights(model, relative_path)
