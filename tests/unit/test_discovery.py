"""Choosing the session for a directory: the nearest root wins, an editor before a daemon."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsap_bridge.discovery import SessionInfo, runtime_dir, session_for


@pytest.fixture
def published(tmp_path: Path) -> Iterator[list[SessionInfo]]:
    """Three live sessions (listening sockets of this process) on nested roots."""
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    listeners, infos = [], []
    for name, kind, root in (("t-outer", "editor", outer), ("t-inner-daemon", "daemon", inner),
                             ("t-inner-editor", "editor", inner)):
        path = runtime_dir() / f"{name}.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen()
        listeners.append(listener)
        info = SessionInfo(name, kind, os.getpid(), str(path), [str(root)])
        info.publish()
        infos.append(info)
    yield infos
    for listener, info in zip(listeners, infos, strict=True):
        listener.close()
        info.withdraw()


def test_nearest_root_wins(published: list[SessionInfo], tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "inner" / "deep").mkdir()
    (outer / "side").mkdir()
    assert session_for(outer / "inner" / "deep").name == "t-inner-editor"  # type: ignore[union-attr]
    assert session_for(outer / "side").name == "t-outer"  # type: ignore[union-attr]
    assert session_for(outer).name == "t-outer"  # type: ignore[union-attr]
    assert session_for(tmp_path) is None


def test_a_withdrawal_cut_short_is_finished_by_the_next_look(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host that ends between the two removals (Neovim SIGKILLed, CI run of issue 28)
    leaves the discovery file, never a socket alone: the next look removes what is left."""
    path = runtime_dir() / "t-cut.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    info = SessionInfo("t-cut", "editor", os.getpid(), str(path), [str(tmp_path)])
    info.publish()
    listener.close()  # the host is gone: nothing listens
    real_unlink = Path.unlink
    removed: list[Path] = []

    def first_only(self: Path, missing_ok: bool = False) -> None:
        if removed:
            raise SystemExit("the host ended here")
        removed.append(self)
        real_unlink(self, missing_ok)

    monkeypatch.setattr(Path, "unlink", first_only)
    with pytest.raises(SystemExit):
        info.withdraw()
    monkeypatch.undo()
    assert info.file.exists() and not path.exists(), "the file, the record, is left; the socket went first"
    assert session_for(tmp_path) is None
    assert not info.file.exists() and not path.exists()
