// A stand-in for a user's benchmark program in the command-workload test: prints its figures in two
// formats (a table with one row per size, and key=value summary lines), deterministically, so
// the test can assert the records parsed from them. Flags:
//   --sizes 1024,4096   rows of the table (bandwidth = size / 1024 GB/s, time = size / 100 us)
//   --mode fail         exit with 3 after printing (a failing program)
//   --mode nosummary    leave the summary lines out (a figure that is missing)
//   --write FILE        also write the summary lines to FILE
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "unset";
}

int main(int argc, char** argv) {
  std::vector<long> sizes{1024};
  int exit_code = 0;
  bool summary = true;
  std::string file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (char* tok = std::strtok(argv[++i], ","); tok; tok = std::strtok(nullptr, ","))
        sizes.push_back(std::atol(tok));
    } else if (a == "--mode" && i + 1 < argc) {
      std::string m = argv[++i];
      exit_code = m == "fail" ? 3 : 0;
      summary = m != "nosummary";
    } else if (a == "--write" && i + 1 < argc) {
      file = argv[++i];
    } else {
      std::fprintf(stderr, "figure_printer: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  // Under mpirun only the first rank prints the figures, as nccl-tests does; every rank says hello.
  const char* mpi_rank = std::getenv("OMPI_COMM_WORLD_RANK");
  const char* rank = mpi_rank ? mpi_rank : env("RANK");
  std::printf("hello from rank %s of %s (mpi %s)\n", rank, env("WORLD_SIZE"), env("OMPI_COMM_WORLD_SIZE"));
  if (std::strcmp(rank, "0") != 0 && std::strcmp(rank, "unset") != 0) return exit_code;
  std::printf("#     size   time_us  bw_GBps\n");
  for (long s : sizes) std::printf("%10ld %9.2f %8.3f\n", s, s / 100.0, s / 1024.0);
  if (summary) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "summary: rank=%s world_size=%s local_rank=%s master_port=%s mpi_size=%s visible=%s\n"
                  "images/s: 1234.5\nelapsed_ms=42.5\n",
                  rank, env("WORLD_SIZE"), env("LOCAL_RANK"), env("MASTER_PORT"), env("OMPI_COMM_WORLD_SIZE"),
                  env("SCALEBENCH_TEST_MARK"));
    std::fputs(line, stdout);
    if (!file.empty())
      if (FILE* f = std::fopen(file.c_str(), "w")) {
        std::fputs(line, f);
        std::fclose(f);
      }
  }
  if (exit_code != 0) std::printf("figure_printer: failing on purpose with %d\n", exit_code);
  return exit_code;
}
