"""Opening files beneath a directory (`corral.sources._beneath`), against real files.

Each test builds a session folder and a throwaway "outside" folder next to
it in the test's temp dir; links, FIFOs and hard links are real. Races are
made deterministic with the `before_open` hook, which runs between reaching
the folder and opening the file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from corral.sources._beneath import (
    MAX_NAME_BYTES,
    BadPath,
    Changed,
    FileId,
    LinkRefused,
    Missing,
    NotRegular,
    Outside,
    beneath,
    open_beneath,
    read_beneath,
    write_beneath,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    inside = tmp_path / "session"
    inside.mkdir()
    (inside / "sub").mkdir()
    (inside / "sub" / "f.txt").write_text("inside")
    return inside


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    there = tmp_path / "outside"
    there.mkdir()
    (there / "secret.txt").write_text("SECRET")
    return there


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("a.txt", ("a.txt",)),
        ("sub/f.txt", ("sub", "f.txt")),
        ("./sub//f.txt", ("sub", "f.txt")),
        ("sub/../a.txt", ("a.txt",)),
        (".", ()),
    ],
)
def test_relative_paths_are_read_lexically(root: Path, path: str, parts: tuple[str, ...]) -> None:
    assert beneath(str(root), path) == parts


def test_absolute_paths_must_start_with_the_root(root: Path) -> None:
    assert beneath(str(root), f"{root}/sub/f.txt") == ("sub", "f.txt")
    assert beneath(str(root), str(root)) == ()
    for path in ("/etc/passwd", f"{root}-other/x", f"{root}/../outside/secret.txt", "/dev/zero"):
        with pytest.raises(Outside):
            beneath(str(root), path)


@pytest.mark.parametrize("path", ["..", "../x", "sub/../../x", "a/b/../../../x"])
def test_dot_dot_cannot_climb_out(root: Path, path: str) -> None:
    with pytest.raises(Outside):
        beneath(str(root), path)


@pytest.mark.parametrize(
    "path",
    [
        "",
        "a\x00b",
        "a\ud800b",  # a lone surrogate: not UTF-8
        "a/" * 2100,
        "x" * (MAX_NAME_BYTES + 1),
        42,
        None,
    ],
)
def test_bad_paths_are_refused_before_any_system_call(root: Path, path: object) -> None:
    with pytest.raises(BadPath):
        beneath(str(root), path)


def test_a_regular_file_is_read(root: Path) -> None:
    content, file = read_beneath(str(root), "sub/f.txt", limit=100)
    assert content == b"inside"
    assert file == FileId.of(os.stat(root / "sub" / "f.txt"))


def test_a_link_anywhere_in_the_path_is_refused(root: Path, outside: Path) -> None:
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    (root / "inner.txt").symlink_to(root / "sub" / "f.txt")  # even one that stays inside
    for path in ("link.txt", "linkdir/secret.txt", "inner.txt"):
        with pytest.raises(LinkRefused):
            read_beneath(str(root), path, limit=100)


def test_a_fifo_is_refused_without_blocking(root: Path) -> None:
    os.mkfifo(root / "fifo")
    with pytest.raises(NotRegular):
        read_beneath(str(root), "fifo", limit=100)  # would block forever without O_NONBLOCK
    with pytest.raises(NotRegular):
        write_beneath(str(root), "fifo", b"x")


def test_a_folder_and_the_root_itself_are_not_files(root: Path) -> None:
    for path in ("sub", "."):
        with pytest.raises(NotRegular):
            open_beneath(str(root), path)


def test_a_missing_file_is_missing(root: Path) -> None:
    with pytest.raises(Missing):
        read_beneath(str(root), "nope/x.txt", limit=100)


def test_a_file_over_the_limit_is_refused(root: Path) -> None:
    (root / "big.txt").write_bytes(b"x" * 101)
    with pytest.raises(Exception, match="over the limit"):
        read_beneath(str(root), "big.txt", limit=100)


def test_a_write_creates_the_file_and_its_folders_beneath(root: Path) -> None:
    write_beneath(str(root), "new/deeper/n.txt", b"made", must_be_new=True)
    assert (root / "new" / "deeper" / "n.txt").read_bytes() == b"made"


def test_a_write_never_goes_through_a_link(root: Path, outside: Path) -> None:
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "dangling.txt").symlink_to(outside / "created.txt")
    for path in ("link.txt", "dangling.txt"):
        with pytest.raises(LinkRefused):
            write_beneath(str(root), path, b"pwned")
    assert (outside / "secret.txt").read_text() == "SECRET"
    assert not (outside / "created.txt").exists()


def test_a_write_never_goes_through_a_hard_link(root: Path, outside: Path) -> None:
    os.link(outside / "secret.txt", root / "hard.txt")
    with pytest.raises(NotRegular, match="hard links"):
        write_beneath(str(root), "hard.txt", b"pwned")
    assert (outside / "secret.txt").read_text() == "SECRET"


def test_a_folder_swapped_for_a_link_after_it_was_reached_is_not_followed(
    root: Path, outside: Path
) -> None:
    def swap(parent_fd: int, name: str) -> None:
        (root / "sub").rename(root / "sub.old")
        (root / "sub").symlink_to(outside)  # the race: too late, we hold the folder's fd

    write_beneath(str(root), "sub/new.txt", b"kept inside", before_open=swap)
    assert (root / "sub.old" / "new.txt").read_bytes() == b"kept inside"
    assert sorted(os.listdir(outside)) == ["secret.txt"]


def test_a_file_swapped_for_a_link_before_the_open_is_refused(root: Path, outside: Path) -> None:
    def swap(parent_fd: int, name: str) -> None:
        os.unlink(name, dir_fd=parent_fd)
        os.symlink(outside / "secret.txt", name, dir_fd=parent_fd)

    with pytest.raises(LinkRefused):
        write_beneath(str(root), "sub/f.txt", b"pwned", before_open=swap)
    assert (outside / "secret.txt").read_text() == "SECRET"


def test_the_file_used_must_be_the_file_judged(root: Path) -> None:
    _, judged = read_beneath(str(root), "sub/f.txt", limit=100)
    (root / "other.txt").write_text("another file")
    (root / "other.txt").rename(root / "sub" / "f.txt")  # same name, another inode
    with pytest.raises(Changed):
        read_beneath(str(root), "sub/f.txt", limit=100, expect=judged)
    with pytest.raises(Changed):
        write_beneath(str(root), "sub/f.txt", b"x", expect=judged)
    with pytest.raises(Changed):  # judged absent, present now
        write_beneath(str(root), "sub/f.txt", b"x", must_be_new=True)
    assert (root / "sub" / "f.txt").read_text() == "another file"


def test_a_write_replaces_the_content_of_the_judged_file(root: Path) -> None:
    _, judged = read_beneath(str(root), "sub/f.txt", limit=100)
    write_beneath(str(root), "sub/f.txt", b"new", expect=judged)
    assert (root / "sub" / "f.txt").read_text() == "new"
