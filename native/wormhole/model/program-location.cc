/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "program-location.h"

#include "linkage-slots.h"

#include <dlfcn.h>

namespace ns3
{

namespace
{

/** The mangled name of SystemPath::FindSelfDirectory(), as libraries import it. */
constexpr const char* FIND_SELF_DIRECTORY = "_ZN3ns310SystemPath17FindSelfDirectoryB5cxx11Ev";

/** FindSelfDirectory's ABI: a free function returning a std::string. */
using FindSelfDirectoryFunction = std::string (*)();

/** The real function, found where ns-3's core library defines it. */
FindSelfDirectoryFunction g_real = nullptr;

/** What FindSelfDirectory() answers (empty: the real answer). */
std::string g_directory;

/** What a library's FindSelfDirectory slot is pointed at. */
std::string
InterposedFindSelfDirectory()
{
    return g_directory.empty() ? g_real() : g_directory;
}

} // namespace

bool
ProgramLocation::SetSelfDirectory(const std::string& directory)
{
    if (g_real == nullptr)
    {
        g_real = reinterpret_cast<FindSelfDirectoryFunction>(dlsym(RTLD_DEFAULT, FIND_SELF_DIRECTORY));
        if (g_real == nullptr)
        {
            return false;
        }
    }
    g_directory = directory;
    return wormhole::InterposeOnFunction(FIND_SELF_DIRECTORY,
                                         reinterpret_cast<void*>(&InterposedFindSelfDirectory)) > 0;
}

} // namespace ns3
