"""`format`: a file, or the lines of a range, formatted by an attached server
(`textDocument/formatting`/`rangeFormatting`), optionally after organising its imports (or
its imports organised alone), through the bridge's edit engine: one undo step per buffer,
the diagnostics after.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from ..actions.applied import Applied, applied
from ..actions.formatting import format_steps, organize
from ..actions.lsp_calls import CODE_ACTION, FORMATTING, ORGANIZE_IMPORTS
from ..actions.place import WhereRequest, place_of
from ..actions.run import Ran
from ..edits.apply import apply_workspace_edit
from ..models import Waiting
from ..modes import Answer, Offer, mode
from ..session.warm import Session


class FormatRequest(WhereRequest, Waiting):
    mode: Literal["format"] = "format"
    # First the imports (a server's `source.organizeImports`), then the formatting; "only":
    # the imports alone (the text format's `ORGANIZE_IMPORTS`), not formatted.
    organize_imports: bool | Literal["only"] = False
    whole_file_at_cursor: ClassVar[bool] = True


@mode("format", request=FormatRequest, report=Applied, template="code_action",
      summary="format a file or a range (and organise its imports), through the safe edits",
      method=FORMATTING, fallback="diagnostics", workspace=True, edits=True,
      offer=Offer(command="LsapFormat", picker=19))
async def format_code(session: Session, request: FormatRequest) -> Answer:
    only = request.organize_imports == "only"
    place = await place_of(session, request, CODE_ACTION if only else FORMATTING, whole_symbol=True)

    async def work() -> Ran:
        if only:  # the whole file's imports, whatever lines were given
            return await organize(session, place.path, session.workspace.display(place.path), request.server,
                                  lambda edit, client, label: apply_workspace_edit(session, edit, client, label=label))
        return await format_steps(session, place, bool(request.organize_imports), request.server)

    title = "organise imports" if only else "format" + (" and organise imports" if request.organize_imports else "")
    return Answer(await applied(session, title, ORGANIZE_IMPORTS if only else None, work, watched=[place.path],
                                wait=request.diagnostics_wait))

