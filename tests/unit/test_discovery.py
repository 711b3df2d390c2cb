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
