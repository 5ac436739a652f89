#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The command line as a whole: help, version, JSON envelope, errors and exit
# codes, shell completions, and agreement between the binary, the man pages
# and the completion files (the bpftool/git model).
#
# Everything that depends on which commands exist is derived from
# 'rdmakit -j help', so these tests keep working, and keep checking, as
# commands land.

bats_require_minimum_version 1.5.0

load test_helper

setup() {
	setup_rdmakit
}

# --- help ---------------------------------------------------------------------------

@test "no command: exit 2 with the overview on stdout" {
	run --separate-stderr "$RDMAKIT"
	assert_equal "$status" 2
	assert_equal "$stderr" ""
	assert_line --index 0 --regexp '^Usage: rdmakit '
	overview=$output
	run "$RDMAKIT" help
	assert_success
	assert_equal "$overview" "$output"
}

@test "help, -h and --help exit 0 with the same overview, listing every command" {
	run --separate-stderr "$RDMAKIT" help
	assert_success
	assert_equal "$stderr" ""
	assert_line --index 0 --regexp '^Usage: rdmakit '
	overview=$output
	for cmd in $(rdmakit_commands); do
		assert_line --regexp "^  $cmd +[^ ]"
	done
	for flag in -h --help; do
		run --separate-stderr "$RDMAKIT" "$flag"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$output" "$overview"
	done
}

@test "help CMD prints exactly what CMD --help prints, for every available command" {
	for cmd in $(rdmakit_commands available); do
		run --separate-stderr "$RDMAKIT" "$cmd" --help
		assert_success
		assert_equal "$stderr" ""
		assert_line --index 0 --regexp "^Usage: rdmakit $cmd( |\$)"
		assert_line 'Options:'
		own=$output
		run --separate-stderr "$RDMAKIT" help "$cmd"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$output" "$own"
	done
}

@test "help with two operands is a usage error" {
	run --separate-stderr "$RDMAKIT" help version help
	assert_one_line_error 2 'rdmakit help: '
}

@test "help for an unknown command is a usage error naming it" {
	run --separate-stderr "$RDMAKIT" help foo
	assert_one_line_error 2 "'foo' is not a command"
}

@test "-j help lists every command with name, summary and available, as the overview does" {
	run --separate-stderr "$RDMAKIT" -j help
	assert_success
	assert_equal "$stderr" ""
	# name/summary/available with the right types, names unique and not empty.
	run json_eval '
rows = d["results"]
assert rows, "no commands"
names = [r["name"] for r in rows]
assert len(set(names)) == len(names), "duplicate names"
for r in rows:
    assert set(r) == {"name", "summary", "available"}, r
    assert isinstance(r["name"], str) and r["name"], r
    assert isinstance(r["summary"], str) and r["summary"], r
    assert isinstance(r["available"], bool), r
    print(r["name"], r["summary"] + ("" if r["available"] else " (not available yet)"))
'
	assert_success
	from_json=$output
	# The same table, in the same order, in the text overview.
	run "$RDMAKIT" help
	text=$(awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on' <<<"$output" |
		sed 's/^  \([^ ]*\)  */\1 /')
	assert_equal "$text" "$from_json"
	# help and version are always built.
	available=$(rdmakit_commands available)
	grep -qx help <<<"$available" || fail "help is not available"
	grep -qx version <<<"$available" || fail "version is not available"
}

# --- version ------------------------------------------------------------------------

@test "version prints the VERSION of the Makefile" {
	want=$(makefile_version)
	[[ -n $want ]]
	run --separate-stderr "$RDMAKIT" version
	assert_success
	assert_equal "$stderr" ""
	assert_line --index 0 "rdmakit $want"
}

@test "-V and --version print what version prints" {
	run "$RDMAKIT" version
	assert_success
	want=$output
	for flag in -V --version; do
		run --separate-stderr "$RDMAKIT" "$flag"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$output" "$want"
	done
}

