"""The one training loop (course_build/training.py): the best dev epoch's weights are kept."""
import pytest

from course_build.training import keep_best_epoch


class History:
    def __init__(self, loss):
        self.history = {"loss": [loss]}


class Model:
    """Weights are the number of the last epoch trained, so the kept weights name the epoch."""

    def __init__(self):
        self.weights = [0]

    def get_weights(self):
        return list(self.weights)

    def set_weights(self, weights):
        self.weights = list(weights)


def train(scores, **options):
    model = Model()

    def fit(epoch):
        model.weights = [epoch]
        return History(1.0 / epoch)

    run = keep_best_epoch(model, fit, lambda: scores[model.weights[0] - 1], len(scores), **options)
    return model, run


def test_the_best_dev_epoch_is_kept_and_recorded(capsys):
    model, run = train([0.2, 0.9, 0.5])
    assert model.weights == [2] and run.best_epoch == 2 and run.best_score == 0.9
    assert [h["epoch"] for h in run.history] == [1, 2, 3] and run.history[2]["loss"] == pytest.approx(1 / 3, abs=1e-5)
    assert "dev_exact_match 0.9000" in capsys.readouterr().out


def test_lower_is_better_and_ties():
    assert train([0.3, 0.1, 0.1], lower_is_better=True, metric="dev_cer")[0].weights == [3]
    assert train([0.3, 0.1, 0.1], lower_is_better=True, later_wins_ties=False)[0].weights == [2]
    assert train([0.5, 0.5])[1].best_epoch == 2


def test_before_epoch_runs_first_and_a_budget_stops_early(capsys):
    seen = []
    model, run = train([0.1, 0.2, 0.3], before_epoch=lambda epoch: seen.append(epoch) or f"lr {epoch}",
                       budget_seconds=1e-9)
    assert seen == [1] and len(run.history) == 1 and model.weights == [1]
    assert "lr 1  loss" in capsys.readouterr().out
