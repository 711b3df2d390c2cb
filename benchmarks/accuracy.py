"""Anchor accuracy: finds written the way agents write them, then got wrong the way agents
get them wrong, each knowing the place it means.

A find is a line or a run of whole tokens (16 to 60 characters) around an identifier, with
the marker at the start of that identifier. The mistakes are made on the text alone, never
by asking the matcher; a changed find is dropped when it is no longer a mistake: when it is
another place's text (whitespace aside), its words are another place's words (punctuation
aside), or it names several places once its looks (whitespace, quotes, dashes) are undone.
Drops and swaps are the ones agents make (a qualifier, a modifier keyword, an argument, an
attribute; two names or two keywords side by side) and leave at least three words. Each
case expects one of three answers:

- `place`: the marker's original line and column (perturbed, exact, pasted finds);
- `ambiguous`: text that occurs more than once (as whole identifiers: `def print` is not in
  `def print_json`), with nothing to tell the places apart;
- `absent`: a line of another file that mostly shares no words with this one.

Outcomes are right, ambiguous, not found or wrong (the last with its text, for RESULTS.md).
`evaluate` runs the matcher directly, as the resolver does for a whole-file find; `run`
sends cases through the bridge's real `locate` mode.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from lsap_bridge.gateway import EditorGateway
from lsap_bridge.locate.matcher import decide, find_matches, parse_find
from lsap_bridge.service import Service

MARK = "\x00"  # the marker's place while a find is perturbed; becomes `<|>`
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
WORD = re.compile(r"\w+")
PUNCTUATION_SPACE = re.compile(r"\s*([=,:()\[\]+*/<>])\s*")
#: Keywords (Python and TypeScript): not what an agent marks, nor a name to swap with one.
KEYWORDS = frozenset({
    "and", "as", "assert", "async", "await", "break", "case", "catch", "class", "const",
    "continue", "def", "del", "elif", "else", "except", "export", "extends", "false",
    "finally", "for", "from", "function", "if", "import", "in", "interface", "is", "let",
    "new", "none", "not", "null", "or", "pass", "private", "public", "raise", "readonly",
    "return", "self", "static", "super", "this", "throw", "true", "try", "type", "typeof",
    "undefined", "var", "void", "while", "with", "yield", "None", "True", "False",
})
MOVED_BY = 3  # lines added above since a pasted report was made

#: The categories in the order RESULTS.md lists them; those after `exact` are perturbed.
CATEGORIES = (
    "exact",
    "whitespace changed",
    "unicode look-alikes",
    "one typo",
    "a token dropped",
    "a token added",
    "neighbouring tokens swapped",
    "case or identifier style",
    "multi-line, re-indented",
    "pasted report line",
    "pasted report line, file moved since",
    "pasted lines of a duplicate, number settles it",
    "pasted fenced block",
    "truly ambiguous",
    "absent",
)
EXACT = {"exact"}
LOOKS = {"whitespace changed", "unicode look-alikes"}  # changes that keep the text's meaning
_UNLOOK = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "\u00a0": " "})
EXPECTING = {"truly ambiguous": "ambiguous", "absent": "absent"}


@dataclass(frozen=True)
class Case:
    kind: str
    path: str  # relative to the root
    find: str
    line: int  # 0-based, in the file as it is searched
    column: int  # code points
    expect: str = "place"  # or "ambiguous", "absent"
    moved: int = 0  # lines added above before the search (the expected line includes them)


@dataclass(frozen=True)
class Outcome:
    case: Case
    answer: str  # "place", "ambiguous", "not_found", or another error code
    line: int | None = None
    column: int | None = None
    tier: str | None = None

    @property
    def verdict(self) -> str:
        """right, ambiguous, not found or wrong, against what the case expects."""
        expect = self.case.expect
        if self.answer == "place":
            if expect == "place" and (self.line, self.column) == (self.case.line, self.case.column):
                return "right"
            return "wrong"
        if self.answer == "ambiguous":
            return "right" if expect == "ambiguous" else "ambiguous"
        if self.answer == "not_found":
            return "right" if expect == "absent" else "not found"
        return "wrong"


# -- generating cases ---------------------------------------------------------------------


def _span(stripped: str, name: re.Match[str], rng: random.Random) -> tuple[int, str] | None:
    """A run of whole tokens, 16 to 60 characters, around the identifier `name`
    (offset in the line, text), or the whole line when it is short enough."""
    if len(stripped) <= 60 and rng.random() < 0.4:
        return 0, stripped
    chunks = list(re.finditer(r"\S+", stripped))
    here = next(i for i, c in enumerate(chunks) if c.start() <= name.start() < c.end())
    first = last = here
    while chunks[last].end() - chunks[first].start() < rng.randint(16, 40):
        grow_left = first > 0 and (last + 1 == len(chunks) or rng.random() < 0.5)
        if grow_left:
            first -= 1
        elif last + 1 < len(chunks):
            last += 1
        else:
            break
    start, end = chunks[first].start(), chunks[last].end()
    if 16 <= end - start <= 60:
        return start, stripped[start:end]
    return None


def _whitespace(marked: str, rng: random.Random) -> str | None:
    options = [
        marked.replace(" ", "  "),
        PUNCTUATION_SPACE.sub(r"\1", marked),
        re.sub(r"([(\[,])", r"\1 ", marked),
        "\t" + marked.replace(" ", "\t", 1),
    ]
    rng.shuffle(options)
    return next((o for o in options if o != marked), None)


def _unicode(marked: str, rng: random.Random) -> str | None:
    if "'" in marked or '"' in marked:
        out, opened = [], {"'": True, '"': True}
        for ch in marked:
            if ch in opened:
                out.append({"'": "‘’", '"': "“”"}[ch][0 if opened[ch] else 1])
                opened[ch] = not opened[ch]
            else:
                out.append(ch)
        return "".join(out)
    if " - " in marked:
        return marked.replace(" - ", " – ", 1)
    if " " in marked:
        return marked.replace(" ", "\u00a0", 1)
    return None


def _words(marked: str) -> list[re.Match[str]]:
    return [w for w in IDENTIFIER.finditer(marked)]


def _typo(marked: str, rng: random.Random) -> str | None:
    """One slip of a finger in a word of four letters or more: a letter replaced, dropped,
    doubled, or two letters swapped."""
    words = [w for w in _words(marked) if len(w.group()) >= 4]
    if not words:
        return None
    word = rng.choice(words)
    text = word.group()
    i = rng.randrange(1, len(text) - 1)
    how = rng.choice(("replace", "drop", "double", "swap"))
    if how == "replace":
        letter = rng.choice([c for c in "etaoinshrdlu" if c != text[i].lower()])
        changed = text[:i] + letter + text[i + 1 :]
    elif how == "drop":
        changed = text[:i] + text[i + 1 :]
    elif how == "double":
        changed = text[:i] + text[i] + text[i:]
    else:
        changed = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    return marked[: word.start()] + changed + marked[word.end() :]


def _inner_words(marked: str) -> list[re.Match[str]]:
    """Words that are neither the find's first nor last, nor the marked one."""
    words = _words(marked)
    return [w for w in words[1:-1] if marked[w.start() - 1 : w.start()] != MARK]


