"""Language servers' answers decoded into the bridge's data (doc/architecture.md, Layers):
shapes the LSP allows several of, made one, with code-point columns. Shared by the modes
and the text format; symbols.py and diagnostics.py do the same for their answers."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeAlias, cast

from lsprotocol import types

from .errors import ErrorCode, LsapError
from .jsonvalue import Json, JsonObject, Params, items, obj
from .lsp import SHAPE_ERRORS, Locations, json_list, json_object, optional_text, range_of, structure
from .position import Document, Encoding, column_at, to_lsp_character
from .symbols import Units, units
from .workspace import path_of, uri_of

# Outside code: HTML entities (`&nbsp;` indents pyright's docstrings), line-break tags, and
# backslash escapes of punctuation (`color\_system`, `Optional\[bool\]`).
_NOISE = re.compile(r"&(?:[a-zA-Z]+|#\d+|#x[0-9a-fA-F]+);|<br\s*/?>|\\([!-/:-@\[\]^_{|}~])")
_CODE = re.compile(r"(^```.*?^```[ \t]*$|`[^`\n]+`)", re.MULTILINE | re.DOTALL)


def clean_markdown(text: str) -> str:
    """Servers' documentation without markup that means nothing to a reader of plain text:
    entities decoded, `<br>` as a line break, backslash escapes dropped; code kept as is.
    (`&nbsp;` was a fifth of the tokens of a hover on rich's Console.) A text with none of
    the three marks `_NOISE` starts with is returned as it is, unsplit."""
    if "&" not in text and "<br" not in text and "\\" not in text:
        return text

    def plain(part: str) -> str:
        return _NOISE.sub(lambda m: m.group(1) or ("\n" if m.group(0)[0] == "<" else
                                                   html.unescape(m.group(0)).replace("\u00a0", " ")), part)

    pieces = _CODE.split(text)
    return "".join(piece if i % 2 else plain(piece) for i, piece in enumerate(pieces))


#: A WorkspaceEdit's resource operation.
Operation: TypeAlias = types.CreateFile | types.RenameFile | types.DeleteFile


class Step(NamedTuple):
    """One part of a WorkspaceEdit, in the order it is applied: a file's text edits, or a
    resource operation (create, rename, delete a file). Columns in the server's units."""

    uri: str  # the file edited, created or deleted; the old file of a rename
    edits: list[types.TextEdit]  # its TextEdits (Annotated, Snippet: their text); none for an operation
    op: Operation | None = None  # the CreateFile, RenameFile or DeleteFile
    version: int | None = None  # the document version the edits were computed on

    @property
    def kind(self) -> str:
        """"edit", or the operation's kind ("create", "rename", "delete")."""
        return "edit" if self.op is None else self.op.kind

    @property
    def uris(self) -> list[str]:
        """Every file the step touches: a rename's old and new file."""
        return [self.op.old_uri, self.op.new_uri] if isinstance(self.op, types.RenameFile) else [self.uri]

    def change(self) -> types.TextDocumentEdit | Operation:
        """The step as a `documentChanges` entry."""
        return self.op or types.TextDocumentEdit(
            types.OptionalVersionedTextDocumentIdentifier(self.uri, self.version), list(self.edits))


def walk(edit: Mapping[str, Json]) -> Iterator[Step]:
    """The one walk over a (well-formed: `edits._malformed`) WorkspaceEdit, decoded: its
    `documentChanges` when it has them, which LSP says a client uses instead of `changes`,
    else its `changes`. A resource operation of a kind LSP does not define is refused
    (`_operation`)."""
    documents = items(edit.get("documentChanges"))
    if documents:
        for change in map(obj, documents):
            if change.get("kind"):
                op = _operation(change)
                yield Step(op.old_uri if isinstance(op, types.RenameFile) else op.uri, [], op)
            else:
                document = obj(change["textDocument"])
                version = document.get("version")
                yield Step(str(document["uri"]), text_edits(change.get("edits")), None,
                           version if isinstance(version, int) else None)
        return
    for uri, edits in obj(edit.get("changes")).items():
        yield Step(uri, text_edits(edits))


def typed_steps(edit: types.WorkspaceEdit) -> Iterator[Step]:
    """A WorkspaceEdit the bridge built (or merged) as steps, as `walk` reads one sent."""
    if edit.document_changes:
        for change in edit.document_changes:
            if isinstance(change, types.TextDocumentEdit):
                yield Step(change.text_document.uri, [_plain(e) for e in change.edits], None,
                           change.text_document.version)
            else:
                yield Step(change.old_uri if isinstance(change, types.RenameFile) else change.uri, [], change)
        return
    for uri, edits in (edit.changes or {}).items():
        yield Step(uri, [_plain(e) for e in edits])


def _plain(edit: types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit) -> types.TextEdit:
    """Any text edit as a TextEdit with its text."""
    if isinstance(edit, types.SnippetTextEdit):
        return types.TextEdit(edit.range, edit.snippet.value)
    return edit if type(edit) is types.TextEdit else types.TextEdit(edit.range, edit.new_text)


def text_edits(edits: Json) -> list[types.TextEdit]:
    """A file's TextEdits (AnnotatedTextEdit and SnippetTextEdit read as one with their text),
    made directly; each well formed (`edits._malformed` checks it before an edit is planned)."""
    out = []
    for item in map(obj, items(edits)):
        text = item.get("newText")
        if text is None and isinstance(snippet := item.get("snippet"), dict):
            text = snippet.get("value", "")
        out.append(types.TextEdit(range_of(item["range"]), str(text or "")))
    return out


def _flag(options: JsonObject, key: str) -> bool | None:
    value = options.get(key)
    return None if value is None else bool(value)


def _operation(change: JsonObject) -> Operation:
    """A `documentChanges` resource operation with its options; one of another kind is
    refused: the bridge does not know what it would do."""
    kind, options = change["kind"], obj(change.get("options"))
    if kind == "create":
        return types.CreateFile(str(change["uri"]), options=types.CreateFileOptions(
            _flag(options, "overwrite"), _flag(options, "ignoreIfExists")) if options else None)
    if kind == "rename":
        return types.RenameFile(str(change["oldUri"]), str(change["newUri"]), options=types.RenameFileOptions(
            _flag(options, "overwrite"), _flag(options, "ignoreIfExists")) if options else None)
    if kind == "delete":
        return types.DeleteFile(str(change["uri"]), options=types.DeleteFileOptions(
            _flag(options, "recursive"), _flag(options, "ignoreIfNotExists")) if options else None)
    raise LsapError(
        ErrorCode.UNSUPPORTED,
        f"the edit would {kind} a file, which the bridge does not do",
        hint="nothing was changed; make that change by hand",
    )


def hover_text(hover: types.Hover | None) -> str:
    """Hover contents (MarkupContent, MarkedString or a list of them) as Markdown, cleaned
    (`clean_markdown`)."""
    if hover is None:
        return ""
    contents = hover.contents
    parts = contents if isinstance(contents, Sequence) and not isinstance(contents, str) else [contents]
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, types.MarkedStringWithLanguage):
            out.append(f"```{part.language}\n{part.value}\n```")
        else:
            out.append(str(part.value))
    return clean_markdown("\n\n".join(p.strip() for p in out if p and p.strip()))


