"""Bridges from agcore to outside systems (the top layer: may import every other agcore package).

Each integration lives in its own subpackage behind an optional extra, e.g. ``agcore.integrations.mcp``
(``pip install agcore[mcp]``), and is imported explicitly: nothing here is loaded by ``import agcore``.
"""