def _drop_token(marked: str, rng: random.Random) -> str | None:
    """A word left out as agents leave them out: a qualifier (`self.`, `t.`), a modifier
    keyword, an argument, an attribute of a chain; another word only when the find has
    none of those. The find keeps at least three words."""
    words = _inner_words(marked)
    if len(_words(marked)) < 4 or not words:
        return None
    kinds: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for word in words:
        start, end = word.start(), word.end()
        after, before = marked[end : end + 2], marked[max(0, start - 2) : start]
        if after[:1] == "." and before[-1:] != ".":
            kinds["qualifier"].append((start, end + 1))
        elif word.group() in KEYWORDS and after[:1] == " ":
            kinds["keyword"].append((start, end + 1))
        elif before[-1:] == ".":
            kinds["attribute"].append((start - 1, end))
        elif after == ", ":
            kinds["argument"].append((start, end + 2))
        elif before == ", ":
            kinds["argument"].append((start - 2, end))
        elif after[:1] == " ":
            kinds["word"].append((start, end + 1))
        elif before[-1:] == " ":
            kinds["word"].append((start - 1, end))
    usual = [k for k in kinds if k != "word"] or list(kinds)
    if not usual:
        return None
    start, end = rng.choice(kinds[rng.choice(usual)])
    return marked[:start] + marked[end:]


