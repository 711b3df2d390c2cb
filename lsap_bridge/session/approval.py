"""What an agent's edit needs before it is applied: the edit policy's hook (`EditApproval`,
`allow_all` when no editor asks), why an edit needs a human's yes (`Doubt`), and whether
one said it (`HUMAN_APPROVED`).
"""

from __future__ import annotations

from collections.abc import Awaitable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from ..errors import LsapError


@dataclass(frozen=True)
class Doubt:
    """Why an edit needs a human's yes, whatever the edit policy (a rename whose edits miss
    uses its server's own `references` finds): `note` is shown with the question under
    `edit_policy = 'ask'`; `refusal` is the error when no human is asked (`allow`, or no
    editor): the edit is not applied."""

    note: str
    refusal: LsapError


# Set by the approval hook when a human was asked about the edit and said yes (an `allow`
# policy asks nobody): `lsap hook` answers the harness's permission with it.
HUMAN_APPROVED: ContextVar[bool] = ContextVar("lsap_human_approved", default=False)


class EditApproval(Protocol):
    """Asked before an agent's edit is applied (summary, preview); True: apply it. A `doubt`
    is passed only when there is one (hooks that never see one take two arguments)."""

    def __call__(self, summary: str, preview: str, doubt: Doubt | None = None, /) -> Awaitable[bool]: ...


async def allow_all(_summary: str, _preview: str, doubt: Doubt | None = None) -> bool:
    """No editor policy (the embedded daemon): every edit, except one in doubt, which no
    human is there to confirm."""
    if doubt is not None:
        raise doubt.refusal
    return True
