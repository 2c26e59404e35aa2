"""Build the date-translation dataset: human-readable dates -> ISO dates.

Seeded Faker + Babel, as in the Coursera assignment, with three fixes:
- the output is committed (datasets/dates/*.tsv), so it never changes with the Faker version;
- years are written with Babel's calendar year `y`, not the week-year `Y` the Coursera
  formats used (which prints the wrong year for some days around New Year);
- more formats: weekday names, ordinals ("3rd", "21th of"), two-digit years, dotted
  and slashed numerals, so the notebook's examples are in the distribution.

Run from the repo root:  python datasets/build_dates.py   (then python -m attention_course.datafiles)
"""
import datetime as dt
import random
from pathlib import Path

from babel.dates import format_date
from faker import Faker

from attention_course.dates import normalise

SEED = 12345
SPLIT_SIZES = {"train": 10_000, "dev": 1_000, "test": 2_000}
MAX_HUMAN_LENGTH = 30  # Tx of the notebook's model
FIRST_DATE, LAST_DATE = dt.date(1970, 1, 1), dt.date(2029, 12, 31)  # two-digit years stay unambiguous

# The Coursera FORMATS (with y for the calendar year), 'full' weighted as they did.
COURSERA_FORMATS = (
    ["short", "medium", "long"] + ["full"] * 10
    + ["d MMM y", "d MMMM y", "dd MMM y", "d MMM, y", "d MMMM, y", "dd, MMM y",
       "d MM yy", "d MMMM y", "MMMM d y", "MMMM d, y", "dd.MM.yy"]
)
# Added forms. ORD is replaced by the day as an ordinal ("3rd", or the common slip "21th").
EXTRA_FORMATS = [
    "EEE d MMM y", "EEEE d MMMM y", "EEEE dd MMM y", "EEEE MMMM d y", "EEE MMM d y",
    "d MMMM yy", "d MMM yy", "MMM d yy", "d.M.y",
    "'ORD' MMMM y", "'ORD' 'of' MMMM y", "MMMM 'ORD' y", "MMMM 'ORD', y", "EEEE 'ORD' MMMM y",
    "'ORD' MMM y",
]
FORMATS = COURSERA_FORMATS + EXTRA_FORMATS


def ordinal(day: int, rng: random.Random) -> str:
    if rng.random() < 0.25:
        return f"{day}th"  # people write "21th"; the model should still read the day
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def human_date(date: dt.date, pattern: str, rng: random.Random) -> str:
    text = format_date(date, format=pattern, locale="en_US")
    return text.replace("ORD", ordinal(date.day, rng))


def build(seed: int = SEED) -> dict:
    """Return {split: [(human, iso), ...]} with no human string shared between splits."""
    faker = Faker()
    Faker.seed(seed)
    rng = random.Random(seed)
    seen, pairs = set(), []
    total = sum(SPLIT_SIZES.values())
    while len(pairs) < total:
        date = faker.date_between_dates(date_start=FIRST_DATE, date_end=LAST_DATE)
        human = human_date(date, rng.choice(FORMATS), rng)
        normalised = normalise(human)
        if normalised in seen or len(normalised) > MAX_HUMAN_LENGTH:
            continue
        seen.add(normalised)
        pairs.append((human, date.isoformat()))
    splits, start = {}, 0
    for name, size in SPLIT_SIZES.items():
        splits[name] = pairs[start:start + size]
        start += size
    return splits


def write(splits: dict, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, pairs in splits.items():
        lines = ["human\tmachine"] + [f"{human}\t{iso}" for human, iso in pairs]
        (folder / f"{name}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write(build(), Path(__file__).resolve().parent / "dates")