def _add_token(marked: str, rng: random.Random, language: str) -> str | None:
    """A word put in that the code does not have: an owner (`self.`), an `await`, a `new`."""
    owner = "self." if language == "python" else "this."
    spots = [
        w for w in _words(marked)
        if marked[w.start() - 1 : w.start()] not in (".", MARK) and w.group() not in KEYWORDS
    ]
    if not spots:
        return None
    word = rng.choice(spots)
    calls = marked[word.end() : word.end() + 1] == "("
    added = rng.choice([owner, "await "] if calls else [owner])
    if calls and language != "python" and word.group()[:1].isupper():
        added = "new "
    return marked[: word.start()] + added + marked[word.start() :]


def _swap(marked: str, rng: random.Random) -> str | None:
    """Two neighbouring words swapped (`(b, a)` for `(a, b)`, `static public`); the marker
    goes with its word."""
    words = _words(marked)
    pairs = []
    for left, right in pairwise(words):
        between = marked[left.end() : right.start()].replace(MARK, "")
        alone = marked[left.start() - 1 : left.start()] != "." and marked[right.end() : right.end() + 1] != "."
        alike = (left.group() in KEYWORDS) == (right.group() in KEYWORDS)  # names, or modifiers
        if alone and alike and left.group() != right.group() and re.fullmatch(r"\s+|\s*[,+*|&<>-]\s*", between):
            pairs.append((left, right))
    if not pairs:
        return None
    left, right = rng.choice(pairs)
    lead = MARK if marked[left.start() - 1 : left.start()] == MARK else ""
    rlead = MARK if marked[right.start() - 1 : right.start()] == MARK else ""
    a_start = left.start() - len(lead)
    b_start = right.start() - len(rlead)
    middle = marked[left.end() : b_start]
    return marked[:a_start] + rlead + right.group() + middle + lead + left.group() + marked[right.end() :]


def _case(marked: str, rng: random.Random) -> str | None:
    """The marked identifier in another case or style: `getUser` for `get_user` and back,
    else upper case."""
    at = marked.find(MARK)
    word = IDENTIFIER.match(marked, at + 1) if at >= 0 else None
    if word is None or len(word.group()) < 4:
        return None
    whole = word.group()
    core = whole.strip("_")
    lead = whole[: len(whole) - len(whole.lstrip("_"))]
    if "_" in core:
        head, *rest = core.split("_")
        changed = head + "".join(part[:1].upper() + part[1:] for part in rest)
    elif re.search(r"[a-z][A-Z]", core):
        changed = re.sub(r"([a-z])([A-Z])", lambda m: m.group(1) + "_" + m.group(2).lower(), core)
    else:
        changed = core.upper() if rng.random() < 0.7 else core.lower()
    if changed == core:
        return None
    return marked[: word.start()] + lead + changed + whole[len(lead) + len(core) :] + marked[word.end() :]


