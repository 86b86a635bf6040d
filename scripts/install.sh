#!/usr/bin/env bash
# Installs margin: both executables stripped, their debug information kept beside them under
# /usr/lib/debug (found by gdb through each executable's .gnu_debuglink), the man page and the
# shell completions. DESTDIR and PREFIX as usual (PREFIX=/usr/local); BIN_DIR is where the
# built executables are (.build/release, as `make release` leaves them).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${PREFIX:-/usr/local}
dest=${DESTDIR:-}
bin=${BIN_DIR:-.build/release}
for exe in margin margin-full; do
    target="$dest$prefix/bin/$exe"
    debug="$dest/usr/lib/debug$prefix/bin/$exe.debug"
    install -D -m 755 "$bin/$exe" "$target"
    install -d "$(dirname "$debug")"
    objcopy --only-keep-debug "$target" "$debug"
    chmod 644 "$debug"
    strip --strip-all "$target"
    objcopy --add-gnu-debuglink="$debug" "$target"
done
install -D -m 644 man/margin.1 "$dest$prefix/share/man/man1/margin.1"
# The completions the installed margin writes for itself.
margin="$dest$prefix/bin/margin"
install -d "$dest/usr/share/bash-completion/completions" "$dest$prefix/share/zsh/site-functions" \
    "$dest/usr/share/fish/vendor_completions.d"
"$margin" --generate-completion-script bash > "$dest/usr/share/bash-completion/completions/margin"
"$margin" --generate-completion-script zsh > "$dest$prefix/share/zsh/site-functions/_margin"
"$margin" --generate-completion-script fish > "$dest/usr/share/fish/vendor_completions.d/margin.fish"
echo "installed margin and margin-full in $dest$prefix/bin ($(du -ch "$dest$prefix/bin/margin" "$dest$prefix/bin/margin-full" | tail -1 | cut -f1) stripped), debug information in $dest/usr/lib/debug$prefix/bin"
