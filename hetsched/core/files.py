"""Files a user can trust: every output is written whole or not at all, and an output that
would destroy an input, land in a missing folder or fail to write is refused before any work.

* :func:`atomic_path` / :func:`write_text_atomic`: write to a temporary file beside the target,
  then replace the target in one step (``os.replace``); a failure or an interrupt leaves the old
  file as it was and no temporary behind.
* :func:`check_output`: the checks a command runs on each output path before it starts
  (:class:`~hetsched.core.errors.InputError` naming the option and the reason).
"""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from hetsched.core.errors import InputError


@contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """A temporary path beside ``target`` (with its suffix, so writers that choose a format
    by suffix still do) that replaces ``target`` when the block ends without an exception."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        mode = _mode_for(target)
        os.chmod(tmp_path, mode)
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _mode_for(target: Path) -> int:
    """The permission bits the file gets: the target's if it exists, else what a new file gets
    under the process's umask (mkstemp creates 0600)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text_atomic(target: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``target`` whole or not at all."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _writable_dir(d: Path) -> bool:
    return d.is_dir() and os.access(d, os.W_OK | os.X_OK)


def _read_only(p: Path) -> bool:
    """No write bit at all, or (for a user who is not root) no permission to write: a file its
    owner marked read-only is refused even to root, who could write it."""
    mode = p.stat().st_mode
    return not (mode & 0o222) or not os.access(p, os.W_OK)


def check_output(
    path: str | Path,
    option: str,
    *,
    kind: str = "file",
    suffixes: Iterable[str] = (),
    inputs: Iterable[str | Path] = (),
) -> None:
    """Refuse an output before any work: ``option`` (e.g. ``--out``) names it in the error.

    A ``file`` output must not be one of ``inputs`` (the same file, by inode, under whatever
    name), a directory or a read-only file, must lie in a folder that exists and can be
    written, and must end in one of ``suffixes`` (when given). A ``dir`` output is a directory
    that can be written, or is made (with its missing parents, as ``mkdir -p`` would) inside the
    nearest folder that exists, which must be writable."""
    p = Path(path)
    where = f"{option} {path}"
    if kind == "dir":
        if p.exists():
            if not p.is_dir():
                raise InputError(where, None, "exists and is not a directory")
            if not _writable_dir(p):
                raise InputError(where, None, "cannot write in it")
            return
        base = next(a for a in p.absolute().parents if a.exists())
        if not _writable_dir(base):
            raise InputError(where, None, f"cannot make it: {base} is not a writable folder")
        return
    wanted = tuple(suffixes)
    if wanted and p.suffix.lower() not in wanted:
        raise InputError(
            where,
            None,
            f"cannot write a '{p.suffix or 'suffix-less'}' file (use {', '.join(wanted)})",
        )
    for given in inputs:
        if _same_file(p, Path(given)):
            raise InputError(
                where,
                None,
                f"is the input {given}: writing it would destroy it (choose another name)",
            )
    if p.is_dir():
        raise InputError(where, None, "is a directory (give a file name)")
    if not p.parent.exists():
        raise InputError(where, None, f"the folder {p.parent} does not exist")
    if not _writable_dir(p.parent):
        raise InputError(where, None, f"cannot write in the folder {p.parent}")
    if p.exists() and _read_only(p):
        raise InputError(where, None, "is read-only")
