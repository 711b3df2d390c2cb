"""A Language Server Response within its budget (`:help lsap-text-budget`; the budget of
every answer is `report/budget.py`'s).

The answers asked for come first: if they alone are over the budget, the longest are cut,
each saying how to see all of it (`*** Max Tokens:`). Then the diagnostics the request
chose (`*** Diagnostics:`; by default the errors of the touched files and any diagnostic on
an anchored line) are injected in response order while they fit. When any is left out, a
`*** Diagnostics:` line under the Begin line counts them and names the request line that
shows the next ones (`… from <n>`) and, by default, all of them.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from ..diagnostics import SEVERITIES, Diagnostic
from ..position import line_at
from ..report.budget import NOTE_TOKENS, estimate, head, holding, over
from .parser import DIAGNOSTICS, MAX_TOKENS, Request
from .printer import FileSection, Tag, diagnostic_tag, print_response

#: Diagnostics below this severity (hints: "declared but never read", "deprecated", which
#: editors show as faded text) are neither injected nor counted.
MIN_SEVERITY = "information"


def chosen(section: FileSection, choice: str) -> list[Diagnostic]:
    """The section's diagnostics the request's choice shows, in line order."""
    if choice == "none":
        return []
    anchored = {entry.line for entry in section.entries if entry.line is not None}
    return [d for d in sorted(section.diagnostics, key=lambda d: (d.line, d.col))
            if choice == "all" or d.severity == "error" or d.line in anchored]


def respond(sections: list[FileSection], request: Request, budget: int, check: Tag | None = None) -> str:
    """The response block: answers, then the chosen diagnostics while they fit the budget;
    `check`: a `*** Check` line's report, after the files (its length bounded by its own
    mode's paging), for which the answers' share of the budget makes room."""
    sections = [replace(s, diagnostics=[d for d in s.diagnostics if d.at_least(MIN_SEVERITY)]) for s in sections]
    candidates = [(section, d) for section in sections for d in chosen(section, request.diagnostics)]
    everything = sum(len(section.diagnostics) for section in sections)
    bare = [replace(section, diagnostics=[]) for section in sections]
    checked = estimate(check.render()) if check is not None else 0
    _trim_answers(bare, budget - checked - (NOTE_TOKENS if candidates else 0))
    answers = estimate(print_response(bare, check))
    room = budget - answers - NOTE_TOKENS
    shown: dict[int, list[Diagnostic]] = {id(section): [] for section in sections}
    lines = {(id(s), e.line) for s in sections for e in s.entries if e.line is not None}
    costs = []  # of each candidate from `from` on: its tag, and its `@@` line if it needs one
    for section, d in candidates[request.diagnostics_from - 1:]:
        text = line_at(section.lines, d.line)
        new_line = (id(section), d.line) not in lines
        lines.add((id(section), d.line))
        costs.append(estimate(diagnostic_tag(d, section.lines).render() + "\n")
                     + (estimate(f"@@ {text.strip()}\n") if new_line else 0))
    past = None  # the number of the first diagnostic left out for the budget (1-based)
    for number, (section, d), cost in zip(itertools.count(request.diagnostics_from),
                                          candidates[request.diagnostics_from - 1:], costs):
        if cost > room:
            past = number
            break
        room -= cost
        shown[id(section)].append(d)
    fitted = [replace(b, diagnostics=shown[id(s)]) for s, b in zip(sections, bare, strict=True)]
    count = sum(len(ds) for ds in shown.values())
    seen = {id(d) for ds in shown.values() for d in ds}
    earlier = {id(d) for _, d in candidates[:max(0, request.diagnostics_from - 1)]}
    gone = seen | earlier
    left = [d for s in sections for d in s.diagnostics if id(d) not in gone]
    header = _header(request, holding(answers + sum(costs)), count, len(candidates), everything, past, left)
    text = print_response(fitted, check)
    if header:
        begin, _, rest = text.partition("\n")
        text = f"{begin}\n{header}\n{rest}"
    return text


def _header(request: Request, enough: int | None, count: int, candidates: int, everything: int,
            past: int | None, left_out: list[Diagnostic]) -> str | None:
    """`*** Diagnostics: …` when some were left out: how many, and the request lines that
    show them (those of earlier pages, before `from`, are not counted again); `enough`: the
    budget that holds the answers and every chosen diagnostic from `from` on."""
    if count == everything:
        return None
    first = request.diagnostics_from
    paged = past is not None or first > 1
    shown = (f"{first}–{first + count - 1} of {candidates}" if count else f"none of {candidates}") if paged else (
        str(count))
    by = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s in SEVERITIES
                   if (n := sum(d.severity == s for d in left_out)))
    ways = []
    if past is not None and not count:  # the answers left no room for even one
        ways.append(f"for room add `{MAX_TOKENS} {enough}` to the request" if enough else "ask about fewer symbols")
    elif past is not None:
        ways.append(f"for the next ones send it with `{DIAGNOSTICS} {request.diagnostics} from {past}` "
                    f"(in place of any `{DIAGNOSTICS}` line)")
    if request.diagnostics != "all":
        ways.append(f"for all {everything} `{DIAGNOSTICS} all`")
    elif past is None and first > 1:
        ways.append(f"for the first ones `{DIAGNOSTICS} all`")
    return (f"{DIAGNOSTICS} {shown} shown, {len(left_out)} not shown"
            + (f" ({by})" if by else "") + "".join(f"; {way}" for way in ways))


def _trim_answers(sections: list[FileSection], budget: int) -> None:
    """Cut the longest answers until the response fits (each gets an equal share of what
    the others leave), saying how much each lost and the budget that holds them all. An
    answer no longer than its note stays whole: a block of very many answers may stay over."""
    if not over(print_response(sections), budget):
        return
    total = estimate(print_response(sections))
    tags = [(holder, i) for s in sections for holder in _holders(s) for i in range(len(holder))]
    fixed = total - sum(estimate(holder[i].render()) for holder, i in tags)
    room = budget - fixed
    enough = holding(total)
    more = f"`{MAX_TOKENS} {enough}` in the request shows all" if enough else "ask about fewer symbols"
    ordered = sorted(tags, key=lambda t: estimate(t[0][t[1]].render()))
    for left, (holder, i) in zip(range(len(ordered), 0, -1), ordered, strict=True):
        share = max(0, room // left)
        tag = holder[i]
        cost = estimate(tag.render())
        if cost > share:
            note = f"… {{}} more lines (about {{}} tokens) cut for the response's budget; {more}"
            body, lines, tokens = head(tag.body, share - estimate(note) - NOTE_TOKENS // 4)
            shorter = Tag(tag.name, f"{body}\n{note.format(lines, tokens)}".lstrip("\n"))
            if estimate(shorter.render()) < cost:
                tag = holder[i] = shorter
                cost = estimate(tag.render())
        room -= cost


def _holders(section: FileSection) -> list[list[Tag]]:
    """The lists of answer tags in a section (diagnostics are injected later)."""
    return [section.tags] + [e.tags for e in section.entries] + [
        echo.tags for e in section.entries for echo in e.echoes]
