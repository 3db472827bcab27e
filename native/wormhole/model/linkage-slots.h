/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef WORMHOLE_LINKAGE_SLOTS_H
#define WORMHOLE_LINKAGE_SLOTS_H

#include <cstdint>

namespace ns3
{
namespace wormhole
{

/**
 * @ingroup wormhole
 * Point every loaded library's linkage slots for one function at another.
 *
 * ns-3's libraries are prebuilt, and a library calls the functions of another
 * (or its own exported ones) through its procedure linkage table: one slot per
 * function, filled by the dynamic linker. Pointing a slot elsewhere makes
 * every such call reach the replacement, which may call the real function (found
 * with dlsym: this library never calls it through a slot of its own, so no patch
 * makes the replacement call itself). A slot under RELRO is made writable for
 * the write and read-only again. Calls a library makes directly (linked with
 * -Bsymbolic, or inlined) are not reached; neither are libraries loaded later.
 *
 * @param symbol the function's mangled name, as libraries import it
 * @param replacement the function its callers reach instead (same signature)
 * @return the number of libraries whose slots now point at @p replacement
 *         (those patched before included); 0 where the platform is not ELF on
 *         x86-64 or AArch64
 */
uint32_t InterposeOnFunction(const char* symbol, void* replacement);

} // namespace wormhole
} // namespace ns3

#endif /* WORMHOLE_LINKAGE_SLOTS_H */
