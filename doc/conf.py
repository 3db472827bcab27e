"""Sphinx configuration of the wormhole-ns3 user guide (``sphinx-build -W -b html doc OUT``).

Pages are reStructuredText, as ns-3's manual, or MyST Markdown; the native modules' model pages live
beside their code (``native/<module>/doc/<module>.rst``, as in an ns-3 tree) and are included from
``doc/models/``.
"""

project = "wormhole-ns3"
author = "the wormhole-ns3 developers"
extensions = ["myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
# pages link to each other's sections by their titles' anchors, as GitHub renders them
myst_heading_anchors = 3
html_theme = "alabaster"
html_title = "wormhole-ns3 user guide"
