"""Several "nodes" on one machine, made of network namespaces: Cluster, unavailable and
cleanup_stale of shmem_tools._netns, the project's one namespace helper (shmem-perf --nodes 2
uses it too), under the name these tests import.

shmem-tools is installed with the other packages where these tests run (ci/test.sh); from a
plain checkout its source folder is used (the module needs only the standard library).
"""

import os
import sys

try:
    from shmem_tools._netns import Cluster, NetnsError, cleanup_stale, unavailable
except ImportError:
    sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                 "packages", "shmem-tools", "src"))
    from shmem_tools._netns import Cluster, NetnsError, cleanup_stale, unavailable

__all__ = ["Cluster", "NetnsError", "cleanup_stale", "unavailable"]
