#!/usr/bin/env bash
# llama.cpp engine tests (tests/engines/test_llamacpp_*.py): llama.cpp's `llama-server`, built
# from the llama.cpp tree vendored in the llama-cpp-python sdist (PyPI is the only source
# reachable), plus that tree's GGUF converter (convert_hf_to_gguf.py, conversion/, gguf-py/),
# which the tests run to turn a tiny random-weight model into a GGUF.
#
# Output: $CACHE/llamacpp-$VERSION/{bin/llama-server,convert/} and the link .ci/cache/llamacpp
# to it (what tests/engines/llamacpp_support.py looks for; TOKENPARSE_LLAMA_SERVER overrides).
# $CACHE is outside the checkout (TOKENPARSE_CI_CACHE, default ~/.cache/tokenparse-ci), so the
# build is kept per version across clones on one machine: a second run with the same pin reuses
# it; a new machine builds it. Nothing built here is committed (.ci/cache/ is git-ignored).
#
# Build flags, all for an offline CPU build: no CURL/OpenSSL (no model downloads), no web UI
# (its assets come from npm or a download), GGML_NATIVE=OFF (the binary does not depend on
# the building CPU's extensions), static libraries, only the llama-server target.
#
# Cost: about 190 C++ files (ggml, libllama, common, mtmd, the server) with -j2
# (TOKENPARSE_BUILD_JOBS); about 6 min on 2 idle cores, over an hour of wall time on 2 cores
# shared with other builds. A second run with the same pin only prints the version.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=0.3.36  # llama-cpp-python, whose sdist vendors the llama.cpp tree built here
CACHE="${TOKENPARSE_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokenparse-ci}"
DEST="$CACHE/llamacpp-$VERSION"
mkdir -p "$CACHE"
if [ -x "$DEST/bin/llama-server" ] && [ -f "$DEST/convert/convert_hf_to_gguf.py" ]; then
    echo "llama-server $VERSION already built in $DEST"
else
    start=$SECONDS
    # an interrupted run leaves $work: its unpacked tree and object files are reused
    work="$CACHE/llamacpp-$VERSION.work"
    src="$work/llama_cpp_python-$VERSION/vendor/llama.cpp"
    if [ ! -f "$work/unpacked" ]; then
        rm -rf "$work" && mkdir -p "$work"
        python3 -m pip download -q --no-binary :all: --no-deps "llama-cpp-python==$VERSION" -d "$work"
        tar -xzf "$work/llama_cpp_python-$VERSION.tar.gz" -C "$work"
        rm "$work/llama_cpp_python-$VERSION.tar.gz"
        touch "$work/unpacked"
        echo "sdist fetched and unpacked in $((SECONDS - start)) s"
    fi
    cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
        -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON > "$work/configure.log" 2>&1 \
        || { tail -n 60 "$work/configure.log"; exit 1; }
    cmake --build "$work/build" --target llama-server -j"${TOKENPARSE_BUILD_JOBS:-2}" > "$work/build.log" 2>&1 \
        || { tail -n 60 "$work/build.log"; exit 1; }
    rm -rf "$DEST.tmp" && mkdir -p "$DEST.tmp/bin" "$DEST.tmp/convert"
    cp "$work/build/bin/llama-server" "$DEST.tmp/bin/"
    cp -r "$src/convert_hf_to_gguf.py" "$src/conversion" "$src/gguf-py" "$DEST.tmp/convert/"
    rm -rf "$DEST" && mv "$DEST.tmp" "$DEST"
    rm -rf "$work"
    echo "llama-server $VERSION built in $((SECONDS - start)) s"
fi
mkdir -p .ci/cache
ln -sfn "$DEST" .ci/cache/llamacpp
"$DEST/bin/llama-server" --version
