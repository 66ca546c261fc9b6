#!/usr/bin/env bash
# Install the pinned agent CLIs the end-to-end suite drives (tests/e2e/), from npm and PyPI only.
# Each goes into its own prefix under $UH_E2E_CLIS (default ~/.cache/uh-e2e-clis), so nothing
# touches the project's own environment: aider and hermes get a virtual environment each (their
# pins are not ours). A CLI whose install fails is reported and skipped; the tests for it skip
# saying why (the log is $UH_E2E_CLIS/<cli>.install.log). Installs are kept between runs: a CLI
# whose pinned version is already in place is not installed again.
set -uo pipefail
ROOT="${UH_E2E_CLIS:-$HOME/.cache/uh-e2e-clis}"
mkdir -p "$ROOT"

# cli  kind  packages (npm name@version, or pip name==version); tests/e2e/clis.py reads the same pins
PINS=(
  "codex npm @openai/codex@0.171.0"
  "claude npm @anthropic-ai/claude-code@2.1.332"
  "pi npm @mariozechner/pi-coding-agent@0.73.1"
  "omp npm bun@1.4.5 @oh-my-pi/pi-coding-agent@18.2.3"
  "aider pypi aider-chat==0.86.2"
  "hermes pypi hermes-agent==0.19.0"
)

install_one() {
  local cli=$1 kind=$2
  shift 2
  local packages="$*"
  local dir="$ROOT/$cli" stamp="$ROOT/$cli/.installed" log="$ROOT/$cli.install.log"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$packages" ]]; then
    return 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  if [[ $kind == npm ]]; then
    # shellcheck disable=SC2086
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error $packages >"$log" 2>&1
  else
    # shellcheck disable=SC2086
    python3 -m venv "$dir/venv" >"$log" 2>&1 &&
      "$dir/venv/bin/python" -m pip install -q --disable-pip-version-check $packages >>"$log" 2>&1
  fi
  local code=$?
  if [[ $code -eq 0 ]]; then
    echo "$packages" >"$stamp"
  else
    echo "e2e: $cli ($packages) could not be installed; its tests will skip (see $log)" >&2
  fi
}

pids=()
for pin in "${PINS[@]}"; do
  # shellcheck disable=SC2086
  install_one $pin &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
exit 0
