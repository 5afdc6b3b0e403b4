#!/usr/bin/env bash
# Usage: bash scripts/setup.sh   (no options; --help prints this)
# Everything the tests need on a fresh machine, then `npm ci`. Idempotent: each step runs only when its result is
# missing. The README's second command is `bash scripts/setup.sh && npm test`; .ci/run calls exactly that.
#   Debian packages: Chromium (browser tests), Xvfb (the Electron spec where a binary exists), PyTorch + OpenBLAS
#     (side-by-side benchmarks and the float64 cross-check), python3-venv (the peer venv below); apt-get as root or
#     with sudo -n.
#   .peers-venv: the Python peers the tests run against (TensorBoard's own writer and reader, a Ray head from
#     ray[default]), every version pinned in tests/peers/requirements.txt; .venvs/<name>: one more per
#     tests/peers/venvs/<name>.txt (Transformers, the trackers, Hydra, ...).
#   npm ci (node_modules made anew), then native TensorFlow for training (scripts/setup-tensorflow.sh).
set -euo pipefail
# Before any step: the script ignored its arguments, so `--help` ran apt-get, the venvs and npm ci.
for arg in "$@"; do
  case "$arg" in
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown option '$arg' (setup.sh takes none; --help says what it installs)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -x /usr/bin/Xvfb ] || need+=(xvfb)
/usr/bin/python3 -c 'import torch' >/dev/null 2>&1 || need+=(python3-torch)
dpkg -s libopenblas0-pthread >/dev/null 2>&1 || need+=(libopenblas0-pthread)
command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1 || need+=(g++ make)
if [ "${#need[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${need[*]}"
  if [ "$(id -u)" -eq 0 ]; then SUDO=(); elif command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); else
    echo "setup: need root (or passwordless sudo) to apt-get install ${need[*]}; install them and re-run" >&2; exit 1
  fi
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq "${need[@]}" </dev/null
fi

req=tests/peers/requirements.txt
stamp=.peers-venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -x .peers-venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: creating .peers-venv from $req"
  rm -rf .peers-venv
  python3 -m venv .peers-venv
  .peers-venv/bin/pip install -q --disable-pip-version-check --no-input -r "$req" </dev/null
  echo "$want" > "$stamp"
fi

# More peer venvs, one per file tests/peers/venvs/<name>.txt → .venvs/<name> (pinned requirements; kept apart so that
# the trackers', Transformers' and Hydra's pins never fight Ray's or TensorBoard's). A first line
# `# venv: --system-site-packages` makes the venv with Debian's /usr/bin/python3 and its site packages (Debian's
# python3-torch, which PyPI's CPU-less torch wheels cannot replace here). A line `# pip: --no-deps` installs exactly
# the pinned list and nothing it would pull in (a package wanted for its files, not its heavy dependencies). A line
# `# pip: --no-compile` leaves bytecode to the first import (ms-swift's venv: 20,000 .py files, of which a test run
# imports a part; its install took 3m03 at load 7-8 with no pip cache, against 6m52 compiled at load 12).
for req in tests/peers/venvs/*.txt; do
  [ -f "$req" ] || continue
  name=$(basename "$req" .txt); dir=.venvs/$name; stamp=$dir/.requirements.sha256
  want=$(sha256sum "$req" | cut -d' ' -f1)
  if [ ! -x "$dir/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setup: creating $dir from $req"
    rm -rf "$dir"
    if head -n1 "$req" | grep -q -- '--system-site-packages'; then
      /usr/bin/python3 -m venv --system-site-packages "$dir"
    else
      python3 -m venv "$dir"
    fi
    pipflags=(); grep -q '^# pip: --no-deps' "$req" && pipflags=(--no-deps)
    grep -q '^# pip: --no-compile' "$req" && pipflags+=(--no-compile)
    "$dir/bin/pip" install -q --disable-pip-version-check --no-input "${pipflags[@]}" -r "$req" </dev/null
    echo "$want" > "$stamp"
  fi
done

echo "setup: node $(node --version), npm $(npm --version)"
# Native add-ons that build from source (better-sqlite3, when its prebuilt binary cannot be fetched) need Node's
# headers; node-gyp would otherwise download them from nodejs.org. Debian's nodejs ships them in /usr/include/node.
if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node_version.h ]; then export npm_config_nodedir=/usr; fi
npm ci </dev/null

# Native TensorFlow for training (docs/guides/native-tensorflow.md): the tensorflow-cpu wheel into .venvs/tensorflow
# and tfjs-node's binding built against it. After npm ci, which removes the binding from node_modules (the compile is
# kept in .venvs/tensorflow, so this is then a copy). On failure it says why in one line and training stays on
# tfjs-wasm; the tests that need the native backend then fail naming `npm run setup:tensorflow`.
bash scripts/setup-tensorflow.sh || echo "setup: continuing without native TensorFlow (reason above)"
