/* process_vfork.S — the vfork wrapper.  vfork's child runs on the parent's stack
 * until it calls exec or _exit, so the wrapper must not have a frame of its own to
 * return through: it asks unblock_vfork_prepare (C) for the real vfork, then jumps
 * to it, and the real vfork returns straight to the program, in both processes. */
#if defined(__x86_64__)
#ifdef UNBLOCK_LINK_WRAP
#define vfork __wrap_vfork
#endif
    .text
    .globl vfork
    .type vfork, @function
vfork:
    .cfi_startproc
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    call unblock_vfork_prepare
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    jmp *%rax
    .cfi_endproc
    .size vfork, .-vfork
#endif
    .section .note.GNU-stack,"",@progbits
