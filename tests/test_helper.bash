# SPDX-License-Identifier: MIT
# Shared helpers for rdmakit's bats suites (bats-core >= 1.5).
#
#   load test_helper
#   setup() { setup_rdmakit; }
#
# Environment:
#   RDMAKIT  the binary under test (default: ./rdmakit in the repository root;
#            set it to test another build, e.g. RDMAKIT=build-san/rdmakit)
#   CI       "true" in CI: a missing tool or root FAILS instead of skipping,
#            so a missing install step never hides behind a skip.

bats_require_minimum_version 1.5.0

# --- setup and preconditions ------------------------------------------------

# cd to the repository root, export RDMAKIT_ROOT and RDMAKIT (the binary,
# absolute), and load bats-support and bats-assert.
setup_rdmakit() {
	RDMAKIT_ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd) || return 1
	cd "$RDMAKIT_ROOT" || return 1
	: "${RDMAKIT:=$PWD/rdmakit}"
	[[ $RDMAKIT == /* ]] || RDMAKIT=$PWD/$RDMAKIT
	export RDMAKIT_ROOT RDMAKIT
	case ":${BATS_LIB_PATH:-}:" in
	*:/usr/lib/bats:*) ;;
	*) export BATS_LIB_PATH=${BATS_LIB_PATH:+$BATS_LIB_PATH:}/usr/lib/bats ;;
	esac
	bats_load_library bats-support
	bats_load_library bats-assert
	if [[ ! -x $RDMAKIT ]]; then
		fail "$RDMAKIT is not built; run 'make' first"
		return 1
	fi
}

# Fails (CI=true) or skips the current test; used by the require_* helpers.
_require_missing() {
	local ci_msg=$1 skip_msg=$2
	if [[ ${CI:-} == true ]]; then
		fail "$ci_msg"
		return 1
	fi
	skip "$skip_msg"
}

# require_tool NAME [REASON]: NAME must be on PATH.  Otherwise, in CI the
# test fails ("NAME is missing in CI; make deps should have installed it");
# elsewhere it is skipped ("NAME not installed (make deps installs it)").
require_tool() {
	local name=$1 reason=${2:-}
	command -v "$name" >/dev/null 2>&1 && return 0
	_require_missing \
		"$name is missing in CI; make deps should have installed it${reason:+ (needed: $reason)}" \
		"$name not installed (make deps installs it)${reason:+; needed: $reason}"
}

# require_file PATH PACKAGE [REASON]: like require_tool, for a file that a
# package installs (a library, a script to source).
require_file() {
	local path=$1 pkg=$2 reason=${3:-}
	[[ -e $path ]] && return 0
	_require_missing \
		"$path is missing in CI; make deps should have installed $pkg${reason:+ (needed: $reason)}" \
		"$path not found: $pkg not installed (make deps installs it)${reason:+; needed: $reason}"
}

# require_root [REASON]: skips with a visible reason when not root.  CI runs
# as root, so there a non-root run fails instead of skipping silently.
require_root() {
	local reason=${1:-}
	[[ $(id -u) -eq 0 ]] && return 0
	_require_missing \
		"not running as root in CI; CI runs the suites as root${reason:+ (needed: $reason)}" \
		"needs root${reason:+ ($reason)}; run the suite as root to include it"
}

# --- the binary ---------------------------------------------------------------

# The VERSION assigned in the Makefile.
makefile_version() {
	sed -n 's/^VERSION[[:space:]]*:\{0,1\}=[[:space:]]*\([^[:space:]]*\).*/\1/p' \
		"$RDMAKIT_ROOT/Makefile" | head -n 1
}

# rdmakit_commands [all|available|unavailable]: command names from
# 'rdmakit -j help', one a line, in table order.
rdmakit_commands() {
	local which=${1:-all}
	"$RDMAKIT" -j help | python3 -c '
import json, sys
which = sys.argv[1]
for c in json.load(sys.stdin)["results"]:
    if which == "all" or c["available"] == (which == "available"):
        print(c["name"])
' "$which"
}

# rdmakit_summary NAME: the command's summary from 'rdmakit -j help'.
rdmakit_summary() {
	"$RDMAKIT" -j help | python3 -c '
import json, sys
for c in json.load(sys.stdin)["results"]:
    if c["name"] == sys.argv[1]:
        print(c["summary"])
' "$1"
}

# global_options: the options in the "Global options:" part of 'rdmakit
# help' ("-j", "--json", ...), one a line, sorted.
global_options() {
	"$RDMAKIT" help | awk '/^Global options:/ { on = 1; next } on && /^$/ { exit } on' |
		sed 's/^ *//; s/  .*//' | tr ',' '\n' | tr -d ' ' | grep -E '^--?[A-Za-z]' | sort -u
}

# help_long_options CMD: the long options listed in the Options section of
# 'rdmakit CMD --help', one a line ("--json").
help_long_options() {
	"$RDMAKIT" "$1" --help |
		awk '/^Options:/ { on = 1; next } on && /^$/ { on = 0 } on' |
		sed -n 's/^ *\(-[A-Za-z0-9], \)\{0,1\}\(--[A-Za-z][A-Za-z0-9_-]*\).*/\2/p'
}

# json_eval CODE [ARG...]: runs Python CODE with d = the JSON document in
# $output (set by 'run') and the ARGs as sys.argv[2:]; CODE prints what the
# test compares, or fails with an assert.
json_eval() {
	python3 -c "
import json, sys
d = json.loads(sys.argv[1])
$1" "$output" "${@:2}"
}

# assert_one_line_error STATUS [SUBSTRING]: after 'run --separate-stderr',
# the exit status is STATUS, stdout is empty and stderr is exactly one
# non-empty line (containing SUBSTRING when given).
assert_one_line_error() {
	local want=$1 sub=${2:-}
	if [[ $status -ne $want ]]; then
		fail "exit status $status, expected $want; stderr: $stderr"
		return 1
	fi
	if [[ -n $output ]]; then
		fail "expected nothing on stdout, got: $output"
		return 1
	fi
	if [[ -z $stderr || $stderr == *$'\n'* ]]; then
		fail "expected exactly one line on stderr, got ${#stderr_lines[@]}: $stderr"
		return 1
	fi
	if [[ -n $sub && $stderr != *"$sub"* ]]; then
		fail "stderr does not contain '$sub': $stderr"
		return 1
	fi
}

# --- completions ------------------------------------------------------------------

# complete_bash [--bash-completion] LINE [CODE]: what completions/rdmakit.bash
# offers (COMPREPLY, one a line) for the cursor at the end of LINE, in a
# fresh bash; with --bash-completion the bash-completion library is loaded
# first.  LINE is split on blanks, and '=' is its own word as bash does.
# CODE, when given, is run after sourcing (to redefine a helper).  Fails
# when the completion function writes to stderr or is not registered.
complete_bash() {
	local lib=''
	if [[ $1 == --bash-completion ]]; then
		lib=/usr/share/bash-completion/bash_completion
		shift
	fi
	bash --norc --noprofile -c '
		lib=$1 file=$2 line=$3
		if [[ -n $lib ]]; then source "$lib" || exit 10; fi
		source "$file" || exit 11
		spec=$(complete -p rdmakit 2>/dev/null) || { echo "rdmakit has no completion" >&2; exit 12; }
		fn=${spec##*-F }; fn=${fn%% *}
		COMP_WORDS=()
		set -f
		for w in $line; do
			while [[ $w == *=* ]]; do
				[[ -n ${w%%=*} ]] && COMP_WORDS+=("${w%%=*}")
				COMP_WORDS+=("=")
				w=${w#*=}
			done
			[[ -n $w ]] && COMP_WORDS+=("$w")
		done
		set +f
		[[ $line == *[[:space:]] || $line == *= ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$line COMP_POINT=${#line} COMP_TYPE=9 COMP_KEY=9
		# Tests may redefine helpers (e.g. _rdmakit_option_value) here.
		eval "${4:-}"
		"$fn" rdmakit "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>"$5" || true
		if [[ -s $5 ]]; then echo "completion wrote to stderr: $(cat "$5")" >&2; exit 13; fi
		((${#COMPREPLY[@]} == 0)) || printf "%s\n" "${COMPREPLY[@]}"
	' complete_bash "$lib" "$RDMAKIT_ROOT/completions/rdmakit.bash" "$1" "${2:-}" \
		"${BATS_TEST_TMPDIR:-/tmp}/complete_bash.err"
}

# The zsh program behind complete_zsh: drives an interactive zsh on a pty,
# presses TAB after the line and prints every match the completion system
# adds (compadd is wrapped to print them between \x01 marks; the marks are
# built at run time so the terminal's echo of the typed code never matches).
_zsh_complete_program() {
	cat <<'ZSH'
setopt extendedglob
zmodload zsh/zpty zsh/datetime || exit 2
fdir=$1 line=$2
zpty z zsh -f -i
zpty -w z "PROMPT= RPROMPT= PS2=; fpath=(${(q)fdir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'zstyle ":completion:*" list-grouped false; zstyle ":completion:*" insert-tab false'
zpty -w z 'bindkey "^I" complete-word'
zpty -w z '__post() { print -rn -- $'"'"'\x02'"'"'; exit }; comppostfuncs=( __post )'
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a __h; builtin compadd -A __h "$@"; local m; for m in $__h; do print -r -- $'"'"'\x01'"'"'$m$'"'"'\x01'"'"'; done; }'
zpty -w -n z "$line"$'\t'
out= deadline=$(( EPOCHREALTIME + 20 ))
while (( EPOCHREALTIME < deadline )); do
	if zpty -r -t z chunk; then
		out+=$chunk
		[[ $out == *$'\x02'* ]] && break
	else
		sleep 0.02
	fi
done
zpty -d z
[[ $out == *$'\x02'* ]] || { print -u2 "zsh completion did not finish within 20 s"; exit 3; }
for l in ${(f)out//$'\r'/}; do
	[[ $l == (#b)*$'\x01'(*)$'\x01'* ]] && print -r -- $match[1]
done
exit 0
ZSH
}

# complete_zsh LINE: the matches completions/_rdmakit offers (one a line)
# for the cursor at the end of LINE, from zsh's real completion system.
complete_zsh() {
	zsh -f -c "$(_zsh_complete_program)" complete_zsh "$RDMAKIT_ROOT/completions" "$1"
}

# completion_arm_words FILE CMD: the long options in CMD's arm of the case
# statement in a completion file (an arm is a line "CMD)" or "(a|CMD|b)" up
# to its ";;"), one a line, sorted and unique.  Prints nothing and returns 1
# when CMD has no arm.
completion_arm_words() {
	awk -v cmd="$2" '
		!on && /^[ \t]*\(?[a-z][a-z0-9|_-]*\)[ \t]*$/ {
			label = $0
			gsub(/[ \t()]/, "", label)
			n = split(label, names, "|")
			for (i = 1; i <= n; i++)
				if (names[i] == cmd) { on = 1; found = 1 }
			next
		}
		on && /;;/ { on = 0 }
		on { print }
		END { exit found ? 0 : 1 }
	' "$1" >"${BATS_TEST_TMPDIR:-/tmp}/arm.txt" || return 1
	grep -oE -- '--[A-Za-z][A-Za-z0-9_-]*' "${BATS_TEST_TMPDIR:-/tmp}/arm.txt" | sort -u
}

# zsh_command_list: the "name:description" entries of _rdmakit_commands in
# completions/_rdmakit, one a line.
zsh_command_list() {
	awk '/^_rdmakit_commands\(\)/ { f = 1 } f && /commands=\(/ { on = 1; next }
	     on && /^[ \t]*\)/ { exit } on' "$RDMAKIT_ROOT/completions/_rdmakit" |
		sed -n "s/^[[:space:]]*'\\(.*\\)'[[:space:]]*\$/\\1/p"
}

# --- man pages ------------------------------------------------------------------

# man_text FILE: the page as plain ASCII text, on very long lines and without
# hyphenation, so that phrases and options are never split.  Rendered once
# per test (cached in BATS_TEST_TMPDIR).
man_text() {
	local cache=''
	if [[ -n ${BATS_TEST_TMPDIR:-} ]]; then
		cache=$BATS_TEST_TMPDIR/man-text.${1//\//_}
		if [[ -f $cache ]]; then
			cat "$cache"
			return
		fi
	fi
	if [[ -n $cache ]]; then
		groff -man -Tascii -rLL=400n -rHY=0 -P-cbou "$1" 2>/dev/null >"$cache" &&
			cat "$cache"
	else
		groff -man -Tascii -rLL=400n -rHY=0 -P-cbou "$1" 2>/dev/null
	fi
}

# man_entry FILE SECTION TAG: one tagged paragraph (.TP TAG) of SECTION with
# the paragraphs indented under it, joined into one line.
man_entry() {
	man_text "$1" | python3 -c '
import re, sys
section, tag = sys.argv[1], sys.argv[2]
lines = sys.stdin.read().splitlines()
out, in_sec, in_entry = [], False, False
for l in lines:
    if re.match(r"\S", l):              # a section heading
        if in_sec:
            break
        in_sec = l.strip() == section
        continue
    if not in_sec:
        continue
    m = re.match(r"^( +)(\S+)", l)
    if m and len(m.group(1)) == 7:       # a tag, or body text at the margin
        if in_entry:
            break
        in_entry = m.group(2) == tag
    if in_entry:
        out.append(l)
print(" ".join(" ".join(out).split()))
' "$2" "$3"
}

# man_page_for CMD: man/rdmakit-CMD.1 when it exists, else man/rdmakit.1.
man_page_for() {
	if [[ -f $RDMAKIT_ROOT/man/rdmakit-$1.1 ]]; then
		echo "$RDMAKIT_ROOT/man/rdmakit-$1.1"
	else
		echo "$RDMAKIT_ROOT/man/rdmakit.1"
	fi
}

# has_word TEXT WORD: WORD occurs in TEXT not as part of a longer option or
# name ("--json" is not found in "--json-lines").
has_word() {
	local rest=$1 word=$2 before after
	[[ -n $word ]] || return 1
	while [[ $rest == *"$word"* ]]; do
		before=${rest%%"$word"*}
		after=${rest#*"$word"}
		if [[ ${before: -1} != [A-Za-z0-9_-] && ${after:0:1} != [A-Za-z0-9_-] ]]; then
			return 0
		fi
		rest=$after
	done
	return 1
}

# pcapgen_fixtures DIR: writes the pcapgen capture fixtures into DIR
# (PCAPGEN, else build/ or build-san/'s tests/tools/pcapgen); for setup_file.
pcapgen_fixtures() {
	local root pcapgen
	root=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	pcapgen=${PCAPGEN:-}
	if [[ -z $pcapgen ]]; then
		for pcapgen in "$root/build/tests/tools/pcapgen" "$root/build-san/tests/tools/pcapgen"; do
			[[ -x $pcapgen ]] && break
		done
	fi
	if [[ ! -x $pcapgen ]]; then
		echo "# $pcapgen is not built: run 'make unit-bins'" >&3
		return 1
	fi
	export PCAPGEN=$pcapgen
	"$pcapgen" "$1"
}
