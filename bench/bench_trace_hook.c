/* bench_trace_hook.c — empty -finstrument-functions hooks, preloaded by
** bench/trace.sh: the price of the instrumentation itself. */
__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)fn, (void)site;
}
__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn, (void)site;
}
