"""The helpers notebook 07 uses: the character error rate, the audio and region-attention plots, the records."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attention_course.training_records import load_training_record  # noqa: E402
from attention_course.audio import plot_spectrogram  # noqa: E402
from attention_course.captioned_scenes import object_centres, region_of  # noqa: E402
from attention_course.error_rates import character_error_rate, edit_distance  # noqa: E402
from attention_course.heatmaps import COLORMAP, plot_region_attention  # noqa: E402


@pytest.mark.parametrize("reference, hypothesis, distance", [
    ("", "", 0), ("407", "407", 0), ("407", "", 3), ("", "12", 2), ("4966", "496", 1), ("701", "7011", 1),
    ("1234", "1334", 1), ("kitten", "sitting", 3), ("abc", "cab", 2),
])
def test_edit_distance_counts_substitutions_insertions_and_deletions(reference, hypothesis, distance):
    assert edit_distance(reference, hypothesis) == distance == edit_distance(hypothesis, reference)


def test_character_error_rate_is_pooled_over_the_corpus():
    assert character_error_rate(["407", "12"], ["407", "13"]) == pytest.approx(1 / 5)
    assert character_error_rate(["4966"], ["4966666"]) == pytest.approx(3 / 4)  # insertions can exceed 100%
    with pytest.raises(ValueError, match="2 references but 1 hypotheses"):
        character_error_rate(["1", "2"], ["1"])
    with pytest.raises(ValueError, match="empty"):
        character_error_rate([""], ["1"])


def test_spectrogram_plot_has_time_in_seconds_and_a_colour_bar():
    ax = plot_spectrogram(np.zeros((50, 32)), 0.02, title="x")
    assert ax.get_xlabel() == "time (s)" and ax.get_ylabel() == "mel band"
    assert ax.images[0].get_extent()[:2] == [0, pytest.approx(1.0)]
    assert ax.images[0].get_cmap().name == COLORMAP and len(ax.figure.axes) == 2  # the colour bar
    with pytest.raises(ValueError, match=r"\(n_frames, n_mels\)"):
        plot_spectrogram(np.zeros((2, 50, 32)), 0.02)


def test_region_overlays_one_panel_per_word_on_the_image_grid():
    image = np.zeros((48, 48, 3), np.uint8)
    maps = np.full((3, 6, 6), 1 / 36)
    fig = plot_region_attention(image, maps, ["a", "red", "circle"])
    titled = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titled == ["image", "a", "red", "circle"]
    overlay = fig.axes[1].images[1]
    assert overlay.get_extent() == [0, 48, 48, 0] and overlay.get_cmap().name == COLORMAP
    assert any(ax.get_ylabel() == "attention weight" for ax in fig.axes)  # the colour bar
    with pytest.raises(ValueError, match="one word per map"):
        plot_region_attention(image, maps, ["a", "red"])


def test_object_centres_and_regions():
    boxes = np.array([[0, 0, 14, 14], [40, 20, 48, 28]])
    centres = object_centres(boxes)
    assert centres.tolist() == [[7.0, 7.0], [44.0, 24.0]]
    assert region_of(centres[0], 6) == (0, 0) and region_of(centres[1], 6) == (3, 5)
    assert region_of((48.0, 48.0), 6) == (5, 5)


def test_training_records_name_the_valid_ones():
    assert load_training_record("listen_attend_spell")["dev_cer"] <= 0.05
    with pytest.raises(ValueError, match="listen_attend_spell, show_attend_tell"):
        load_training_record("las")
