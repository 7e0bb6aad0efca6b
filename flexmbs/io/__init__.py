"""Results storage and export: HDF5 results files written during a run, `load_results`,
and ParaView files (XDMF + HDF5 time series, VTU); import of Abaqus and ANSYS matrices
(`fe_import`)."""
from .store import (DISK_FULL, FORMAT, FORMAT_VERSION, DamagedFileError, DiskFullError, ResultsFile, RunWriter,
                    active_recording, is_disk_full, list_runs, load_results, recording, results_path, save_results,
                    truncation)
from .paraview import (export_paraview, paraview_stress, write_results_vtu, write_results_xdmf, write_system_xdmf,
                       write_vtu, write_xdmf)
from .fe_import import ImportedBody, import_body
from .urdf import read_urdf, read_urdf_joints, read_urdf_shapes

__all__ = ["ResultsFile", "RunWriter", "load_results", "save_results", "list_runs", "recording",
           "active_recording", "results_path", "DamagedFileError", "DiskFullError", "is_disk_full", "truncation", "write_xdmf",
           "write_results_xdmf", "write_results_vtu", "write_system_xdmf", "paraview_stress", "write_vtu", "export_paraview", "FORMAT", "FORMAT_VERSION", "DISK_FULL",
           "import_body", "ImportedBody", "read_urdf", "read_urdf_joints", "read_urdf_shapes"]
