"""The sections of `python -m benchmarks.run`, one module each, numbered as RESULTS.md
numbers them: latency and round trips (1, 2), tokens (3), the editor under agent load (4),
anchors (5), start (6), scale (7), code actions (8). Each measures through the rig (`benchmarks/rig.py`)
against the raw baselines (`benchmarks/baselines.py`) and adds rows to the results."""
