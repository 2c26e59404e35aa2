"""Chinese characters in figures without a system CJK font.

The course ships a tiny subset of Noto Sans CJK SC (datasets/fonts, built by
datasets/build_cjk_font.py) that holds exactly the Chinese tokens the figures show.
`use_cjk_font()` registers it as a fallback behind Matplotlib's default font, so Latin text
keeps its usual look and the Chinese tokens are drawn instead of empty boxes.
"""
import matplotlib
from matplotlib import font_manager

from attention_course.datafiles import verified_path

FONT_FILE = "fonts/attention-course-cjk.otf"
LATIN_FAMILY = "DejaVu Sans"  # Matplotlib's default, shipped with it


def use_cjk_font() -> str:
    """Register the shipped CJK subset as a fallback font; return its family name."""
    path = verified_path(FONT_FILE)
    font_manager.fontManager.addfont(str(path))
    family = font_manager.FontProperties(fname=str(path)).get_name()
    # Matplotlib falls back glyph by glyph only across families named in font.family
    # (not across a generic list such as sans-serif), so name both explicitly.
    matplotlib.rcParams["font.family"] = [LATIN_FAMILY, family]
    return family
