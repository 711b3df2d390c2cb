"""`format`: a file, or the lines of a range, formatted by an attached server
(`textDocument/formatting`/`rangeFormatting`), optionally after organising its imports,
through the bridge's edit engine: one undo step per buffer, the diagnostics after.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from ..actions import FORMATTING, Applied, Ran, WhereRequest, applied, format_steps, place_of
from ..modes import Answer, Offer, mode
from ..session import Session


class FormatRequest(WhereRequest):
    mode: Literal["format"] = "format"
    # First the imports (a server's `source.organizeImports`), then the formatting.
    organize_imports: bool = False
    whole_file_at_cursor: ClassVar[bool] = True


@mode("format", request=FormatRequest, report=Applied, template="code_action",
      summary="format a file or a range (and organise its imports), through the safe edits",
      method=FORMATTING, fallback="diagnostics", workspace=True, edits=True,
      offer=Offer(command="LsapFormat", picker=19))
async def format_code(session: Session, request: FormatRequest) -> Answer:
    place = await place_of(session, request, FORMATTING, whole_symbol=True)

    async def work() -> Ran:
        return await format_steps(session, place, request.organize_imports, request.server)

    title = "format" + (" and organise imports" if request.organize_imports else "")
    return Answer(await applied(session, title, None, work, watched=[place.path]))
