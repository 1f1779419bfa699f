"""A CallToolResult as the model's text: text, resources, images as artifacts, errors."""

from __future__ import annotations

import base64

import mcp_types as types
import pytest

from jupyter_brain.agent.artifacts import ArtifactStore
from jupyter_brain.agent.tools import ToolError
from jupyter_brain.mcp.results import render_result

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 2000).decode()


def _result(*content, **kw):
    return types.CallToolResult(content=list(content), **kw)


def test_text_blocks_and_embedded_resources_are_text():
    result = _result(
        types.TextContent(text="first"),
        types.EmbeddedResource(resource=types.TextResourceContents(uri="file:///a.md", text="# A")),
        types.ResourceLink(name="report", uri="file:///r.pdf", description="the report"),
    )
    assert render_result(result, ArtifactStore()) == (
        "first\n[resource file:///a.md]\n# A\n[resource link: report file:///r.pdf — the report]")


def test_structured_content_when_there_is_no_text():
    assert render_result(_result(structured_content={"a": 1}), ArtifactStore()) == '{"a": 1}'


def test_an_error_result_raises_tool_error_with_its_text():
    with pytest.raises(ToolError, match="no such repository"):
        render_result(_result(types.TextContent(text="no such repository"), is_error=True), ArtifactStore())
    with pytest.raises(ToolError, match="without a message"):
        render_result(_result(is_error=True), ArtifactStore())


def test_images_go_to_the_artifact_store_and_the_model_reads_a_note(tmp_path):
    store = ArtifactStore(tmp_path / "artifacts")
    text = render_result(_result(types.TextContent(text="chart:"), types.ImageContent(data=PNG, mime_type="image/png")),
                         store)
    first, note = text.split("\n")
    assert first == "chart:"
    handle = note.split("artifact '")[1].split("'")[0]
    assert handle.startswith("image_")
    assert "image/png, 2.0 KB" in note and "attached to this result as an image" in note
    assert store.get(handle) == f"data:image/png;base64,{PNG}"
    assert (tmp_path / "artifacts" / f"{handle}.png").read_bytes() == base64.b64decode(PNG)
    assert f"artifacts/{handle}.png" in note


def test_binary_resources_and_audio_are_saved_too():
    store = ArtifactStore()  # in memory: no file, the handle still works
    blob = types.EmbeddedResource(resource=types.BlobResourceContents(uri="file:///x.bin", blob="AAEC",
                                                                      mime_type="application/octet-stream"))
    audio = types.AudioContent(data="AAEC", mime_type="audio/wav")
    text = render_result(_result(blob, audio), store)
    assert "[resource file:///x.bin: application/octet-stream, 3 bytes, saved as artifact 'media_" in text
    assert "[audio: audio/wav, 3 bytes" in text
