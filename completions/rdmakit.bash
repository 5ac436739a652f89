# bash completion for rdmakit(1)                          -*- shell-script -*-
# SPDX-License-Identifier: MIT
#
# Static word lists, one place per command (the bpftool model).  Works with
# bash-completion loaded (uses _init_completion and _filedir) and without it.
# tests/cli.bats checks these words against 'rdmakit -j help' and
# 'rdmakit CMD --help', so a command or option added to the binary but not
# here fails the tests.
#
# Adding a command NAME:
#   1. add NAME to _rdmakit_commands (the order of 'rdmakit help');
#   2. give NAME its own arm in _rdmakit_command_opts with every long option
#      'rdmakit NAME --help' prints (the common --json --pretty --help too),
#      and take it out of the "not built yet" arm;
#   3. for each option that takes a value, add a "NAME:OPTION" arm to
#      _rdmakit_option_value (both the short and the long spelling);
#   4. if NAME takes operands, add an arm to the operand case in _rdmakit;
#   5. mirror the same words in completions/_rdmakit (zsh).

# The words offered are plain (no blanks, no glob characters), so the usual
# COMPREPLY=($(compgen ...)) splitting is safe here.
# shellcheck disable=SC2207

_rdmakit_commands='bw lat incast capture top plot probe devices help version'
_rdmakit_global_opts='-j --json --pretty -h --help -V --version'

# The options of command $1, one word each.
_rdmakit_command_opts()
{
	case $1 in
	help)
		echo '--json --pretty --help'
		;;
	version)
		echo '--json --pretty --help'
		;;
	capture)
		echo '--interface --read --write --file-size --file-count --count' \
			'--snaplen --buffer-size --packet-buffered --line-buffered' \
			'--list-interfaces --udp-port --verbose --summary --no-icrc --utc --max-flows --plot' \
			'--json --pretty --help'
		;;
	devices)
		echo '--ib-dev --verbs --soft --json --pretty --help'
		;;
	probe)
		echo '--serve --test --list --accept --write --port --timeout --auth-key --engine --bind' \
			'--udp-port --ib-dev --ib-port --gid-index --persistent --json --pretty --help'
		;;
	plot)
		echo '--output --kind --qp --size --label --dump-layout --json --pretty --help'
		;;
	top)
		echo '--batch --iterations --delay --interface --totals --verbose' \
			'--sysfs-root --proc-root --listen --textfile --json --pretty --help'
		;;
	bw)
		echo '--engine --bind --port --udp-port --ib-dev --ib-port --gid-index --auth-key --op --atomic_type --size --all --iters --duration --qp --tx-depth --rx-depth --outs --mtu --tos --qp-timeout --retry-cnt --rnr-retry --verify --timeout --loopback --persistent --max-memory --inline_size --rdma-cm --rdma_cm --cpu_util --perftest --perftest-version --perftest-struct' \
			'--report_gbits --CPU-freq --output --tclass --out_json --out_json_file --bind_source_ip --connection --retry_count' \
			'--dcqcn --dcqcn-g --dcqcn-k-us --dcqcn-t-us --dcqcn-b-bytes --dcqcn-f --dcqcn-rai-mbps --dcqcn-rhai-mbps --dcqcn-min-mbps' \
			'--interval --unit --expect-gbps --limit_bw --expect-mpps --limit_msgrate --noPeak --report-counters' \
			'--bidirectional --cq-mod --post_list --post-list --rate_limit --rate_units --rate_limit_type' \
			'--plot --json --pretty --help'
		;;
	lat)
		echo '--engine --bind --port --udp-port --ib-dev --ib-port --gid-index --auth-key --op --atomic_type --size --all --iters --duration --qp --tx-depth --rx-depth --outs --mtu --tos --qp-timeout --retry-cnt --rnr-retry --verify --timeout --loopback --persistent --max-memory --inline_size --rdma-cm --rdma_cm --cpu_util --perftest --perftest-version --perftest-struct' \
			'--report_gbits --CPU-freq --output --tclass --out_json --out_json_file --bind_source_ip --connection --retry_count' \
			'--dcqcn --dcqcn-g --dcqcn-k-us --dcqcn-t-us --dcqcn-b-bytes --dcqcn-f --dcqcn-rai-mbps --dcqcn-rhai-mbps --dcqcn-min-mbps' \
			'--histogram --hgrm --expect-p99-us --latency_gap --report-histogram --report-histogrm --report-unsorted --plot --json --pretty --help'
		;;
	incast)
		echo '--serve --senders --wait-timeout --local --pattern --op --connection --size --duration --bytes --interval --qps' \
			'--coordinator --rank --world-size --link-gbps --expect-gbps --expect-fairness --max-memory' \
			'--engine --bind --port --udp-port --ib-dev --ib-port --gid-index --auth-key --tx-depth --rx-depth' \
			'--mtu --tos --qp-timeout --retry-cnt --rnr-retry --verify --timeout' \
			'--dcqcn --dcqcn-g --dcqcn-k-us --dcqcn-t-us --dcqcn-b-bytes --dcqcn-f --dcqcn-rai-mbps --dcqcn-rhai-mbps --dcqcn-min-mbps' \
			'--plot --json --pretty --help'
		;;
	esac
}

