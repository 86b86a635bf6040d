#!/usr/bin/env bash
# Builds the release executables, .build/release/margin and margin-full, as `make release`,
# `make demo` and bench/ do. Every module, the dependencies too, reaches generic types' metadata
# through accessors rather than mangled names: decoding a mangled name asks the runtime whether
# each generic argument conforms to its requirements, and on Linux each first such question
# scans every conformance in the binary (about 300,000 instructions). Package.swift asks this
# of Margin's own modules; the flag here extends it to the packages Margin uses.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
flags=(-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors)
"$SWIFT" build -c release --static-swift-stdlib --product margin "${flags[@]}"
"$SWIFT" build -c release --static-swift-stdlib --product margin-full "${flags[@]}"
