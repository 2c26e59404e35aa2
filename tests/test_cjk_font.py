"""The shipped CJK font subset draws the Chinese tokens of the figures, and its builder reproduces it."""
import importlib.util
import warnings

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from attention_course.cjk import FONT_FILE, use_cjk_font  # noqa: E402
from attention_course.datafiles import datasets_dir  # noqa: E402
from tests.course_files import REPO  # noqa: E402


def test_chinese_tokens_render_without_missing_glyphs():
    family = use_cjk_font()
    assert family == "Attention Course CJK"
    fig, ax = plt.subplots()
    ax.set_yticks([0, 1, 2], labels=["汤姆", "追逐", "杰瑞"])
    ax.set_title("Tom chase Jerry → 汤姆 追逐 杰瑞")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Matplotlib warns "Glyph ... missing from font(s)"
        fig.canvas.draw()
    plt.close(fig)


def test_builder_reproduces_the_shipped_font(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("build_cjk_font", REPO / "datasets" / "build_cjk_font.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    if not builder.SOURCE.is_file():
        pytest.skip(f"{builder.SOURCE} not installed (apt-get install fonts-noto-cjk)")
    monkeypatch.setattr(builder, "OUT_DIR", tmp_path)
    monkeypatch.setattr(builder, "FONT_FILE", tmp_path / builder.FONT_FILE.name)
    monkeypatch.setattr(builder, "LICENSE_FILE", tmp_path / "OFL.txt")
    assert builder.main() == 0
    assert (tmp_path / builder.FONT_FILE.name).read_bytes() == (datasets_dir() / FONT_FILE).read_bytes(), (
        "datasets/build_cjk_font.py no longer reproduces the shipped font (fontTools or Noto changed?)")
    assert (tmp_path / "OFL.txt").read_text(encoding="utf-8") == (datasets_dir() / "fonts" / "OFL.txt").read_text(encoding="utf-8")