def _whole_count(text: str, span: str) -> int:
    """How often span occurs in text as whole identifiers: `def print` is not in `def
    print_json` (the matcher prefers the whole one, issue 33)."""
    head = r"(?<![\w$])" if re.match(r"[\w$]", span) else ""
    tail = r"(?![\w$])" if re.search(r"[\w$]$", span) else ""
    return len(re.findall(f"(?={head}{re.escape(span)}{tail})", text))


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _places(text: str, file: _File) -> int:
    """How many places a find changed only in its looks (whitespace, quotes, dashes) names."""
    return file.squashed.count(_squash(text.translate(_UNLOOK)))


def _names_place(text: str, file: _File) -> bool:
    """Whether a changed find is a place's text, whitespace aside, or its words are a
    place's words, punctuation aside: then it names that place, it is no mistake."""
    return _squash(text) in file.squashed or f" {' '.join(WORD.findall(text))} " in file.stream


@dataclass
class _File:
    rel: str
    lines: list[str]
    text: str
    squashed: str
    words: set[str]
    stream: str  # the words, space-separated, with a space at each end


def _load(root: Path, pattern: str) -> list[_File]:
    files = []
    for path in sorted(p for p in root.glob(pattern) if p.is_file() and p.stat().st_size > 0):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        joined = "\n".join(lines)
        words = WORD.findall(joined)
        files.append(_File(path.relative_to(root).as_posix(), lines, joined, _squash(joined),
                           set(words), f" {' '.join(words)} "))
    return files


def generate(root: Path, pattern: str, language: str, per_kind: int, rng: random.Random) -> list[Case]:
    """Up to `per_kind` cases of every category from the code base's files."""
    files = _load(root, pattern)
    counts: Counter[str] = Counter()
    cases: list[Case] = []

    def add(case: Case) -> None:
        if counts[case.kind] < per_kind:
            counts[case.kind] += 1
            cases.append(case)

    perturbations: dict[str, Callable[[str, random.Random], str | None]] = {
        "whitespace changed": _whitespace,
        "unicode look-alikes": _unicode,
        "one typo": _typo,
        "a token dropped": _drop_token,
        "a token added": lambda m, r: _add_token(m, r, language),
        "neighbouring tokens swapped": _swap,
        "case or identifier style": _case,
    }
    for _ in range(40):  # passes over the files until every category is full
        if all(counts[k] >= per_kind for k in CATEGORIES):
            break
        for file in rng.sample(files, len(files)):
            rows = [i for i, line in enumerate(file.lines)
                    if len(line.strip()) >= 16 and "<|" not in line and "|>" not in line]
            for index in rng.sample(rows, min(4, len(rows))):
                _cases_at(file, index, files, perturbations, language, rng, add)
    return cases


def _cases_at(
    file: _File,
    index: int,
    files: list[_File],
    perturbations: dict[str, Callable[[str, random.Random], str | None]],
    language: str,
    rng: random.Random,
    add: Callable[[Case], None],
) -> None:
    line = file.lines[index]
    lead = len(line) - len(line.lstrip())
    stripped = line.strip()
    names = [n for n in IDENTIFIER.finditer(stripped) if n.group() not in KEYWORDS]
    if not names:
        return
    name = rng.choice(names)
    picked = _span(stripped, name, rng)
    if picked is None:
        return
    offset, span = picked
    marker = name.start() - offset
    column = lead + name.start()
    marked = span[:marker] + MARK + span[marker:]
    occurrences = _whole_count(file.text, span)
    if occurrences > 1:
        add(Case("truly ambiguous", file.rel, _find(marked), index, column, "ambiguous"))
        if file.lines.count(line) > 1:
            add(Case("pasted lines of a duplicate, number settles it", file.rel,
                     _find(_numbered(line, index, lead, name.start())), index, column))
        return
    add(Case("exact", file.rel, _find(marked), index, column))
    for kind, perturb in perturbations.items():
        changed = perturb(marked, rng)
        # A change that is another place's text (whitespace aside), or that names several
        # places once its looks are undone, is not a mistake any more.
        plain = changed.replace(MARK, "") if changed else ""
        other = _places(plain, file) > 1 if kind in LOOKS else _names_place(plain, file)
        if changed and changed != marked and not other:
            add(Case(kind, file.rel, _find(changed), index, column))
    pasted = _numbered(line, index, lead, name.start())
    add(Case("pasted report line", file.rel, _find(pasted), index, column))
    moved = rng.randint(1, MOVED_BY)
    add(Case("pasted report line, file moved since", file.rel, _find(pasted), index + moved, column, moved=moved))
    block = _block(file, index, lead + name.start(), language)
    if block:
        add(Case("pasted fenced block", file.rel, _find(block), index, column))
    tall = _reindented(file, index, lead + name.start(), rng)
    if tall:
        add(Case("multi-line, re-indented", file.rel, _find(tall), index, column))
    _absent(file, files, rng, add)


