#pragma once
// The records the simulated agents stream: point records of the collective workload as
// scalebench-run writes them (time, algbw, busbw per size; 20 samples of stats). Each seq's record
// follows from the seq alone, so a store can be checked against what was sent.
#include <string>
#include <vector>

namespace scalebench::load {

class RecordTexts {
 public:
  explicit RecordTexts(int gpus);
  // Appends the body of POST /api/v1/runs/RUN/records with seqs [first_seq, first_seq + count).
  // Every record is rendered once, here, without its run id: a batch costs copies, not number
  // formatting (which took most of the load bench's own CPU).
  void batch(long long run_id, int attempt, long long first_seq, int count, std::string* body) const;
  // The value the record of `seq` carries, as a check of what a store holds.
  static double value_of(long long seq);

 private:
  std::vector<std::string> tails_;  // each record after its run id, by seq modulo their count
};

}  // namespace scalebench::load
