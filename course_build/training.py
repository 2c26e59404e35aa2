"""The one training loop of the course's models: an epoch at a time, scored on the dev split, the best
epoch's weights kept (the shipped weights are always those of the best dev epoch)."""
import time
from dataclasses import dataclass


@dataclass
class TrainingRun:
    history: list  # one dict per epoch: epoch, seconds, loss, and the dev metric under its name
    best_epoch: int
    best_score: float
    seconds: float


def keep_best_epoch(model, fit_epoch, dev_score, epochs: int, *, metric: str = "dev_exact_match",
                    lower_is_better: bool = False, later_wins_ties: bool = True, before_epoch=None,
                    budget_seconds: float = None) -> TrainingRun:
    """Train `epochs` epochs and leave `model` with the weights of its best dev epoch.

    fit_epoch(epoch) trains one epoch and returns Keras's History; dev_score() scores the model on the
    dev split; before_epoch(epoch), if given, sets that epoch's learning rate and returns a note for the
    progress line ("lr 0.00500"). Training stops early once `budget_seconds` have passed.
    """
    start, best, history = time.perf_counter(), None, []
    for epoch in range(1, epochs + 1):
        note = before_epoch(epoch) if before_epoch else ""
        loss = float(fit_epoch(epoch).history["loss"][-1])
        score = float(dev_score())
        seconds = time.perf_counter() - start
        history.append({"epoch": epoch, "seconds": round(seconds, 1), "loss": round(loss, 5), metric: score})
        print(f"epoch {epoch:2d}  {seconds:6.1f} s  {note + '  ' if note else ''}loss {loss:.4f}  {metric} {score:.4f}",
              flush=True)
        if best is None or _better(score, best[0], lower_is_better, later_wins_ties):
            best = (score, model.get_weights(), epoch)
        if budget_seconds and seconds > budget_seconds:
            break
    model.set_weights(best[1])
    return TrainingRun(history, best[2], best[0], time.perf_counter() - start)


def _better(score: float, best: float, lower_is_better: bool, later_wins_ties: bool) -> bool:
    if score == best:
        return later_wins_ties
    return score < best if lower_is_better else score > best