def _numbered(line: str, index: int, lead: int, at: int) -> str:
    """The line as a report prints it: `N| ` and the text with its indentation."""
    column = lead + at
    return f"{index + 1}| {line[:column]}{MARK}{line[column:]}"


def _block(file: _File, index: int, column: int, language: str) -> str | None:
    """Two or three numbered lines in a fence, the marked one among them."""
    first = max(0, index - 1)
    rows = range(first, min(len(file.lines), first + 3))
    if any(not file.lines[r].strip() for r in rows):
        return None
    body = []
    for r in rows:
        text = file.lines[r]
        if r == index:
            text = text[:column] + MARK + text[column:]
        body.append(f"{r + 1}| {text}")
    return "\n".join([f"```{language}", *body, "```"])


def _reindented(file: _File, index: int, column: int, rng: random.Random) -> str | None:
    """The marked line and the one or two after it, with their indentation changed."""
    rows = list(range(index, min(len(file.lines), index + rng.randint(2, 3))))
    if len(rows) < 2 or any(len(file.lines[r].strip()) < 4 for r in rows):
        return None
    lines = [file.lines[r] for r in rows]
    lines[0] = lines[0][:column] + MARK + lines[0][column:]
    depth = min(len(x) - len(x.lstrip()) for x in lines)
    how = rng.choice(("dedent", "indent", "flatten"))
    if how == "dedent":
        lines = [x[depth:] for x in lines]
    elif how == "indent":
        lines = ["    " + x for x in lines]
    else:
        lines = [x.strip() for x in lines]
    text = "\n".join(lines)
    if file.text.count("\n".join(file.lines[r] for r in rows)) > 1:
        return None
    return text


def _absent(file: _File, files: list[_File], rng: random.Random, add: Callable[[Case], None]) -> None:
    """A line of another file of which at most a third of the words occur in this one."""
    other = rng.choice(files)
    if other is file:
        return
    candidates = [line.strip() for line in other.lines if 16 <= len(line.strip()) <= 80]
    if not candidates:
        return
    text = rng.choice(candidates)
    words = [w for w in WORD.findall(text) if len(w) >= 3]
    names = list(IDENTIFIER.finditer(text))
    if not words or not names or sum(w in file.words for w in words) * 3 > len(words):
        return
    name = rng.choice(names)
    add(Case("absent", file.rel, _find(text[: name.start()] + MARK + text[name.start() :]), -1, -1, "absent"))


def _find(marked: str) -> str:
    return marked.replace(MARK, "<|>")


# -- running them -------------------------------------------------------------------------


def evaluate(root: Path, cases: Iterable[Case]) -> list[Outcome]:
    """Every case through the matcher and `decide`, over the whole file, as the resolver
    searches a find without a scope."""
    texts: dict[str, list[str]] = {}
    outcomes = []
    for case in cases:
        if case.path not in texts:
            texts[case.path] = (root / case.path).read_text(encoding="utf-8").splitlines()
        lines = [""] * case.moved + texts[case.path]
        needle = parse_find(case.find)
        decision = decide([find_matches(lines, needle)], needle.line)
        if decision.match is not None:
            match = decision.match
            tier = decision.tier.value if decision.tier else None
            outcomes.append(Outcome(case, "place", match.line, match.column, tier))
        else:
            outcomes.append(Outcome(case, "not_found" if decision.tier is None else "ambiguous"))
    return outcomes


