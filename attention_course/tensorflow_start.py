"""TensorFlow started without its C++ start-up notices.

While its C++ libraries load, TensorFlow prints "Could not find cuda drivers on your machine" and absl's
"All log messages before absl::InitializeLog() is called are written to STDERR" straight to the process's
stderr, before TF_CPP_MIN_LOG_LEVEL is read; a notebook shows them in red although nothing is wrong.
`start_tensorflow()`, called before the first `import keras`, loads TensorFlow with the stderr file
descriptor pointed at /dev/null for that moment only: a Python error while importing still raises and
shows, and every later warning prints as usual.
"""
import os
import sys


def start_tensorflow():
    """Import TensorFlow once, its C++ start-up notices dropped; returns the module."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TensorFlow's later C++ notices too
    if "tensorflow" not in sys.modules:
        sys.stderr.flush()
        saved = os.dup(2)
        silent = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(silent, 2)
            import tensorflow  # noqa: F401 (loaded here so that its notices are dropped)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(silent)
    return sys.modules["tensorflow"]
