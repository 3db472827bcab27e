/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "linkage-slots.h"

#include <cstring>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

namespace ns3
{
namespace wormhole
{

namespace
{

#if defined(__x86_64__)
constexpr uint32_t JUMP_SLOT = R_X86_64_JUMP_SLOT;
constexpr uint32_t GLOB_DAT = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t JUMP_SLOT = R_AARCH64_JUMP_SLOT;
constexpr uint32_t GLOB_DAT = R_AARCH64_GLOB_DAT;
#else
constexpr uint32_t JUMP_SLOT = 0xffffffffu;
constexpr uint32_t GLOB_DAT = 0xffffffffu;
#endif

/** What one interposition looks for, and how many libraries point at the replacement. */
struct Interposition
{
    const char* symbol;
    void* replacement;
    uint32_t libraries{0};
};

/** A dynamic-section address: glibc relocates most of them in place, some platforms leave them relative. */
template <typename T>
T*
DynamicAddress(const dl_phdr_info* info, ElfW(Addr) value)
{
    return reinterpret_cast<T*>(value < info->dlpi_addr ? info->dlpi_addr + value : value);
}

/** Point one slot at the replacement (a slot under RELRO is made writable for the write). @return true if it does. */
bool
PatchSlot(void** slot, void* replacement, bool readOnly)
{
    if (*slot == replacement)
    {
        return true;
    }
    long page = sysconf(_SC_PAGESIZE);
    auto* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(slot) & ~static_cast<uintptr_t>(page - 1));
    if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0)
    {
        return false;
    }
    *slot = replacement;
    if (readOnly)
    {
        mprotect(start, page, PROT_READ);
    }
    return true;
}

/** dl_iterate_phdr's callback: point one loaded object's slots for the symbol at the replacement. */
int
InterposeIn(dl_phdr_info* info, size_t, void* data)
{
    auto* interposition = static_cast<Interposition*>(data);
    const ElfW(Dyn)* dynamic = nullptr;
    ElfW(Addr) relroFrom = 0;
    ElfW(Addr) relroTo = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i)
    {
        const ElfW(Phdr)& header = info->dlpi_phdr[i];
        if (header.p_type == PT_DYNAMIC)
        {
            dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + header.p_vaddr);
        }
        else if (header.p_type == PT_GNU_RELRO)
        {
            relroFrom = info->dlpi_addr + header.p_vaddr;
            relroTo = relroFrom + header.p_memsz;
        }
    }
    if (dynamic == nullptr || JUMP_SLOT == 0xffffffffu)
    {
        return 0;
    }
    const ElfW(Sym)* symbols = nullptr;
    const char* names = nullptr;
    const ElfW(Rela)* plt = nullptr;
    size_t pltBytes = 0;
    const ElfW(Rela)* rela = nullptr;
    size_t relaBytes = 0;
    bool pltIsRela = true;
    for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d)
    {
        switch (d->d_tag)
        {
        case DT_SYMTAB:
            symbols = DynamicAddress<const ElfW(Sym)>(info, d->d_un.d_ptr);
            break;
        case DT_STRTAB:
            names = DynamicAddress<const char>(info, d->d_un.d_ptr);
            break;
        case DT_JMPREL:
            plt = DynamicAddress<const ElfW(Rela)>(info, d->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            pltBytes = d->d_un.d_val;
            break;
        case DT_PLTREL:
            pltIsRela = d->d_un.d_val == DT_RELA;
            break;
        case DT_RELA:
            rela = DynamicAddress<const ElfW(Rela)>(info, d->d_un.d_ptr);
            break;
        case DT_RELASZ:
            relaBytes = d->d_un.d_val;
            break;
        default:
            break;
        }
    }
    if (symbols == nullptr || names == nullptr || !pltIsRela)
    {
        return 0;
    }
    bool patched = false;
    auto patchTable = [&](const ElfW(Rela)* table, size_t bytes) {
        for (size_t i = 0; table != nullptr && i < bytes / sizeof(ElfW(Rela)); ++i)
        {
            auto type = static_cast<uint32_t>(ELF64_R_TYPE(table[i].r_info));
            if (type != JUMP_SLOT && type != GLOB_DAT)
            {
                continue;
            }
            const ElfW(Sym)& symbol = symbols[ELF64_R_SYM(table[i].r_info)];
            if (std::strcmp(names + symbol.st_name, interposition->symbol) == 0)
            {
                ElfW(Addr) slot = info->dlpi_addr + table[i].r_offset;
                patched |= PatchSlot(reinterpret_cast<void**>(slot),
                                     interposition->replacement,
                                     slot >= relroFrom && slot < relroTo);
            }
        }
    };
    patchTable(plt, pltBytes);
    patchTable(rela, relaBytes);
    if (patched)
    {
        ++interposition->libraries;
    }
    return 0;
}

} // namespace

uint32_t
InterposeOnFunction(const char* symbol, void* replacement)
{
    Interposition interposition{symbol, replacement};
    dl_iterate_phdr(&InterposeIn, &interposition);
    return interposition.libraries;
}

} // namespace wormhole
} // namespace ns3
