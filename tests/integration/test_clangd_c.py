"""Issue 35: C through clangd in every mode, on a real C project from the registries: the
LZ4 library the `lz4` sdist on PyPI ships (lz4libs/: lz4, lz4hc, lz4frame, xxhash; BSD-2),
with a `compile_commands.json` written from its file list. References are compared with
the same LSP request sent to clangd directly; without a compilation database the answer
says its cross-file results cover the open files only."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import Bridge

pytestmark = pytest.mark.integration

SDIST = "lz4-4.4.5.tar.gz"
SHA256 = "5f0b9e53c1e82e88c10d7c180069363980136b9d7a8306c4dca4f760d60c39f0"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lsap-tests"


def lz4_sources(into: Path, database: bool) -> Path:
    """The sdist's C library in `into`, fetched once into the cache with pip (the registry's
    own client), checked against its digest; with a compile_commands.json when `database`."""
    archive = CACHE / SDIST
    if not archive.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        "lz4==4.4.5", "-d", str(CACHE)], check=True, timeout=300)
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == SHA256, f"{archive} is not lz4 4.4.5's sdist"
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if "/lz4libs/" in member.name and member.isfile():
                (into / Path(member.name).name).write_bytes(tar.extractfile(member).read())  # type: ignore[union-attr]
    if database:
        (into / "compile_commands.json").write_text(json.dumps([
            {"directory": str(into), "file": str(c), "arguments": ["cc", "-std=c99", "-c", c.name]}
            for c in sorted(into.glob("*.c"))], indent=1))
    return into


def compiles(root: Path) -> subprocess.CompletedProcess[str]:
    """The project checked by the C compiler itself, the way its database says."""
    return subprocess.run(["cc", "-std=c99", "-fsyntax-only", *sorted(p.name for p in root.glob("*.c"))],
                          cwd=root, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def lz4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    root = lz4_sources(tmp_path_factory.mktemp("lz4"), database=True)
    assert compiles(root).returncode == 0
    bridge = Bridge(root, ["clangd"])
    assert bridge.servers == ["clangd"]
    yield bridge
    bridge.close()


def raw_references(bridge: Bridge, path: str, line: int, column: int) -> set[tuple[str, int, int]]:
    """`textDocument/references` sent to clangd directly (1-based line and column in)."""
    found = bridge.lua("""
        local path, line, col = ...
        local b = vim.fn.bufadd(path); vim.fn.bufload(b)
        local c = vim.lsp.get_clients({ name = 'clangd' })[1]
        local r = c:request_sync('textDocument/references', { textDocument = { uri = vim.uri_from_fname(path) },
          position = { line = line, character = col }, context = { includeDeclaration = true } }, 30000, b)
        local out = {}
        for _, l in ipairs(r.result or {}) do
          out[#out + 1] = { vim.uri_to_fname(l.uri), l.range.start.line, l.range.start.character }
        end
        return out
    """, str(bridge.root / path), line - 1, column - 1)
    return {(str(Path(f).relative_to(bridge.root)), ln + 1, ch + 1) for f, ln, ch in found}


def test_references_across_files_equal_the_raw_servers(lz4: Bridge) -> None:
    data = lz4.ask(mode="references", locate="xxhash.c:XXH32_update")
    ours = {(g["path"], u["line"], u["column"]) for g in data["groups"] for u in g["uses"]}
    assert data["total"] == len(ours) == 7 and data["files"] == 3
    assert {path for path, _, _ in ours} == {"lz4frame.c", "xxhash.c", "xxhash.h"}
    assert ours == raw_references(lz4, "xxhash.c", data["line"], data["column"])
    text = lz4.request({"mode": "references", "locate": "xxhash.c:XXH32_update"}).text
    assert "compilation database" not in text


def test_definition_from_a_call_in_another_file(lz4: Bridge) -> None:
    data = lz4.ask(mode="definition", locate="lz4frame.c@(void)<|>XXH32_update(&(cctxPtr->xxh)")
    assert [(d["path"], d["line"]) for d in data["definitions"]] == [("xxhash.c", 515)]


def test_hover(lz4: Bridge) -> None:
    data = lz4.ask(mode="hover", locate="lz4frame.c@(void)<|>XXH32_update(&(cctxPtr->xxh)")
    # The declaration the call sees (the header's), with where it comes from.
    assert "XXH_errorcode XXH32_update(XXH32_state_t *statePtr" in data["hover"]
    assert 'provided by `"xxhash.h"`' in data["hover"]


def test_outline_of_a_header(lz4: Bridge) -> None:
    data = lz4.ask(mode="outline", file_path="xxhash.h")
    rows = [(s["line"], s["symbol"]) for g in data["groups"] for s in g["symbols"]]
    assert (178, "XXH32_update") in rows and (172, "XXH32_state_s") in rows
    assert rows == sorted(rows, key=lambda r: r[0])


def test_calls_both_ways(lz4: Bridge) -> None:
    data = lz4.ask(mode="calls", locate="xxhash.c:XXH32_update")
    incoming, outgoing = data["sections"]
    assert [(r["name"], r["sites"]) for r in incoming["rows"]] == [
        ("LZ4F_compressUpdateImpl", [1042]), ("LZ4F_decompress", [1714, 1717, 1850, 1895])]
    assert {r["name"] for r in outgoing["rows"]} == {"XXH32_update_endian", "XXH_isLittleEndian"}


def test_diagnostics_of_a_clean_and_a_broken_file(lz4: Bridge) -> None:
    assert lz4.ask(mode="diagnostics", file_path="lz4frame.c")["total"] == 0
    (lz4.root / "broken.c").write_text('#include "xxhash.h"\nint f(void) { return XXH32_update(0, 0); }\n')
    data = lz4.ask(mode="diagnostics", file_path="broken.c")
    assert data["pending"] == []
    [error] = [d for g in data["groups"] for d in g["diagnostics"] if d["severity"] == "error"]
    assert "too few arguments" in error["message"].lower() and error["line"] == 2
    (lz4.root / "broken.c").unlink()


def test_check_reports_an_edits_new_error(lz4: Bridge) -> None:
    assert lz4.ask(mode="check")["baseline"]
    xxhash = lz4.root / "xxhash.c"
    original = xxhash.read_text()
    xxhash.write_text(original + "\nint lsap_broken(void) { return not_declared_anywhere; }\n")
    try:
        after = lz4.ask(mode="check")
        assert after["counts"]["new"] == {"error": 1}, after
        [group] = [g for g in after["groups"] if g["status"] == "new"]
        assert group["path"] == "xxhash.c" and "not_declared_anywhere" in group["diagnostics"][0]["message"]
    finally:
        xxhash.write_text(original)


def test_rename_across_files_keeps_the_project_compiling(lz4: Bridge) -> None:
    def uses(name: str) -> dict[str, list[int]]:
        word = re.compile(rf"\b{name}\b")
        return {p.name: [n for n, line in enumerate(p.read_text().splitlines(), 1) for _ in word.findall(line)]
                for p in sorted(lz4.root.glob("*.[ch]"))}

    before = uses("XXH32_digest")
    report = lz4.ask(mode="rename", locate="xxhash.h:XXH32_digest", new_name="XXH32_final")
    assert report["old_name"] == "XXH32_digest" and report["server"] == "clangd"
    # Every use in compiled code, in three files. What is left is in branches the build
    # leaves out (clangd renames what the compiler sees): the namespacing macro under
    # xxhash.h's `#ifdef XXH_NAMESPACE`, and a call under xxhash.c's `#if 0`.
    left = {"xxhash.c": [399], "xxhash.h": [133, 133]}
    assert uses("XXH32_digest") == {**{name: [] for name in before}, **left}
    renamed = uses("XXH32_final")
    assert renamed == {**before, "xxhash.c": [546], "xxhash.h": [179]}
    assert {name for name, lines in renamed.items() if lines} == {"lz4frame.c", "xxhash.c", "xxhash.h"}
    assert compiles(lz4.root).returncode == 0, compiles(lz4.root).stderr


def test_without_a_compilation_database_the_answer_says_so(tmp_path: Path) -> None:
    root = lz4_sources(tmp_path, database=False)
    bridge = Bridge(root, ["clangd"])
    try:
        response = bridge.request({"mode": "references", "locate": "xxhash.c:XXH32_update"})
        assert response.ok, response.text
        assert ("> Note: clangd has no compilation database for xxhash.c: its cross-file results "
                "(references, rename, calls) cover the files open in the editor only.") in response.text
        assert "cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON" in response.text and "compile_flags.txt" in response.text
        # Single-file answers carry no such note.
        assert "compilation database" not in bridge.request({"mode": "hover", "locate": "xxhash.c:XXH32_update"}).text
    finally:
        bridge.close()
