#pragma once
#include <string>

#include "accept/rules.hpp"
#include "common/json.hpp"

// Which records a rule judges and how it groups them, whichever workload wrote them; the record's
// fields are read through record/record_reader.
namespace scalebench::accept {

// Whether `rule` selects `record`: workload, metric and every point field equal.
bool selects(const Rule& rule, const Json& record);
// The record's group under rule.group_by ("H100|4096" ...).
std::string group_key(const Rule& rule, const Json& record);

}  // namespace scalebench::accept
