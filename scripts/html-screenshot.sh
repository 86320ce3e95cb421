#!/usr/bin/env bash
# Renders an `explain -o html` page in headless Chromium: writes a PNG screenshot and
# prints the DOM the browser parsed (so a test can check what it made of the page).
# Usage: scripts/html-screenshot.sh PAGE.html OUT.png [WIDTHxHEIGHT]
# The browser is $BROWSER, else chromium-headless-shell or chromium on PATH
# (Debian: apt-get install chromium-headless-shell).
set -euo pipefail
page=$(realpath "$1")
out=$(realpath -m "$2")
size=${3:-1280x2000}
browser=${BROWSER:-}
if [ -z "$browser" ]; then
    for b in chromium-headless-shell chromium chromium-browser; do
        if command -v "$b" >/dev/null; then browser=$b; break; fi
    done
fi
[ -n "$browser" ] || { echo "no headless Chromium found (apt-get install chromium-headless-shell)" >&2; exit 3; }
# A profile of its own, so parallel runs do not share a lock; no network, no sandbox
# (tests run as root).
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile"
       --disable-extensions --proxy-server=127.0.0.1:9 --hide-scrollbars)
"$browser" "${flags[@]}" --window-size="${size/x/,}" --screenshot="$out" "file://$page" >/dev/null 2>&1
[ -s "$out" ] || { echo "$browser wrote no screenshot" >&2; exit 1; }
"$browser" "${flags[@]}" --dump-dom "file://$page" 2>/dev/null
