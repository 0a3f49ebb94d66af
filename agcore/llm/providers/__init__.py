"""Built-in providers. Each module imports its vendor SDK, so import the one you use:
``from agcore.llm.providers.anthropic import AnthropicProvider`` (or use ``agcore.llm.create_provider``)."""
