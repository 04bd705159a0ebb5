# bash completion for meminst and inspect.  Installed as
# $(datadir)/bash-completion/completions/{meminst,inspect}; source it by hand
# with `. scripts/meminst-completion.bash` to try it from the source tree.
# Commands, options and their values are read from the programs' own
# --help, made from each command's option table (reader/rd_args.c, for
# the launcher too), so this file never falls behind them; only the values
# of the options whose --help names them in words (--snapshot-at WHEN,
# --site-depth N|user, --site-skip NAMES, --interval DURATION|auto,
# inspect's --stacks N|none) are
# listed here.

# The values an option takes (OPTION COMMAND...), or nothing (then files
# are offered): as the command's --help shows them, "--by type|class|site",
# else for the options whose --help names them in words, from this list.
_meminst_option_values()
{
	local opt=$1 values
	shift
	[[ $opt =~ ^--?[A-Za-z0-9-]+$ ]] || return 1
	values=$("$@" --help 2>/dev/null |
		sed -n "s/^ \{1,\}\(-[A-Za-z], \)\{0,1\}$opt[][ =]\{1,\}\([a-z0-9+]\{1,\}|[a-z0-9+|]\{1,\}\).*/\2/p" |
		head -n 1)
	if [ -n "$values" ]; then
		echo "${values//|/ }"
		return
	fi
	case $opt in
	--snapshot-at) echo "exit peak signal exit+peak exit+signal exit+peak+signal exit+cgroup:90% exit+rss:90% none" ;;
	--site-depth) echo "user 1 2 4 8" ;;
	--site-skip) echo "none" ;;
	--stacks) echo "none 1 3 5 10" ;;
	--interval) echo "auto 0 10ms 100ms 1s" ;;
	*) return 1 ;;
	esac
}

# Options named in a --help text: "-o, --output=FILE", "  --json  …".
_meminst_help_options()
{
	"$@" --help 2>/dev/null |
		sed -n 's/^ \{1,\}\(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' | sort -u
}

# The options that take the next word as their value ("-o, --output FILE",
# "--library PATH"; not a flag, nor "--trace[=wall|cpu]"), one a line, the
# short name too.
_meminst_value_options()
{
	"$@" --help 2>/dev/null |
		sed -n 's/^ \{1,\}\(-\([A-Za-z]\), \)\{0,1\}\(--[a-z][a-z0-9-]*\) [^ ].*/\3\
-\2/p' | grep -v '^-$'
}

# cur and prev of the word being completed.  bash splits "--output=FILE"
# into "--output" "=" "FILE" (COMP_WORDBREAKS); then prev is the option
# and value is set.
_meminst_cur_prev()
{
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	value=
	if [ "$cur" = "=" ]; then
		cur= value=1
	elif [ "$prev" = "=" ] && [ "$COMP_CWORD" -ge 2 ]; then
		prev=${COMP_WORDS[COMP_CWORD - 2]} value=1
	fi
}

# Complete cur (after prev) with options from the --help of the command
# line given, or with the values of the option before it, or files.
_meminst_complete_options()
{
	local cur=$1 prev=$2 values
	shift 2
	if [[ $cur == --*=* ]]; then # "--option=value" kept as one word
		if values=$(_meminst_option_values "${cur%%=*}" "$@"); then
			COMPREPLY=($(compgen -P "${cur%%=*}=" -W "$values" -- "${cur#*=}"))
		else
			COMPREPLY=($(compgen -f -P "${cur%%=*}=" -- "${cur#*=}"))
		fi
		return
	fi
	if values=$(_meminst_option_values "$prev" "$@"); then
		COMPREPLY=($(compgen -W "$values" -- "$cur"))
	elif [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_meminst_help_options "$@")" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}

_inspect()
{
	local cur prev value prog=${COMP_WORDS[0]}
	_meminst_cur_prev
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$("$prog" --help 2>/dev/null |
			sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')" -- "$cur"))
		return
	fi
	_meminst_complete_options "$cur" "$prev" "$prog" "${COMP_WORDS[1]}"
}

# meminst [OPTION]... [--] PROGRAM ARG...: options until the program, then
# a command name, then files.
_meminst()
{
	local cur prev value i takes
	_meminst_cur_prev
	takes=$(_meminst_value_options "${COMP_WORDS[0]}")
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) break ;;
		=) i=$((i + 1)) ;; # "--opt" "=" "value"
		-*) # an option; its value is the next word when its --help says so
			if [ "${COMP_WORDS[i + 1]}" != = ] && grep -qxF -- "${COMP_WORDS[i]}" <<<"$takes"; then
				i=$((i + 1))
			fi ;;
		*) break ;;
		esac
	done
	if [ "$i" -lt "$COMP_CWORD" ]; then # word i is the program, or "--"
		[ "${COMP_WORDS[i]}" = -- ] && i=$((i + 1))
		if [ "$i" -eq "$COMP_CWORD" ]; then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
	elif [ "$i" -gt "$COMP_CWORD" ] || [ -n "$value" ] || [[ $cur == -* ]]; then
		# the value of -o and the like, or an option
		_meminst_complete_options "$cur" "$prev" "${COMP_WORDS[0]}"
	else
		COMPREPLY=($(compgen -c -- "$cur")) # the program
	fi
}

complete -F _inspect inspect
complete -F _meminst meminst
