/* report.c — the comm module's table (core/module.h) and its part of the
 * per-process report: which MPI, the "comm" section (docs/stats.md).  Built into
 * both the MPI libraries and the MPI-free one (where the tables are empty). */
#define _GNU_SOURCE
#include "comm/comm.h"
#include "core/module.h"
#include "core/options.h"
#include "progress/progress.h"

#define emit unblock_emit

static uint64_t get(const unblock_counter_t *c) { return unblock_counter_get(c); }

static void emit_comm(unblock_emitter_t *e)
{
    uint64_t calls = 0, fast = 0, by_binding[UNBLOCK_BINDING_COUNT] = { 0 };
    for (unsigned i = 0; i < unblock_mpi_fn_count; i++)
        for (unsigned b = 0; b < UNBLOCK_BINDING_COUNT; b++) {
            uint64_t f = unblock_mpi_fn_get(i, b, 1);
            uint64_t n = unblock_mpi_fn_get(i, b, 0) + f;
            by_binding[b] += n;
            fast += f;
            if (unblock_mpi_fn_carries_data[i])
                calls += n;
        }
    uint64_t async = get(&unblock_stats.comm_async);
    emit(e, "  \"comm\": {\n    \"calls\": %llu,\n    \"async\": %llu,\n"
            "    \"passthrough\": %llu,\n    \"faults\": %llu,\n",
         (unsigned long long)calls, (unsigned long long)async,
         (unsigned long long)(calls - async),
         (unsigned long long)get(&unblock_stats.comm_faults));
    emit(e, "    \"copied\": %llu,\n    \"protected\": %llu,\n    \"received\": %llu,\n"
            "    \"immediate\": %llu,\n    \"derived\": %llu,\n    \"types_flattened\": %llu,\n"
            "    \"multiview\": %llu,\n    \"viewed\": %llu,\n"
            "    \"bytes\": %llu,\n    \"passthrough_why\": {",
         (unsigned long long)get(&unblock_stats.comm_copied),
         (unsigned long long)get(&unblock_stats.comm_protected),
         (unsigned long long)get(&unblock_stats.comm_received),
         (unsigned long long)get(&unblock_stats.comm_immediate),
         (unsigned long long)get(&unblock_stats.comm_derived),
         (unsigned long long)get(&unblock_stats.comm_types_flattened),
         (unsigned long long)get(&unblock_stats.comm_multiview),
         (unsigned long long)get(&unblock_stats.comm_viewed),
         (unsigned long long)get(&unblock_stats.comm_bytes));
    static const char *const why[] = {
#define UNBLOCK_X(name, doc) #name,
        UNBLOCK_PASS_REASONS(UNBLOCK_X)
#undef UNBLOCK_X
    };
    for (unsigned i = 0; i < UNBLOCK_PASS_COUNT; i++)
        emit(e, "%s\"%s\": %llu", i ? ", " : "", why[i],
             (unsigned long long)(get(&unblock_stats.comm_pass[i]) +
                                  unblock_count_get(UNBLOCK_COUNT_PASS + i) +
                                  (i == UNBLOCK_PASS_small ? fast : 0)));
    emit(e, "},\n");
    emit(e, "    \"own\": {\"tracked\": %llu, \"untracked\": %llu, \"progressed\": %llu, "
            "\"driveable\": %llu, \"undriven\": %llu, \"late\": %llu, \"trial\": %llu},\n",
         (unsigned long long)unblock_count_get(UNBLOCK_COUNT_OWN_TRACKED),
         (unsigned long long)get(&unblock_stats.comm_own_untracked),
         (unsigned long long)get(&unblock_stats.comm_own_progressed),
         (unsigned long long)get(&unblock_stats.comm_own_driveable),
         (unsigned long long)get(&unblock_stats.comm_own_undriven),
         (unsigned long long)get(&unblock_stats.comm_own_late),
         (unsigned long long)get(&unblock_stats.comm_own_trial));
    /* How transfers progress: the completion thread (MPI_THREAD_MULTIPLE), or
     * only at intercepted calls and faults (MPI did not give the level, or
     * UNBLOCK_THREAD=program); "none" before MPI_Init and without MPI. */
    emit(e, "    \"progress\": \"%s\",\n    \"thread_level\": %d,\n",
         get(&unblock_stats.engine_started) ? "thread"
         : get(&unblock_stats.tick_started) ? "tick"
         : unblock_g.size > 0 ? "calls" : "none",
         unblock_g.size > 0 ? unblock_g.mpi_thread_provided : -1);
    emit(e, "    \"fast\": %llu,\n", (unsigned long long)fast);
    emit(e, "    \"engine\": {\"completed\": %llu, \"tests\": %llu, \"test_ms\": %.3f, "
            "\"spare_core\": %d, \"cpus\": %d, \"gate\": \"%s\", \"thaws\": %llu, "
            "\"freezes\": %llu},\n",
         (unsigned long long)get(&unblock_stats.engine_completed),
         (unsigned long long)get(&unblock_stats.engine_tests),
         (double)get(&unblock_stats.engine_ns) / 1e6,
         get(&unblock_stats.engine_started) ? unblock_spare_core() : 0,
         get(&unblock_stats.engine_started) ? unblock_spare_core_cpus() : 0, unblock_comm_gate_state(),
         (unsigned long long)get(&unblock_stats.engine_thaws),
         (unsigned long long)get(&unblock_stats.engine_freezes));
    emit(e, "    \"tick\": {\"armed\": %llu, \"polls\": %llu, \"deferred\": %llu, "
            "\"completed\": %llu, \"fault_waits\": %llu, \"fault_unsafe\": %llu},\n",
         (unsigned long long)get(&unblock_stats.tick_armed),
         (unsigned long long)get(&unblock_stats.tick_polls),
         (unsigned long long)get(&unblock_stats.tick_deferred),
         (unsigned long long)get(&unblock_stats.tick_completed),
         (unsigned long long)get(&unblock_stats.tick_fault_waits),
         (unsigned long long)get(&unblock_stats.tick_fault_unsafe));
    emit(e, "    \"by_binding\": {\"c\": %llu, \"f77\": %llu, \"f08\": %llu},\n",
         (unsigned long long)by_binding[0], (unsigned long long)by_binding[1],
         (unsigned long long)by_binding[2]);
    emit(e, "    \"fortran_front\": \"%s\",\n", unblock_fortran_front_kind());
    emit(e, "    \"functions\": {");
    const char *sep = "";
    for (unsigned i = 0; i < unblock_mpi_fn_count; i++) {
        uint64_t n = 0;
        for (unsigned b = 0; b < UNBLOCK_BINDING_COUNT; b++)
            n += unblock_mpi_fn_get(i, b, 0) + unblock_mpi_fn_get(i, b, 1);
        if (n) {
            emit(e, "%s\n      \"%s\": %llu", sep, unblock_mpi_fn_names[i], (unsigned long long)n);
            sep = ",";
        }
    }
    emit(e, "%s}\n  },\n", *sep ? "\n    " : "");
}

static void comm_stats(unblock_emitter_t *e)
{
    emit(e, "  \"mpi\": \"%s\",\n  \"mpi_abi_ok\": %s,\n", unblock_mpi_impl,
         unblock_g.mpi_abi_ok ? "true" : "false");
    emit_comm(e);
}

static void comm_init(void)
{
    if (unblock_opt.comm)
        unblock_comm_init();
}

UNBLOCK_MODULE(unblock_comm_module) = {
    .name = "comm",
    .order = UNBLOCK_ORDER_COMM,
    .init = comm_init,
    .quiesce = unblock_comm_quiesce_all,
    .stats = comm_stats,
};
