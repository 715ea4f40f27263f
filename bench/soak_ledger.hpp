#pragma once
// What the soak's agents sent, run attempt by run attempt, and the check of a store against it:
// each record acknowledged must be stored, and nothing stored twice or that was never sent.
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace scalebench::load {

struct StoreCheck {
  long long acknowledged = 0;  // records the coordinator acknowledged
  long long stored = 0;        // point records in the store (status records, of negative seq, apart)
  long long lost = 0;          // acknowledged, not stored
  long long duplicated = 0;    // stored beyond once per record sent: never sent, another record's content, a run
                               // attempt no agent streamed
  long long in_doubt = 0, in_doubt_stored = 0;  // sent, their answer not received (a restart): either is right
  long long attempts = 0;                       // run attempts streamed
};

class SentLedger {
 public:
  // The records of seq [0, acked) of this run attempt were acknowledged; those of [acked, sent)
  // were sent, their answer never received. A later note of the same attempt replaces it.
  void note(long long run_id, int attempt, long long acked, long long sent);
  // Reads the store (the coordinator may still run: it reads what is committed). Throws Error
  // when the store cannot be read.
  StoreCheck check(const std::string& db) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<long long, int>, std::pair<long long, long long>> sent_;  // (run, attempt) -> (acked, sent)
};

}  // namespace scalebench::load
