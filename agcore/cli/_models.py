"""Turning ``--model``/``--base-url`` into a provider, with errors that say what to set.

Specs: ``vendor:model`` and bare registry ids go to ``agcore.llm.create_provider``; ``scripted:PATH``
loads a script file (``agcore.testing.load_script``) for offline runs. With ``--base-url`` a model
without a known vendor prefix (``qwen2.5-coder``, ``llama3.1:8b``) is served by the OpenAI-compatible
provider at that URL.
"""

from __future__ import annotations

import logging
import os
import warnings

from agcore.cli._errors import CliError, ExitCode
from agcore.llm import check_base_url
from agcore.llm.errors import LLMError, MissingCredentialsError
from agcore.llm.factory import create_provider, parse_model_spec, unlisted_model
from agcore.llm.models import UnknownModelWarning, default_registry
from agcore.llm.provider import LLMProvider

__all__ = ["DEFAULT_MODELS", "checked_base_url", "close_provider", "default_model_spec", "resolve_provider"]

#: The model used when ``--model`` and ``AGCORE_MODEL`` are absent, by which key is set.
DEFAULT_MODELS = (("ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-6"), ("OPENAI_API_KEY", "openai:gpt-5.5"))

_SCRIPTED = "scripted:"
_log = logging.getLogger("agcore.cli")
_KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def checked_base_url(url: str | None) -> str | None:
    """``--base-url``, checked before anything runs: a malformed URL is a usage error (exit 2)."""
    if url is None:
        return None
    try:
        return check_base_url(url)
    except ValueError as exc:
        raise CliError(f"--base-url: {exc}", ExitCode.USAGE) from None


def default_model_spec(base_url: str | None) -> str:
    """The spec to use when none is given; ``CliError`` (exit 3) if nothing says which model."""
    spec = os.environ.get("AGCORE_MODEL", "").strip()
    if spec:
        return spec
    if base_url:
        raise CliError(
            f"--base-url {base_url} needs the model to ask the server for: pass --model NAME "
            "(the name the server knows, e.g. --model qwen2.5-coder) or set AGCORE_MODEL.",
            ExitCode.CONFIG,
        )
    for variable, model in DEFAULT_MODELS:
        if os.environ.get(variable):
            return model
    raise CliError(
        "No model to use: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or AGCORE_MODEL), or pass "
        "--model (e.g. --model anthropic:claude-sonnet-4-6, --model ollama:llama3.1 or, offline, "
        "--model scripted:replies.json).",
        ExitCode.CONFIG,
    )


def resolve_provider(spec: str | None, base_url: str | None = None) -> LLMProvider:
    """The provider for ``--model spec`` and ``--base-url``; ``CliError`` (exit 3) naming the fix
    (exit 2 for a malformed ``--base-url``)."""
    base_url = checked_base_url(base_url)
    spec = spec.strip() if spec else default_model_spec(base_url)
    if spec.startswith(_SCRIPTED):
        return _scripted(spec.removeprefix(_SCRIPTED))
    if base_url:
        spec = _with_base_url(spec)
    options = {"base_url": base_url} if base_url else {}
    if spec.startswith("openai-compatible:") and not (base_url or os.environ.get("OPENAI_BASE_URL")):
        raise CliError(
            f"--model {spec} needs the server's URL: add --base-url URL (llama-server "
            "http://127.0.0.1:8080/v1, Ollama http://127.0.0.1:11434/v1, LM Studio http://127.0.0.1:1234/v1) "
            "or set OPENAI_BASE_URL; `agcore models --base-url URL` lists what the server serves.",
            ExitCode.CONFIG,
        )
    _check_spelling(spec, options)
    try:
        with warnings.catch_warnings():  # said above, in the CLI's words
            warnings.simplefilter("ignore", UnknownModelWarning)
            return create_provider(spec, cache=False, **options)
    except MissingCredentialsError as exc:
        variable = _KEY_VARIABLES.get(exc.provider or "")
        if variable is None:
            raise CliError(f"Cannot use model {spec!r}: {exc.message}", ExitCode.CONFIG) from None
        raise CliError(
            f"No API key for {spec}: set {variable} (export {variable}=...), or choose another model "
            "with --model (`agcore models` lists them; --model scripted:FILE runs offline).",
            ExitCode.CONFIG,
        ) from None
    except LLMError as exc:
        raise CliError(f"Cannot use model {spec!r}: {exc.message}", ExitCode.CONFIG) from None
    except (ValueError, TypeError) as exc:
        local = "" if base_url else " (a model a local server serves: add --base-url URL)"
        raise CliError(f"Bad --model {spec!r}: {exc}{local}", ExitCode.CONFIG) from None


def _check_spelling(spec: str, options: dict[str, str]) -> None:
    """A "did you mean" for a model id the registry nearly knows: an error for a bare id no vendor
    claims, a warning for a vendor's id it does not list (a new model still runs)."""
    try:
        vendor, model = parse_model_spec(spec)
    except ValueError:  # (a misspelt vendor, "antropic:…", has its own "did you mean" already)
        if ":" not in spec and (nearest := default_registry.close_matches(spec, n=1)):
            raise CliError(
                f"Unknown --model {spec!r}: did you mean --model {nearest[0]}? (`agcore models` lists the "
                "models agcore knows; any other needs its provider: --model PROVIDER:MODEL, or "
                "--base-url URL for a local server.)",
                ExitCode.CONFIG,
            ) from None
        return
    near = unlisted_model(vendor, model, **options)
    if near is not None:
        guess = f"did you mean --model {vendor}:{near[0]}? " if near else ""
        _log.warning(
            "--model %s is not a model agcore knows: %sIf it is a new model it runs, but its cost is "
            "not counted (`agcore models` lists the known ones).", spec, guess,
        )


def _with_base_url(spec: str) -> str:
    try:
        vendor, _ = parse_model_spec(spec)
    except ValueError:
        return f"openai-compatible:{spec}"
    # A bare id the registry knows would otherwise go to its vendor's own API, not to the URL given.
    if not spec.startswith(f"{vendor}:") and vendor in ("anthropic", "openai"):
        return f"openai-compatible:{spec}"
    return spec


def _scripted(path: str) -> LLMProvider:
    if not path:
        raise CliError("--model scripted:PATH needs the path of a JSON or YAML script file", ExitCode.CONFIG)
    from agcore.testing import ScriptFileError, load_script

    try:
        return load_script(path)
    except ScriptFileError as exc:
        raise CliError(f"Bad script for --model scripted:{path}: {exc}", ExitCode.CONFIG) from None


async def close_provider(provider: LLMProvider) -> None:
    """Close the provider's HTTP client, if it has one (``aclose`` is not part of ``LLMProvider``)."""
    aclose = getattr(provider, "aclose", None)
    if aclose is not None:
        await aclose()
