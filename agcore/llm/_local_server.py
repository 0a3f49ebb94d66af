"""Which self-hosted server stands behind a provider: llama.cpp's ``llama-server``, vLLM or Ollama.

Features only such servers have (constraining a reply to a JSON Schema while it is decoded) are
switched on by what the server is, never by guessing from a model name. ``detect_local_server``
asks the server once, with the endpoints each one answers and the others do not:

* ``GET /v1/models``: vLLM lists its models ``owned_by: "vllm"``, llama.cpp ``owned_by: "llamacpp"``;
* ``GET /props`` (at the server's root): llama.cpp's settings (``default_generation_settings``);
* ``GET /api/version`` (at the root): Ollama's ``{"version": ...}``.

The answer is cached per server (its base URL), failures included: a server that answers none of
these is asked once, not before every call. Cloud vendors are never asked: only a provider named
``openai-compatible`` (a base URL agcore does not know as a vendor's) is probed, and an
``OllamaProvider`` is Ollama by construction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import httpx

__all__ = ["LocalServer", "detect_local_server", "forget_local_servers"]

#: The self-hosted servers agcore recognises.
LocalServer = Literal["llama.cpp", "vllm", "ollama"]

# OpenAIProvider's name for a server whose base URL is no known vendor's (_reasoning_echo.COMPATIBLE).
_COMPATIBLE = "openai-compatible"
_PROBE_SECONDS = 3.0
_OWNERS: dict[str, LocalServer] = {"vllm": "vllm", "llamacpp": "llama.cpp", "llama.cpp": "llama.cpp"}

_known: dict[str, LocalServer | None] = {}


def forget_local_servers() -> None:
    """Forget what every server was found to be (a server restarted as another kind, tests)."""
    _known.clear()


def _base_url(provider: object) -> str | None:
    client = getattr(provider, "client", None)
    base = getattr(client, "base_url", None)
    return str(base).rstrip("/") if base is not None else None


async def detect_local_server(provider: object) -> LocalServer | None:
    """The kind of server behind ``provider`` (None: a cloud vendor, or a server that is none of
    the three), asked once per base URL and remembered."""
    name = getattr(provider, "provider_name", "")
    if name == "ollama":
        return "ollama"
    if name != _COMPATIBLE:
        return None
    base = _base_url(provider)
    if base is None:
        return None
    if base not in _known:
        key = getattr(getattr(provider, "client", None), "api_key", None)
        _known[base] = await _probe(base, key if isinstance(key, str) else None)
    return _known[base]


async def _probe(base: str, api_key: str | None) -> LocalServer | None:
    import httpx  # here, not at the top: `import agcore.llm` stays cheap

    root = base.removesuffix("/v1")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(timeout=_PROBE_SECONDS, headers=headers) as http:
        models = await _get_json(http, f"{base}/models")
        for entry in models.get("data", []) if isinstance(models.get("data"), list) else []:
            owner = entry.get("owned_by") if isinstance(entry, dict) else None
            if isinstance(owner, str) and owner.lower() in _OWNERS:
                return _OWNERS[owner.lower()]
        props = await _get_json(http, f"{root}/props")
        if "default_generation_settings" in props or "build_info" in props:
            return "llama.cpp"
        version = await _get_json(http, f"{root}/api/version")
        if isinstance(version.get("version"), str):
            return "ollama"
    return None


async def _get_json(http: httpx.AsyncClient, url: str) -> dict[str, Any]:
    """``url``'s JSON object, or an empty dict for anything else (an error, HTML, no server)."""
    import httpx

    try:
        response = await http.get(url)
        body = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}
