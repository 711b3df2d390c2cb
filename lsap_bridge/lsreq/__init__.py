"""The Language Server Request text format (DESIGN §6): parser, executor, printer."""
