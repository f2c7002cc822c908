"""kubesched's benchmarks: ``python -m bench run`` (see bench/cli.py and docs/benchmarks.md).

The standalone scripts (``parse_objects.py``, ``prefilter_5000_nodes.py``) run on their own.
"""
