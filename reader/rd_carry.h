/*
** rd_carry.h — the whole rows of a schema-3 snapshot file (rd_carry.c),
** for the reader toolkit and the SQLite extension.
*/
#ifndef RD_CARRY_H
#define RD_CARRY_H

/* A schema-3 file whose snapshots store only the status and name rows that
** changed: TEMP views named as the tables, with every row.  SQLITE_OK
** (also for any other file, or when they are there already), or an
** SQLite error code. */
int rd_carry_views(sqlite3 *db);

#endif /* RD_CARRY_H */
