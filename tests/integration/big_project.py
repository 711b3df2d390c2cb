"""A generated Python project large enough to overrun any answer: thousands of symbols and
references, hundreds of diagnostics under basedpyright's strictest checking, a class of
over 2,000 lines. Built fresh for each test module (nothing of it is committed)."""

from __future__ import annotations

from pathlib import Path

USERS = 20  # modules that call `hub`
CALLS = 100  # calls of `hub` in each
FUNCTIONS = 1500  # functions in symbols.py
NOISY = 150  # untyped functions in noisy.py, each a handful of diagnostics
ERRORS = 12  # assignments of the wrong type in noisy.py: errors
# Under "all" every rule is an error: these few are warnings, so that errors are few.
WARNINGS = "".join(f'{rule} = "warning"\n' for rule in (
    "reportMissingParameterType", "reportUnknownParameterType", "reportUnknownMemberType",
    "reportUnknownVariableType", "reportUnknownArgumentType", "reportAny", "reportUnusedCallResult"))


def build(root: Path) -> Path:
    """Write the project under `root` and return it."""
    pkg = root / "big"
    pkg.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "big"\nversion = "0"\n\n'
                                         '[tool.basedpyright]\ntypeCheckingMode = "all"\n' + WARNINGS)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text(
        '"""The function every user module calls."""\n\n\n'
        "def hub(value: int) -> int:\n"
        '    """Return the value doubled."""\n'
        "    return value * 2\n"
    )
    for k in range(USERS):
        body = "\n".join(f"    total += hub({i})" for i in range(CALLS))
        (pkg / f"user_{k:02}.py").write_text(
            f"from big.core import hub\n\n\ndef use_{k}() -> int:\n    total = 0\n{body}\n    return total\n")
    functions = "\n\n".join(
        f"def function_{i}(value: int) -> int:\n    \"\"\"Function {i}.\"\"\"\n    return value + {i}"
        for i in range(FUNCTIONS))
    members = "\n".join(f"    def method_{i}(self) -> int:\n        return {i}\n" for i in range(668))
    large = "\n".join(f"    def part_{i}(self) -> int:\n        return {i}\n" for i in range(400))
    (pkg / "symbols.py").write_text(
        f'"""Many symbols."""\n\n\nclass Giant:\n    """A class of 2,006 lines."""\n\n{members}\n\n'
        f'class Large:\n    """A class of 1,202 lines: shorter than `max_code_lines` may be, longer than a budget."""'
        f"\n\n{large}\n\n{functions}\n\ngiant = Giant()\nlarge = Large()\n")
    untyped = "\n\n".join(f"def loose_{i}(a, b):\n    return a.attr_{i} + b" for i in range(NOISY))
    wrong = "\n".join(f"WRONG_{i}: str = {i}" for i in range(ERRORS))
    (pkg / "noisy.py").write_text(
        '"""Hundreds of diagnostics."""\n\n\nclass Console:\n    """A console."""\n\n'
        "    def print(self, text: str) -> None:\n        \"\"\"Print the text.\"\"\"\n\n\n"
        f"{untyped}\n\n{wrong}\n\nconsole = Console()\nconsole.print(\"hi\")\n")
    return root
