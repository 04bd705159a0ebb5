# sqlite.sh — Debian's sqlite3 shell under the preload: create a table,
# insert 100000 rows as separate INSERT statements in one transaction (each
# is parsed, so the shell allocates a lot), index it, and query aggregates,
# a GROUP BY, a join and a sort.  Each run uses a fresh database file.
# Output is compared with an uninstrumented run.
. "$top_srcdir/tests/integration/lib.sh"

SQLITE=/usr/bin/sqlite3
mi_need $SQLITE sqlite3

{
	echo "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, val REAL);"
	echo "BEGIN;"
	awk 'BEGIN { for (i = 1; i <= 100000; i++)
		printf "INSERT INTO t VALUES(%d, \047name-%d\047, %d, %d.5);\n", i, (i * 7919) % 100003, i % 97, i % 1000 }'
	echo "COMMIT;"
	cat <<'SQL'
CREATE INDEX t_grp ON t(grp, val);
SELECT count(*), sum(id), round(avg(val), 4), min(name), max(name) FROM t;
SELECT grp, count(*), sum(val), max(length(name)) FROM t GROUP BY grp ORDER BY grp LIMIT 12;
CREATE TABLE g AS SELECT grp, avg(val) AS a FROM t GROUP BY grp;
SELECT count(*), round(sum(t.val - g.a), 4) FROM t JOIN g USING (grp) WHERE t.val > g.a;
SELECT name FROM t ORDER BY name DESC LIMIT 5;
SELECT group_concat(id) FROM (SELECT id FROM t WHERE grp = 42 ORDER BY val DESC, id LIMIT 20);
SQL
} >"$MI_TMP/load.sql" || exit 99

load() {
	rm -f "$MI_TMP/t.db"
	mi_x $SQLITE -batch "$MI_TMP/t.db" <"$MI_TMP/load.sql"
}

mi_compare sqlite3 load
mi_finish
