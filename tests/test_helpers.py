"""The helper package: checks with useful messages, the heatmap helper, seeding, checksummed data."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attention_course import COLORMAP, checks, plot_attention, set_seed  # noqa: E402
from attention_course import datafiles  # noqa: E402


def test_check_shape_message_says_expected_got_and_hint():
    with pytest.raises(AssertionError) as error:
        checks.check_shape("weights", np.zeros((3, 2)), (2, 3), hint="softmax over the keys")
    assert str(error.value) == "weights (shape): expected (2, 3), got (3, 2). Hint: softmax over the keys"


def test_check_close_reports_values_and_nan():
    checks.check_close("same", [1.0, 2.0], [1.0, 2.0 + 1e-9])
    with pytest.raises(AssertionError, match=r"expected \[1\. 2\.\], got \[1\. 3\.\]"):
        checks.check_close("context", [1.0, 3.0], [1.0, 2.0])
    with pytest.raises(AssertionError, match="NaN at index"):
        checks.check_close("weights", [np.nan, 1.0], [0.0, 1.0])
    with pytest.raises(AssertionError, match="shape"):
        checks.check_close("weights", np.ones((2, 3)), np.ones((3, 2)))


def test_check_shape_accepts_wildcards_and_rejects_non_arrays():
    checks.check_shape("x", np.zeros((4, 5)), (None, 5))
    with pytest.raises(AssertionError, match="with no shape"):
        checks.check_shape("x", [1, 2], (2,))


def test_plot_attention_labels_both_axes_with_tokens_and_a_colour_bar():
    weights = np.array([[0.6, 0.2, 0.2], [0.2, 0.7, 0.1]])
    ax = plot_attention(weights, ["汤姆", "追逐"], ["Tom", "chase", "Jerry"], title="alignment")
    figure = ax.figure
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Tom", "chase", "Jerry"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["汤姆", "追逐"]
    image = ax.images[0]
    assert image.get_cmap().name == COLORMAP and image.get_clim() == (0.0, 1.0)
    assert len(figure.axes) == 2, "the heatmap needs a colour bar"
    assert ax.get_xlabel() and ax.get_ylabel()
    plt.close(figure)


def test_plot_attention_rejects_a_batch_with_a_hint():
    with pytest.raises(ValueError, match=r"weights\[0\]"):
        plot_attention(np.zeros((2, 3, 4)), ["a"] * 3, ["b"] * 4)


def test_set_seed_makes_numpy_draws_repeat():
    first = set_seed(7).normal(size=3), np.random.rand(2)
    second = set_seed(7).normal(size=3), np.random.rand(2)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_every_listed_data_file_matches_its_checksum():
    root = datafiles.datasets_dir()
    sums = datafiles.read_checksums(root)
    assert sums, "datasets/SHA256SUMS lists no files"
    for name, digest in sums.items():
        assert datafiles.sha256(root / name) == digest, f"{name} changed; rebuild it or restore it"


def test_a_tampered_file_is_refused(tmp_path, monkeypatch):
    (tmp_path / "data.txt").write_text("original")
    (tmp_path / "SHA256SUMS").write_text(f"{datafiles.sha256(tmp_path / 'data.txt')}  data.txt\n")
    monkeypatch.setenv("ATTENTION_COURSE_DATA", str(tmp_path))
    assert datafiles.verified_path("data.txt") == tmp_path / "data.txt"
    datafiles._verified.discard("data.txt")
    (tmp_path / "data.txt").write_text("edited")
    with pytest.raises(ValueError, match="Checksum mismatch"):
        datafiles.verified_path("data.txt")
    datafiles._verified.discard("data.txt")


def test_plot_attention_grid_draws_layers_by_heads_with_tokens_and_one_colour_bar():
    from attention_course import plot_attention_grid
    weights = np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 3, 5))  # (layers 2, heads 3, Tq 5, Tk 4)
    figure = plot_attention_grid(weights, list("abcde"), ["w", "x", "y", "z"], row_titles=["layer 1", "layer 2"],
                                 col_titles=["head 1", "head 2", "head 3"])
    maps = [ax for ax in figure.axes if ax.images]
    assert len(maps) == 6
    assert [t.get_text() for t in maps[0].get_xticklabels()] == ["w", "x", "y", "z"]
    assert [t.get_text() for t in maps[0].get_yticklabels()] == list("abcde")
    assert maps[4].get_title() == "layer 2 · head 2"
    assert all(ax.images[0].get_cmap().name == COLORMAP and ax.images[0].get_clim() == (0.0, 1.0) for ax in maps)
    assert len(figure.axes) == 7  # one shared colour bar
    plt.close(figure)
    with pytest.raises(ValueError, match="3 key labels for 4 key positions"):
        plot_attention_grid(weights, list("abcde"), ["w", "x", "y"])


def test_seconds_since_prints_the_clock_outside_grading_runs_only(monkeypatch):
    import time

    from attention_course.runtime import NOT_TIMED, seconds_since
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert seconds_since(time.perf_counter() - 2.26, 1) == "2.3 s" and seconds_since(time.perf_counter() - 7) == "7 s"
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert seconds_since(time.perf_counter() - 2.26, 1) == NOT_TIMED
