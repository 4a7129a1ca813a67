#!/usr/bin/env bash
# clibench.sh times cmd/robotstxt against tools/peers/temotocli (the same
# "check" contract, reading the file with temoto/robotstxt as Colly does) as
# whole processes: `X check [-agent googlebot] FILE < urls`, with hyperfine.
#
#   tools/peers/clibench.sh               # from anywhere; needs go, hyperfine, jq
#
# Files (the three the dialect benchmarks use, see dialect/bench_test.go):
#   en.wikipedia.org  egonkm__en.wikipedia.org.txt   27 KB
#   github.com        protego__github.com.txt        31 KB, ~1,200 wildcard rules
#   docs.oracle.com   protego__docs.oracle.com.txt  853 KB (we cut at 500 KiB)
# URL sets:
#   all   every file against all 5,000 paths of urls.txt (the issue's case)
#   own   only the paths urls_by_file.tsv derived from that file (17-23)
#   none  an empty stdin: start-up plus reading the file
# Agents: googlebot, and none ("*" groups only).
# Each run is `sh -c 'X check ... FILE < urls'` (hyperfine 1.15 has no
# --input); hyperfine subtracts its measured shell start-up from every time.
# The verdict column compares the ratio (temoto median / ours) of the "all"
# rows with the issue's bound: >= 1 for wikipedia, >= 5 for github and oracle.
#
# Environment: CORPUS (default <repo>/../shared/corpus), RUNS (30), WARMUP (3),
# ROUNDS (2: hyperfine is run ROUNDS times per case with the command order
# swapped each time, and the median is taken over all RUNS*ROUNDS times of a
# command), SETS ("all own none"), EXTRA=1 adds the corpus's other copies of
# the three sites (egonkm github/oracle, protego wikipedia), KEEP=1 keeps the
# temporary directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
corpus=${CORPUS:-$root/../shared/corpus}
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
ROUNDS=${ROUNDS:-2}
SETS=${SETS:-all own none}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

for tool in hyperfine jq "$GO"; do
	command -v "$tool" >/dev/null || { echo "clibench: $tool not found" >&2; exit 2; }
done
[[ -f $corpus/urls.txt && -f $corpus/urls_by_file.tsv && -d $corpus/robots ]] ||
	{ echo "clibench: no corpus at $corpus" >&2; exit 2; }

tmp=$(mktemp -d)
if [[ ${KEEP:-} == 1 ]]; then
	echo "keeping $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi

# Build both binaries the same way (default flags, as `go build` gives them).
# temotocli belongs to the tools module (tools/go.mod), beside the root.
(cd "$root" && "$GO" build -o "$tmp/robotstxt" ./cmd/robotstxt &&
	cd tools && "$GO" build -o "$tmp/temotocli" ./peers/temotocli)
ours=$tmp/robotstxt
peer=$tmp/temotocli

files=(egonkm__en.wikipedia.org.txt protego__github.com.txt protego__docs.oracle.com.txt)
if [[ ${EXTRA:-} == 1 ]]; then
	files+=(protego__en.wikipedia.org.txt egonkm__github.com.txt egonkm__docs.oracle.com.txt)
fi

# need FILE prints the speed-up the issue asks for on FILE's site.
need() {
	case $1 in
	*wikipedia*) echo 1 ;;
	*github* | *oracle*) echo 5 ;;
	esac
}

echo "== machine"
echo "nproc: $(nproc); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$("$GO" version); $(hyperfine --version)"
echo
echo "== binaries"
printf '%-28s %s packages (go list -deps)\n' \
	./cmd/robotstxt "$(cd "$root" && "$GO" list -deps ./cmd/robotstxt | wc -l)" \
	./tools/peers/temotocli "$(cd "$root/tools" && "$GO" list -deps ./peers/temotocli | wc -l)"
printf '%-28s %s bytes\n' robotstxt "$(stat -c %s "$ours")" temotocli "$(stat -c %s "$peer")"
echo

# URL sets.
cp "$corpus/urls.txt" "$tmp/urls.all"
: >"$tmp/urls.none"
for f in "${files[@]}"; do
	[[ -f $corpus/robots/$f ]] || { echo "clibench: missing $corpus/robots/$f" >&2; exit 2; }
	awk -F'\t' -v f="$f" '$1 == f { print $3 }' "$corpus/urls_by_file.tsv" >"$tmp/urls.own.$f"
done
urls_for() { # SET FILE
	if [[ $1 == own ]]; then echo "$tmp/urls.own.$2"; else echo "$tmp/urls.$1"; fi
}

