/*
** snap_vfs.c — a program that uses SQLite with a VFS of its own made the
** default (sqlite3_vfs_register(…, 1)), for tests/integration/snap_vfs.sh:
** "wrap" is SQLite's unix VFS with an xOpen that writes "wrap open NAME"
** on standard error.  It stores a row in DB (argv[1]) through it and
** exits; meminst's exit snapshot must not go through "wrap".
*/
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static sqlite3_vfs wrap, *unix_vfs;

static int wrap_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	(void)vfs;
	fprintf(stderr, "wrap open %s\n", name ? name : "(temp)");
	return unix_vfs->xOpen(unix_vfs, name, f, flags, out);
}

int main(int argc, char **argv)
{
	if (argc < 2 || !(unix_vfs = sqlite3_vfs_find("unix")))
		return 2;
	memcpy(&wrap, unix_vfs, sizeof wrap);
	wrap.zName = "wrap";
	wrap.xOpen = wrap_open;
	wrap.pNext = NULL;
	if (sqlite3_vfs_register(&wrap, 1) != SQLITE_OK)
		return 2;
	sqlite3 *db;
	if (sqlite3_open(argv[1], &db) != SQLITE_OK ||
	    sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(42);", NULL, NULL, NULL) != SQLITE_OK)
		return 1;
	sqlite3_close(db);
	printf("stored\n");
	return 0;
}
