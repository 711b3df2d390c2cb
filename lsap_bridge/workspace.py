"""Workspace roots: path resolution, confinement and display paths."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path, PurePosixPath
from stat import S_ISREG
from typing import TypeVar
from urllib.parse import quote, unquote, urlparse

from cachetools import TTLCache

from .errors import ErrorCode, LsapError

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "tsx", ".js": "javascript",
    ".jsx": "jsx", ".mjs": "javascript", ".cjs": "javascript", ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".go": "go", ".rs": "rust", ".lua": "lua",
    ".java": "java", ".rb": "ruby", ".json": "json", ".toml": "toml", ".md": "markdown",
}


# Code files only: configuration and docs (json, toml, markdown) have no symbols worth listing.
CODE_SUFFIXES = frozenset(s for s, lang in LANGUAGES.items() if lang not in ("json", "toml", "markdown"))
# Directories nobody means when asking about "the project's code" (walks skip every hidden
# directory too; globs only these).
IGNORED_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
    ".ruff_cache", ".pytest_cache", ".tox", "dist", "build", ".idea", ".vscode",
})


def language_of(path: Path | str) -> str:
    """The code fence language for a file (doc/architecture.md, Reports and errors: every fence names its language).

    The suffix as `PurePath.suffix` takes it, read off the name without making a path
    (reports ask it of every file they show)."""
    name = os.path.basename(os.fspath(path).rstrip("/"))
    dot = name.rfind(".")
    return LANGUAGES.get(name[dot:].lower() if 0 < dot < len(name) - 1 else "", "text")


def uri_of(path: Path) -> str:
    return "file://" + quote(str(path))


@lru_cache(maxsize=4096)
def path_of(uri: str) -> Path:
    """The path of a `file:` URI. Made once per URI (a pure function of it): servers name the
    same few files in every answer, and one path object per file also makes the dicts keyed
    by them compare by identity (doc/architecture.md, Costs)."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path))


def local_path(text: str) -> str:
    """A path as given, with a `file:` URI (RFC 8089: `file:///abs`, `file://localhost/abs`,
    `file:/abs`) decoded to its local path. Agents copy URIs out of LSP answers; a URI read
    as a relative path would name a directory `file:` inside the workspace. Lenient about
    unescaped characters (`file:///my dir/a#1.py`): a `%` escape is decoded, the rest kept."""
    if text[:5].lower() != "file:":
        return text
    rest = text[5:]
    if rest.startswith("//"):
        host, slash, tail = rest[2:].partition("/")
        if host.lower() not in ("", "localhost"):
            raise LsapError(
                ErrorCode.INVALID_REQUEST,
                f"{shorten(text)} names the host {shorten(host, 40)!r}: only local files can be read",
                hint="give a path relative to the workspace root, or a file:///absolute/path URI",
            )
        rest = slash + tail
    if not rest.startswith("/"):
        raise LsapError(
            ErrorCode.INVALID_REQUEST,
            f"{shorten(text)} is not a file URI: one names an absolute path (file:///…)",
            hint="give a path relative to the workspace root, or a file:///absolute/path URI",
        )
    return unquote(rest)


@lru_cache(maxsize=64)
def linked_root_note(server: str, root_dir: str | None) -> str | None:
    """What to say of a server whose root is named through a symbolic link (the human's
    editor opened the project through one), else None: the bridge opens files by their
    real paths (`Workspace.resolve`), which such a server may take for files outside its
    project, answering a references, types or rename from the open files only. Asked at
    every request's target and a server's root is its own for its life: resolved once."""
    if not root_dir:
        return None
    try:
        real = os.path.realpath(root_dir, strict=True)
    except OSError:  # gone, or a loop: nothing to say of it
        return None
    if real == os.path.normpath(root_dir):
        return None
    return (f"{server}'s root {root_dir} is reached through a symbolic link (really {real}): it may "
            "take the files the bridge opens, by their real paths, for files outside its project, and "
            "leave uses in files not open out of workspace-wide answers (references, types, rename); "
            f"start {server} from the real path for whole answers")


def shorten(text: str, limit: int = 80) -> str:
    """Text quoted in an error, cut to `limit` characters: an error must stay bounded even
    when the input is a 5,000-character path."""
    return text if len(text) <= limit else text[: limit - 1] + f"… ({len(text):,} characters)"


GLOB_CHARS = frozenset("*?[")

# The file system's limits where `os.pathconf` cannot tell them (Linux's values).
NAME_MAX, PATH_MAX = 255, 4096


