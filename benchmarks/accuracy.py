"""Anchor accuracy: locates generated from a real code base, exact and perturbed.

Each case knows the position it means. Perturbations are the mistakes agents make when
they copy a line: whitespace changes, a one-character typo, curly quotes or other unicode
look-alikes, a dropped token, and lines moved by an edit above. Every case goes through the
bridge's real `locate` mode (the resolver over the real Neovim buffers), so the figures
are what an agent gets.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsap_bridge.gateway import EditorGateway
from lsap_bridge.service import Service

MARK = "\x00"  # the marker's place while a find is perturbed; becomes `<|>`
MOVED_BY = 5  # lines inserted above for the "moved" cases
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
PUNCTUATION_SPACE = re.compile(r"\s*([=,:()\[\]+*/<>])\s*")


@dataclass(frozen=True)
class Case:
    kind: str
    path: str  # relative to the root
    find: str
    line: int  # 0-based, before any move
    column: int  # code points
    expect: str  # "unique" or "ambiguous"
    moved: int = 0


@dataclass(frozen=True)
class Outcome:
    case: Case
    ok: bool
    line: int | None
    column: int | None
    approximate: bool
    error: str | None

    @property
    def correct(self) -> bool:
        return self.ok and (self.line, self.column) == (
            self.case.line + self.case.moved,
            self.case.column,
        )

    @property
    def wrong_silent(self) -> bool:
        return self.ok and not self.correct and not self.approximate

    @property
    def wrong_noted(self) -> bool:
        return self.ok and not self.correct and self.approximate

    @property
    def reported_ambiguous(self) -> bool:
        return self.error == "ambiguous"


def _span(stripped: str, rng: random.Random) -> tuple[int, str] | None:
    """A run of whole tokens, 16 to 60 characters, from a line (offset in the line, text)."""
    tokens = list(re.finditer(r"\S+", stripped))
    for _ in range(8):
        first = rng.randrange(len(tokens))
        last = first
        while tokens[last].end() - tokens[first].start() < 20 and last + 1 < len(tokens):
            last += 1
        start, end = tokens[first].start(), tokens[last].end()
        if 16 <= end - start <= 60:
            return start, stripped[start:end]
    return None


def _whitespace(marked: str, rng: random.Random) -> str:
    options = [
        marked.replace(" ", "  "),
        PUNCTUATION_SPACE.sub(r"\1", marked),
        re.sub(r"([(\[,])", r"\1 ", marked),
        "\t" + marked.replace(" ", "\t", 1),
    ]
    rng.shuffle(options)
    return next((o for o in options if o != marked), marked)


def _typo(marked: str, rng: random.Random) -> str:
    letters = [i for i, ch in enumerate(marked) if ch.isalpha()]
    if len(marked) < 16 or not letters:
        return marked
    i = rng.choice(letters)
    replacement = rng.choice([c for c in "abcdefghijklmnopqrstuvwxyz" if c != marked[i].lower()])
    return marked[:i] + replacement + marked[i + 1 :]


def _unicode(marked: str, rng: random.Random) -> str:
    if "'" in marked or '"' in marked:
        out, quote_open = [], {"'": True, '"': True}
        for ch in marked:
            if ch in quote_open:
                curly = {"'": "‘’", '"': "“”"}[ch]
                out.append(curly[0] if quote_open[ch] else curly[1])
                quote_open[ch] = not quote_open[ch]
            else:
                out.append(ch)
        return "".join(out)
    if " - " in marked:
        return marked.replace(" - ", " – ", 1)
    return marked.replace(" ", "\u00a0", 1)


def _drop_token(marked: str, rng: random.Random) -> str:
    tokens = list(re.finditer(r"\S+", marked))
    inner = [t for t in tokens[1:-1] if MARK not in t.group(0)]
    if len(tokens) < 4 or not inner:
        return marked
    token = rng.choice(inner)
    return marked[: token.start()] + marked[token.end() :].lstrip(" ")


PERTURBATIONS = {
    "whitespace": _whitespace,
    "typo (one character)": _typo,
    "unicode look-alikes": _unicode,
    "dropped token": _drop_token,
}


def generate(root: Path, pattern: str, files: int, per_file: int, rng: random.Random) -> list[Case]:
    """Exact, perturbed and moved cases from `files` source files, `per_file` lines each."""
    paths = sorted(p for p in root.glob(pattern) if p.is_file() and p.stat().st_size > 0)
    cases: list[Case] = []
    for path in rng.sample(paths, min(files, len(paths))):
        lines = path.read_text(encoding="utf-8").splitlines()
        text = "\n".join(lines)
        rel = path.relative_to(root).as_posix()
        candidates = [
            i for i, line in enumerate(lines) if len(line.strip()) >= 16 and "<|" not in line and "|>" not in line
        ]
        unique = ambiguous = 0
        for index in rng.sample(candidates, len(candidates)):
            if unique >= per_file and ambiguous >= per_file // 2:
                break
            line = lines[index]
            lead = len(line) - len(line.lstrip())
            picked = _span(line.strip(), rng)
            if picked is None:
                continue
            offset, span = picked
            names = list(IDENTIFIER.finditer(span))
            if not names:
                continue
            marker = rng.choice(names).start()
            column = lead + offset + marker
            marked = span[:marker] + MARK + span[marker:]
            if text.count(span) > 1:
                if ambiguous < per_file // 2:
                    ambiguous += 1
                    cases.append(Case("exact, non-unique", rel, _find(marked), index, column, "ambiguous"))
                continue
            if unique >= per_file:
                continue
            unique += 1
            cases.append(Case("exact", rel, _find(marked), index, column, "unique"))
            cases.append(
                Case(
                    "lines moved by an edit above",
                    rel,
                    _find(marked),
                    index,
                    column,
                    "unique",
                    MOVED_BY,
                )
            )
            for kind, perturb in PERTURBATIONS.items():
                changed = perturb(marked, rng)
                # A change that yields another real line's text is not a mistake any more.
                if changed != marked and changed.replace(MARK, "") not in text:
                    cases.append(Case(kind, rel, _find(changed), index, column, "unique"))
    return cases


def _find(marked: str) -> str:
    return marked.replace(MARK, "<|>")


async def run(service: Service, gateway: EditorGateway, cases: list[Case]) -> list[Outcome]:
    """Resolve every case with the bridge's `locate` mode; moved cases edit the buffer first."""
    outcomes = [await _resolve(service, case) for case in cases if not case.moved]
    moved: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        if case.moved:
            moved[case.path].append(case)
    for rel, group in moved.items():
        bufnr = await gateway.open(service.workspace.root / rel)
        await gateway.exec_lua("vim.api.nvim_buf_set_lines(..., 0, 0, false, {'', '', '', '', ''})", bufnr)
        try:
            outcomes += [await _resolve(service, case) for case in group]
        finally:
            await gateway.exec_lua(
                "local b = ...; vim.api.nvim_buf_set_lines(b, 0, 5, false, {}); vim.bo[b].modified = false",
                bufnr,
            )
    return outcomes


async def _resolve(service: Service, case: Case) -> Outcome:
    response = await service.handle(
        {"mode": "locate", "format": "json", "locate": {"file_path": case.path, "find": case.find}}
    )
    data: dict[str, Any] = json.loads(response.text)
    if "error" in data:
        return Outcome(case, False, None, None, False, data["error"]["code"])
    return Outcome(case, True, data["line"] - 1, data["column"] - 1, "approximate" in data, None)


def by_kind(outcomes: list[Outcome]) -> dict[str, tuple[float, int]]:
    """Per kind: the share that did the right thing (intended position, or ambiguous)."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for o in outcomes:
        groups[o.case.kind].append(o.reported_ambiguous if o.case.expect == "ambiguous" else o.correct)
    return {kind: (100 * sum(v) / len(v), len(v)) for kind, v in groups.items()}
