/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "random-draw-monitor.h"

#include "ns3/log.h"
#include "ns3/rng-stream.h"

#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RandomDrawMonitor");

NS_OBJECT_ENSURE_REGISTERED(RandomDrawMonitor);

namespace
{

/** The mangled name of RngStream::RandU01, as libraries import it. */
constexpr const char* RAND_U01 = "_ZN3ns39RngStream7RandU01Ev";

/** The monitor the interposed function reports to (never freed: draws may come during exit). */
RandomDrawMonitor* g_monitor = nullptr;

/** RandU01's ABI: a non-virtual member function is a free function taking the object first. */
using RandU01Function = double (*)(RngStream*);

/**
 * The real RandU01, found by name where ns-3's core library defines it: this
 * library never calls it through a linkage slot of its own, so no patch can
 * make the interposed function call itself.
 */
RandU01Function g_real = nullptr;

/** What a library's RandU01 slot is pointed at. */
double
InterposedRandU01(RngStream* stream)
{
    double value = g_real(stream);
    g_monitor->NotifyDraw(stream, value);
    return value;
}

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

/** A dynamic-section address: glibc relocates most of them in place, some platforms leave them relative. */
template <typename T>
T*
DynamicAddress(const dl_phdr_info* info, ElfW(Addr) value)
{
    return reinterpret_cast<T*>(value < info->dlpi_addr ? info->dlpi_addr + value : value);
}

/**
 * Point one linkage slot at the interposed function. A slot under RELRO (a
 * library bound at load time) is made writable for the write and read-only again.
 */
bool
PatchSlot(void** slot, bool readOnly)
{
    if (*slot == reinterpret_cast<void*>(&InterposedRandU01))
    {
        return false;
    }
    long page = sysconf(_SC_PAGESIZE);
    auto* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(slot) & ~static_cast<uintptr_t>(page - 1));
    if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0)
    {
        return false;
    }
    *slot = reinterpret_cast<void*>(&InterposedRandU01);
    if (readOnly)
    {
        mprotect(start, page, PROT_READ);
    }
    return true;
}

/** dl_iterate_phdr's callback: patch every RandU01 slot of one loaded object; counts the objects patched. */
int
InterposeIn(dl_phdr_info* info, size_t, void* data)
{
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
            if (std::strcmp(names + symbol.st_name, RAND_U01) == 0)
            {
                ElfW(Addr) slot = info->dlpi_addr + table[i].r_offset;
                patched |= PatchSlot(reinterpret_cast<void**>(slot), slot >= relroFrom && slot < relroTo);
            }
        }
    };
    patchTable(plt, pltBytes);
    patchTable(rela, relaBytes);
    if (patched)
    {
        NS_LOG_INFO("interposed on RngStream::RandU01 in " << info->dlpi_name);
        ++*static_cast<uint32_t*>(data);
    }
    return 0;
}

} // namespace

TypeId
RandomDrawMonitor::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RandomDrawMonitor")
            .SetParent<Object>()
            .SetGroupName("Wormhole")
            .AddTraceSource("Draw",
                            "A random number was drawn (RngStream::RandU01), by any model.",
                            MakeTraceSourceAccessor(&RandomDrawMonitor::m_drawTrace),
                            "ns3::RandomDrawMonitor::DrawCallback");
    return tid;
}

RandomDrawMonitor::RandomDrawMonitor()
{
    NS_LOG_FUNCTION(this);
}

Ptr<RandomDrawMonitor>
RandomDrawMonitor::Get()
{
    if (g_monitor == nullptr)
    {
        Ptr<RandomDrawMonitor> monitor = CreateObject<RandomDrawMonitor>();
        monitor->Ref(); // the process keeps it: the interposed slots report to it until exit
        g_monitor = PeekPointer(monitor);
    }
    return g_monitor;
}

bool
RandomDrawMonitor::Install()
{
    NS_LOG_FUNCTION(this);
    NS_ASSERT_MSG(this == g_monitor, "install the process's monitor, RandomDrawMonitor::Get()");
    if (g_real == nullptr)
    {
        g_real = reinterpret_cast<RandU01Function>(dlsym(RTLD_DEFAULT, RAND_U01));
        if (g_real == nullptr)
        {
            return IsActive();
        }
    }
    uint32_t libraries = 0;
    dl_iterate_phdr(&InterposeIn, &libraries);
    m_interposed += libraries;
    return IsActive();
}

bool
RandomDrawMonitor::IsActive() const
{
    return m_interposed > 0;
}

uint32_t
RandomDrawMonitor::GetInterposedLibraries() const
{
    return m_interposed;
}

uint64_t
RandomDrawMonitor::GetDrawCount() const
{
    return m_draws;
}

void
RandomDrawMonitor::NotifyDraw(const RngStream* stream, double value)
{
    ++m_draws;
    m_drawTrace(stream, value);
}

} // namespace ns3
