"""Meshes: the `Mesh` container, generators and file readers and writers."""
from .mesh import Mesh, MeshError
from . import generate
from .io import check_orientation, read, signed_measure, write
from .samples import sample, sample_path, samples

__all__ = ["Mesh", "MeshError", "generate", "read", "write", "check_orientation",
           "signed_measure", "sample", "sample_path", "samples"]
