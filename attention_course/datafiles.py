"""Checksummed access to the files in `datasets/`.

`datasets/SHA256SUMS` lists every committed data file; loaders open files only through
`verified_path`, so a corrupted or hand-edited file is caught before a notebook trains on it.
After rebuilding data on purpose, refresh the list with `python -m attention_course.datafiles`.
"""
import hashlib
import sys
from pathlib import Path

from attention_course.paths import datasets_dir

CHECKSUM_FILE = "SHA256SUMS"
_verified = set()


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_checksums(root: Path) -> dict:
    sums = {}
    for line in (root / CHECKSUM_FILE).read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            sums[name.strip()] = digest
    return sums


def verified_path(relative: str) -> Path:
    """Path of a data file after checking it against SHA256SUMS (once per session)."""
    root = datasets_dir()
    path = root / relative
    if relative in _verified:
        return path
    sums = read_checksums(root)
    if relative not in sums:
        raise KeyError(f"{relative} is not listed in {root / CHECKSUM_FILE}")
    if not path.is_file():
        raise FileNotFoundError(f"Data file {path} is missing; restore it with git checkout -- datasets/")
    actual = sha256(path)
    if actual != sums[relative]:
        raise ValueError(
            f"Checksum mismatch for {path}: expected {sums[relative][:12]}..., got {actual[:12]}... "
            "The file was changed; restore it with git checkout -- datasets/ or rebuild it with its builder."
        )
    _verified.add(relative)
    return path


def write_checksums(root: Path) -> list:
    """Rewrite SHA256SUMS for every data file under `root` (not the builders' Python code)."""
    files = sorted(
        p for p in root.rglob("*")
        if p.is_file() and p.name != CHECKSUM_FILE and p.suffix not in {".py", ".md"}
        and "__pycache__" not in p.parts
    )
    lines = [f"{sha256(p)}  {p.relative_to(root).as_posix()}" for p in files]
    (root / CHECKSUM_FILE).write_text("\n".join(lines) + "\n")
    return lines


if __name__ == "__main__":
    for line in write_checksums(datasets_dir()):
        print(line)
    sys.exit(0)
