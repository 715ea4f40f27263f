#pragma once
// A text-generation run on a real engine: TokenLoop (token_loop.hpp) on a steady clock. One thread:
// it advances the loop, runs the iteration it gives on the engine (which returns when the
// iteration's tokens are out), hands the completion back with its time, and sleeps until the next
// arrival when nothing is in a slot.
#include <cstdint>

#include "workloads/infer/engine.hpp"
#include "workloads/infer/token_loop.hpp"

namespace scalebench::infer {

// `s.slots` must not exceed the engine's.
TokenTally run_token_scenario(TokenEngine& engine, const TokenLoopSettings& s);

// Queries per second of an Offline run of `queries` queries shaped as `s` asks (it warms the
// engine up too): what Offline sizes its run by, and where the Server search starts.
double measure_token_rate(TokenEngine& engine, TokenLoopSettings s, std::uint64_t queries);

}  // namespace scalebench::infer
