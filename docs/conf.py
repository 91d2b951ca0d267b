# Sphinx configuration of the SHMEM documentation.
# Build with:  python -m pip install sphinx && python -m sphinx -b html docs docs/_build/html
import os

_HERE = os.path.dirname(os.path.abspath(__file__))

project = "SHMEM"
author = "SHMEM developers"
with open(os.path.join(_HERE, "..", "packages", "shmem-native", "VERSION"), encoding="utf-8") as f:
    release = f.read().strip()
version = ".".join(release.split(".")[:2])

extensions = []
templates_path = []
exclude_patterns = ["_build"]
html_theme = "alabaster"
