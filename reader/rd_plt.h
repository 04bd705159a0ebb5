/*
** rd_plt.h — the functions of a module's PLT stubs (rd_plt.c): the stub
** through which a program calls puts is `puts@plt`, as objdump and perf
** name it, whether the module has a symbol table or was stripped.
*/
#ifndef RD_PLT_H
#define RD_PLT_H

#include <gelf.h>
#include <stdbool.h>

typedef struct rd_plt rd_plt_t;

/* The stubs of elf's sections .plt, .plt.sec and .plt.got, read now;
** NULL when it has none.  The names are copies: elf may end first. */
rd_plt_t *rd_plt_new(Elf *elf);
void rd_plt_free(rd_plt_t *t);

/* Whether addr (a file address: the module's bias taken off) is in a stub:
** then *name is the function it jumps to (a dynamic symbol's name, as
** stored: mangled, no version), or NULL and *target the file address of
** the ifunc resolver that fills its slot, or both NULL/0 for stubs that
** jump to no symbol (the lazy binder's first entry and the stubs it
** serves), a run of them taken as one; *off is addr's offset from the
** stub's start. */
bool rd_plt_find(const rd_plt_t *t, GElf_Addr addr, const char **name, GElf_Addr *target, GElf_Off *off);

#endif