# How to complete the value of option $2 of command $1.  Prints one of:
#   file         a file name
#   dir          a directory name
#   iface        a network interface name
#   words W...   one of the words W
#   value        anything (a number, a host): nothing to offer
# and returns 1 when the option takes no value.
_rdmakit_option_value()
{
	case $1:$2 in
	capture:-r|capture:--read|capture:-w|capture:--write)
		echo file
		;;
	capture:-i|capture:--interface)
		echo iface
		;;
	devices:-d|devices:--ib-dev)
		# The RDMA devices of this host ("words" alone when none).
		local d names=''
		for d in /sys/class/infiniband/*; do
			[[ -e $d ]] && names+=" ${d##*/}"
		done
		echo "words$names"
		;;
	top:-i|top:--interface)
		echo iface
		;;
	top:--sysfs-root|top:--proc-root)
		echo dir
		;;
	top:-n|top:--iterations|top:-d|top:--delay|top:--listen)
		echo value
		;;
	top:--textfile)
		echo file
		;;
	plot:-o|plot:--output)
		echo file
		;;
	plot:--kind)
		echo 'words bw lat incast seq'
		;;
	plot:--size|plot:--label|plot:--qp)
		echo value
		;;
	capture:-C|capture:--file-size|capture:-W|capture:--file-count|\
	capture:-c|capture:--count|capture:-s|capture:--snaplen|\
	capture:-B|capture:--buffer-size|capture:--udp-port)
		echo value
		;;
	probe:--test)
		# The test names, from the binary itself.
		echo "words $(rdmakit -j probe --list 2>/dev/null | sed -n 's/.*"name": *"\([a-z_0-9]*\)".*/\1/p' | tr '\n' ' ')"
		;;
	probe:--accept|probe:--auth-key|probe:-w|probe:--write)
		echo file
		;;
	probe:-p|probe:--port|probe:--timeout|probe:--bind|probe:--udp-port|probe:-i|\
	probe:--ib-port|probe:-x|probe:--gid-index)
		echo value
		;;
	bw:--engine|lat:--engine|incast:--engine|probe:--engine)
		echo 'words auto soft verbs'
		;;
	incast:--pattern)
		echo 'words incast all-to-all'
		;;
	incast:--op)
		echo 'words write send'
		;;
	bw:--op|lat:--op)
		echo 'words write read send atomic'
		;;
	bw:-c|bw:--connection|lat:-c|lat:--connection|incast:-c|incast:--connection)
		echo 'words RC UC UD'
		;;
	bw:-A|bw:--atomic_type|lat:-A|lat:--atomic_type)
		echo 'words FETCH_AND_ADD CMP_AND_SWAP'
		;;
	bw:-m|bw:--mtu|lat:-m|lat:--mtu|incast:-m|incast:--mtu)
		echo 'words 256 512 1024 2048 4096'
		;;
	bw:--unit)
		echo 'words Gb MiB'
		;;
	bw:--rate_units)
		echo 'words g M p'
		;;
	bw:--rate_limit_type)
		echo 'words SW'
		;;
	bw:--dcqcn|lat:--dcqcn|incast:--dcqcn)
		echo 'words on off'
		;;
	bw:-d|bw:--ib-dev|lat:-d|lat:--ib-dev|incast:-d|incast:--ib-dev|probe:-d|probe:--ib-dev)
		local d names=''
		for d in /sys/class/infiniband/*; do
			[[ -e $d ]] && names+=" ${d##*/}"
		done
		echo "words$names"
		;;
	lat:--hgrm|bw:--auth-key|lat:--auth-key|incast:--auth-key|\
	bw:--plot|lat:--plot|incast:--plot|capture:--plot)
		echo file
		;;
	bw:--bind|bw:-p|bw:--port|bw:--udp-port|bw:-i|bw:--ib-port|bw:-x|bw:--gid-index|\
	bw:-s|bw:--size|bw:-n|bw:--iters|bw:-D|bw:--duration|bw:-q|bw:--qp|\
	bw:-t|bw:--tx-depth|bw:-r|bw:--rx-depth|bw:-o|bw:--outs|bw:-T|bw:--tos|\
	bw:-u|bw:--qp-timeout|bw:--retry-cnt|bw:--rnr-retry|bw:--timeout|\
	bw:--interval|bw:--expect-gbps|bw:-w|bw:--limit_bw|bw:--expect-mpps|\
	bw:-y|bw:--limit_msgrate|bw:--rate_limit|bw:-I|bw:--inline_size|lat:-I|lat:--inline_size|\
	bw:-Q|bw:--cq-mod|bw:-l|bw:--post_list|bw:--post-list|\
	lat:--bind|lat:-p|lat:--port|lat:--udp-port|lat:-i|lat:--ib-port|lat:-x|\
	lat:--gid-index|lat:-s|lat:--size|lat:-n|lat:--iters|lat:-D|lat:--duration|\
	lat:-q|lat:--qp|lat:-t|lat:--tx-depth|lat:-r|lat:--rx-depth|lat:-o|lat:--outs|\
	lat:-T|lat:--tos|lat:-u|lat:--qp-timeout|lat:--retry-cnt|lat:--rnr-retry|\
	lat:--timeout|lat:--expect-p99-us|\
	incast:--senders|incast:--wait-timeout|incast:--local|incast:-s|incast:--size|\
	incast:-D|incast:--duration|incast:--bytes|incast:--interval|incast:-q|incast:--qps|\
	incast:--coordinator|incast:--rank|incast:--world-size|incast:--link-gbps|\
	incast:--expect-gbps|incast:--expect-fairness|incast:--max-memory|incast:--bind|incast:-p|incast:--port|\
	incast:--udp-port|incast:-i|incast:--ib-port|incast:-x|incast:--gid-index|\
	incast:-t|incast:--tx-depth|incast:-r|incast:--rx-depth|incast:-T|incast:--tos|\
	incast:-u|incast:--qp-timeout|incast:--retry-cnt|incast:--rnr-retry|incast:--timeout|\
	bw:--dcqcn-g|bw:--dcqcn-k-us|bw:--dcqcn-t-us|bw:--dcqcn-b-bytes|bw:--dcqcn-f|bw:--dcqcn-rai-mbps|bw:--dcqcn-rhai-mbps|bw:--dcqcn-min-mbps|\
	lat:--dcqcn-g|lat:--dcqcn-k-us|lat:--dcqcn-t-us|lat:--dcqcn-b-bytes|lat:--dcqcn-f|lat:--dcqcn-rai-mbps|lat:--dcqcn-rhai-mbps|lat:--dcqcn-min-mbps|\
	incast:--dcqcn-g|incast:--dcqcn-k-us|incast:--dcqcn-t-us|incast:--dcqcn-b-bytes|incast:--dcqcn-f|incast:--dcqcn-rai-mbps|incast:--dcqcn-rhai-mbps|incast:--dcqcn-min-mbps)
		echo value
		;;
	*)
		return 1
		;;
	esac
}

