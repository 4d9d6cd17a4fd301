"""MkDocs hook: the site's pages beside ``docs/``.

The notebooks (``notebooks/*.ipynb``) and the verdicts (``proofs/*.md``) live at the top of the
repository, where the tests and the papers' readers find them; this hook adds them to the site
as ``notebooks/`` and ``proofs/`` pages (mkdocs-jupyter renders and executes the notebooks), so
nothing is copied and nothing can drift. It runs before mkdocs-jupyter's own ``on_files``.

The docstrings cite other code with Sphinx roles (``:func:`solve```), which Markdown renders as
the role's name before a code span; ``on_page_content`` drops the role and keeps the code.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
#: site folder -> (repository folder, the files it takes)
MOUNTS = {"notebooks": ("notebooks", "*.ipynb"), "proofs": ("proofs", "*.md")}
ROLE = re.compile(r":(?:mod|func|class|meth|attr|data|exc|obj):(?=<code)")


@event_priority(100)
def on_files(files: Files, config) -> Files:
    for site_folder, (folder, pattern) in MOUNTS.items():
        for path in sorted((ROOT / folder).glob(pattern)):
            files.append(
                File(
                    f"{site_folder}/{path.name}",
                    src_dir=str(ROOT),
                    dest_dir=config["site_dir"],
                    use_directory_urls=config["use_directory_urls"],
                )
            )
    return files


def on_page_content(html: str, page, config, files) -> str:
    return ROLE.sub("", html)
