#pragma once
#include <initializer_list>

namespace scalebench {

// A rank the launcher gave this process (mpirun's OMPI_COMM_WORLD_*, PMIx's, Slurm's): the first
// of `variables` that is set, as a number; -1 when none is. Throws Error naming the variable when
// its value is not a number.
int launcher_rank(std::initializer_list<const char*> variables);

// This process's rank among those on its node (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID); -1
// when the launcher gave none.
inline int launcher_local_rank() { return launcher_rank({"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}); }

}  // namespace scalebench