def _pathconf(root: Path, name: str, default: int) -> int:
    try:
        value = os.pathconf(root, name)
    except (OSError, ValueError, AttributeError):  # no such root yet, or no pathconf (Windows)
        return default
    return value if value > 0 else default


# Seconds an answer that rests on the file system (inside a root? a file?) is trusted: long
# enough for the thousands of lookups of one report, short enough that a changed symlink or
# a new file is seen.
INSIDE_TTL = 2.0
REMEMBERED = 10_000  # such answers kept per workspace


def clock() -> float:
    """The time caches of file-system answers count in (`time.monotonic`; tests move it)."""
    return time.monotonic()


K = TypeVar("K")
V = TypeVar("V")


def remembered(size: int) -> TTLCache[K, V]:
    """A bounded cache of answers that rest on the file system, trusted for `INSIDE_TTL`."""
    return TTLCache(size, INSIDE_TTL, timer=lambda: clock())


@dataclass
class Walk:
    """Code files found under a directory or by a glob, and what was left out on the way."""

    # What `stat` said of each file listed, by path, in walk order (a file and a link to
    # it are listed once). Strings: a pathlib path costs more to hash than the stat.
    stats: dict[str, os.stat_result] = field(default_factory=dict)
    outside: int = 0  # symbolic links leading out of the roots: neither opened nor listed
    too_large: int = 0  # files over the size limit for files opened for servers
    more: bool = False  # the walk stopped at its limit: there are more files

    @cached_property
    def files(self) -> list[Path]:
        return [Path(p) for p in self.stats]

    def add(self, path: str, stat: os.stat_result, limit: int, max_size: int | None) -> None:
        if max_size is not None and stat.st_size > max_size:
            self.too_large += 1
        elif len(self.stats) >= limit:
            self.more = True
        else:
            self.stats.setdefault(path, stat)

    @property
    def skipped(self) -> int:
        return self.outside + self.too_large


def size_text(size: int) -> str:
    """A file size as people read it: bytes, KiB or MiB (one decimal, none when whole)."""
    if size < 1024:
        return f"{size} bytes"
    unit, scale = ("KiB", 1024) if size < 1048576 else ("MiB", 1048576)
    return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"


def too_large(display: str, size: int, limit: int) -> LsapError:
    """The error for a file the bridge will not open for servers (doc/architecture.md, Costs)."""
    return LsapError(
        ErrorCode.INVALID_REQUEST,
        f"{display} is {size_text(size)}, over the {size_text(limit)} limit for files opened for language "
        "servers (option `max_file_size`)",
        hint="ask about a smaller file, or raise `max_file_size` (bytes) in require('lsap')"
        ".setup(); embedded mode: the LSAP_MAX_FILE_SIZE environment variable",
    )


