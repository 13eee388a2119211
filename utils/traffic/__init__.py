"""Counted memory traffic, two ways: a slow-memory wrapper for PyTorch code (`SlowMemory`) and a counter
of the loads and stores of a Triton kernel run in the interpreter (`count_traffic`). Both count requested
global-memory bytes, not what reaches HBM past a GPU's L2 cache."""

from utils.traffic.slow_memory import SlowMemory, SlowTensor, traffic_table
from utils.traffic.triton_counter import CounterUnsupported, Traffic, count_traffic

__all__ = ["CounterUnsupported", "SlowMemory", "SlowTensor", "Traffic", "count_traffic", "traffic_table"]
