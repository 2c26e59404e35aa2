"""attention_course.tensorflow_start: TensorFlow's C++ start-up notices are dropped, nothing else is."""
import subprocess
import sys

import pytest

PROGRAM = """
import sys
from attention_course.tensorflow_start import start_tensorflow
tensorflow = start_tensorflow()
assert start_tensorflow() is tensorflow
import keras
keras.layers.Dense(2)(keras.ops.ones((1, 3)))
print("after the start", file=sys.stderr)
"""


def test_tensorflow_starts_without_red_notices_and_later_stderr_still_shows():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"})
    assert done.returncode == 0, done.stderr
    assert done.stderr == "after the start\n", f"start-up notices left: {done.stderr!r}"


def test_without_it_tensorflow_prints_notices_the_helper_drops():
    """The notices are real: without the helper the same import prints them (else this module would test nothing)."""
    done = subprocess.run([sys.executable, "-c", "import os; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'; import keras; "
                           "keras.ops.ones((1,))"], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"})
    assert done.returncode == 0, done.stderr
    if not done.stderr.strip():
        pytest.skip("this TensorFlow prints no start-up notices here: nothing for the helper to drop")
