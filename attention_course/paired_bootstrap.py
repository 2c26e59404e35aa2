"""Is a difference between two systems more than the luck of the test set? Paired bootstrap intervals.

Koehn (2004, "Statistical Significance Tests for Machine Translation Evaluation") resamples the test sentences
with replacement many times, scores both systems on each resample and looks at how the difference moves. The
resampling is *paired*: both systems are scored on the same resampled sentences, so what the sentences have in
common (some are just hard) cancels out. The interval below holds the middle 95% of those differences; when it
includes 0 the test set cannot tell the two systems apart, whatever the difference on the full set.

A corpus score (BLEU, chrF, an alignment error rate) is not an average of per-sentence scores: each sentence
contributes counts (matched n-grams, links), and the score is computed from the counts summed over the sentences.
So a resample sums the counts of its sentences. For BLEU and chrF the counts are sacrebleu's own, and the score
is computed from them as sacrebleu's paired test does (`sacrebleu.significance`).
"""
from dataclasses import dataclass
from typing import Callable

import numpy as np
import sacrebleu

SAMPLES = 1000  # resamples, as sacrebleu's paired bootstrap
SEED = 12345  # sacrebleu's default seed for it (SACREBLEU_SEED)
LEVEL = 0.95


@dataclass(frozen=True)
class Comparison:
    """System a against system b on one measure: both scores on the full test set and the interval of a - b."""
    measure: str
    system_a: str
    system_b: str
    score_a: float
    score_b: float
    low: float  # the 95% paired bootstrap interval of score_a - score_b
    high: float
    items: int  # the sentences resampled
    higher_is_better: bool = True
    decimals: int = 2  # as the notebook prints the measure (an AER with 3)

    @property
    def difference(self) -> float:
        return self.score_a - self.score_b

    @property
    def verdict(self) -> str:
        """'a better', 'b better' or 'no difference' (the interval includes 0)."""
        if self.low <= 0.0 <= self.high:
            return "no difference"
        a_higher = self.low > 0.0
        return f"{self.system_a if a_higher == self.higher_is_better else self.system_b} better"

    def __str__(self) -> str:
        d = self.decimals
        return (f"{self.measure}: {self.system_a} {self.score_a:.{d}f} - {self.system_b} {self.score_b:.{d}f} = "
                f"{self.difference:+.{d}f}, 95% interval {self.low:+.{d}f} to {self.high:+.{d}f} "
                f"({self.items} sentences) -> {self.verdict}")


def paired_interval(stats_a, stats_b, score: Callable[[np.ndarray], float], samples: int = SAMPLES, seed: int = SEED,
                    level: float = LEVEL):
    """The `level` interval of score(stats_a[resample]) - score(stats_b[resample]) over `samples` resamples of the
    rows (the sentences, the same rows for both systems). stats_*: (sentences, k) arrays, one row of counts per
    sentence; score maps such an array (any subset of rows) to the corpus score."""
    stats_a, stats_b = np.asarray(stats_a, dtype=float), np.asarray(stats_b, dtype=float)
    if stats_a.shape[0] != stats_b.shape[0] or stats_a.shape[0] == 0:
        raise ValueError(f"paired systems need the same sentences, at least one: got {stats_a.shape[0]} and "
                         f"{stats_b.shape[0]} rows")
    rows = np.random.default_rng(seed).integers(0, stats_a.shape[0], size=(samples, stats_a.shape[0]))
    differences = np.array([score(stats_a[sample]) - score(stats_b[sample]) for sample in rows])  # (samples,)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(differences, [tail, 100 - tail])
    return float(low), float(high)


def compare(measure: str, system_a: str, stats_a, system_b: str, stats_b, score, higher_is_better: bool = True,
            decimals: int = 2, **options) -> Comparison:
    """A Comparison of two systems from their per-sentence counts (see paired_interval)."""
    stats_a, stats_b = np.asarray(stats_a, dtype=float), np.asarray(stats_b, dtype=float)
    low, high = paired_interval(stats_a, stats_b, score, **options)
    return Comparison(measure, system_a, system_b, float(score(stats_a)), float(score(stats_b)), low, high,
                      len(stats_a), higher_is_better, decimals)


# BLEU on characters (tokenize="zh") and chrF, as notebook 08 scores translations.
METRICS = {"BLEU": lambda: sacrebleu.BLEU(tokenize="zh"), "chrF": sacrebleu.CHRF}


def translation_stats(measure: str, hypotheses, references) -> np.ndarray:
    """sacrebleu's counts of each hypothesis against its one reference: (sentences, k)."""
    metric = METRICS[measure]()
    return np.asarray(metric._extract_corpus_statistics(list(hypotheses), [list(references)]), dtype=float)


def translation_score(measure: str) -> Callable[[np.ndarray], float]:
    """The corpus score (0 to 100) of summed sacrebleu counts."""
    metric = METRICS[measure]()
    return lambda stats: metric._compute_score_from_stats(stats.sum(axis=0).tolist()).score


def compare_translations(system_a: str, hypotheses_a, system_b: str, hypotheses_b, references, measures=("BLEU", "chrF"),
                         **options) -> list:
    """One Comparison per measure of two systems' translations of the same sentences (one reference each)."""
    if not len(hypotheses_a) == len(hypotheses_b) == len(references):
        raise ValueError(f"{len(hypotheses_a)} and {len(hypotheses_b)} translations of {len(references)} sentences")
    return [compare(measure, system_a, translation_stats(measure, hypotheses_a, references), system_b,
                    translation_stats(measure, hypotheses_b, references), translation_score(measure), **options)
            for measure in measures]


def alignment_stats(links, sure, possible, sentences: int) -> np.ndarray:
    """Per sentence, the counts of the alignment error rate: |A & S|, |A & P|, |A|, |S| (links are tuples whose
    first element is the sentence index; a link listed twice counts once). (sentences, 4)"""
    a_links, s_links, p_links = ({tuple(link) for link in given} for given in (links, sure, possible))
    stats = np.zeros((sentences, 4))
    for column, chosen in enumerate((a_links & s_links, a_links & p_links, a_links, s_links)):
        for link in chosen:
            stats[link[0], column] += 1
    return stats


def alignment_error_rate_of(stats: np.ndarray) -> float:
    """Och and Ney's AER of summed counts: 1 - (|A & S| + |A & P|) / (|A| + |S|); 0 with no links at all."""
    both, possible, predicted, sure = np.asarray(stats).sum(axis=0)
    return 1.0 - (both + possible) / (predicted + sure) if predicted + sure else 0.0


def compare_alignments(system_a: str, links_a, system_b: str, links_b, sure, possible, sentences: int,
                       **options) -> Comparison:
    """The alignment error rates of two aligners on the same sentences (lower is better)."""
    return compare("AER", system_a, alignment_stats(links_a, sure, possible, sentences), system_b,
                   alignment_stats(links_b, sure, possible, sentences), alignment_error_rate_of,
                   higher_is_better=False, decimals=3, **options)


def compare_medians(measure: str, system_a: str, values_a, system_b: str, values_b, **options) -> Comparison:
    """The medians of one value per sentence (e.g. a correlation) of two systems on the same sentences."""
    return compare(measure, system_a, np.asarray(values_a, dtype=float)[:, None], system_b,
                   np.asarray(values_b, dtype=float)[:, None], lambda stats: float(np.median(stats[:, 0])), **options)
