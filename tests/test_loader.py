"""The lazy loader finds the module of a name from ns-3's own headers (no ns-3 is loaded here)."""

from wormhole_ns3.runtime import loader


def test_every_module_header_maps_to_its_module():
    index = loader._header_index()
    assert index["mobility-model.h"] == "mobility"
    assert index["yans-wifi-helper.h"] == "wifi"
    assert index["csma-net-device.h"] == "csma"
    assert len(index) > 900  # the module headers include theirs as <ns3/x.h>


def test_cpp_text_names_the_modules_of_its_includes_and_classes():
    code = """
    #include "ns3/olsr-module.h"
    #include <ns3/csma-net-device.h>
    double X(ns3::Ptr<ns3::Node> n) { return n->GetObject<MobilityModel>()->GetPosition().x; }
    """
    assert loader._named_modules(code) == {"olsr", "csma", "core", "network", "mobility"}
    assert loader._named_modules("int f() { return 1; }") == set()


def test_a_cpp_program_links_the_modules_of_every_header_it_includes():
    from wormhole_ns3.runtime import cxx, native

    source = '#include "ns3/yans-wifi-helper.h"\n#include <ns3/mobility-helper.h>\n#include "ns3/csma-module.h"\n'
    assert cxx.modules_of(source) == [*native.LINKED_MODULES, "wifi", "mobility", "csma"]