agent_args() { # AGENT
	if [[ $1 == '*' ]]; then echo ""; else echo "-agent $1"; fi
}

echo "== same input, same output shape? (verdicts may differ: different readers)"
printf '%-32s %-5s %-9s %6s %6s %6s %9s\n' file set agent urls ours temoto differ
for f in "${files[@]}"; do
	for set in all own; do
		for agent in googlebot '*'; do
			u=$(urls_for "$set" "$f")
			a=$(agent_args "$agent")
			# shellcheck disable=SC2086 # $a is zero or two words
			"$ours" check $a "$corpus/robots/$f" <"$u" >"$tmp/out.ours" || [[ $? == 1 ]]
			# shellcheck disable=SC2086
			"$peer" check $a "$corpus/robots/$f" <"$u" >"$tmp/out.peer" || [[ $? == 1 ]]
			n=$(grep -cv '^[[:space:]]*$' "$u" || true)
			lo=$(wc -l <"$tmp/out.ours")
			lp=$(wc -l <"$tmp/out.peer")
			if [[ $lo != "$n" || $lp != "$n" ]] || ! cmp -s <(cut -f2 "$tmp/out.ours") <(cut -f2 "$tmp/out.peer"); then
				echo "clibench: $f $set $agent: outputs do not line up ($n URLs, $lo and $lp lines)" >&2
				exit 1
			fi
			d=$(paste <(cut -f1 "$tmp/out.ours") <(cut -f1 "$tmp/out.peer") | awk -F'\t' '$1 != $2' | wc -l)
			printf '%-32s %-5s %-9s %6d %6d %6d %9d\n' "$f" "$set" "$agent" "$n" "$lo" "$lp" "$d"
		done
	done
done
echo

# median NAME JSON...: the median (seconds) of all the times of command NAME.
median() {
	local name=$1
	shift
	jq -s --arg n "$name" '[.[].results[] | select(.command == $n) | .times[]] | sort |
		if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end' "$@"
}

# bench ID FILE URLS ARGS: times both CLIs, prints medians in ms and the ratio.
bench() {
	local id=$1 file=$2 urls=$3 args=$4 r
	local c_ours="$ours check $args $file < $urls"
	local c_peer="$peer check $args $file < $urls"
	for ((r = 1; r <= ROUNDS; r++)); do
		local order=(-n ours "$c_ours" -n temoto "$c_peer")
		if ((r % 2 == 0)); then order=(-n temoto "$c_peer" -n ours "$c_ours"); fi
		hyperfine -i --style none -w "$WARMUP" -r "$RUNS" --export-json "$tmp/$id.$r.json" "${order[@]}" >/dev/null 2>&1
	done
	local mo mp
	mo=$(median ours "$tmp/$id".*.json)
	mp=$(median temoto "$tmp/$id".*.json)
	awk -v o="$mo" -v p="$mp" 'BEGIN { printf "%9.2f %9.2f %7.2f", o * 1000, p * 1000, p / o }'
}

echo "== whole-process medians, ms (hyperfine via sh -c with its shell start-up subtracted;"
echo "   $((RUNS * ROUNDS)) runs per command: $ROUNDS rounds of $RUNS after $WARMUP warm-up, order swapped each round)"
printf '%-32s %-5s %5s %-9s %9s %9s %7s %s\n' file set urls agent ours temoto ratio verdict
: >"$tmp/empty.txt"
for agent in googlebot '*'; do
	printf '%-32s %-5s %5s %-9s %s\n' "(empty robots.txt)" none 0 "$agent" \
		"$(bench "startup.$agent" "$tmp/empty.txt" "$tmp/urls.none" "$(agent_args "$agent")")"
done
for set in $SETS; do
	for f in "${files[@]}"; do
		for agent in googlebot '*'; do
			u=$(urls_for "$set" "$f")
			n=$(grep -cv '^[[:space:]]*$' "$u" || true)
			line=$(bench "$set.$f.$agent" "$corpus/robots/$f" "$u" "$(agent_args "$agent")")
			verdict=""
			if [[ $set == all ]]; then
				want=$(need "$f")
				ratio=$(awk '{ print $3 }' <<<"$line")
				if awk -v r="$ratio" -v w="$want" 'BEGIN { exit !(r >= w) }'; then
					verdict="ok (>= ${want}x)"
				else
					verdict="FAILS (< ${want}x)"
				fi
			fi
			printf '%-32s %-5s %5d %-9s %s %s\n' "$f" "$set" "$n" "$agent" "$line" "$verdict"
		done
	done
done
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
