#!/bin/sh
# cmpgap.sh ROUNDS B ARGS CONFIG... : like cmp.sh with bench_trace ARGS
R=$1 B=$2 A=$3; shift 3
T=$(mktemp -d $B/cmp.XXXX)
for r in $(seq $R); do
  for c in bare "$@"; do
    name=${c%%:*}; envs=${c#*:}
    if [ "$name" = bare ]; then cmd="$B/bench/bench_trace_bare"; else cmd="env $envs $B/bench/bench_trace"; fi
    $B/bench/bench_maxrss $T/rss $cmd $A >/dev/null 2>$T/err
    v=$(grep -o 'cpu_ns[ =:]*[0-9]*' $T/rss | grep -o '[0-9]*$')
    echo "$r $name $v" >> $T/all
    rm -f $T/*.trace
  done
done
awk -v N=$(echo $A | cut -d' ' -f1) '{cpu[$1,$2]=$3; names[$2]=1; rounds[$1]=1} END {
  for (n in names) { k=0; for (r in rounds) v[++k]=(cpu[r,n]-cpu[r,"bare"])/N;
    for(i=1;i<=k;i++)for(j=i+1;j<=k;j++)if(v[j]<v[i]){t=v[i];v[i]=v[j];v[j]=t};
    printf "%-14s median %9.1f  min %9.1f max %9.1f ns per call\n", n, v[int((k+1)/2)], v[1], v[k]; delete v } }' $T/all | sort
rm -rf $T
