"""``agcore models --base-url URL``: what an OpenAI-compatible server serves, and whether it is up.

Asks ``GET {URL}/models`` (every OpenAI-compatible server: llama.cpp's ``llama-server``, Ollama, LM
Studio, vLLM) and, for the context size, what the server reports where it does: vLLM's
``max_model_len`` on each model, llama.cpp's ``GET /props`` (``default_generation_settings.n_ctx``,
the window each slot was started with: ``-c N``) and the model's training context from the
``meta`` of llama.cpp's model list. Ollama and LM Studio do not report it on this API.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from agcore.cli._errors import CliError, ExitCode
from agcore.cli._models import checked_base_url

__all__ = ["ServedModel", "list_served", "model_or_served", "served_models", "served_window"]

_TIMEOUT = 10.0
# Asking a local server for its window before a run: it answers at once or not at all.
_PROBE_TIMEOUT = 3.0
_START_HINT = (
    "Start the server first (llama-server -m MODEL.gguf -c 8192 --port 8080; ollama serve; "
    "LM Studio's local server; vllm serve MODEL), then check the URL: it usually ends in /v1 "
    "(llama-server http://127.0.0.1:8080/v1, Ollama http://127.0.0.1:11434/v1, LM Studio "
    "http://127.0.0.1:1234/v1, vLLM http://127.0.0.1:8000/v1)."
)


@dataclass(frozen=True, slots=True)
class ServedModel:
    """One model a server serves: its id (what ``--model`` takes), the context window it is served
    with where the server says (``context``), its training context where known, and its owner."""

    id: str
    context: int | None = None
    trained_context: int | None = None
    owned_by: str = ""


async def served_models(
    base_url: str, *, api_key: str | None = None, patience: float = _TIMEOUT
) -> tuple[str, list[ServedModel]]:
    """``(base URL that answered, models)`` from the server at ``base_url``; ``CliError`` saying what is
    wrong when it is not up, not there, or not an OpenAI-compatible server."""
    url = (checked_base_url(base_url) or base_url).rstrip("/")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(timeout=patience, headers=headers) as client:
        response = await _get(client, f"{url}/models", url)
        if response.status_code == 404 and not url.endswith("/v1"):
            retry = await _get(client, f"{url}/v1/models", url)
            if retry.status_code == 200:
                url, response = f"{url}/v1", retry
        listing = _listing(response, url)
        n_ctx = await _llama_cpp_context(client, url.removesuffix("/v1"))
    models = []
    for entry in listing:
        meta = entry.get("meta")
        if not isinstance(meta, dict):
            meta = {}
        context = _int(entry.get("max_model_len"))  # vLLM
        if context is None and n_ctx is not None and len(listing) == 1:
            context = n_ctx  # llama.cpp: /props describes the model it serves
        models.append(ServedModel(
            id=str(entry.get("id", "?")), context=context, trained_context=_int(meta.get("n_ctx_train")),
            owned_by=str(entry.get("owned_by") or ""),
        ))
    return url, models


async def served_window(base_url: str, model_id: str) -> int | None:
    """The context window a server on this machine or its network serves ``model_id`` with, where it
    says (llama.cpp's ``/props``, vLLM's ``max_model_len``); None when it does not say, does not
    answer, or is a hosted API (asked nothing: a vendor's API is not probed before every run)."""
    host = httpx.URL(base_url).host
    if not _is_local(host):
        return None
    try:
        _, models = await served_models(base_url, api_key=os.environ.get("OPENAI_API_KEY") or None,
                                        patience=_PROBE_TIMEOUT)
    except CliError:  # not up, or not answering like a model server: the run itself will say so
        return None
    named = [m for m in models if m.id == model_id]
    chosen = named or (models if len(models) == 1 else [])  # llama.cpp answers to any model name
    return chosen[0].context if chosen else None


def _is_local(host: str) -> bool:
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".lan", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


async def list_served(console: Console, *, base_url: str) -> ExitCode:
    """Print the models the server at ``base_url`` serves, or exit 4 saying why it could not tell."""
    url, models = await served_models(base_url, api_key=os.environ.get("OPENAI_API_KEY") or None)
    console.print(f"{url} is up · {len(models)} model{'' if len(models) == 1 else 's'}",
                  markup=False, highlight=False)
    if not models:
        console.print("It serves no model yet: load one (LM Studio), pull one (ollama pull NAME), or start "
                      "llama-server with -m MODEL.gguf.", markup=False, highlight=False)
        return ExitCode.OK
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("model", "context (served)", "context (trained)", "owned by"):
        table.add_column(column)
    for model in models:
        table.add_row(model.id, _tokens(model.context), _tokens(model.trained_context), model.owned_by)
    console.print(table)
    first = models[0]
    window = f" --context-window {first.context}" if first.context else " --context-window N"
    console.print(f"Use: agcore run --base-url {url} --model {first.id}{window} \"TASK\"",
                  markup=False, highlight=False, soft_wrap=True)
    if first.context is None:
        console.print("(N: the context size the server was started with; below 32768 tokens the "
                      "history is compacted before it overflows)", style="dim", markup=False)
    return ExitCode.OK


async def model_or_served(console: Console, model: str | None, base_url: str | None) -> str | None:
    """``--model``, or for ``--base-url`` alone (and no ``AGCORE_MODEL``) the model the server serves,
    said on ``console``; ``CliError`` listing them when it serves several (exit 3), saying how to
    start one when nothing answers (exit 4)."""
    if model or not base_url or os.environ.get("AGCORE_MODEL", "").strip():
        return model
    url, models = await served_models(base_url, api_key=os.environ.get("OPENAI_API_KEY") or None)
    if not models:
        raise CliError(f"{url} serves no model yet: load one (LM Studio), pull one (ollama pull NAME), or "
                       "start llama-server with -m MODEL.gguf; then run again.", ExitCode.CONFIG)
    if len(models) > 1:
        names = "\n".join(f"  --model {m.id}" for m in models)
        raise CliError(f"{url} serves {len(models)} models; pick one with --model:\n{names}", ExitCode.CONFIG)
    console.print(f"model: {models[0].id} (the one {url} serves)", style="dim", markup=False, highlight=False)
    return models[0].id


async def _get(client: httpx.AsyncClient, address: str, url: str) -> httpx.Response:
    try:
        return await client.get(address)
    except httpx.ConnectError as exc:
        raise CliError(f"could not connect to {url} ({exc or 'connection refused'}): is the server "
                       f"running? {_START_HINT}", ExitCode.PROVIDER) from None
    except httpx.TimeoutException:
        raise CliError(f"{url} did not answer within {_TIMEOUT:g}s: is it the model server, and is it "
                       "busy loading a model? Try again in a moment.", ExitCode.PROVIDER) from None
    except httpx.HTTPError as exc:
        raise CliError(f"asking {address} failed: {exc!r}. {_START_HINT}", ExitCode.PROVIDER) from None


def _listing(response: httpx.Response, url: str) -> list[dict[str, Any]]:
    status = response.status_code
    if status in (401, 403):
        raise CliError(f"{url} wants an API key (HTTP {status}): set OPENAI_API_KEY to the server's key.",
                       ExitCode.CONFIG)
    if status == 404:
        raise CliError(f"{url}/models does not exist (HTTP 404): {url} is not an OpenAI-compatible base "
                       f"URL. {_START_HINT}", ExitCode.PROVIDER)
    if status != 200:
        raise CliError(f"{url}/models answered HTTP {status}: {response.text[:300]}", ExitCode.PROVIDER)
    try:
        body = response.json()
    except ValueError:
        body = None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise CliError(f"{url}/models did not answer with an OpenAI-style model list "
                       f"({response.text[:200]!r}); is it the model server? {_START_HINT}", ExitCode.PROVIDER)
    return [entry for entry in data if isinstance(entry, dict)]


async def _llama_cpp_context(client: httpx.AsyncClient, root: str) -> int | None:
    """llama.cpp's per-slot context size from ``GET /props`` (None: not llama.cpp, or not said)."""
    try:
        response = await client.get(f"{root}/props")
        body = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    if isinstance(settings, dict) and _int(settings.get("n_ctx")) is not None:
        return _int(settings.get("n_ctx"))
    return _int(body.get("n_ctx"))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _tokens(value: int | None) -> str:
    return f"{value:,}" if value is not None else "-"
