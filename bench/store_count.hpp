#pragma once
// What a coordinator stored, counted in its store file, or through its API when the store is not
// at hand (a coordinator the bench did not start).
#include <string>

namespace scalebench::load {

// Every record: the point records the bench sent and the status records the coordinator added.
// -1 when the store cannot be read.
long long count_stored(const std::string& db, const std::string& url);

}  // namespace scalebench::load
