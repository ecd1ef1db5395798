#!/bin/sh
# Regenerates codec/schema/src/wireshark/taken.txt: the protocol names the installed Wireshark
# already registers (filter names and short names, lower-cased), which a schema's protocol name
# may not take (SCHEMA.md, "Names"). Run from the repository root with tshark installed.
set -eu
out=codec/schema/src/wireshark/taken.txt
version=$(tshark --version | head -n 1)
tmp=$(mktemp)
tshark -G protocols > "$tmp"
{
    echo "# Protocol names Wireshark already registers ($version, \`tshark -G protocols\`: filter name"
    echo "# and short name, lower-cased, one a line). A schema's protocol may not take one: its dissector"
    echo "# would fail to register. Regenerate with scripts/wireshark-protocols.sh."
    { cut -f2 "$tmp"; cut -f3 "$tmp"; } | tr 'A-Z' 'a-z' | grep -E '^[a-z][a-z0-9_.-]*$' | LC_ALL=C sort -u
} > "$out"
rm -f "$tmp"
