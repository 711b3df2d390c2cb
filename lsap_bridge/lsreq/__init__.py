"""The Language Server Request text format (doc/architecture.md, The text format): parser, executor, printer."""
