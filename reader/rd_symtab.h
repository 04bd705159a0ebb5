/*
** rd_symtab.h — a module's symbol table sorted once by address
** (rd_symtab.c), for the function names of rd_symbols.c: the answer of
** libdwfl's dwfl_module_addrinfo without its walk of the whole table for
** every address.
*/
#ifndef RD_SYMTAB_H
#define RD_SYMTAB_H

#include <elfutils/libdwfl.h>

typedef struct rd_symtab rd_symtab_t;

/* The index of mod's symbols, read now (dwfl_module_getsymtab); free it
** before the Dwfl ends (its names are the Dwfl's). */
rd_symtab_t *rd_symtab_new(Dwfl_Module *mod);
void rd_symtab_free(rd_symtab_t *t);

/* The name of the symbol that contains addr (an address in the Dwfl, the
** module's bias added) and in *off addr's offset from its start, or NULL:
** what dwfl_module_addrinfo(mod, addr, off, …) returns, the same symbol
** among aliases.  t may be NULL (then libdwfl's search). */
const char *rd_symtab_find(rd_symtab_t *t, Dwfl_Module *mod, GElf_Addr addr, GElf_Off *off);

#endif
