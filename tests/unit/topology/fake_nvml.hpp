#pragma once
// The stand-in libnvidia-ml (topology/fake_nvml/) that the NVML and discovery tests load: its path
// is SCALEBENCH_FAKE_NVML, which linking scalebench_topology_testing defines.
#ifndef SCALEBENCH_FAKE_NVML
#error "link scalebench_topology_testing: it defines SCALEBENCH_FAKE_NVML, the path of the stand-in libnvidia-ml"
#endif
