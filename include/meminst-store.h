/*
** meminst-store.h — the launcher's store service: libmeminst's side
** (alloc/alloc_sqlite_link.c) and the launcher's (session/sess_storer.c).
**
** Under the launcher, a snapshot's SQLite work runs in the launcher, not in
** the program: SQLite's code (about 0.8 MB of it runs at a store) and its
** heap were in the program's resident set at its peak (issue 29,
** bench/launcher_rss.sh).  libmeminst keeps everything that reads the
** program (the capture, /proc/self, the type and module tables) and sends
** the statements and their values; the launcher only runs them.  The
** launcher listens on RUN_DIR/store.sock (RUN_DIR: its private 0700 parts
** directory, MEMINST's run_dir); each connection is one SQLite connection
** to one file, ended by closing the socket (an open transaction is rolled
** back, as when a process dies in the middle of a store in itself).
**
** A request: struct meminst_store_req, then `len` bytes.  Requests marked
** (reply) get a struct meminst_store_reply and its `len` bytes (SQLite's
** message, or the journal's name); the others are not answered, so that
** rows stream: the first that fails is kept, the requests after it are not
** run until a request with a reply reports it (MEMINST_STORE_HELD), which
** is then itself not run.  Values of a row: a byte of kind, then
**   'i' an int64   's' a uint32 length and the bytes   'n' nothing (NULL)
**   'b' a uint32 length and the bytes (a blob)
** in the machine's byte order (both ends run on one machine).
*/
#ifndef MEMINST_STORE_H
#define MEMINST_STORE_H

#include <stdint.h>

#define MEMINST_STORE_SOCKET "store.sock"

enum meminst_store_op {
	MEMINST_STORE_OPEN = 1, /* (reply) the file's path: open it read-write, no symbolic link */
	MEMINST_STORE_EXEC,     /* (reply) SQL, run to the end */
	MEMINST_STORE_PREPARE,  /* (reply) SQL: statement `stmt` from now on */
	MEMINST_STORE_ROW,      /* values: bind, step, reset */
	MEMINST_STORE_QUERY,    /* (reply) step once: the first column as `value` */
	MEMINST_STORE_RESET,    /* reset and clear the bindings */
	MEMINST_STORE_FINALIZE,
	MEMINST_STORE_BUSY,     /* the busy timeout, `stmt` ms */
	MEMINST_STORE_JOURNAL,  /* (reply) the rollback journal's name */
};

struct meminst_store_req {
	uint32_t len;  /* bytes after this header */
	uint32_t op;   /* enum meminst_store_op */
	uint32_t stmt; /* the statement (1, 2, ...: the client numbers them) */
	uint32_t pad;
};

#define MEMINST_STORE_HELD 1u /* flags: this reports an earlier row's failure */

struct meminst_store_reply {
	int32_t rc;    /* SQLite's result code (SQLITE_OK, _ROW, _DONE, _BUSY...) */
	int32_t ext;   /* its extended code, sqlite3_extended_errcode */
	int64_t value; /* QUERY's column */
	uint32_t flags;
	uint32_t len;  /* bytes after this header: SQLite's message, or the journal's name */
};

#define MEMINST_STORE_TEXT_MAX 4096 /* a reply's text, at most */

#endif /* MEMINST_STORE_H */