# Network interface names starting with $1.
_rdmakit_ifaces()
{
	local d names=()

	for d in /sys/class/net/*; do
		[[ -e $d ]] && names+=("${d##*/}")
	done
	compgen -W "${names[*]}" -- "$1"
}

# File (or, with -d, directory) names for the word being completed ($cur).
_rdmakit_files()
{
	if declare -F _filedir >/dev/null 2>&1; then
		_filedir "$@"
		return
	fi
	compopt -o filenames 2>/dev/null
	if [[ $1 == -d ]]; then
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
}

_rdmakit()
{
	# split is set by _init_completion -s.
	# shellcheck disable=SC2034
	local cur prev words cword split i cmd='' cmd_idx=0 kind n

	COMPREPLY=()
	if declare -F _init_completion >/dev/null 2>&1; then
		_init_completion -s || return
	else
		# Without bash-completion: the raw words.  "--opt=value" arrives
		# as "--opt" "=" "value" because COMP_WORDBREAKS holds '='.
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${words[cword]}
		prev=${words[cword - 1]}
		if [[ $cur == = ]]; then
			cur=''
		elif [[ $prev == = ]] && ((cword >= 2)); then
			prev=${words[cword - 2]}
		fi
	fi

	# The command word: the first word that is not a global option
	# (global options take no values).
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*)
			cmd=${words[i]}
			cmd_idx=$i
			break
			;;
		esac
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$_rdmakit_global_opts" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$_rdmakit_commands" -- "$cur"))
		fi
		return 0
	fi

	# The value of an option.
	if [[ $prev == -* ]] && kind=$(_rdmakit_option_value "$cmd" "$prev"); then
		case $kind in
		file) _rdmakit_files ;;
		dir) _rdmakit_files -d ;;
		iface) COMPREPLY=($(_rdmakit_ifaces "$cur")) ;;
		words\ *) COMPREPLY=($(compgen -W "${kind#words }" -- "$cur")) ;;
		esac
		return 0
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_rdmakit_command_opts "$cmd")" -- "$cur"))
		return 0
	fi

	# Operands.
	case $cmd in
	help)
		# One command name.
		n=0
		for ((i = cmd_idx + 1; i < cword; i++)); do
			[[ ${words[i]} == -* ]] || n=$((n + 1))
		done
		if ((n == 0)); then
			COMPREPLY=($(compgen -W "$_rdmakit_commands" -- "$cur"))
		fi
		;;
	capture)
		# Operands are a BPF filter expression: nothing to offer.
		;;
	bw|lat|incast|probe)
		# The operand is the server's (coordinator's, probe server's) HOST: the host names bash knows.
		if declare -F _known_hosts_real >/dev/null 2>&1; then
			_known_hosts_real -- "$cur"
		else
			COMPREPLY=($(compgen -A hostname -- "$cur"))
		fi
		;;
	top)
		# RDMA device names (DEVICE[/PORT]).
		local d names=''
		for d in /sys/class/infiniband/*; do
			[[ -e $d ]] && names+=" ${d##*/}"
		done
		COMPREPLY=($(compgen -W "$names" -- "$cur"))
		;;
	plot)
		# Operands are JSON files rdmakit wrote.
		COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
		;;
	version|devices)
		# No operands: offer the options.
		COMPREPLY=($(compgen -W "$(_rdmakit_command_opts "$cmd")" -- "$cur"))
		;;
	esac
	return 0
}

complete -F _rdmakit rdmakit
