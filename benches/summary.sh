#!/usr/bin/env bash
# The table of same-run ratios at the top of BENCHMARKS.md, from the results of benches/all.sh:
# criterion's estimates (target/criterion/), the logs in target/bench-all/ and hyperfine's JSON
# (target/bench-captures/). A ratio is bitlens's time over the peer's in the same run: below 1,
# bitlens is faster. A missing result prints as "-".
#
#   bash benches/summary.sh
set -euo pipefail
cd "$(dirname "$0")/.."
crit=target/criterion
logs=target/bench-all
caps=target/bench-captures

# criterion's middle estimate in ns: the slope when it fitted one, else the mean.
est() {
  local f="$crit/$1/new/estimates.json"
  [ -f "$f" ] || { echo -; return; }
  local v
  v=$(sed -n 's/.*"slope":{"confidence_interval":{[^}]*},"point_estimate":\([-0-9.e+]*\).*/\1/p' "$f")
  [ -n "$v" ] || v=$(sed -n 's/^{"mean":{"confidence_interval":{[^}]*},"point_estimate":\([-0-9.e+]*\).*/\1/p' "$f")
  echo "${v:--}"
}
# a / b with 2 decimals, "-" when either is missing.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-";
  else if (a / b < 0.1) printf "%.3f", a / b; else printf "%.2f", a / b }'; }
# a time in ns, in the unit that suits it.
fmt() {
  awk -v t="$1" 'BEGIN { if (t == "-") print "-"; else if (t < 1e3) printf "%.1f ns", t;
    else if (t < 1e6) printf "%.2f us", t / 1e3; else if (t < 1e9) printf "%.2f ms", t / 1e6;
    else printf "%.2f s", t / 1e9 }'
}
row() { # peer, workload, bitlens ns, peer ns, note
  echo "| $1 | $2 | $(fmt "$3") | $(fmt "$4") | **$(ratio "$3" "$4")** | $5 |"
}

echo "| peer | workload | bitlens | peer | bitlens / peer | notes |"
echo "|---|---|---|---|---|---|"

# serialize.rs: the harness's three rounds (median of their same-run ratios) and callgrind counts.
h="$logs/serialize_rs_time.log"
median3() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }
rounds=$( [ -f "$h" ] && grep -c '^round [0-9]*: ns/packet' "$h" || echo 0)
c="$logs/serialize_rs_count.log"
cnt() { # loop -> "bitlens/serialize.rs instructions" from the count table
  if [ -f "$c" ]; then awk -F'|' -v m="$1" '$2 ~ " "m" " { gsub(/ /, "", $3); gsub(/ /, "", $4); print $3 " / " $4 " instr" }' "$c"; fi
}
pl="$logs/serialize_rs_placement.log"
place() { # workload -> "over 16 placements: median M (min-max)" from the placement table
  if [ -f "$pl" ]; then awk -F'|' -v w="$1" '$2 == " "w" " { gsub(/ /, "", $3); gsub(/ /, "", $4); gsub(/ /, "", $5); print "; over 16 code placements " $3 " (" $4 "-" $5 ")" }' "$pl"; fi
}
med() { # a sed expression picking one number per matching harness line -> median
  if [ -f "$h" ]; then sed -n "$1" "$h" | median3; else echo -; fi
}
for op in write read measure; do
  srs_ns=$(med "s/.*ns\/packet.* $op srs \([0-9.]*\) bl .*/\1/p")
  bl_ns=$(med "s/.*ns\/packet.* $op srs [0-9.]* bl \([0-9.]*\).*/\1/p")
  r=$(med "s/.*ns\/packet.* $op srs [0-9.]* bl [0-9.]* ([^0-9]*\([0-9.]*\)x).*/\1/p")
  note=; [ "$op" != measure ] || note=" (both measures fold to a constant in the harness: see the serialize.rs section)"
  echo "| serialize.rs 2.1.2 | packet $op | $bl_ns ns | $srs_ns ns | **$r** | harness, median of $rounds rounds$note; callgrind $(cnt "$op")$( [ "$op" = measure ] || place "packet $op") |"
done
for op in write read; do
  srs_mb=$(med "s/^bitpacker MB\/s:.*$op srs \([0-9.]*\) bl .*/\1/p")
  bl_mb=$(med "s/^bitpacker MB\/s:.*$op srs [0-9.]* bl \([0-9.]*\).*/\1/p")
  r=$(med "s/.*bitpacker bl\/srs time.*$op \([0-9.]*\)x.*/\1/p")
  echo "| serialize.rs 2.1.2 | bitpacker $op, 64 KiB | $bl_mb MB/s | $srs_mb MB/s | **$r** | harness, median of $rounds rounds; callgrind $(cnt "bp-$op")$(place "bitpacker $op") |"
