#pragma once
// What report tests look up in a built report: a table, a chart or a series by its title or name
// (null when there is none).
#include <string>

#include "report/report_model.hpp"

namespace scalebench::test_support {

inline const Table* find_table(const Report& rep, const std::string& title) {
  for (const Section& s : rep.sections)
    for (const Table& t : s.tables)
      if (t.title == title) return &t;
  return nullptr;
}

inline const Chart* find_chart(const Report& rep, const std::string& title) {
  for (const Section& s : rep.sections)
    for (const Chart& c : s.charts)
      if (c.title == title) return &c;
  return nullptr;
}

inline const Series* find_series(const Chart& c, const std::string& name) {
  for (const Series& s : c.series)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace scalebench::test_support
