"""The token budget every answer keeps (doc/architecture.md, Costs; `:help lsap-budget`).

One mechanism for every mode and surface: a paged report over its budget is shown with a
shorter page of the list its answer already has (no LSP call, the capability is not run
again), and the footer's next request asks for the next page of that size; any other answer over it is cut at a line,
saying how much was left out and giving the request with the `max_tokens` that holds it.
The budget is the request's `max_tokens`, else the session's (`Editor.max_tokens`).

Tokens are estimated without a tokenizer (`estimate`, `over`); the tests measure the answers
with cl100k (tiktoken), against which the estimate is high.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from ..jsonvalue import Json
from ..models import MAX_TOKENS_LIMIT, Cut, Paged, Report, Request
from ..modes import Answer, Capability
from ..session.warm import Session
from .paging import as_sent, suggest

# cl100k's pre-tokenizer, nearly: words with a leading mark, up to three digits, runs of
# punctuation, of spaces, of line breaks. Each piece is a token or more: long words, runs of
# punctuation and marks beyond ASCII (`→`, `·`) are counted once more, and 20% added: then
# the estimate was 1.02 to 1.6 times cl100k's count on every report of the tests and a
# fixture's largest answers (lists of numbers run 1.7 bytes a token, schemas 4.1: bytes
# alone would not do).
_PIECES = re.compile(r"'(?:[sdmt]|ll|ve|re)|[^\r\n\w]?[^\W\d_]+|\d{1,3}| ?[^\s\w]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+|_+")
_LONG = re.compile(r"[^\s\w]{3}|[^\W\d_]{9}|[^\x00-\x7f\w\s]")
# Room kept under the budget for the note a cut adds.
NOTE_TOKENS = 120
REFITS = 4  # shorter pages tried before the answer is cut


def estimate(text: str) -> int:
    """The tokens of a text, over-estimated for cl100k, without a tokenizer (about 0.4 µs a
    byte)."""
    return -(-(len(_PIECES.findall(text)) + len(_LONG.findall(text))) * 6 // 5)


def over(text: str, budget: int) -> bool:
    """Whether a text is over `budget` tokens; a text of no more bytes than that is not
    (a token is a byte or more), and costs no estimate."""
    return len(text.encode("utf-8")) > budget and estimate(text) > budget


def budget_of(session: Session, asked: int | None) -> int:
    """The budget a request asked for, else the session's."""
    return asked or session.gateway.max_tokens