done

g="bitpacker_1M_values_3_10_24_1_32"
for d in write read; do
  row "bitstream-io 4" "1M values, runtime widths, $d" "$(est "$g/$d runtime widths/bitlens")" "$(est "$g/$d runtime widths/bitstream-io")" "criterion"
  row "bitstream-io 4" "1M values, const widths, $d" "$(est "$g/$d const widths/bitlens")" "$(est "$g/$d const widths/bitstream-io")" "criterion"
  row "bitstream-io 4" "1M values, struct runs vs its const widths, $d" "$(est "$g/$d struct runs/bitlens")" "$(est "$g/$d const widths/bitstream-io")" "criterion"
done

bytes_of() { # entities log: bytes per entity of a codec, and its ratio to bitcode
  [ -f "$logs/entities.log" ] && awk -v n="$1" '$1 == n && /B\/entity/ { print $2 " B/entity (" substr($4, 2) " bitcode)" }' "$logs/entities.log"
}
for p in bitcode bincode2 postcard naia-serde; do
  for d in encode decode; do
    row "$p" "1000 entities, $d" "$(est "entities_1000/$d/bitlens")" "$(est "entities_1000/$d/$p")" \
      "criterion; bytes: bitlens $(bytes_of bitlens), $p $(bytes_of "$p")"
  done
done
for p in postcard bitcode; do
  for d in write read; do
    row "$p" "1000 batched messages, $d" "$(est "batch/$d/bitlens")" "$(est "batch/$d/$p")" "criterion"
  done
done
sizes=$( [ -f "$logs/tagged.log" ] && grep -o 'save game sizes: .*' "$logs/tagged.log" | sed 's/save game sizes: //' || true)
for d in encode decode; do
  row "prost 0.14" "save game, $d" "$(est "tagged_vs_prost_save_game/$d/tagged")" "$(est "tagged_vs_prost_save_game/$d/prost")" "criterion; ${sizes:--}"
done

