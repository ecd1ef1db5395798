#!/usr/bin/env bash
# Output of two `bitlens` builds, compared byte for byte: `decode --json`, `decode --fields`,
# `check` and `profile` (text and JSON) on every shipped capture (captures/*.pcap, *.pcapng; the
# encrypted ones once more with their keys), `decode --json --schema` with the demo schema, and a synthetic capture with
# labelled faults. For a change that must keep
# the output identical (issue 15: "decode --json output on every shipped capture is
# byte-identical before and after").
#
#   bash scripts/compare-outputs.sh BEFORE_BITLENS AFTER_BITLENS [SYNTH_PACKETS]
#
# A build of another revision, for BEFORE_BITLENS:
#   git worktree add /tmp/bitlens-before REV
#   cargo build --release --manifest-path /tmp/bitlens-before/Cargo.toml -p bitlens
#   # -> /tmp/bitlens-before/target/release/bitlens
#
# Prints one line per comparison (identical, or the number of differing lines and the first
# differences); exits 1 when anything differs.
set -euo pipefail
cd "$(dirname "$0")/.."
before=$1
after=$2
packets=${3:-5000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$after" synth "$out/synth-faults.pcap" --packets "$packets" --seed 5 --faults >/dev/null

differ=0
compare() { # NAME ARGS...
  local name=$1
  shift
  "$before" "$@" >"$out/$name.before" 2>"$out/$name.before.err" || true
  "$after" "$@" >"$out/$name.after" 2>"$out/$name.after.err" || true
  if cmp -s "$out/$name.before" "$out/$name.after"; then
    printf 'identical  %-48s %s bytes\n' "$name" "$(wc -c <"$out/$name.after")"
  else
    differ=1
    printf 'DIFFERENT  %-48s %s lines differ\n' "$name" \
      "$(diff "$out/$name.before" "$out/$name.after" | grep -c '^[<>]' || true)"
    # diff exits 1 on a difference: under pipefail that would end the script at the first one.
    { diff "$out/$name.before" "$out/$name.after" || true; } | head -6 | cut -c1-300
  fi
}

for capture in captures/*.pcap captures/*.pcapng "$out/synth-faults.pcap"; do
  name=$(basename "$capture")
  compare "$name.json" decode --json "$capture"
  compare "$name.fields" decode --fields "$capture"
  compare "$name.check" check "$capture"
  compare "$name.profile" profile "$capture"
  compare "$name.profile.json" profile --json "$capture"
done
compare "demo.pcap.schema.json" decode --json --schema captures/demo.schema.toml captures/demo.pcap
# The encrypted captures with their keys (captures/README.md says where each comes from): the
# transports' fields, the decrypted payloads' fields, and the verdicts.
encrypted() { # NAME CAPTURE ARGS...
  local name=$1 capture=$2
  shift 2
  compare "$name.json" decode --json "$capture" "$@"
  compare "$name.fields" decode --fields "$capture" "$@"
  compare "$name.check" check "$capture" "$@"
  compare "$name.profile.json" profile --json "$capture" "$@"
}
encrypted netcode.pcap.keyed captures/netcode.pcap --decode 5000=netcode+demo \
  --netcode-key captures/netcode.key --netcode-protocol-id 0x6269746c656e7331
encrypted netcode-reference.pcap.keyed captures/netcode-reference.pcap --decode 40000=netcode \
  --netcode-key captures/netcode-reference.key --netcode-protocol-id 0x1122334455667788
encrypted yojimbo-soak.pcap.keyed captures/yojimbo-soak.pcap --decode 40000=yojimbo \
  --netcode-key captures/yojimbo-reference.key --schema captures/yojimbo.schema.toml
encrypted yojimbo-client-server.pcap.keyed captures/yojimbo-client-server.pcap --decode 40000=yojimbo \
  --netcode-key captures/yojimbo-reference.key --schema captures/yojimbo-client-server.schema.toml
exit $differ
