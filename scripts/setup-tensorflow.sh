#!/usr/bin/env bash
# Native TensorFlow for training (docs/guides/native-tensorflow.md): builds @tensorflow/tfjs-node(-gpu)'s binding
# against the TensorFlow library that PyPI's wheel ships, so nothing outside the package registries is needed (the
# packages' own install scripts fetch libtensorflow from storage.googleapis.com, which offline machines cannot reach;
# package.json's allowScripts keeps npm from running them).
#
#   bash scripts/setup-tensorflow.sh          tensorflow-cpu wheel → .venvs/tensorflow, binding of @tensorflow/tfjs-node
#   bash scripts/setup-tensorflow.sh --gpu    tensorflow[and-cuda] → .venvs/tensorflow-gpu, binding of tfjs-node-gpu
#
# Steps, each skipped when its stamp says it is done: (1) the pinned wheel into a venv of the project's (--no-deps for
# the CPU wheel: only its libraries and headers are used; the GPU variant also installs the NVIDIA CUDA/cuDNN wheels
# that the `and-cuda` extra names); (2) the binding compiled with npm's bundled node-gyp in <venv>/binding, outside
# node_modules, so that `npm ci` does not throw the 11 s compile away; (3) the compiled binding and the links to the
# wheel's libraries placed in node_modules/<package>; (4) a load check in a fresh Node process.
#
# On failure: one line on stderr saying why, exit 1, and node_modules left without a half-installed binding, so the
# lab keeps training on tfjs-wasm. Environment overrides (for tests and other pins):
#   ARLARENA_TF_VERSION  the wheel's version (default 2.21.0)      ARLARENA_TF_HOME  the venv folder
#   ARLARENA_TF_PYTHON   the interpreter that makes the venv (default python3)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)

variant=cpu
for arg in "$@"; do
  case "$arg" in
    --gpu) variant=gpu ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup:tensorflow: unknown option '$arg' (known: --gpu, --help)" >&2; exit 2 ;;
  esac
done

version=${ARLARENA_TF_VERSION:-2.21.0}
python=${ARLARENA_TF_PYTHON:-python3}
if [ "$variant" = gpu ]; then
  wheel=tensorflow; spec="tensorflow==$version"; npm_pkg=@tensorflow/tfjs-node-gpu
  home=${ARLARENA_TF_HOME:-.venvs/tensorflow-gpu}
  size="the tensorflow $version wheel (≈ 570 MB) plus NVIDIA's CUDA/cuDNN wheels named by its and-cuda extra (≈ 2.8 GB; 6 GB unpacked)"
else
  wheel=tensorflow-cpu; spec="tensorflow-cpu==$version"; npm_pkg=@tensorflow/tfjs-node
  home=${ARLARENA_TF_HOME:-.venvs/tensorflow}
  size="the tensorflow-cpu $version wheel (≈ 270 MB; 1.2 GB unpacked)"
