/*
** rd_scopes.h — the code scopes of compile units, each unit's read once
** (rd_scopes.c), for the inline chains of rd_symbols.c.
*/
#ifndef RD_SCOPES_H
#define RD_SCOPES_H

#include <elfutils/libdw.h>
#include <stddef.h>

/* The deepest nesting of scopes read: deeper DIEs are left out. */
#define RD_SCOPES_DEPTH 256

typedef struct rd_scopes rd_scopes_t;

rd_scopes_t *rd_scopes_new(void);
void rd_scopes_free(rd_scopes_t *s);

/* The DIEs that contain pc (an address of the unit's file) in the unit
** cu, innermost first, as dwarf_getscopes_die would give them for the
** innermost DIE dwarf_getscopes finds: their count (0 when none), at most
** max of them in out.  The DIEs live as long as s.  The first call for a
** unit reads the whole unit once; the DIE pointer cu is the key, so it must
** stay the same for a unit (libdwfl's dwfl_module_addrdie and
** dwfl_module_nextcu keep theirs for the Dwfl's life). */
size_t rd_scopes_at(rd_scopes_t *s, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **out, size_t max);

#endif
