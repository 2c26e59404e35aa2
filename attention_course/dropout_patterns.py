"""Read back which units a Dropout kept, from a layer's output: dropout tested at a middle rate.

At a rate of 1 - 2**-24 every unit is dropped, so one Dropout and two look the same, and so do a
Dropout in the right place and one more inside a sublayer; at 0.5 they differ. Where a test knows
everything else about a layer (its weights are the test's, the other sublayers silenced by theirs),
the output at each position is a known function of which of its d_model units the Dropout kept:
trying all 2**d_model patterns reads the pattern back. An output that no pattern gives was dropped
twice, at another rate, scaled otherwise, or somewhere else as well.
"""
import numpy as np

from attention_course.checks import check_true

SHARE_TOLERANCE = 0.2  # the share of units dropped may differ from the rate by this (240 units: 6 standard errors)


def keep_patterns(units: int) -> np.ndarray:
    """Every pattern of kept (1) and dropped (0) units, shaped (2**units, 1, 1, units) to broadcast over
    (batch, T, units)."""
    patterns = (np.arange(2 ** units)[:, None] >> np.arange(units)) & 1  # (2**units, units)
    return patterns.astype(float)[:, None, None, :]


def check_dropout_pattern(what, got, expected, rate, hint, atol=2e-4, tolerance=SHARE_TOLERANCE):
    """`got` (batch, T, units) must equal, at every position, `expected` for one keep pattern, where
    `expected` lists arrays (2**units, batch, T, units), one per accepted convention (e.g. LayerNorm's
    epsilon), each the layer's output for every pattern of keep_patterns; and the share of units dropped
    must be within `tolerance` of `rate` (a narrower band needs more units)."""
    got = np.asarray(got, dtype=float)
    errors = np.min([np.abs(np.asarray(e, dtype=float) - got).max(-1) for e in expected], axis=0)  # (patterns, batch, T)
    errors = np.where(np.isnan(errors), np.inf, errors)
    found = errors.min(0) < atol  # (batch, T)
    scale = 1 / (1 - rate)
    check_true(f"{what}: at each position, some units zeroed and the others multiplied by 1 / (1 - rate) = {scale:g}",
               bool(found.all()), "every position", f"{int((~found).sum())} of {found.size} positions match no such pattern",
               hint)
    kept = keep_patterns(got.shape[-1])[errors.argmin(0), 0, 0, :]  # (batch, T, units)
    dropped = 1 - float(kept.mean())
    check_true(f"{what}: share of units dropped at rate {rate:g}", abs(dropped - rate) <= tolerance,
               f"between {rate - tolerance:.0%} and {rate + tolerance:.0%}", f"{dropped:.0%}", hint)
