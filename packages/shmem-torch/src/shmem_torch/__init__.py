"""shmem_torch: symmetric torch tensors for SHMEM.

Not implemented yet.  This package will hold symmetric tensors (tensors whose storage
lives on the SHMEM symmetric heap), tensor put/get and collectives, re-exported by the
``shmem`` package as ``shmem.aclshmem_create_tensor`` and friends.  For now it only
carries its version.
"""

__version__ = "0.1.0"