async def run(service: Service, gateway: EditorGateway, cases: list[Case]) -> list[Outcome]:
    """Every case through the bridge's `locate` mode; moved cases add lines above first."""
    outcomes = [await _resolve(service, case) for case in cases if not case.moved]
    moved: dict[tuple[str, int], list[Case]] = defaultdict(list)
    for case in cases:
        if case.moved:
            moved[case.path, case.moved].append(case)
    for (rel, count), group in moved.items():
        bufnr = await gateway.open(service.workspace.root / rel)
        await gateway.exec_lua(
            "local b, n = ...; vim.api.nvim_buf_set_lines(b, 0, 0, false, vim.fn['repeat']({''}, n))",
            bufnr, count,
        )
        try:
            outcomes += [await _resolve(service, case) for case in group]
        finally:
            await gateway.exec_lua(
                "local b, n = ...; vim.api.nvim_buf_set_lines(b, 0, n, false, {}); vim.bo[b].modified = false",
                bufnr, count,
            )
    return outcomes


async def _resolve(service: Service, case: Case) -> Outcome:
    response = await service.handle(
        {"mode": "locate", "format": "json", "locate": {"file_path": case.path, "find": case.find}}
    )
    data: dict[str, Any] = json.loads(response.text)
    if "error" in data:
        return Outcome(case, data["error"]["code"])
    tier = data.get("approximate", {}).get("tier", "exact")
    return Outcome(case, "place", data["line"] - 1, data["column"] - 1, tier)


def tally(outcomes: list[Outcome]) -> dict[str, Counter[str]]:
    """Per category: how many were right, ambiguous, not found, wrong."""
    out: dict[str, Counter[str]] = {kind: Counter() for kind in CATEGORIES}
    for o in outcomes:
        out[o.case.kind][o.verdict] += 1
    return {kind: counts for kind, counts in out.items() if counts}


def perturbed(outcomes: list[Outcome]) -> list[Outcome]:
    """The cases whose find is not the code's text as it is (every place-expecting one but exact)."""
    return [o for o in outcomes if o.case.expect == "place" and o.case.kind not in EXACT]


def rows(outcomes: list[Outcome]) -> list[tuple[str, float, str, str, bool | None]]:
    """The anchors rows of a benchmark run: metric, value, unit, target, whether it holds."""
    places = [o for o in outcomes if o.case.expect == "place"]
    right = sum(o.verdict == "right" for o in places)
    rate = 100 * right / max(1, len(places))
    wrong = [o for o in outcomes if o.verdict == "wrong"]
    silent = sum(o.tier in (None, "exact") for o in wrong)
    out: list[tuple[str, float, str, str, bool | None]] = [
        (f"resolve to the intended position ({right}/{len(places)})", rate, "%", ">= 95 %", rate >= 95),
        ("wrong position without an approximate note", silent, "", "0", silent == 0),
        ("wrong position, with the approximate note", len(wrong) - silent, "", "0", len(wrong) == silent),
    ]
    for kind, label in (("truly ambiguous", "non-unique reported ambiguous"), ("absent", "absent reported not found")):
        group = [o for o in outcomes if o.case.kind == kind]
        done = sum(o.verdict == "right" for o in group)
        out.append((f"{label} ({done}/{len(group)})", 100 * done / max(1, len(group)), "%", "100 %",
                    done == len(group)))
    for kind, counts in tally(outcomes).items():
        n = sum(counts.values())
        out.append((f"  {kind}", 100 * counts["right"] / n, "%", f"n={n}", None))
    return out
