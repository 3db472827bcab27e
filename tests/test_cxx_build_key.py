"""A C++ program's build key: the headers it includes, as the compiler lists them (runtime/cxx.py)."""

from wormhole_ns3.runtime import cxx, loader, native


def test_the_compilers_dependency_list_gives_the_users_headers_only(tmp_path):
    source = tmp_path / "my prog.cc"
    ns3_header = loader.ns3_prefix() / "include" / "ns3" / "core-module.h"
    module_header = native.cache_dir() / "include" / "wormhole-0" / "ns3" / "flow-tracker.h"
    depfile = (f"program.so: {str(source).replace(' ', chr(92) + ' ')} \\\n"
               f" {tmp_path}/include/a.h {ns3_header} \\\n"
               f" {module_header} {tmp_path}/b\\ c.h {tmp_path}/include/a.h\n")
    assert cxx.included_headers(depfile, source) == [tmp_path / "b c.h", tmp_path / "include" / "a.h"]


def test_a_headers_digest_changes_with_its_text_and_when_it_is_gone(tmp_path):
    header = tmp_path / "a.h"
    header.write_text("#define A 1\n")
    first = cxx.headers_digest([str(header)])
    assert cxx.headers_digest([str(header)]) == first
    header.write_text("#define A 2\n")
    second = cxx.headers_digest([str(header)])
    header.unlink()
    assert len({first, second, cxx.headers_digest([str(header)])}) == 3
