"""Authoring: releasing student notebooks and the named-mistake catalogue, each assignment's folder (its answers and its settings), which earlier exercises each test calls, and simulated students."""
