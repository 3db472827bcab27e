#!/usr/bin/env bash
# Install the native modules into an ns-3.44 source tree as contrib modules.
#
#   patches/apply-to-ns3-source.sh [--link] /path/to/ns-3.44
#   cd /path/to/ns-3.44 && ./ns3 configure --enable-examples --enable-tests && ./ns3 build
#
# Every folder of native/ with a CMakeLists.txt (wormhole, rdma, datacenter,
# wormhole-rdma, wormhole-datacenter) is copied (or, with --link, symlinked)
# to contrib/<module>/ as it is committed: its own CMakeLists.txt (build_lib),
# model/, helper/, test/ and doc/. Then programs link libns3.44-wormhole (and
# the adapters they need, e.g. libns3.44-wormhole-rdma) and select the
# accelerator with
#   NS_GLOBAL_VALUE="SimulatorImplementationType=ns3::WormholeSimulatorImpl"
# (the Python controller drives it through the Run() hooks of ns3::RunObserver),
# and ./test.py -s wormhole (rdma, datacenter, ...) runs the modules' test suites.
set -euo pipefail
link=0
if [[ "${1:-}" == "--link" ]]; then
    link=1
    shift
fi
tree=${1:?usage: $0 [--link] NS3_SOURCE_TREE}
here=$(cd "$(dirname "$0")" && pwd)
native=$(cd "$here/../native" && pwd)
if [[ ! -f "$tree/ns3" || ! -d "$tree/contrib" ]]; then
    echo "error: $tree is not an ns-3 source tree (no ./ns3 script or contrib/ folder)" >&2
    exit 2
fi
version=$(grep -oE '[0-9]+\.[0-9]+' "$tree/VERSION" 2>/dev/null | head -n 1 || true)
if [[ -n "$version" && "$version" != "3.44" ]]; then
    echo "error: the modules reach private members of ns-3.44 models; $tree is ns-3 $version" >&2
    exit 2
fi
for cmake in "$native"/*/CMakeLists.txt; do
    src=$(dirname "$cmake")
    name=$(basename "$src")
    dest="$tree/contrib/$name"
    rm -rf "$dest"
    if [[ $link == 1 ]]; then
        ln -s "$src" "$dest"
    else
        mkdir -p "$dest"
        cp -R "$src"/. "$dest"/
    fi
    echo "installed the $name module in $dest"
done
