/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef WORMHOLE_PROGRAM_LOCATION_H
#define WORMHOLE_PROGRAM_LOCATION_H

#include <string>

namespace ns3
{

/**
 * @ingroup wormhole
 * @brief Where ns-3 believes the running program is.
 *
 * ns-3 finds files relative to its program's executable: TestCase's
 * CreateDataDirFilename (a test's reference data) walks up from
 * SystemPath::FindSelfDirectory(), the executable's folder, to the first
 * folder holding VERSION and LICENSE, ns-3's top-level source folder, and
 * fatals if there is none. A C++ program the harness runs in its own process
 * (`wormhole-ns3 run prog.cc`) has Python's executable for its own; this makes
 * FindSelfDirectory() answer the folder a plain build of the program sits in,
 * so that ns-3 finds the same files as it does for that build.
 */
class ProgramLocation
{
  public:
    /**
     * Make SystemPath::FindSelfDirectory() answer @p directory in every loaded
     * library that calls it through its linkage table (ns-3's core library, whose
     * TestRunner asks it), and in the program's own library if it is loaded; an
     * empty @p directory makes it answer the executable's folder again.
     * @return true if ns-3's calls are redirected (false where the platform does
     *         not allow it: the executable's folder is then answered, as before).
     */
    static bool SetSelfDirectory(const std::string& directory);
};

} // namespace ns3

#endif /* WORMHOLE_PROGRAM_LOCATION_H */