def hover_of(raw: object, server: str) -> types.Hover | None:
    """A hover answer taken from a batch (`Servers.lsp`), structured (lsp.py)."""
    return structure(raw, types.Hover, server, "textDocument/hover") if raw else None


_COMPLETION_KINDS = {int(kind): kind for kind in types.CompletionItemKind}


def completions(raw: Json) -> types.CompletionList:
    """A `textDocument/completion` answer (`CompletionList | CompletionItem[] | null`) as one
    list, each item with what the bridge reads of it (label, kind, sort text, details), the
    classes made directly (cattrs costs 1.3 times as much: benchmarks/typed_decode.py)."""
    entries = json_list(json_object(raw).get("items") if isinstance(raw, dict) else raw)
    out = []
    for entry in entries:
        item = json_object(entry)
        kind = item.get("kind")
        labels = None if (given := item.get("labelDetails")) is None else json_object(given)
        out.append(types.CompletionItem(
            cast(str, item["label"]),
            label_details=None if labels is None else types.CompletionItemLabelDetails(
                optional_text(labels.get("detail")), optional_text(labels.get("description"))),
            kind=_COMPLETION_KINDS.get(kind) if isinstance(kind, int) else None,
            detail=optional_text(item.get("detail")), sort_text=optional_text(item.get("sortText"))))
    return types.CompletionList(isinstance(raw, dict) and bool(raw.get("isIncomplete")), out)


def is_range(value: object) -> bool:
    """Whether a server's value is an LSP Range (servers do send garbage)."""
    return isinstance(value, dict) and all(
        isinstance(end := value.get(key), dict)
        and type(end.get("line")) is int and end["line"] >= 0
        and type(end.get("character")) is int and end["character"] >= 0
        for key in ("start", "end")
    )


class PackedLocations(NamedTuple):
    """A location answer as lua/lsap/transport/packing.lua sends it for an `LspCall` with
    `packed` (`pack_locations`, which left out what is not a file's location with a valid
    range): per file its URI and its ranges' numbers in one flat list, server units."""

    files: list[tuple[str, list[int]]]


def packed_locations(raw: Json) -> PackedLocations:
    """A location answer asked `packed`, its lists checked, no object made per result: an
    answer of 20,000 costs what its files do (doc/architecture.md, Costs). One the editor
    sent as the server gave it (null, a test's fake server) is read by `locations`."""
    if not (isinstance(raw, dict) and "packed" in raw):
        by_uri: dict[str, list[int]] = {}
        for use in locations(raw):
            by_uri.setdefault(use.uri, []).extend(units(use.range))
        return PackedLocations(list(by_uri.items()))
    files = []
    for entry in json_list(raw["packed"]):
        uri, flat = json_list(entry)
        if not isinstance(uri, str) or len(json_list(flat)) % 4:
            raise TypeError(f"not a packed file: {str(entry)[:40]!r}")
        files.append((uri, cast(list[int], flat)))
    return PackedLocations(files)


