"""Results storage and export: HDF5 results files written during a run, `load_results`,
and ParaView files (XDMF + HDF5 time series, VTU); import of Abaqus and ANSYS matrices
(`fe_import`).

Each public name loads its submodule on first use (`flexmbs.lazy.lazy_package`): reading or
writing results.h5 imports h5py but not the ParaView writers, scipy.sparse (the matrix import) or
the URDF reader.  The ParaView files are written with h5py and numpy (`flexmbs.io.vtk_formats`),
not meshio.
"""
from ..lazy import lazy_package

_SOURCES = {
    "flexmbs.io.store": ["DISK_FULL", "FORMAT", "FORMAT_VERSION", "DamagedFileError", "DiskFullError", "ResultsFile",
                         "RunWriter", "active_recording", "is_disk_full", "list_runs", "load_results", "recording",
                         "results_path", "save_results", "truncation"],
    "flexmbs.io.paraview": ["export_paraview", "paraview_stress", "write_results_vtu", "write_results_xdmf",
                            "write_system_xdmf", "write_vtu", "write_xdmf"],
    "flexmbs.io.fe_import": ["ImportedBody", "import_body"],
    "flexmbs.io.urdf": ["read_urdf", "read_urdf_joints", "read_urdf_shapes"],
}
_PUBLIC = {name: module for module, names in _SOURCES.items() for name in names}

__all__ = ["ResultsFile", "RunWriter", "load_results", "save_results", "list_runs", "recording",
           "active_recording", "results_path", "DamagedFileError", "DiskFullError", "is_disk_full", "truncation", "write_xdmf",
           "write_results_xdmf", "write_results_vtu", "write_system_xdmf", "paraview_stress", "write_vtu", "export_paraview", "FORMAT", "FORMAT_VERSION", "DISK_FULL",
           "import_body", "ImportedBody", "read_urdf", "read_urdf_joints", "read_urdf_shapes"]

__getattr__, __dir__ = lazy_package(__name__, _PUBLIC)