def holding(tokens: int) -> int | None:
    """A `max_tokens` that holds an answer of `tokens` (rounded up to a thousand), or None
    when even the largest budget does not: then only a narrower request will do."""
    wanted = -(-(tokens + NOTE_TOKENS) // 1000) * 1000
    return wanted if wanted <= MAX_TOKENS_LIMIT else None


@dataclass(frozen=True)
class Fitted:
    answer: Answer
    text: str


async def fit(session: Session, capability: Capability, request: Request, answer: Answer,
              render: Callable[[Report], str], cut_text: bool = True) -> Fitted:
    """Render an answer within its request's budget: a paged report over it is shown with a
    page it fits, from the list the answer already has (`Answer.repage`, up to `REFITS`
    times; not for a mode that may change files), and what is still over is cut: at a line
    (`cut`), or when `cut_text` is False (JSON) by shortening its lists (`cut_json`), so
    that it still parses."""
    budget = budget_of(session, request.max_tokens)
    text = render(answer.report)
    for _ in range(REFITS):
        report = answer.report
        if (not over(text, budget) or not isinstance(report, Paged) or report.shown <= 1
                or capability.edits or answer.repage is None):
            break  # (a mode that may change files is never shortened: it is cut instead)
        cost = estimate(text)
        # The page's share of the budget, with room for what every page repeats.
        items = max(1, min(report.shown - 1, report.shown * (budget - NOTE_TOKENS) // cost))
        shorter = await answer.repage(items)
        refitted = shorter.report
        assert isinstance(refitted, Paged)  # the same mode
        answer = replace(shorter, report=refitted.model_copy(update={"budget": budget}))
        text = render(answer.report)
    if over(text, budget):
        text = cut(text, budget, request) if cut_text else cut_json(text, budget, request)
    return Fitted(answer, text)


def head(text: str, tokens: int) -> tuple[str, int, int]:
    """The lines of a Markdown text that fit `tokens` (an open code fence closed), with how
    many lines and about how many tokens were left out."""
    lines = text.rstrip("\n").split("\n")
    used, kept, fence = 0, 0, False
    for line in lines:
        size = estimate(line + "\n")
        if used + size > tokens:
            break
        used += size
        kept += 1
        if line.startswith("```"):
            fence = not fence
    shown = "\n".join(lines[:kept] + (["```"] if fence else []))
    return shown, len(lines) - kept, max(0, estimate(text) - estimate(shown))


def whole_answer(text: str, request: Request) -> str | None:
    """The same request with a `max_tokens` that holds all of `text`, written for the
    surface that asked; None when even the largest budget does not."""
    enough = holding(estimate(text))
    return suggest(type(request), {**as_sent(request), "max_tokens": enough}) if enough else None


def cut(text: str, budget: int, request: Request) -> str:
    """A Markdown answer cut at a line to fit `budget` tokens, with what was left out and
    the same request with a `max_tokens` that holds all of it (or, when none does, the
    advice to narrow it)."""
    shown, lines, tokens = head(text, budget - NOTE_TOKENS)
    whole = whole_answer(text, request)
    more = (f"the whole answer: `{whole}`" if whole
            else f"even {MAX_TOKENS_LIMIT} tokens would not hold it: narrow the request")
    return (f"{shown}\n\n> Cut to the budget of {budget} tokens: {lines} more lines (about {tokens} tokens) "
            f"left out; {more}.\n")


JsonPath = tuple[str | int, ...]  # keys and indexes from the top of a JSON value


def _containers(value: Json, path: JsonPath = ()) -> Iterator[tuple[JsonPath, list[Json] | dict[str, Json]]]:
    """Every list, and every map of objects (a dict whose values are all dicts, as schemas by
    mode), below the answer's top level, with its path: what a cut may shorten. Objects
    themselves keep all their fields."""
    if isinstance(value, list):
        if path and value:
            yield path, value
        for index, item in enumerate(value):
            yield from _containers(item, (*path, index))
    elif isinstance(value, dict):
        if path and len(value) > 1 and all(isinstance(v, dict) for v in value.values()):
            yield path, value
        for key, item in value.items():
            yield from _containers(item, (*path, key))


def _dotted(path: JsonPath) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path))


def _size(value: Json) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def cut_json(text: str, budget: int, request: Request) -> str:
    """A JSON answer cut to fit `budget` tokens, still JSON of the report's shape: the largest
    list is halved (a map of objects loses its last entries; each keeps one while another
    can still be shortened) until it fits, and `budget_cut` says
    how many items each list lost and gives the request that holds all of it."""
    data = json.loads(text)
    dropped: dict[str, int] = {}
    room = budget - NOTE_TOKENS
    while over(json.dumps(data, ensure_ascii=False, indent=1), room):
        containers = list(_containers(data))
        # A list keeps one item while another can still be shortened.
        shortenable = [(p, c) for p, c in containers if len(c) > 1] or containers
        if not shortenable:
            break  # one object too large to shorten (a long text): sent as it is, with its cut note
        path, container = max(shortenable, key=lambda pc: _size(pc[1]))
        drop = max(1, len(container) // 2)
        if isinstance(container, list):
            del container[len(container) - drop:]
        else:
            for key in list(container)[len(container) - drop:]:
                del container[key]
        dropped[_dotted(path)] = dropped.get(_dotted(path), 0) + drop
    shown = json.dumps(data, ensure_ascii=False, indent=1)
    data["budget_cut"] = Cut(budget=budget, left_out=dropped, tokens=max(0, estimate(text) - estimate(shown)),
                      next=whole_answer(text, request)).model_dump(mode="json")
    return json.dumps(data, ensure_ascii=False, indent=1)
