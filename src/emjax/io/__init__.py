"""File formats: HDF5 results (:mod:`.hdf5`) and XDMF for ParaView (:mod:`.xdmf`)."""

from .hdf5 import load_results, save_results
from .xdmf import write_xdmf

__all__ = ["load_results", "save_results", "write_xdmf"]
