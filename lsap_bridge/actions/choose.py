"""One code action chosen of those gathered: by title (the anchor matcher's tiers), by the id
it was listed with, or the only (or only preferred) one; several are `ambiguous`.
"""

from __future__ import annotations

from ..errors import Candidate, ErrorCode, LsapError
from ..locate.matcher import find_matches
from ..locate.matches import Needle
from ..session.warm import Session
from .gather import Action, Actions


def by_title(actions: list[Action], title: str) -> list[Action]:
    """The actions whose title the text names, by the anchor matcher's tiers (exact, then
    whitespace, unicode, fuzzy, case): the first tier with a match decides."""
    if not actions:
        return []
    result = find_matches([a.title for a in actions], Needle(title, None))
    return [actions[m.line] for m in result.matches]


def kept(session: Session, action_id: str) -> Action:
    action: Action | None = session.kept.owned(Actions).get(action_id)
    if action is None:
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"no listed code action has the id {action_id!r} (unknown, or listed too long ago)",
            hint="list them again with `code_actions`, or run one in one step with `code_action`",
        )
    return action


def one(actions: list[Action], what: str, where: str, offered: list[Action] | None = None) -> Action:
    """The action a request names: the only one, else the only preferred one; several are
    `ambiguous` (listed with their servers), none is `not_found` (listing what is `offered`
    there, when given)."""
    usable = [a for a in actions if a.disabled is None] or actions
    if len(usable) > 1:
        preferred = [a for a in usable if a.preferred]
        usable = preferred if len(preferred) == 1 else usable
    if len(usable) == 1:
        return usable[0]
    if not usable:
        raise LsapError(ErrorCode.NOT_FOUND, f"no code action {what} at {where}",
                        hint="name one of the actions listed" if offered else
                        "list what there is with `code_actions` (no `kind` or `title`)",
                        candidates=_candidates((offered or [])[:10]))
    raise LsapError(
        ErrorCode.AMBIGUOUS,
        f"{len(usable)} code actions {what} at {where}",
        hint="name one by more of its title, by its `action_id`, or by `server`",
        candidates=_candidates(usable),
    )


def _candidates(actions: list[Action]) -> list[Candidate]:
    return [Candidate(i + 1, f"{a.title} ({a.kind or 'no kind'}, {a.client.name}, id {a.id})")
            for i, a in enumerate(actions)]


def narrow(actions: list[Action], *, title: str | None) -> list[Action]:
    return by_title(actions, title) if title else actions