fi
case "$home" in /*) ;; *) home="$root/$home" ;; esac
pkg_dir="$root/node_modules/$npm_pkg"
mkdir -p "$(dirname "$home")"
log_file="$home.setup.log"
: > "$log_file"

say() { echo "setup:tensorflow: $*"; }
# The one-line failure: what went wrong, where the full log is, and that the lab still trains on tfjs-wasm.
fail() {
  local stays="training stays on tfjs-wasm"
  [ -f "$pkg_dir/.arlarena-tensorflow" ] && stays="the native build already in node_modules is left as it was"
  echo "setup:tensorflow: FAILED ($variant): $* — $stays (full log: ${log_file#"$root"/})" >&2
  exit 1
}
# The most telling line of a failed tool's log: pip's last ERROR line, else a compiler/gyp error, else the last line.
reason_from_log() {
  local line
  line=$(grep -E '^ERROR:' "$log_file" | tail -n1)
  [ -n "$line" ] || line=$(grep -E 'error:|gyp ERR! stack Error|Error: ' "$log_file" | head -n1)
  [ -n "$line" ] || line=$(grep -v '^\s*$' "$log_file" | tail -n1)
  echo "$line" | sed -E 's/^ERROR: //; s/\s+/ /g' | cut -c1-300
}

case "$version" in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *) fail "ARLARENA_TF_VERSION '$version' is not a version like 2.21.0" ;;
esac
[ -f "$pkg_dir/binding.gyp" ] || fail "$npm_pkg is not in node_modules (run npm ci first; it is installed with its download script disabled)"
command -v "$python" >/dev/null 2>&1 || fail "no Python interpreter '$python' to make the venv (set ARLARENA_TF_PYTHON)"
command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1 || fail "the binding needs a C++ compiler and make (apt-get install g++ make)"
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
node_gyp="$npm_dir/node_modules/node-gyp/bin/node-gyp.js"
[ -f "$node_gyp" ] || fail "npm's bundled node-gyp is not at $node_gyp"
node_prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
nodedir=${ARLARENA_NODEDIR:-$node_prefix}
[ -f "$nodedir/include/node/node_api.h" ] || fail "Node's headers are not under $nodedir/include/node (install the nodejs headers or set ARLARENA_NODEDIR)"

# 1. The wheel. A new or changed pin is installed into <home>.new and swapped in only once complete, so a failed try
#    (wrong version, no network) leaves the previous install as it was.
wheel_stamp="$home/.wheel-stamp"
want_wheel="$spec variant=$variant"
if [ "$(cat "$wheel_stamp" 2>/dev/null)" != "$want_wheel" ]; then
  say "downloading $size from PyPI into ${home#"$root"/}"
  rm -rf "$home.new"
  "$python" -m venv "$home.new" >>"$log_file" 2>&1 || fail "could not create a venv with $python ($(reason_from_log))"
  pip=("$home.new/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off)
  "${pip[@]}" --no-deps "$spec" </dev/null >>"$log_file" 2>&1 || { rm -rf "$home.new"; fail "pip could not install $spec: $(reason_from_log)"; }
  if [ "$variant" = gpu ]; then
    # Only the CUDA wheels of the and-cuda extra: TensorFlow's Python dependencies (Keras, NumPy, …) are not needed.
    mapfile -t cuda < <("$home.new/bin/python" - <<'EOF'
import importlib.metadata as m, re
for r in m.requires("tensorflow") or []:
    if re.search(r"extra\s*==\s*['\"]and-cuda['\"]", r):
        print(r.split(";")[0].strip())
EOF
)
    [ "${#cuda[@]}" -gt 0 ] || { rm -rf "$home.new"; fail "the $spec wheel names no and-cuda requirements"; }
    say "CUDA wheels: ${cuda[*]}"
    "${pip[@]}" "${cuda[@]}" </dev/null >>"$log_file" 2>&1 || { rm -rf "$home.new"; fail "pip could not install the CUDA wheels: $(reason_from_log)"; }
  fi
  echo "$want_wheel" > "$home.new/.wheel-stamp"
  rm -rf "$home"
  mv "$home.new" "$home"
  say "installed $spec ($(du -sh "$home" | cut -f1) on disk)"
fi
site=$(ls -d "$home"/lib/python3*/site-packages 2>/dev/null | head -n1)
tfdir="$site/tensorflow"
for f in "$tfdir/libtensorflow_cc.so.2" "$tfdir/libtensorflow_framework.so.2" "$tfdir/include/tensorflow/c/eager/c_api.h"; do
  [ -e "$f" ] || fail "the installed wheel lacks ${f#"$home"/} (wheel layout changed? pinned $spec)"
done

# deps/ as the binding expects it (binding.gyp: headers in deps/include, -ltensorflow -ltensorflow_framework from
# deps/lib, rpath $ORIGIN/../../deps/lib). The wheel's libtensorflow_cc.so.2 exports the C and eager C API that
# libtensorflow.so has in Google's own archive. Absolute links: they are read from node_modules too.
link_deps() {
  local d=$1
  rm -rf "$d/deps"
  mkdir -p "$d/deps/lib"
  for n in libtensorflow.so libtensorflow.so.2 libtensorflow_cc.so.2; do ln -s "$tfdir/libtensorflow_cc.so.2" "$d/deps/lib/$n"; done
  for n in libtensorflow_framework.so libtensorflow_framework.so.2; do ln -s "$tfdir/libtensorflow_framework.so.2" "$d/deps/lib/$n"; done
  ln -s "$tfdir/include" "$d/deps/include"
  # The GPU wheel's libraries find the NVIDIA wheels through RUNPATH entries relative to their own folder
  # ($ORIGIN/../nvidia/…); seen through deps/lib that folder is deps/, so deps/nvidia leads to the same place.
  [ -d "$site/nvidia" ] && ln -s "$site/nvidia" "$d/deps/nvidia"
  return 0
}

