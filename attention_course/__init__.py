"""Helpers shared by the course notebooks: seeding, attention heatmaps, data loaders, checks.

Nothing here solves an exercise: the graded functions live only in the notebooks.
"""
from attention_course.seeding import set_seed
from attention_course.heatmaps import COLORMAP, plot_attention, plot_attention_grid, plot_matrix

__all__ = ["set_seed", "COLORMAP", "plot_attention", "plot_attention_grid", "plot_matrix"]
