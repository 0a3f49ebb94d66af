"""Seed 004's CountBot loop as a runnable example (``python -m examples.countbot``)."""
