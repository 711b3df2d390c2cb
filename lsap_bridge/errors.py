"""Error classes with stable codes: every failure is a report, never a traceback
(doc/architecture.md, Reports and errors).

The `lsap` CLI imports this module on every call (its `ClientError` derives from
`LsapBaseError`), so it imports nothing the CLI's path would not: no `dataclasses` (which
imports `inspect`, a third of a warm call's imports) and `difflib` only where a name is
suggested (doc/architecture.md, Costs).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from .jsonvalue import Params


class ErrorCode(str, Enum):
    INVALID_REQUEST = "invalid_request"
    NOT_FOUND = "not_found"
    AMBIGUOUS = "ambiguous"
    UNSUPPORTED = "unsupported"
    OUTSIDE_WORKSPACE = "outside_workspace"
    TIMEOUT = "timeout"
    SERVER_ERROR = "server_error"
    CONFLICT = "conflict"
    DENIED = "denied"
    # An agent's edit under `edit_policy = 'ask'` that the human did not answer in time:
    # nothing was changed; not a `timeout` (sending it again asks the human again).
    APPROVAL_TIMEOUT = "approval_timeout"
    # Not run: the connection's queue is full; send it again after `retry_after` seconds.
    BUSY = "busy"
    # The lsap session (the embedded daemon, or the editor's service) stopped or vanished
    # before answering; sending the request again reaches, or starts, a new one.
    SESSION_GONE = "session_gone"


class _ByFields:
    """Compared by its fields, as a dataclass is (this module does without `dataclasses`:
    its docstring)."""

    def _fields(self) -> tuple[object, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _ByFields) or type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        values = zip(self.__match_args__, self._fields(), strict=True)
        return f"{type(self).__name__}({', '.join(f'{name}={value!r}' for name, value in values)})"

    __match_args__: tuple[str, ...] = ()


class Candidate(_ByFields):
    """One place an anchor could mean: shown in `ambiguous` and `not_found` errors. A value:
    hashed by its fields, never changed."""

    __match_args__ = ("line", "text", "symbol", "score")

    line: int  # 1-based
    text: str
    symbol: str | None
    score: float | None

    def __init__(self, line: int, text: str, symbol: str | None = None, score: float | None = None) -> None:
        for name, value in zip(self.__match_args__, (line, text, symbol, score), strict=True):
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[object, ...]:
        return self.line, self.text, self.symbol, self.score

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a Candidate is not changed")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a Candidate is not changed")

    def __hash__(self) -> int:
        return hash(self._fields())


def shown_score(score: float | None) -> float | None:
    """A near miss's similarity as a candidate shows it (0–100, one decimal); none for a
    candidate that was not scored (0: found by likeness alone) or matched in full."""
    return round(score, 1) if score is not None and 0 < score < 100 else None


class LsapBaseError(Exception):
    """The root of every exception the bridge raises (`LsapError`, `StaleText`, the
    transports' errors): one class to catch for "any failure of ours", as httpx's
    `HTTPError`. Each surface translates a failure once: the service in `failures.as_error`,
    the command line and the MCP tools' client through `error_report`."""


def error_report(code: str, message: str) -> str:
    """An error as a Markdown report, for the surfaces that show one without the renderer
    (the command line, the MCP tools' client): the heading `render_error`'s template writes."""
    return f"# Error: {code}\n\n{message}\n"


class LsapError(_ByFields, LsapBaseError):
    """A failure the caller can act on: what failed, why, and what to try next."""

    __match_args__ = ("code", "message", "hint", "candidates", "suggestions")
    __hash__ = None  # type: ignore[assignment]  # compared by its fields, which may change

    def __init__(self, code: ErrorCode, message: str, hint: str | None = None,
                 candidates: list[Candidate] | None = None, suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint
        self.candidates = [] if candidates is None else candidates
        self.suggestions = [] if suggestions is None else suggestions

    def _fields(self) -> tuple[object, ...]:
        return self.code, self.message, self.hint, self.candidates, self.suggestions

    def __reduce__(self) -> tuple[type[LsapError], tuple[object, ...]]:
        """Pickled by its fields (an answer from a worker process, `cpu.py`), not by `args`."""
        return (type(self), self._fields())

    def to_dict(self) -> Params:
        return {
            "code": self.code.value,
            "message": self.message,
            "hint": self.hint,
            "candidates": [c.__dict__ for c in self.candidates],
            "suggestions": self.suggestions,
        }


def did_you_mean(word: object, names: Iterable[str]) -> str:
    """" (did you mean `hover`?)" for a mistyped name close to a declared one, else "" (also
    for a word that is no string: a request's JSON may hold anything)."""
    if not isinstance(word, str):
        return ""
    import difflib  # only when a name is suggested (the module's docstring)

    close = difflib.get_close_matches(word, list(names), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(f'`{name}`' for name in close)}?)" if close else ""


def invalid(message: str, hint: str | None = None) -> LsapError:
    return LsapError(ErrorCode.INVALID_REQUEST, message, hint=hint)


class StaleText(LsapBaseError):
    """A buffer changed between reading its text and sending a request computed from it."""


class ClientGone(StaleText):
    """The server chosen for a request had exited before the request was sent (it was
    picked from a cache, or just before Neovim detached it): worth one fresh try."""
