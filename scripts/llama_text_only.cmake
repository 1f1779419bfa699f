# Passed to llama-cpp-python's build as -DCMAKE_PROJECT_llama.cpp_INCLUDE=<this file> (see
# scripts/test.sh and scripts/local_model.sh): CMake runs it right after llama.cpp's own
# project(), so it comes after llama-cpp-python forces LLAMA_BUILD_COMMON on and before
# llama.cpp reads it, and before its libraries are defined.
#
# llama.cpp's common library (chat templates, JSON, argument parsing) is used only by the
# multimodal library, which LLAVA_BUILD=OFF leaves out; the Python package loads libllama and
# libggml alone. Leaving it out halves the first compile (measured: 7.8 CPU-minutes instead of
# 15.5, llama-cpp-python 0.3.36, gcc 12).
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama.cpp's common library (only mtmd uses it)" FORCE)

# -O1 instead of Release's -O3: the compile takes 4.6 CPU-minutes instead of 7.8, and
# SmolLM2-135M generates as fast (measured side by side, 300 tokens on 2 threads: 3.1 and 3.2
# tokens/s on a loaded machine); the tiny model's speed is set by memory, not by the
# optimiser's last passes. Normal variables: they shadow the cache's for llama.cpp's folders.
set(CMAKE_C_FLAGS_RELEASE "-O1 -DNDEBUG")
set(CMAKE_CXX_FLAGS_RELEASE "-O1 -DNDEBUG")