mean_of() { # hyperfine JSON, command name -> mean in ns
  local f="$1"; [ -f "$f" ] || { echo -; return; }
  awk -v c="\"command\": \"$2\"," '
    index($0, c) { on = 1; next }
    on && /"mean":/ { gsub(/[^0-9.e+-]/, "", $2); printf "%.0f\n", $2 * 1e9; exit }' "$f"
}
for s in "" -busy; do
  j="$caps/results$s.json"
  t=$(mean_of "$j" "tshark -T fields -e udp.payload")
  when="hyperfine, 1M datagrams"; [ -z "$s" ] || when="$when, one core busy"
  for cmd in "bitlens check" "bitlens decode --json"; do
    b=$(mean_of "$j" "$cmd")
    x=$(awk -v a="$b" -v b="$t" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.0fx faster", b / a }')
    row "tshark" "\`${cmd#bitlens }\`${s:+ (one core busy)}" "$b" "$t" "$when: $x"
  done
done

# The live proxy (benches/proxy.sh, issue 30 aim 5): closed-loop round trips as time per round
# trip (summed over the rounds), the burst's delivered share, instructions per datagram.
pr=target/bench-proxy/results.txt
rate_of() { # relay -> the sum of its closed-loop round trips/s over the rounds
  [ -f "$pr" ] || { echo -; return; }
  awk -v r="$1" '$1 == "round" && $3 == r && $4 == "closed:" { s += $5; n++ } END { if (n) print s / n; else print "-" }' "$pr"
}
rounds_of() { [ -f "$pr" ] && awk -v r="$1" '$1 == "round" && $3 == r && $4 == "closed:" { printf "%s%d", sep, $5; sep = ", " }' "$pr"; }
per_rt() { awk -v r="$1" 'BEGIN { if (r == "-" || r == 0) print "-"; else printf "%.0f", 1e9 / r }'; }
d=$(rate_of direct); so=$(rate_of socat); h=$(rate_of headless); dec=$(rate_of decoding)
row "no relay (direct)" "proxy --quiet, closed-loop round trip" "$(per_rt "$h")" "$(per_rt "$d")" \
  "benches/proxy.sh; round trips/s by round: bitlens $(rounds_of headless), direct $(rounds_of direct) (aim: at most 2, i.e. 0.5x the round trips)"
row "socat" "proxy --quiet, closed-loop round trip" "$(per_rt "$h")" "$(per_rt "$so")" \
  "same rounds; socat $(rounds_of socat) round trips/s (aim: below 1)"
row "bitlens proxy --quiet" "proxy decoding to NDJSON, closed-loop round trip" "$(per_rt "$dec")" "$(per_rt "$h")" \
  "same rounds; decoding $(rounds_of decoding) round trips/s (aim: at most 2)"
burst_of() { [ -f "$pr" ] && awk -v r="$1" '$1 == r && $2 == "burst:" { sub(/,$/, "", $7); print $3 " of " $5 " " $7 }' "$pr"; }
echo "| no relay (direct) | proxy --quiet, burst of ${BURST:-200000} datagrams | $(burst_of headless) | $(burst_of direct) | - | delivered to the server; socat $(burst_of socat), decoding $(burst_of decoding) (aim: 95% or more) |"
instr_of() { [ -f "$pr" ] && awk -v r="$1:" '$1 == "instr" && $2 == r { for (i = 1; i <= NF; i++) if ($i == "per") print $(i - 1) }' "$pr" | tail -1; }
ih=$(instr_of headless); is=$(instr_of socat); idec=$(instr_of decoding)
echo "| socat | proxy --quiet, instructions per forwarded datagram | ${ih:--} | ${is:--} | **$(ratio "${ih:--}" "${is:--}")** | callgrind, user space, all threads; decoding ${idec:--} (aim: at most 1) |"

# What decrypting costs (benches/netcode_cost.sh, issue 26): the same inner datagrams, in the
# clear and through netcode+demo with the key log.
nj=target/bench-netcode/results.json
ni=target/bench-netcode
instr() { [ -f "$ni/callgrind.$1" ] && sed -n 's/^totals: *\([0-9]*\).*/\1/p; s/^summary: *\([0-9]*\).*/\1/p' "$ni/callgrind.$1" | head -1; }
cpu_of() { # hyperfine JSON, command name -> user + system time in ns
  local f="$1"; [ -f "$f" ] || { echo -; return; }
  awk -v c="\"command\": \"$2\"," '
    index($0, c) { on = 1; next }
    on && /"user":/ { gsub(/[^0-9.e+-]/, "", $2); u = $2 }
    on && /"system":/ { gsub(/[^0-9.e+-]/, "", $2); printf "%.0f\n", (u + $2) * 1e9; exit }' "$f"
}
for c in "decode --json" check; do
  k=${c%% *}; [ "$c" = check ] || k=json
  a=$(instr "netcode-$k"); b=$(instr "clear-$k")
  n=$(mean_of "$nj" "netcode $c"); l=$(mean_of "$nj" "clear $c")
  row "bitlens, the same datagrams in the clear" "netcode \`$c\` with the key log" "$n" "$l" \
    "benches/netcode_cost.sh, hyperfine, 1M datagrams, wall; CPU (user + sys) $(fmt "$(cpu_of "$nj" "netcode $c")") / $(fmt "$(cpu_of "$nj" "clear $c")") = $(ratio "$(cpu_of "$nj" "netcode $c")" "$(cpu_of "$nj" "clear $c")"); callgrind (20k datagrams) ${a:--} / ${b:--} = $(ratio "${a:--}" "${b:--}") (aim: at most 1.5)"
done

echo
echo "bitlens alone:"
echo
echo "| workload | time | notes |"
echo "|---|---|---|"
for v in "serialize_rs_packet_49B/write" "serialize_rs_packet_49B/read" "serialize_rs_packet_49B/measure" \
         "serialize_rs_packet_49B/vary only (in write and measure)" \
         "serialize_rs_bitpacker_64KiB/write" "serialize_rs_bitpacker_64KiB/read"; do
  echo "| $v | $(fmt "$(est "$v")") | criterion, \`--bench throughput\` |"
done
for d in "demo_packets_mtu/write" "demo_packets_mtu/read" "demo_packets_mtu/trace" "demo_packets_mtu/measure"; do
  for f in "$crit/$d"/*/; do
    [ -d "$f" ] || continue
    v="$d/$(basename "$f")"
    echo "| $v | $(fmt "$(est "$v")") | criterion, \`--bench packets\` |"
  done
done
for d in read write trace; do
  a=$(est "demo_samples/${d}_schema"); b=$(est "demo_samples/${d}_compiled")
  echo "| schema interpreter / compiled, $d | $(fmt "$a") / $(fmt "$b") = **$(ratio "$a" "$b")** | criterion, \`--bench schema\` (aim: under 3) |"
done
