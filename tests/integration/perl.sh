# perl.sh — Debian's perl under the preload: a hash-heavy script (a large
# hash of strings, nested hashes and arrays, deletions, sorting, string
# building), output compared with an uninstrumented run.  Perl's hash
# order is fixed with PERL_HASH_SEED, and the script prints only sorted
# results anyway.
. "$top_srcdir/tests/integration/lib.sh"

PERL=/usr/bin/perl
mi_need $PERL perl
export PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0

cat >"$MI_TMP/hashes.pl" <<'PL'
use strict;
use warnings;

my %h;
for my $i (1 .. 80000) {
	$h{"key$i"} = { n => $i, s => "v" x ($i % 13), l => [ 1 .. ($i % 9) ] };
}
my $sum = 0;
$sum += $h{$_}{n} + length($h{$_}{s}) + @{ $h{$_}{l} } for keys %h;
print "entries ", scalar(keys %h), " sum $sum\n";

delete $h{"key$_"} for grep { $_ % 3 } 1 .. 80000;
my @left = sort { $h{$a}{n} <=> $h{$b}{n} } keys %h;
print "left ", scalar(@left), " first $left[0] last $left[-1]\n";

my %count;
$count{ join "", sort split //, $_ }++ for map { sprintf "%05d", $_ * 7919 % 100000 } 1 .. 60000;
my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count)[0 .. 4];
print "anagram classes ", scalar(keys %count), " top @top\n";

my $text = "";
$text .= chr(97 + $_ % 26) x ($_ % 5) for 1 .. 60000;
my %words = map { $_ => length } $text =~ /(a+|e+|i+)/g;
print "text ", length($text), " words ", join(",", map { "$_=$words{$_}" } sort keys %words), "\n";
PL

hashes() { mi_x $PERL "$MI_TMP/hashes.pl"; }

mi_compare perl hashes
mi_finish
