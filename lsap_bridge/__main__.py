"""`python -m lsap_bridge` is the `lsap` command."""

from .cli import main

main()