@dataclass(frozen=True)
class Workspace:
    """The roots a session may read and write; everything else is refused."""

    roots: tuple[Path, ...]
    _inside: TTLCache[object, Path | None] = field(default_factory=lambda: remembered(REMEMBERED),
                                                   compare=False, repr=False)
    _files: TTLCache[object, bool] = field(default_factory=lambda: remembered(REMEMBERED),
                                           compare=False, repr=False)
    # `resolve`'s answers for paths of existing files, as given (each costs an lstat per component).
    _resolved: TTLCache[str, Path] = field(default_factory=lambda: remembered(REMEMBERED),
                                           compare=False, repr=False)

    @classmethod
    def of(cls, *roots: str | Path) -> Workspace:
        return cls(tuple(Path(r).resolve() for r in roots))

    @property
    def root(self) -> Path:
        return self.roots[0]

    def contains(self, path: Path) -> bool:
        """Whether a path is inside a root once `..` and symlinks are followed: a link in the
        workspace to /etc, or a server's `file:///root/../etc` URI, is outside."""
        return self.local(path) is not None

    def local(self, path: Path) -> Path | None:
        """The real path (symlinks and `..` followed) of a path inside a root, None for one
        outside: the one confinement check. A server rooted at a symlinked path (the human's
        editor opened the project through a link) names files by that path; they are the
        workspace's, shown and keyed by where they really are (doc/lsap.txt, symlinks)."""
        # Remembered: a references answer names the same few hundred files thousands of
        # times, and each resolve costs an lstat per path component (20,000 results: 8 s).
        try:
            return self._inside[path]
        except KeyError:
            pass
        try:
            real = path.resolve()
            inside = any(real == root or real.is_relative_to(root) for root in self.roots)
        except (OSError, RuntimeError):  # a symlink loop: nothing to trust
            inside = False
        found = real if inside else None
        self._inside[path] = found
        return found

    @cached_property
    def limits(self) -> tuple[int, int]:
        """The longest file name and path (bytes) the root's file system takes: NAME_MAX and
        PATH_MAX, as `os.pathconf` says where it can."""
        return (_pathconf(self.root, "PC_NAME_MAX", NAME_MAX), _pathconf(self.root, "PC_PATH_MAX", PATH_MAX))

    def resolve(self, file_path: str) -> Path:
        """An absolute, symlink-free path inside a root, or an `outside_workspace` error.

        The one check every path a request names goes through: a `file:` URI is decoded
        first, and a path or name longer than the file system takes is an `invalid_request`
        naming the limit (not an OSError deep in a capability).

        An existing file's answer is remembered as `local`'s are (`INSIDE_TTL`): every
        request naming a file goes through here (doc/architecture.md, Costs)."""
        try:
            return self._resolved[file_path]
        except KeyError:
            pass
        path = local_path(file_path)
        if "\x00" in path:
            raise LsapError(ErrorCode.INVALID_REQUEST, "file_path contains a NUL character")
        try:
            candidate = Path(path).expanduser()
        except RuntimeError:  # `~name` of no known user: a literal name, like any other
            candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        self._check_length(file_path, candidate)
        try:
            resolved, exists = _link_free(candidate)
        except (RuntimeError, OSError) as exc:  # a symlink loop
            raise LsapError(ErrorCode.INVALID_REQUEST, f"cannot resolve {shorten(file_path)}: {exc}",
                            hint="give the path of an existing file inside the workspace") from None
        if not self.contains(resolved):
            raise LsapError(
                ErrorCode.OUTSIDE_WORKSPACE,
                f"{file_path} resolves to {resolved}, outside the workspace",
                hint="use a path inside " + ", ".join(str(r) for r in self.roots),
            )
        if exists:
            self._resolved[file_path] = resolved
        return resolved

    def _check_length(self, given: str, candidate: Path) -> None:
        """A path (or a glob: its names without wildcards) the file system cannot have."""
        name_max, path_max = self.limits
        long_name = next((part for part in candidate.parts
                          if len(os.fsencode(part)) > name_max and not GLOB_CHARS & set(part)), None)
        if long_name is not None:
            raise LsapError(
                ErrorCode.INVALID_REQUEST,
                f"a name in the path {shorten(given, 60)} is {len(os.fsencode(long_name)):,} bytes long, "
                f"over the file system's limit of {name_max} bytes for a file name (NAME_MAX)",
                hint=f"no file can have that name: give an existing path, each name at most {name_max} bytes",
            )
        size = len(os.fsencode(str(candidate)))
        if size >= path_max:
            raise LsapError(
                ErrorCode.INVALID_REQUEST,
                f"the path {shorten(given)} is {size:,} bytes long as an absolute path, over the file "
                f"system's limit of {path_max} bytes for a path (PATH_MAX)",
                hint=f"no file can have that path: give an existing one, under {path_max} bytes",
            )

    def relative_glob(self, pattern: str, what: str = "the glob") -> str:
        """A glob (or an `exclude_files` pattern) relative to the root, as globs are matched:
        a `file:` URI is decoded, and an absolute pattern inside a root is made relative to
        it; one that is absolute elsewhere, starts with `~` or goes up with `..` is refused
        with `outside_workspace`."""
        text = local_path(pattern)
        pure = PurePosixPath(text)
        self._check_length(pattern, self.root / text)
        if pure.is_absolute() and ".." not in pure.parts:
            for prefix in self._prefixes:
                if text.startswith(prefix) and text[len(prefix):]:
                    return text[len(prefix):]
        if pure.is_absolute() or text.startswith("~") or ".." in pure.parts:
            raise LsapError(
                ErrorCode.OUTSIDE_WORKSPACE,
                f"{what} {shorten(pattern)!r} points outside the workspace: globs are relative to "
                "the root and stay inside it",
                hint="e.g. `tests/*` or `src/**/*.ts` (or an absolute path or file:// URI inside the root)",
            )
        return text

    def exclude_patterns(self, patterns: list[str]) -> list[str]:
        """A rename's `exclude_files`, each as `relative_glob` makes it."""
        return [self.relative_glob(p, "exclude_files pattern") for p in patterns]

    def is_file(self, file_path: str) -> bool:
        """Whether a path names a file inside the workspace (for splitting anchor strings).

        Remembered for a moment like `contains`: each anchor string tries two or three
        splits, and each costs a realpath (an lstat per component) on every request. Only
        the split uses it; the path the request then names is resolved afresh."""
        hit = self._files.get(file_path)
        if hit is not None:
            return hit
        try:
            found = self.resolve(file_path).is_file()
        except (LsapError, OSError, ValueError):
            found = False
        self._files[file_path] = found
        return found

    def walk(self, directory: Path, recursive: bool = True, limit: int = 5000,
             max_size: int | None = None) -> Walk:
        """The code files under a directory, sorted, each directory's files before its
        subdirectories; dependency, tool and hidden directories are skipped.

        The one walk of the workspace (outlines, diagnostics, the disk watch): a symbolic
        link is followed only when it stays inside the roots, and one that leads out is
        counted, never listed; files over `max_size` bytes are counted, not listed.
        """
        found = Walk()
        self._walk(directory, recursive, limit, max_size, found)
        return found

    def _walk(self, directory: str | Path, recursive: bool, limit: int, max_size: int | None,
              found: Walk) -> None:
        # On strings until a file is kept: a large tree has many entries that are not.
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            return
        subdirs: list[str] = []
        for entry in entries:
            if found.more:
                return
            name = entry.name
            try:
                if entry.is_dir():
                    if recursive and name not in IGNORED_DIRS and not name.startswith("."):
                        if not entry.is_symlink():
                            subdirs.append(entry.path)
                        elif not self.contains(Path(entry.path)):
                            found.outside += 1
                        # a link to a directory inside: walked where it really is
                    continue
                if os.path.splitext(name)[1] not in CODE_SUFFIXES:
                    continue
                stat = entry.stat()
                if not S_ISREG(stat.st_mode):
                    continue
                path = entry.path
                if entry.is_symlink():
                    if not self.contains(Path(path)):
                        found.outside += 1
                        continue
                    path = os.path.realpath(path)
            except OSError:  # gone meanwhile, or unreadable
                continue
            found.add(path, stat, limit, max_size)
        for subdir in subdirs:
            self._walk(subdir, recursive, limit, max_size, found)

    def glob(self, pattern: str, limit: int = 5000, max_size: int | None = None) -> Walk:
        """Code files matching a glob relative to the root, with the walk's rules."""
        pattern = self.relative_glob(pattern)
        found = Walk()
        matches: dict[Path, os.stat_result] = {}
        try:
            for path in self.root.glob(pattern):
                if path.suffix not in CODE_SUFFIXES or IGNORED_DIRS & set(path.relative_to(self.root).parts):
                    continue
                try:
                    if not self.contains(path):
                        found.outside += 1
                    elif S_ISREG((stat := path.stat()).st_mode):
                        matches[path.resolve()] = stat
                except OSError:
                    continue
        except ValueError as exc:  # pathlib's own rules: `**` only as a whole name
            raise LsapError(ErrorCode.INVALID_REQUEST, f"the glob {shorten(pattern)!r} is malformed: {exc}",
                            hint="e.g. `shop/*.py` or `src/**/*.ts`") from None
        for path in sorted(matches):
            found.add(str(path), matches[path], limit, max_size)
        return found

    @cached_property
    def _prefixes(self) -> tuple[str, ...]:
        return tuple(str(root).rstrip("/") + "/" for root in self.roots)

    def display(self, path: Path) -> str:
        """Paths relative to the root they are in (reached through a symlink or not, see
        `local`); external ones stay absolute."""
        shown = self._relative(str(path))
        if shown is None and (real := self.local(path)) is not None:
            shown = self._relative(str(real))
        return str(path) if shown is None else shown

    def _relative(self, text: str) -> str | None:
        # On strings: every report shows paths, and pathlib's `relative_to` costs ten times more.
        for prefix in self._prefixes:
            if text.startswith(prefix):
                return text[len(prefix):] or "."
            if text + "/" == prefix:
                return "."
        return None


def _link_free(path: Path) -> tuple[Path, bool]:
    """The path with every symlink and `..` followed, and whether it exists."""
    try:
        # An existing file (nearly always): one walk of lstat calls instead of two.
        return Path(os.path.realpath(path, strict=True)), True
    except OSError:  # a file about to be created, a link loop: the slow way below
        pass
    resolved = path.resolve()
    # Python < 3.13 stops following links at a loop (`loop/../inner`): resolve again until
    # nothing changes, so the result is free of links.
    for _ in range(8):
        again = resolved.resolve()
        if again == resolved:
            break
        resolved = again
    return resolved, False
