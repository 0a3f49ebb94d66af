"""``python -m agcore.cli``: the ``agcore`` command line."""

from __future__ import annotations

from agcore.cli import main

if __name__ == "__main__":
    main()