def locations(raw: Json) -> list[types.Location]:
    """`Location | Location[] | LocationLink[] | null` as lsprotocol's Locations, made directly
    (cattrs costs 1.4 times as much: benchmarks/typed_decode.py); a link's place is its target's
    selection (the name). What is not a file's location with a valid range is left out, as
    packing.lua leaves it out of a packed answer; an answer that is no list is the server's
    error (`lsp.decoded`)."""
    out = []
    for entry in [raw] if isinstance(raw, dict) else json_list(raw):
        item = obj(entry)
        uri = item.get("targetUri") or item.get("uri")
        if isinstance(uri, str) and uri.startswith("file:"):
            try:
                out.append(types.Location(uri, range_of(item.get("targetSelectionRange") or item.get("range"))))
            except SHAPE_ERRORS:
                continue  # no valid range: left out
    return out


def location_units(answer: Locations) -> list[tuple[Path, Units]]:
    """A location answer as (path, range in the server's units) pairs, nothing read; a link's
    place is its target's selection (the name), files not on disk left out."""
    items: Sequence[types.Location | types.LocationLink] = (
        [] if answer is None else [answer] if isinstance(answer, types.Location) else answer)
    out: list[tuple[Path, Units]] = []
    for item in items:
        uri, rng = ((item.target_uri, item.target_selection_range) if isinstance(item, types.LocationLink)
                    else (item.uri, item.range))
        if uri.startswith("file:"):
            out.append((path_of(uri), (rng.start.line, rng.start.character, rng.end.line, rng.end.character)))
    return out


def location_files(answer: PackedLocations | Sequence[types.Location]) -> list[tuple[Path, list[Units]]]:
    """A location answer (`packed_locations`, `locations`) by file: the files in path order,
    each with its ranges sorted and one per start position, columns still in the server's
    units. Columns are converted for what is shown only (`Texts.located`): the unit order
    is the code-point order, so sorting and de-duplicating need no text.
    """
    paths: dict[str, Path] = {}  # thousands of results name a few hundred files
    if isinstance(answer, PackedLocations):
        runs = [(path_of(uri), flat) for uri, flat in answer.files if uri.startswith("file:")]
    else:
        runs = [(paths.get(loc.uri) or paths.setdefault(loc.uri, path_of(loc.uri)), list(units(loc.range)))
                for loc in answer]
    by_path: dict[Path, list[int]] = {}
    for path, flat in runs:
        by_path.setdefault(path, []).extend(flat)
    out = []
    for path in sorted(by_path, key=str):
        flat = by_path[path]
        first_lines, first_chars = flat[0::4], flat[1::4]
        starts = zip(first_lines, first_chars, strict=False)
        ranges = zip(first_lines, first_chars, flat[2::4], flat[3::4], strict=False)
        # One per start (the last one given wins), in start order: all at C speed.
        out.append((path, sorted(dict(zip(starts, ranges, strict=False)).values())))
    return out


def location_count(answer: PackedLocations) -> int:
    """How many results a packed location answer holds."""
    return sum(len(flat) // 4 for _, flat in answer.files)


# -- inlay hints ---------------------------------------------------------------------

INLAY_TAG = "/*<inlay>{}</inlay>*/"


@dataclass(frozen=True)
class InlayHint:
    line: int  # 0-based
    col: int  # code points
    label: str
    kind: int | None = None  # 1 = type, 2 = parameter


def inlay_hints_from_lsp(answer: Sequence[types.InlayHint] | None, lines: Sequence[str],
                         encoding: Encoding) -> list[InlayHint]:
    """`textDocument/inlayHint` answers as hints with code-point columns, in text order; a
    label of parts (`InlayHintLabelPart`) is their values joined."""
    hints = []
    for hint in answer or []:
        line = hint.position.line
        col = column_at(lines, line, hint.position.character, encoding)
        label = hint.label if isinstance(hint.label, str) else "".join(part.value for part in hint.label)
        hints.append(InlayHint(line, col, label.strip(), int(hint.kind) if hint.kind else None))
    return sorted(hints, key=lambda h: (h.line, h.col))


def weave_inlay_hints(text: str, hints: Sequence[InlayHint], tag: str = INLAY_TAG) -> str:
    """One line of code with its hints inserted as tags at their columns (padding dropped)."""
    out: list[str] = []
    at = 0
    for hint in sorted(hints, key=lambda h: h.col):
        col = max(at, min(hint.col, len(text)))
        out.append(text[at:col])
        out.append(tag.format(hint.label))
        at = col
    out.append(text[at:])
    return "".join(out)


def inlay_hint_params(
    path: Path, doc: Document, first: int, stop: int, encoding: Encoding
) -> Params:
    """`textDocument/inlayHint` params for lines `first` up to `stop` (exclusive)."""
    last = doc.lines[stop - 1] if 0 < stop <= len(doc.lines) else ""
    return {
        "textDocument": {"uri": uri_of(path)},
        "range": {
            "start": {"line": first, "character": 0},
            "end": {"line": stop - 1, "character": to_lsp_character(last, len(last), encoding)},
        },
    }
