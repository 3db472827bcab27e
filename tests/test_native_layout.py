"""native/ is a set of ns-3 contrib modules whose includes follow the allowed dependency graph."""

import re

import pytest

from conftest import REPO

NATIVE = REPO / "native"

#: module -> the modules of native/ its files may include (ns-3's own headers are always allowed)
ALLOWED = {
    "wormhole": set(),
    "rdma": set(),
    "datacenter": {"rdma"},
    "wormhole-rdma": {"wormhole", "rdma"},
    "wormhole-datacenter": {"wormhole", "datacenter", "rdma"},
}

#: The C library's headers with a folder in their name that native/ includes (not relative paths).
SYSTEM_HEADERS = {"sys/mman.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]', re.M)


def module_dirs():
    return sorted(p.parent for p in NATIVE.glob("*/CMakeLists.txt"))


def owners():
    """Header file name -> the module that holds it."""
    owner = {}
    for folder in module_dirs():
        for header in folder.glob("*/*.h"):
            assert header.name not in owner, f"{header.name} is in two modules"
            owner[header.name] = folder.name
        owner[f"{folder.name}-module.h"] = folder.name
    return owner


def included_modules(folder, owner):
    """(file, included header, module owning it) for every include of one of our headers."""
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".h", ".cc"):
            continue
        for target in INCLUDE.findall(path.read_text()):
            name = target.rsplit("/", 1)[-1]
            if target in SYSTEM_HEADERS:
                continue
            if target.startswith("ns3/") or "/" not in target:
                if name in owner:
                    yield path, target, owner[name]
            else:  # a relative path such as ../model/x.h: never across folders
                yield path, target, None


def test_the_modules_are_the_ones_the_graph_names():
    assert {f.name for f in module_dirs()} == set(ALLOWED)
    assert not list(NATIVE.glob("*.h")) and not (NATIVE / "model").exists()


@pytest.mark.parametrize("module", sorted(ALLOWED))
def test_a_module_includes_only_what_it_may_depend_on(module):
    owner = owners()
    bad = [
        f"{path.relative_to(NATIVE)} includes {target} ({dep or 'relative path'})"
        for path, target, dep in included_modules(NATIVE / module, owner)
        if dep != module and dep not in ALLOWED[module]
    ]
    assert not bad, "\n".join(bad)


def test_the_accelerator_and_the_rdma_model_know_nothing_of_each_other():
    owner = owners()
    deps = {
        m: {dep for _, _, dep in included_modules(NATIVE / m, owner)} - {m}
        for m in ("wormhole", "rdma", "datacenter")
    }
    assert deps["wormhole"] == set()
    assert deps["rdma"] == set()
    assert deps["datacenter"] <= {"rdma"}


@pytest.mark.parametrize("module", sorted(ALLOWED))
def test_every_module_is_a_contrib_module(module):
    folder = NATIVE / module
    assert (folder / "CMakeLists.txt").is_file()
    assert list((folder / "model").glob("*.cc")) and list((folder / "model").glob("*.h"))
    assert list((folder / "test").glob("*.cc")), "a test suite"
    assert (folder / "doc" / f"{module}.rst").is_file()
    assert (folder / f"{module}-module.h").is_file()


@pytest.mark.parametrize("module", sorted(ALLOWED))
def test_cmakelists_lists_every_file_and_only_allowed_libraries(module):
    from wormhole_ns3.runtime import native

    folder = NATIVE / module
    spec = native.parse_build_lib((folder / "CMakeLists.txt").read_text())
    assert spec["LIBNAME"] == [module]
    on_disk = {str(p.relative_to(folder)) for d in ("model", "helper") for p in (folder / d).glob("*.cc")}
    assert set(spec["SOURCE_FILES"]) == on_disk
    headers = {str(p.relative_to(folder)) for d in ("model", "helper") for p in (folder / d).glob("*.h")}
    assert set(spec["HEADER_FILES"]) == headers
    assert set(spec["TEST_SOURCES"]) == {str(p.relative_to(folder)) for p in (folder / "test").glob("*.cc")}
    linked = {re.fullmatch(r"\$\{lib([\w-]+)\}", lib).group(1) for lib in spec["LIBRARIES_TO_LINK"]}
    assert linked & set(ALLOWED) <= ALLOWED[module]
    # the module header declares every header, as ns-3's generated one does
    module_header = (folder / f"{module}-module.h").read_text()
    assert {f"ns3/{h.rsplit('/', 1)[-1]}" for h in headers} == set(INCLUDE.findall(module_header))


def test_headers_seen_by_cling_hold_declarations_only():
    for header in NATIVE.glob("*/*/*.h"):
        text = header.read_text()
        assert "NS_OBJECT_ENSURE_REGISTERED" not in text, header
        assert "NS_LOG_COMPONENT_DEFINE" not in text, header
