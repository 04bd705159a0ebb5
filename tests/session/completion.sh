# completion.sh — the bash completion of meminst and inspect
# (scripts/meminst-completion.bash, installed by make install): commands and
# options come from each program's --help, values from the script's table,
# and "--option=value" works both as one word and as bash splits it.
. "$top_srcdir/tests/integration/lib.sh"
cd "$MI_TMP" || exit 99

# complete WORD... : what bash would offer for the last word
cat >complete.bash <<'EOS'
. "$top_srcdir/scripts/meminst-completion.bash"
PATH=$top_builddir/session:$top_builddir/inspect:$PATH
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
case $1 in inspect) _inspect ;; meminst) _meminst ;; esac
printf '%s\n' "${COMPREPLY[@]}" | sort
EOS
complete() {
	bash complete.bash "$@" 2>>err
}
# expect LABEL WORD ANSWER WORDS... : the answers hold WORD (a whole line)
has() {
	label=$1 want=$2
	shift 2
	complete "$@" >got
	grep -qxF -- "$want" got || mi_why_add "$label: '$want' not offered for '$*' (got: $(tr '\n' ' ' <got | cut -c1-200))"
}
hasnt() {
	label=$1 want=$2
	shift 2
	complete "$@" >got
	grep -qxF -- "$want" got && mi_why_add "$label: '$want' offered for '$*'"
}

why=
: >err
has "command" report inspect re
hasnt "command prefix" list inspect re
n=$(complete inspect "" | wc -l)
[ "$n" -ge 20 ] || mi_why_add "only $n inspect commands offered"
has "command's option" --by inspect top --b
hasnt "another command's option" --style inspect top --s
has "option value" site inspect top --by ""
has "diff of two runs: the metric" leaked inspect diff --by l
hasnt "diff --by: no grouping" site inspect diff --by ""
has "analyse style" fprof inspect analyse --style f
has "export format" callgrind inspect export --format c
has "export format, from its --help" pprof inspect export --format p
has "a value only that command takes" count inspect analyse --metric c
hasnt "another command's value" count inspect export --metric c
has "export metric of the counters" temporary inspect export --metric te
has "value after =, from --help" --time=samples inspect analyse --time=s
mi_verdict "inspect: commands, each command's options, their values" "$why" err stderr

why=
: >err
has "launcher option" --sample-clock meminst --sample-c
has "launcher short option's long form" --output meminst --out
has "value, split at =" wall meminst --sample-clock = w
has "value after =" jemalloc meminst --backend =
has "value in words, from the table" auto meminst --interval a
has "value, one word" --backend=jemalloc meminst --backend=j
has "program" python3 meminst --mim -o x.db pyth
has "program after --" python3 meminst --mim -- pyth
has "program after an option's value" python3 meminst --backend system pyth
has "program after an option's value, split at =" python3 meminst --backend = system pyth
has "program after --sample (its value only after =)" python3 meminst --sample pyth
has "value of an option from the launcher's --help" wall meminst --sample-clock w
has "value of an option with an optional one" --trace=cpu meminst --trace=c
hasnt "the value of --library is a file, not a program" python3 meminst --library pyth
touch data.txt
has "program's argument" data.txt meminst --mim -- cat dat
hasnt "no launcher options after the program" --mim meminst -- cat --m
mi_verdict "meminst: options, values, then the program and its arguments" "$why" err stderr
mi_finish
