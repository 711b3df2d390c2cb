"""The one translation of a failure into the error report the asker gets (doc/architecture.md,
Reports and errors): above the errors themselves, because its hints are written for the
surface that asked (an MCP agent cannot run `:checkhealth lsap`)."""

from __future__ import annotations

import asyncio
import logging

from .errors import ClientGone, ErrorCode, LsapError, StaleText
from .surface import APPLIED, NOT_AGAIN, applied_note, log_help, servers_help

LOG = logging.getLogger("lsap.service")


def as_error(exc: BaseException, what: str) -> LsapError:
    """The one translation of a failure into the error report the asker gets, one text per
    cause (doc/architecture.md, Reports and errors). `what`: the request, for the log. A
    call that had applied an edit before it failed says so, with the change (`APPLIED`)."""
    error = _translated(exc, what)
    applied = APPLIED.get()
    if not applied:
        return error
    return LsapError(error.code, f"{error.message}; {applied_note(applied)}", hint=NOT_AGAIN,
                     candidates=error.candidates, suggestions=error.suggestions)


def _translated(exc: BaseException, what: str) -> LsapError:
    if isinstance(exc, LsapError):
        return exc
    if isinstance(exc, ClientGone):
        return LsapError(ErrorCode.SERVER_ERROR, f"{exc}: it exited and did not come back",
                         hint=f"send the request again; {servers_help()}")
    if isinstance(exc, StaleText):
        return LsapError(ErrorCode.CONFLICT, "the file kept changing while the request ran",
                         hint="send the request again")
    if isinstance(exc, asyncio.TimeoutError):
        return LsapError(ErrorCode.TIMEOUT, "the request took too long")
    # Nobody planned for it (most often a server's answer of an unexpected shape): a
    # traceback in the log, never a dead request.
    LOG.error("%s failed", what, exc_info=exc)
    # One hint per cause: a file system's refusal is no language server's malformed answer.
    cause = ("the file system refused it" if isinstance(exc, OSError)
             else "a language server may have sent a malformed answer")
    return LsapError(
        ErrorCode.SERVER_ERROR,
        f"{what} failed on something unexpected: {type(exc).__name__}: {exc}"[:500],
        hint=f"{cause}; {log_help()}. Other requests are not affected.",
    )