# Checks $output is one JSON document with exactly the envelope keys, for
# command $1, and no errors.
assert_envelope() {
	run json_eval '
assert isinstance(d, dict), "not an object"
assert set(d) == {"rdmakit", "command", "params", "results", "errors"}, sorted(d)
assert d["rdmakit"] == sys.argv[2], d["rdmakit"]
assert d["command"] == sys.argv[3], d["command"]
assert isinstance(d["params"], dict), d["params"]
assert isinstance(d["results"], list) and d["results"], d["results"]
assert all(isinstance(r, dict) for r in d["results"]), d["results"]
assert d["errors"] == [], d["errors"]
' "$(makefile_version)" "$1"
	assert_success
}

@test "-j version prints one line of JSON with exactly the envelope keys" {
	version=$(makefile_version)
	for args in "-j version" "--json version" "version -j" "version --json"; do
		run --separate-stderr "$RDMAKIT" $args
		assert_success
		assert_equal "$stderr" ""
		assert_equal "${#lines[@]}" 1
		doc=$output
		assert_envelope version
		output=$doc
		run json_eval 'print(d["results"][0]["version"])'
		assert_output "$version"
	done
}

@test "--pretty version prints indented JSON, the same document as -j version" {
	run "$RDMAKIT" -j version
	assert_success
	compact=$output
	for args in "--pretty version" "version --pretty" "-j --pretty version"; do
		run --separate-stderr "$RDMAKIT" $args
		assert_success
		assert_equal "$stderr" ""
		[[ ${#lines[@]} -gt 5 ]]
		assert_line --regexp '^  "results": \['
		doc=$output
		assert_envelope version
		output=$doc
		run json_eval 'print(json.dumps(d, sort_keys=True))'
		pretty_norm=$output
		output=$compact
		run json_eval 'print(json.dumps(d, sort_keys=True))'
		assert_equal "$pretty_norm" "$output"
	done
}

@test "-j help prints a JSON document with exactly the envelope keys" {
	run --separate-stderr "$RDMAKIT" -j help
	assert_success
	assert_equal "$stderr" ""
	assert_equal "${#lines[@]}" 1
	assert_envelope help
}

@test "version with an operand is a usage error naming it" {
	run --separate-stderr "$RDMAKIT" version extra
	assert_one_line_error 2 "'extra'"
}

# --- errors -------------------------------------------------------------------------

@test "an unknown command is a usage error with the exact message" {
	run --separate-stderr "$RDMAKIT" foo
	assert_one_line_error 2
	assert_equal "$stderr" "rdmakit: 'foo' is not a command; see 'rdmakit help'"
	run --separate-stderr "$RDMAKIT" -j foo
	assert_one_line_error 2
	assert_equal "$stderr" "rdmakit: 'foo' is not a command; see 'rdmakit help'"
}

@test "an unknown global option is a usage error naming it" {
	for opt in --bogus -x; do
		run --separate-stderr "$RDMAKIT" "$opt" version
		assert_one_line_error 2 "'$opt'"
		[[ $stderr == rdmakit:* ]]
	done
}

@test "an unknown option of every available command is a usage error naming it" {
	for cmd in $(rdmakit_commands available); do
		run --separate-stderr "$RDMAKIT" "$cmd" --no-such-option
		assert_one_line_error 2 "'--no-such-option'"
		[[ $stderr == "rdmakit $cmd: "* ]] || fail "not prefixed 'rdmakit $cmd: ': $stderr"
		# A short option letter the command does not have.
		used=$("$RDMAKIT" "$cmd" --help | sed -n 's/^ *-\([A-Za-z0-9]\), --.*/\1/p' | tr -d '\n')
		letter=''
		for l in Z Q X Y z q x y; do
			[[ $used == *$l* ]] || { letter=$l; break; }
		done
		[[ -n $letter ]]
		run --separate-stderr "$RDMAKIT" "$cmd" "-$letter"
		assert_one_line_error 2 "'-$letter'"
	done
}

@test "an option of an available command without its value is a usage error naming it" {
	checked=0
	for cmd in $(rdmakit_commands available); do
		# "  -s, --size BYTES   ..." or "      --size BYTES   ..."
		opts=$("$RDMAKIT" "$cmd" --help | awk '/^Options:/ { on = 1; next } on && /^$/ { on = 0 } on' |
			sed -n 's/^ *\(-[A-Za-z0-9], \)\{0,1\}\(--[A-Za-z][A-Za-z0-9_-]*\) [A-Z][A-Z0-9_|.-]*  .*/\2/p')
		for opt in $opts; do
			run --separate-stderr "$RDMAKIT" "$cmd" "$opt"
			assert_one_line_error 2 "'$opt'"
			checked=$((checked + 1))
		done
	done
	[[ $checked -gt 0 ]] || skip "no available command has an option that takes a value yet"
}

@test "commands not built yet exit 3 saying so, with or without --help" {
	unavailable=$(rdmakit_commands unavailable)
	[[ -n $unavailable ]] || skip "every command in the table is built"
	for cmd in $unavailable; do
		for args in "$cmd" "$cmd --help" "-j $cmd" "help $cmd"; do
			run --separate-stderr "$RDMAKIT" $args
			assert_one_line_error 3 'not available yet'
			[[ $stderr == "rdmakit $cmd: "* ]] || fail "not prefixed 'rdmakit $cmd: ': $stderr"
		done
	done
}

# --- bash completion -------------------------------------------------------------

# The bash setups to test: plain bash, and bash with bash-completion loaded
# when that is installed (the test below makes its absence visible).
bash_modes() {
	echo plain
	[[ -e /usr/share/bash-completion/bash_completion ]] && echo --bash-completion
	return 0
}

# complete_in MODE LINE: complete_bash in one of the bash_modes.
complete_in() {
	if [[ $1 == plain ]]; then
		complete_bash "${@:2}"
	else
		complete_bash "$@"
	fi
}

@test "bash-completion is installed, so the completion is also tested with it" {
	require_file /usr/share/bash-completion/bash_completion bash-completion \
		"the completion tests with bash-completion loaded"
}

@test "bash completion: rdmakit b<TAB> offers bw" {
	for mode in $(bash_modes); do
		run --separate-stderr complete_in "$mode" 'rdmakit b'
		assert_success
		assert_output 'bw'
	done
}

@test "bash completion: rdmakit <TAB> offers exactly the commands of rdmakit -j help" {
	want=$(rdmakit_commands | sort)
	[[ -n $want ]]
	for mode in $(bash_modes); do
		for line in 'rdmakit ' 'rdmakit -j ' 'rdmakit --pretty -j '; do
			run --separate-stderr complete_in "$mode" "$line"
			assert_success
			assert_equal "$(sort <<<"$output")" "$want"
		done
	done
}

@test "bash completion: rdmakit help ca<TAB> offers capture, and help takes one command" {
	for mode in $(bash_modes); do
		run --separate-stderr complete_in "$mode" 'rdmakit help ca'
		assert_success
		assert_output 'capture'
		run --separate-stderr complete_in "$mode" 'rdmakit help '
		assert_success
		assert_equal "$(sort <<<"$output")" "$(rdmakit_commands | sort)"
		run --separate-stderr complete_in "$mode" 'rdmakit help version '
		assert_success
		assert_output ''
	done
}

@test "bash completion: rdmakit version --<TAB> offers --json" {
	for mode in $(bash_modes); do
		run --separate-stderr complete_in "$mode" 'rdmakit version --'
		assert_success
		assert_line -- '--json'
		run --separate-stderr complete_in "$mode" 'rdmakit version --js'
		assert_success
		assert_output -- '--json'
	done
}

@test "bash completion: rdmakit -<TAB> offers the global options of rdmakit help" {
	want=$(global_options)
	[[ $want == *--json* ]]
	for mode in $(bash_modes); do
		run --separate-stderr complete_in "$mode" 'rdmakit -'
		assert_success
		assert_equal "$(sort <<<"$output")" "$want"
	done
}

@test "bash completion: an unknown command gets nothing and no error" {
	for mode in $(bash_modes); do
		run --separate-stderr complete_in "$mode" 'rdmakit foo --'
		assert_success
		assert_output ''
		assert_equal "$stderr" ""
	done
}

@test "bash completion: option values are files, directories, interfaces or words" {
	cd "$BATS_TEST_TMPDIR"
	mkdir traces.d
	touch trace.pcap
	# The structure new commands fill in; this table is the test's own.
	table='_rdmakit_option_value() {
		case $1:$2 in
		capture:-r|capture:--read) echo file ;;
		capture:--dir) echo dir ;;
		capture:-i|capture:--interface) echo iface ;;
		capture:--engine) echo "words auto verbs soft" ;;
		capture:--count) echo value ;;
		*) return 1 ;;
		esac
	}'
	ifaces=$(ls /sys/class/net | sort)
	for mode in $(bash_modes); do
		run --separate-stderr complete_in "$mode" 'rdmakit capture -r tr' "$table"
		assert_success
		assert_line 'trace.pcap'
		refute_line 'rdmakit'
		run --separate-stderr complete_in "$mode" 'rdmakit capture --read=tr' "$table"
		assert_success
		assert_line 'trace.pcap'
		run --separate-stderr complete_in "$mode" 'rdmakit capture --dir tr' "$table"
		assert_success
		assert_line --regexp '^traces\.d/?$'
		refute_line 'trace.pcap'
		run --separate-stderr complete_in "$mode" 'rdmakit capture --engine s' "$table"
		assert_success
		assert_output 'soft'
		run --separate-stderr complete_in "$mode" 'rdmakit capture --count ' "$table"
		assert_success
		assert_output ''
		if [[ -n $ifaces ]]; then
			run --separate-stderr complete_in "$mode" 'rdmakit capture -i ' "$table"
			assert_success
			assert_equal "$(sort <<<"$output")" "$ifaces"
		fi
	done
}

