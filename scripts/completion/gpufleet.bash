# bash completion for gpufleet.  Source it (". scripts/completion/gpufleet.bash"),
# or install it as /usr/share/bash-completion/completions/gpufleet.
#
# Nothing is listed here by hand: the commands come from `gpufleet --help` and
# each command's options from `gpufleet COMMAND --help` (the lines that start
# with an option; the deprecated spellings, named in prose at the end of each
# help text, are not offered), so the completion follows the binary it
# completes.  Option values complete as file names, and as the fixed words a
# few options take.

_gpufleet_commands() {
	"$1" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p'
}

_gpufleet_options() {
	# An option line: indented, an optional "-x, ", then --name (and maybe [=...]).
	"$1" "${@:2}" --help 2>/dev/null |
		sed -n 's/^ \{1,\}\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' | sort -u
}

_gpufleet() {
	local bin=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmd="" i serving=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--serving) serving=--serving ;;
		-*) ;;
		*) [ -z "$cmd" ] && cmd=${COMP_WORDS[i]} ;;
		esac
	done
	COMPREPLY=()
	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "--help --version" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$(_gpufleet_commands "$bin")" -- "$cur")
		fi
		return 0
	fi
	case $prev in
	--preemption) mapfile -t COMPREPLY < <(compgen -W "on off" -- "$cur"); return 0 ;;
	--policy) mapfile -t COMPREPLY < <(compgen -W "fgd fgd-fill best-fit dot-product gpu-packing gpu-clustering random k8s-least-allocated k8s-most-allocated" -- "$cur"); return 0 ;;
	--queue-policy) mapfile -t COMPREPLY < <(compgen -W "kube strict-fifo best-effort-fifo backfill conservative-backfill per-queue" -- "$cur"); return 0 ;;
	--bind-order) mapfile -t COMPREPLY < <(compgen -W "node none" -- "$cur"); return 0 ;;
	--order) mapfile -t COMPREPLY < <(compgen -W "draw trace" -- "$cur"); return 0 ;;
	--source) mapfile -t COMPREPLY < <(compgen -W "agents prometheus" -- "$cur"); return 0 ;;
	-o | --output) mapfile -t COMPREPLY < <(compgen -W "table json" -- "$cur"); return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_gpufleet_options "$bin" "$cmd" $serving) --version" -- "$cur")
		return 0
	fi
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

complete -o filenames -F _gpufleet gpufleet
