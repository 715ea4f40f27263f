#pragma once

// SCALEBENCH_HOST_DEVICE marks a function that both the GPU kernels (nvcc) and the host checks
// (the host compiler) call, so that a fill pattern and its reference are one source.
#if defined(__CUDACC__)
#define SCALEBENCH_HOST_DEVICE __host__ __device__
#else
#define SCALEBENCH_HOST_DEVICE
#endif
