"""Seed 002's coding agent for llama.cpp servers, as a runnable example:
``python -m examples.coding_agent``."""
