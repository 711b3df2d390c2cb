"""Where sessions announce themselves: a per-user directory of sockets and discovery files."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
from pathlib import Path
from typing import NamedTuple

from . import __version__


def runtime_dir() -> Path:
    """`$XDG_RUNTIME_DIR/lsap`, else `/tmp/lsap-<uid>`; created 0700 and checked to be ours."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    directory = Path(base) / "lsap" if base else Path(f"/tmp/lsap-{os.getuid()}")
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = directory.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PermissionError(f"{directory} is not a directory owned by this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        directory.chmod(0o700)
    return directory


class SessionInfo(NamedTuple):
    """A session as its discovery file tells it. (A named tuple: `lsap` reads these on every
    call, and dataclasses would cost it a fifth of its imports; doc/architecture.md, Costs.)"""

    name: str
    kind: str  # "editor" or "daemon"
    pid: int
    socket: str
    roots: list[str]
    version: str = __version__
    nvim_pid: int = 0
    nvim_version: str = ""
    tcp: str = ""  # "host:port" of the optional loopback listener
    token: str = ""  # what a TCP client sends in `auth`; the file is 0600
    # The edit journal's directory (its change sets): a client whose call was cut off reads
    # there which edits it had applied (`client.cut_off`).
    journals: str = ""

    @property
    def file(self) -> Path:
        return runtime_dir() / f"{self.name}.json"

    def publish(self) -> None:
        tmp = self.file.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps(self._asdict()))
        tmp.replace(self.file)

    def withdraw(self) -> None:
        """The socket first, the discovery file last: a withdrawal cut short (a host ended
        between the two, Neovim killed) leaves the file, which the next look (`sessions`)
        finds dead and withdraws again; the file gone first left a socket no look removed."""
        for path in (Path(self.socket), self.file):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def daemon_name(root: Path) -> str:
    import hashlib  # only where a daemon is looked for by its root: not on a plain call

    return "daemon-" + hashlib.sha1(str(root).encode()).hexdigest()[:12]


def daemon_log(root: Path) -> Path:
    """The daemon's output and its log: what an agent is pointed to for a traceback."""
    return runtime_dir() / f"{daemon_name(root)}.log"


FIELDS = set(SessionInfo._fields)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def listening(path: str) -> bool:
    """Whether something accepts connections on a socket path: a crashed session leaves a
    file nobody listens on, and its pid may already belong to another process."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(2)
    try:
        probe.connect(path)
    except (FileNotFoundError, ConnectionRefusedError):
        return False
    except OSError:
        return True  # busy or not ours to judge: keep it
    finally:
        probe.close()
    return True


def sessions() -> list[SessionInfo]:
    """Live sessions; files of dead ones are removed on the way."""
    out = []
    for file in sorted(runtime_dir().glob("*.json")):
        try:
            raw = json.loads(file.read_text())
            info = SessionInfo(**{k: v for k, v in raw.items() if k in FIELDS})
        except (OSError, ValueError, TypeError, AttributeError):
            continue
        if alive(info.pid) and listening(info.socket):
            out.append(info)
        else:
            info.withdraw()
            with contextlib.suppress(FileNotFoundError):
                file.unlink()
    return out


def session_for(directory: Path) -> SessionInfo | None:
    """The live session whose root contains `directory`, the nearest root winning."""
    directory = directory.resolve()
    best: tuple[int, SessionInfo] | None = None
    for info in sessions():
        for root in info.roots:
            root_path = Path(root)
            if directory == root_path or directory.is_relative_to(root_path):
                depth = len(root_path.parts)
                if best is None or depth > best[0] or (depth == best[0] and info.kind == "editor"):
                    best = (depth, info)
    return best[1] if best else None