# --- zsh completion ---------------------------------------------------------------

@test "zsh completion parses (zsh -n)" {
	require_tool zsh "checking completions/_rdmakit"
	run zsh -n "$RDMAKIT_ROOT/completions/_rdmakit"
	assert_success
	assert_output ''
}

@test "zsh completion: commands, help CMD and version options from zsh's completion system" {
	require_tool zsh "running completions/_rdmakit"
	run complete_zsh 'rdmakit b'
	assert_success
	assert_output 'bw'
	run complete_zsh 'rdmakit '
	assert_success
	assert_equal "$(sort <<<"$output")" "$(rdmakit_commands | sort)"
	run complete_zsh 'rdmakit help ca'
	assert_success
	assert_output 'capture'
	run complete_zsh 'rdmakit version --'
	assert_success
	assert_line -- '--json'
}

@test "zsh completion lists every command of the table with its summary, in order" {
	want=$("$RDMAKIT" -j help | python3 -c '
import json, sys
for c in json.load(sys.stdin)["results"]:
    print(c["name"] + ":" + c["summary"] + ("" if c["available"] else " (not available yet)"))
')
	run zsh_command_list
	assert_success
	assert_equal "$output" "$want"
}

# --- docs agreement: binary, man pages, completions ----------------------------

@test "every command of the table has its words in both completion files" {
	# bash: the command list is exactly the table.
	run bash -c 'source "$1" && printf "%s\n" $_rdmakit_commands' _ \
		"$RDMAKIT_ROOT/completions/rdmakit.bash"
	assert_success
	assert_equal "$output" "$(rdmakit_commands)"
	# Every command has an arm, with at least --help, in both files.
	for cmd in $(rdmakit_commands); do
		for f in completions/rdmakit.bash completions/_rdmakit; do
			run completion_arm_words "$f" "$cmd"
			assert_success
			assert_line -- '--help'
		done
	done
}

@test "bash completion of CMD --<TAB> is exactly CMD --help's long options, for every command" {
	for cmd in $(rdmakit_commands available); do
		want=$(help_long_options "$cmd" | sort -u)
		[[ $want == *--help* ]] || fail "no options parsed from 'rdmakit $cmd --help'"
		for mode in $(bash_modes); do
			run --separate-stderr complete_in "$mode" "rdmakit $cmd --"
			assert_success
			assert_equal "$(sort -u <<<"$output")" "$want"
		done
	done
	for cmd in $(rdmakit_commands unavailable); do
		run --separate-stderr complete_in plain "rdmakit $cmd --"
		assert_success
		assert_output -- '--help'
	done
}

@test "both completion files hold exactly CMD --help's long options in CMD's arm" {
	for cmd in $(rdmakit_commands available); do
		want=$(help_long_options "$cmd" | sort -u)
		[[ $want == *--help* ]] || fail "no options parsed from 'rdmakit $cmd --help'"
		for f in completions/rdmakit.bash completions/_rdmakit; do
			run completion_arm_words "$f" "$cmd"
			assert_success
			assert_equal "$output" "$want"
		done
	done
	# Not built yet: --help only, until the command lands with its options.
	for cmd in $(rdmakit_commands unavailable); do
		for f in completions/rdmakit.bash completions/_rdmakit; do
			run completion_arm_words "$f" "$cmd"
			assert_success
			assert_output -- '--help'
		done
	done
}

@test "zsh completion of CMD --<TAB> offers CMD --help's long options, for every command" {
	require_tool zsh "running completions/_rdmakit"
	for cmd in $(rdmakit_commands available); do
		want=$(help_long_options "$cmd" | sort -u)
		run complete_zsh "rdmakit $cmd --"
		assert_success
		assert_equal "$(grep -- '^--' <<<"$output" | sort -u)" "$want"
	done
	for cmd in $(rdmakit_commands unavailable); do
		run complete_zsh "rdmakit $cmd --"
		assert_success
		assert_output -- '--help'
	done
}

@test "every long option of every available command is in its man page" {
	require_tool groff "rendering the man pages"
	for cmd in $(rdmakit_commands available); do
		page=$(man_page_for "$cmd")
		if [[ $page == */rdmakit.1 ]]; then
			# The overview page: in the command's entry under COMMANDS.
			text=$(man_entry "$page" COMMANDS "$cmd")
		else
			text=$(man_text "$page")
		fi
		[[ -n $text ]] || fail "$cmd is not described in ${page#"$RDMAKIT_ROOT"/}"
		for opt in $(help_long_options "$cmd"); do
			has_word "$text" "$opt" || fail "$opt of '$cmd' is not in ${page#"$RDMAKIT_ROOT"/}"
		done
	done
}

@test "every command of the table is in rdmakit.1 COMMANDS with its summary and availability" {
	require_tool groff "rendering the man pages"
	available=$(rdmakit_commands available)
	for cmd in $(rdmakit_commands); do
		entry=$(man_entry man/rdmakit.1 COMMANDS "$cmd")
		[[ -n $entry ]] || fail "'$cmd' has no entry under COMMANDS in man/rdmakit.1"
		summary=$(rdmakit_summary "$cmd")
		[[ $entry == *"$summary"* ]] ||
			fail "man/rdmakit.1 COMMANDS: '$cmd' does not say '$summary': $entry"
		if grep -qx -- "$cmd" <<<"$available"; then
			[[ $entry != *'not available yet'* ]] ||
				fail "man/rdmakit.1 marks '$cmd' as not available yet, but it is built"
		else
			[[ $entry == *'(not available yet in this version)'* ]] ||
				fail "man/rdmakit.1 does not mark '$cmd' as not available yet"
		fi
	done
}

@test "rdmakit.1 documents the global options that rdmakit help lists" {
	require_tool groff "rendering the man pages"
	opts=$(global_options)
	[[ $opts == *--json* ]]
	synopsis_and_global="$(man_text man/rdmakit.1 | awk '/^GLOBAL OPTIONS/ { on = 1; next } /^[A-Z]/ { on = 0 } on')"
	for opt in $opts; do
		has_word "$synopsis_and_global" "$opt" || fail "$opt is not under GLOBAL OPTIONS in man/rdmakit.1"
	done
}

@test "rdmakit.1 documents the JSON envelope keys and the exit statuses the binary uses" {
	require_tool groff "rendering the man pages"
	run "$RDMAKIT" -j version
	assert_success
	run json_eval 'print("\n".join(d))'
	assert_success
	[[ ${#lines[@]} -ge 5 ]]
	for key in "${lines[@]}"; do
		entry=$(man_entry man/rdmakit.1 'JSON OUTPUT' "$key")
		[[ -n $entry ]] || fail "JSON key '$key' has no entry under JSON OUTPUT in man/rdmakit.1"
	done
	# "Exit status: 0 ok, 1 check failed, 2 usage error, 3 runtime error."
	codes=$("$RDMAKIT" help | sed -n 's/^Exit status: //p' | grep -oE '(^|, )[0-9]+' | tr -d ', ')
	[[ $(echo $codes) == "0 1 2 3" ]] || fail "unexpected exit statuses in rdmakit help: $codes"
	for code in $codes; do
		entry=$(man_entry man/rdmakit.1 'EXIT STATUS' "$code")
		[[ -n $entry ]] || fail "exit status $code has no entry under EXIT STATUS in man/rdmakit.1"
	done
}

@test "rdmakit.1 has the sections a user looks for" {
	for section in NAME SYNOPSIS DESCRIPTION COMMANDS 'GLOBAL OPTIONS' 'JSON OUTPUT' \
		'EXIT STATUS' ENVIRONMENT EXAMPLES 'SEE ALSO'; do
		grep -qE "^\.SH \"?$section\"?\$" man/rdmakit.1 || fail "man/rdmakit.1 has no $section section"
	done
	for ref in 'ib_write_bw (1)' 'qperf (1)' 'iperf3 (1)' 'tcpdump (8)' 'tshark (1)' \
		'rdma (8)' 'ethtool (8)'; do
		grep -qF ".BR $ref" man/rdmakit.1 || fail "SEE ALSO lacks ${ref/ /}"
	done
}

@test "every man page renders without warnings (groff -man -ww -z)" {
	require_tool groff "checking the man pages"
	pages=(man/*.1)
	[[ -e ${pages[0]} ]] || fail "no man pages in man/"
	for page in "${pages[@]}"; do
		run groff -man -ww -z "$page"
		assert_success
		[[ -z $output ]] || fail "$page: $output"
	done
}

@test "every man page renders through man(1) without warnings" {
	require_tool man "checking the man pages"
	for page in man/*.1; do
		run bash -c 'MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null' _ "$page"
		assert_success
		[[ -z $output ]] || fail "$page: $output"
	done
}

@test "every man/rdmakit-NAME.1 is a command of the table, named in its .TH and in rdmakit.1" {
	require_tool groff "rendering the man pages"
	grep -qE '^\.TH RDMAKIT 1 ' man/rdmakit.1 || fail "man/rdmakit.1: .TH is not 'RDMAKIT 1'"
	see_also=$(man_text man/rdmakit.1 | awk '/^SEE ALSO/ { on = 1; next } /^[A-Z]/ { on = 0 } on')
	for page in man/rdmakit-*.1; do
		[[ -e $page ]] || continue
		name=${page#man/rdmakit-}
		name=${name%.1}
		rdmakit_commands | grep -qx -- "$name" || fail "$page: '$name' is not a command"
		upper=$(tr '[:lower:]' '[:upper:]' <<<"$name")
		grep -qE "^\.TH \"?RDMAKIT-$upper\"? 1 " "$page" || fail "$page: .TH is not 'RDMAKIT-$upper 1'"
		has_word "$see_also" "rdmakit-$name(1)" || fail "man/rdmakit.1: SEE ALSO lacks rdmakit-$name(1)"
	done
}
