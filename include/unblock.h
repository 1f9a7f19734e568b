/* unblock.h — the only public header of unblock.
 *
 * Programs never need it: unblock works on unmodified programs.  It gives the
 * version, for tools that want to check which unblock they run under. */
#ifndef UNBLOCK_H
#define UNBLOCK_H

#define UNBLOCK_VERSION_MAJOR 0
#define UNBLOCK_VERSION_MINOR 1
#define UNBLOCK_VERSION_PATCH 0

#endif
