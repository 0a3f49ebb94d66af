"""Images by path: ``ImageBlock.from_path`` reads real files (type from the bytes, a size cap) and
``UserMessage.with_images`` reaches each vendor's wire in its own shape."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import respx

from agcore.llm import ImageBlock, ImageFileError, LLMRequest, TextBlock, UserMessage
from tests.llm import test_anthropic_provider as anthropic_wire
from tests.llm import test_ollama_provider as ollama_wire
from tests.llm import test_openai_provider as openai_wire


def png_bytes(width: int = 2, height: int = 2) -> bytes:
    """A real, decodable PNG (grey pixels)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
GIF = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    path = tmp_path / "chart.png"
    path.write_bytes(png_bytes())
    return path


@pytest.mark.parametrize(("name", "data", "media_type"), [
    ("a.png", png_bytes(), "image/png"),
    ("a.jpg", JPEG, "image/jpeg"),
    ("a.gif", GIF, "image/gif"),
    ("a.webp", WEBP, "image/webp"),
    ("really-a-jpeg.png", JPEG, "image/jpeg"),  # the bytes decide, not the name
])
def test_media_type_comes_from_the_bytes(tmp_path: Path, name: str, data: bytes, media_type: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    block = ImageBlock.from_path(path)
    assert block.media_type == media_type
    assert block.data is not None
    assert base64.b64decode(block.data) == data
    assert ImageBlock.model_validate_json(block.model_dump_json()) == block  # persists like any block


def test_bad_image_files_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ImageFileError, match="no such file"):
        ImageBlock.from_path(tmp_path / "missing.png")
    with pytest.raises(ImageFileError, match="not a file"):
        ImageBlock.from_path(tmp_path)
    text = tmp_path / "notes.png"
    text.write_text("not an image")
    with pytest.raises(ImageFileError, match="not a PNG, JPEG, GIF or WebP"):
        ImageBlock.from_path(text)
    big = tmp_path / "big.png"
    big.write_bytes(png_bytes() + b"\x00" * 6 * 1024 * 1024)
    with pytest.raises(ImageFileError, match=r"6\.0 MB, over the 5\.0 MB limit: scale it down"):
        ImageBlock.from_path(big)
    assert ImageBlock.from_path(big, max_bytes=7 * 1024 * 1024).media_type == "image/png"
    assert issubclass(ImageFileError, ValueError)


def test_with_images_puts_images_first(photo: Path) -> None:
    url = ImageBlock(url="https://example.com/cat.jpg")
    message = UserMessage.with_images("What changed?", [photo, url])
    assert [type(b) for b in message.blocks] == [ImageBlock, ImageBlock, TextBlock]
    assert message.blocks[0] == ImageBlock.from_path(photo)
    assert message.blocks[1] is url
    assert UserMessage.with_images("", [photo]).blocks == [ImageBlock.from_path(photo)]


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with respx.mock(assert_all_mocked=True) as router:
        yield router


def body(route: respx.Route) -> Any:
    return json.loads(route.calls[0].request.content)


@pytest.mark.anyio
async def test_a_file_image_on_each_vendors_wire(api: respx.MockRouter, photo: Path) -> None:
    data = base64.b64encode(png_bytes()).decode()
    request = LLMRequest.build([UserMessage.with_images("Describe the chart.", [photo])])

    route = anthropic_wire.ok_route(api)
    await anthropic_wire.make().complete(request)
    assert body(route)["messages"] == [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
        {"type": "text", "text": "Describe the chart."},
    ]}]

    route = openai_wire.ok_route(api)
    await openai_wire.make().complete(request)
    assert body(route)["messages"] == [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
        {"type": "text", "text": "Describe the chart."},
    ]}]

    route = api.post(ollama_wire.CHAT).respond(json=ollama_wire.reply({"content": "A bar chart."}))
    reply = await ollama_wire.make().complete(request)
    assert body(route)["messages"] == [
        {"role": "user", "content": "Describe the chart.", "images": [data]},
    ]
    assert reply.message.text == "A bar chart."