# 2. The binding, compiled once per (wheel, binding sources, Node ABI).
module_rel=$(cd "$pkg_dir" && node -e "const p=require('path');const f=require('@mapbox/node-pre-gyp').find(p.resolve('package.json'));process.stdout.write(p.relative(process.cwd(),f))" 2>>"$log_file") \
  || fail "node-pre-gyp could not name the binding's path in $npm_pkg ($(reason_from_log))"
inputs=$( { echo "$want_wheel"; node -p 'process.version + " napi " + process.versions.napi + " modules " + process.versions.modules'; echo "$module_rel";
            cat "$pkg_dir/binding.gyp" "$pkg_dir"/binding/*; g++ --version | head -n1; } | sha256sum | cut -d' ' -f1)
build="$home/binding"
if [ "$(cat "$build/.stamp" 2>/dev/null)" != "$inputs" ] || [ ! -f "$build/$module_rel" ]; then
  say "compiling $npm_pkg's binding against libtensorflow $version (≈ 15 s)"
  rm -rf "$build"
  mkdir -p "$build"
  cp -r "$pkg_dir/binding" "$pkg_dir/binding.gyp" "$pkg_dir/package.json" "$build/"
  link_deps "$build"
  # module_path absolute: gyp's copy step runs from build/, where a relative path would land in build/lib.
  napi=$(basename "$(dirname "$module_rel")" | sed -n 's/^napi-v//p')
  (cd "$build" && nice -n 10 node "$node_gyp" rebuild --nodedir="$nodedir" --module_name=tfjs_binding \
      --module_path="$build/$(dirname "$module_rel")" ${napi:+--napi_build_version="$napi"} </dev/null) >>"$log_file" 2>&1 \
    || fail "the binding did not compile: $(reason_from_log)"
  [ -f "$build/$module_rel" ] || fail "node-gyp finished but $module_rel is missing"
  echo "$inputs" > "$build/.stamp"
fi

# 3. Into node_modules (again after every npm ci, which removes it): links first, then the binding.
installed="$pkg_dir/.arlarena-tensorflow"
if [ "$(cat "$installed" 2>/dev/null)" != "$inputs" ] || ! cmp -s "$build/$module_rel" "$pkg_dir/$module_rel"; then
  rm -f "$installed"
  link_deps "$pkg_dir"
  mkdir -p "$pkg_dir/$(dirname "$module_rel")"
  cp "$build/$module_rel" "$pkg_dir/$module_rel"
fi

# 4. The load check, in a fresh process from the project root (as the lab imports it).
check=$(node --input-type=module -e "
  const tf = await import('$npm_pkg');
  if (tf.getBackend() !== 'tensorflow') throw new Error('backend is ' + tf.getBackend());
  const s = tf.matMul(tf.ones([64, 64]), tf.ones([64, 64])).sum().dataSync()[0];
  if (s !== 64 * 64 * 64) throw new Error('matMul check gave ' + s);
  const be = tf.backend();
  console.log('libtensorflow ' + be.binding.TF_Version + (be.isUsingGpuDevice ? ', GPU' : ', CPU'));
" 2>>"$log_file" </dev/null)
if [ $? -ne 0 ]; then
  rm -f "$pkg_dir/$module_rel" "$installed"
  fail "the built binding does not load: $(reason_from_log)"
fi
echo "$inputs" > "$installed"
say "ready: $npm_pkg $(node -p "require('$pkg_dir/package.json').version") on $check (wheel in ${home#"$root"/})"
