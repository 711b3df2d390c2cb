"""What every warm request does before and after its capability's own work (the fixed cost,
doc/architecture.md, Costs) is done once where it can be, and still sees what it is for."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path, PurePath
from typing import Any

import pytest

from lsap_bridge import decode
from lsap_bridge import workspace as workspace_module
from lsap_bridge.capabilities import outline
from lsap_bridge.decode import clean_markdown
from lsap_bridge.filestate import DiskStamp
from lsap_bridge.lsp import FileEventData
from lsap_bridge.position import Document
from lsap_bridge.server import CallTime
from lsap_bridge.session import calls
from lsap_bridge.session.warm import Session
from lsap_bridge.symbols import Span, Symbol, SymbolTree
from lsap_bridge.workspace import INSIDE_TTL, LANGUAGES, Workspace, language_of, path_of, uri_of
from tests.fakes import FakeEditor


class Told(FakeEditor):
    """A fake editor that keeps what the servers were told of their configuration files."""

    def __init__(self) -> None:
        super().__init__(lambda call: None)
        self.told: list[list[FileEventData]] = []

    async def reconfigure(self, changes: list[FileEventData]) -> list[str]:
        self.told.append(changes)
        return await super().reconfigure(changes)


def test_configuration_files_are_stamped_by_paths_made_once_and_each_change_is_told(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    editor = Told()
    servers = Session(editor, Workspace.of(one, two)).servers
    stamped: list[list[int]] = []
    real = DiskStamp.of

    def of(path: Path | str) -> DiskStamp | None:
        stamped[-1].append(id(path))
        return real(path)

    monkeypatch.setattr(DiskStamp, "of", of)

    def reconfigure() -> bool:
        stamped.append([])
        return asyncio.run(servers.reconfigure())

    assert not reconfigure()  # the baseline
    assert not reconfigure()
    # Every root's every configuration file, by the same path objects at every request.
    assert len(stamped[0]) == 2 * len(calls.CONFIG_FILES) and stamped[1] == stamped[0]
    pyproject, tsconfig = two / "pyproject.toml", one / "tsconfig.json"
    pyproject.write_text("[tool.basedpyright]\n")
    tsconfig.write_text("{}")
    assert reconfigure()
    pyproject.write_text("[tool.basedpyright]\ntypeCheckingMode = 'strict'\n")
    assert reconfigure()
    os.remove(tsconfig)
    assert reconfigure()
    assert not reconfigure()
    # created (1), changed (2), deleted (3): each once, each of its own file
    assert editor.told == [
        [{"uri": uri_of(tsconfig.resolve()), "type": 1}, {"uri": uri_of(pyproject.resolve()), "type": 1}],
        [{"uri": uri_of(pyproject.resolve()), "type": 2}],
        [{"uri": uri_of(tsconfig.resolve()), "type": 3}],
    ]


def test_a_call_runs_its_work_in_its_own_task_and_still_times_out() -> None:
    async def main() -> tuple[bool, list[str], int]:
        ran_in: list[bool] = []

        async def work(seconds: float) -> str:
            ran_in.append(asyncio.current_task() is caller)
            await asyncio.sleep(seconds)
            return "answered"

        caller = asyncio.current_task()
        assert await CallTime(time.monotonic() + 30, explicit=True).bound(work(0)) == "answered"
        seen = []
        try:
            await CallTime(time.monotonic() + 0.05, explicit=True).bound(work(30))
        except asyncio.TimeoutError:
            seen.append("timeout")
        assert caller is not None
        left = caller.cancelling() if sys.version_info >= (3, 11) else 0
        return all(ran_in), seen, left

    same_task, seen, cancelling = asyncio.run(main())
    assert same_task  # no task of its own
    assert seen == ["timeout"]
    assert cancelling == 0  # the timeout's cancel taken back: the caller's next waits are its own


def test_a_default_limit_stands_still_while_the_human_is_asked() -> None:
    async def main() -> str:
        limit = CallTime(time.monotonic() + 0.05, explicit=False)
        answered = asyncio.Event()

        async def work() -> str:
            with limit.approval():
                await answered.wait()
            return "applied"

        async def human() -> None:
            await asyncio.sleep(0.3)  # well past the limit: only the approval holds it
            answered.set()

        asking = asyncio.ensure_future(human())
        try:
            return await limit.bound(work())
        finally:
            await asking

    assert asyncio.run(main()) == "applied"


class Buffers(FakeEditor):
    """A fake editor whose files are loaded buffers: it holds the last text read of each,
    and counts the reads."""

    def __init__(self) -> None:
        super().__init__(lambda call: None)
        self.texts: dict[Path, Document] = {}
        self.reads: list[list[Path]] = []

    async def read(self, paths: list[Path]) -> dict[Path, Document]:
        self.reads.append(list(paths))
        for path in paths:
            self.texts[path] = Document(path, path.read_text().splitlines(), f"tick:{len(self.reads)}", bufnr=1)
        return {path: self.texts[path] for path in paths}

    def held(self, path: Path) -> Document | None:
        return self.texts.get(path)


def test_a_text_a_guarded_call_found_current_is_not_read_again_in_that_request(tmp_path: Path) -> None:
    (tmp_path / "a.ts").write_text("export const a = 1;\n")
    (tmp_path / "b.ts").write_text("export const b = 2;\n")
    editor = Buffers()
    texts = Session(editor, Workspace.of(tmp_path)).texts
    a, b = (tmp_path / "a.ts").resolve(), (tmp_path / "b.ts").resolve()

    async def main() -> list[Document]:
        held = (await texts.documents([a]))[a]  # read by an earlier request
        got = []
        with texts.holding():
            texts.hold(a, held)
            texts.confirmed(held)  # as `Servers.lsp` does once its guarded call went through
            got += (await texts.documents([a, b])).values()  # only b is read
            texts.changed_by_bridge([a])  # an edit of the bridge's own: read again
            got.append(await texts.document(a))
        with texts.holding():  # the next request: a guard of its own first
            got.append(await texts.document(a))
        return got

    same, other, edited, next_request = asyncio.run(main())
    assert same.lines == ["export const a = 1;"] and other.lines == ["export const b = 2;"]
    assert editor.reads == [[a], [b], [a], [a]]
    assert edited.version != same.version and next_request.version != edited.version


def test_a_files_path_is_resolved_once_while_the_file_systems_answers_are_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    monkeypatch.setattr(workspace_module, "clock", lambda: now[0])
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "real" / "a.py").write_text("")
    (root / "other" / "a.py").write_text("")
    alias = root / "alias"
    alias.symlink_to(root / "real", target_is_directory=True)
    workspace = Workspace.of(root)
    real, other = root.resolve() / "real", root.resolve() / "other"
    assert workspace.resolve("alias/a.py") == real / "a.py"
    alias.unlink()
    alias.symlink_to(root / "other", target_is_directory=True)
    assert workspace.resolve("alias/a.py") == real / "a.py"  # remembered, as `local`'s answers are
    now[0] += INSIDE_TTL
    assert workspace.resolve("alias/a.py") == other / "a.py"
    # A file not there yet is resolved at every request: a link made there is followed at once.
    assert workspace.resolve("alias/new.py") == other / "new.py"
    alias.unlink()
    alias.symlink_to(root / "real", target_is_directory=True)
    assert workspace.resolve("alias/new.py") == real / "new.py"


@pytest.mark.parametrize("name", ["a.py", "A.PY", ".py", "a.", "a.tar.gz", "x/y.ts", "x.y/z", "/a/b.TSX",
                                  "noext", "..", ".", "a..py", "dir/.hidden.py", "a.py/", "", "/"])
def test_a_files_language_is_its_suffixs_as_pathlib_reads_it(name: str) -> None:
    assert language_of(name) == language_of(Path(name)) == LANGUAGES.get(PurePath(name).suffix.lower(), "text")


def test_docs_with_no_markup_to_clean_are_not_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    class Unused:
        def split(self, text: str) -> list[str]:
            raise AssertionError("scanned for markup it cannot hold")

    docs = "```typescript\n(method) Observable<T>.lift<R>(operator?: Operator<T, R>): Observable<R>\n```\nCreates one."
    with monkeypatch.context() as patched:
        patched.setattr(decode, "_CODE", Unused())
        assert clean_markdown(docs) == docs
    # Any of the marks it cleans: scanned, and cleaned outside code as before.
    assert clean_markdown("a&nbsp;b<br>c `x\\_y` x\\_y") == "a b\nc `x\\_y` x_y"


def test_a_files_compact_outline_is_walked_once_per_symbol_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ["export class Shop {", "  sell() {}", "}", "const hidden = 1;"]
    path = Path("/w/shop.ts")

    def tree() -> SymbolTree:
        sell = Symbol("sell", 6, Span(1, 2, 1, 11), Span(1, 2, 1, 6))
        return SymbolTree([Symbol("Shop", 5, Span(0, 0, 2, 1), Span(0, 13, 0, 17), children=[sell]),
                           Symbol("hidden", 14, Span(3, 0, 3, 17), Span(3, 6, 3, 12))])

    walks: list[int] = []
    real = outline.public

    def public(*args: Any) -> Any:
        walks.append(1)
        return real(*args)

    monkeypatch.setattr(outline, "public", public)
    kept = Session(FakeEditor(lambda call: None), Workspace.of(Path.cwd())).kept
    first, same = tree(), Document(path, lines, "tick:3", bufnr=1)
    walked, left_out = kept.owned(outline.CompactWalks).of(path, same, first)
    assert [dotted for dotted, _ in walked] == [("Shop",), ("Shop", "sell")] and left_out == 1
    again = Document(path, lines, "tick:3", bufnr=1)
    assert kept.owned(outline.CompactWalks).of(path, again, first) == (walked, left_out)
    assert len(walks) == 1
    kept.owned(outline.CompactWalks).of(path, same, tree())  # another tree (read again): walked again
    kept.owned(outline.CompactWalks).of(path, Document(path, lines, "tick:4", bufnr=1), first)  # another text
    assert len(walks) == 3


def test_a_uri_names_one_path_object() -> None:
    uri = "file:///w/src/internal/Observable%20two.ts"
    assert path_of(uri) is path_of(uri)  # made once: the same object, whichever answer names it
    assert path_of(uri) == Path("/w/src/internal/Observable two.ts")
