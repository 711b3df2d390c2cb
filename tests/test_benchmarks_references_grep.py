"""The completeness check of the references benchmarks reads the new compact form (issue 50):
the title's place of the anchor's own use, and the lists of collapsed uses whose files share
a directory said once (`imported in rich/: a.py:1,7, c.py:2`), and the exports (`exported: …`)."""

from __future__ import annotations

from benchmarks import peers


def test_the_title_and_a_shared_directory_count_as_shown() -> None:
    report = ("# References: `f` (rich/x.py:6) · 5 references in 3 files\n\n"
              "imported in rich/: a.py:1,7, c.py:2\n\nexported: rich/__init__.py:9\n\n"
              "as a type only: rich/a.py:12\n\n### rich/a.py > g\n3| f()\n")
    assert peers.bridge_lines(report) == {("rich/x.py", 6), ("rich/a.py", 1), ("rich/a.py", 7), ("rich/c.py", 2),
                                          ("rich/__init__.py", 9), ("rich/a.py", 12), ("rich/a.py", 3)}


def test_a_shared_extension_and_a_title_in_a_symbol_count_as_shown() -> None:
    """The extension all listed files share said once (`in rich/*.py: a:1`), and a title
    whose place is a use inside another symbol (`(rich/x.py:6 in `g`)`)."""
    report = ("# References: `f` (rich/x.py:6 in `g`) · 4 references in 3 files\n\n"
              "imported in rich/*.py: a:1,7, c:2\n\n### rich/a.py > g\n3| f()\n")
    assert peers.bridge_lines(report) == {("rich/x.py", 6), ("rich/a.py", 1), ("rich/a.py", 7), ("rich/c.py", 2),
                                          ("rich/a.py", 3)}
