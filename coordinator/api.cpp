#include "coordinator/api.hpp"

#include <charconv>
#include <chrono>
#include <string_view>

#include "common/log.hpp"
#include "common/version.hpp"
#include "coordinator/record_batch.hpp"
#include "coordinator/request_checks.hpp"
#include "coordinator/route.hpp"

namespace scalebench {

namespace http = boost::beast::http;

namespace {
HttpResponseMsg respond(int status, const std::string& body, const std::string& content_type = "application/json") {
  HttpResponseMsg res{static_cast<http::status>(status), 11};
  res.set(http::field::server, std::string("scalebench-coordinator/") + kVersion);
  res.set(http::field::content_type, content_type);
  res.body() = body;
  return res;
}
// Answers quote what clients sent (paths, names), which need not be UTF-8: such bytes are
// replaced rather than failing the answer.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }
HttpResponseMsg respond(const ApiResult& r) { return respond(r.status, dump(r.body)); }
HttpResponseMsg bad(int status, const std::string& msg) { return respond(status, dump(Json{{"error", msg}})); }

std::string query_param(const std::string& query, const std::string& key) {
  std::size_t pos = 0;
  while (pos <= query.size()) {
    std::size_t amp = query.find('&', pos);
    std::string part = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    auto eq = part.find('=');
    if (part.substr(0, eq) == key) return eq == std::string::npos ? "" : part.substr(eq + 1);
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return "";
}

// Whether arrays and objects in `text` nest at most `limit` deep (brackets inside strings do not
// count). Checked before parsing: serialising a record is recursive, and a body of a few MiB of
// "[" would otherwise exhaust a server thread's stack.
bool json_depth_within(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char ch : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (ch == '\\')
        escaped = true;
      else if (ch == '"')
        in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > limit) return false;
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
  return true;
}
constexpr int kMaxJsonDepth = 64;

std::optional<long long> to_int(const std::string& s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}
}  // namespace

std::optional<StreamedAnswer> stream_api(Coordinator& c, const HttpRequest& req, const AccessTokens& tokens) {
  if (req.method() != http::verb::get) return std::nullopt;
  const std::string target(req.target());
  const auto qpos = target.find('?');
  if (qpos == std::string::npos) return std::nullopt;
  const std::string query = target.substr(qpos + 1);
  const Route route = match_route(std::string_view(target).substr(0, qpos));
  if (route.kind != Route::Kind::kExperiment || query_param(query, "limit") != "all") return std::nullopt;
  const std::string after_text = query_param(query, "after");
  const auto after = after_text.empty() ? std::optional<long long>(0) : to_int(after_text);
  if (!after || *after < 0 || check_access(req, tokens)) return std::nullopt;  // handle_api says why
  std::optional<std::pair<long long, Json>> head;
  try {
    head = c.experiment_head(std::string(route.id));
  } catch (const std::exception&) {
    return std::nullopt;  // handle_api meets the store's error again, and reports it
  }
  if (!head) return std::nullopt;
  // The summary as the stream starts, then the runs a page at a time, each read when it is sent:
  // every run once, in id order, as it is at that moment.
  std::string summary = dump(head->second);
  summary.pop_back();  // its closing brace: run_list and complete follow
  summary += std::string(summary.size() > 1 ? "," : "") + "\"run_list\":[";
  enum class Stage { kHead, kRuns, kDone };
  auto next = [&c, id = head->first, after = *after, summary = std::move(summary), stage = Stage::kHead,
               first = true]() mutable -> std::string {
    if (stage == Stage::kHead) {
      stage = Stage::kRuns;
      return std::move(summary);
    }
    if (stage == Stage::kDone) return "";
    const Json runs = c.run_page(id, after, kStreamRunPage);
    if (runs.empty()) {
      stage = Stage::kDone;
      return "],\"complete\":true}";
    }
    std::string part;
    for (const Json& r : runs) {
      if (!first) part += ',';
      first = false;
      part += dump(r);
    }
    after = runs.back()["run_id"].get<long long>();
    return part;
  };
  return StreamedAnswer{respond(200, ""), std::move(next)};
}

bool is_record_post(const HttpRequest& req) {
  if (req.method() != http::verb::post) return false;
  const std::string_view target(req.target().data(), req.target().size());
  return match_route(target.substr(0, target.find('?'))).kind == Route::Kind::kRunRecords;
}

int api_lane(const HttpRequest& req) {
  const std::string_view target(req.target().data(), req.target().size());
  const std::string_view path = target.substr(0, target.find('?'));
  const Route route = match_route(path);
  if (req.method() == http::verb::post && route.kind == Route::Kind::kRunRecords) return 0;
  // Heartbeats stay on their connection's thread: they wait kHeartbeatWait at most for the state.
  // Whatever may wait longer (for the state's mutex, the store or a large answer) goes to a pool,
  // so that the heartbeats of the connection thread's other connections never wait behind it.
  // A heartbeat's body is a few bytes; a large one (a million run ids, refused) is parsed on the
  // pool, not on the thread that serves other agents' heartbeats.
  if ((req.method() == http::verb::post && route.kind == Route::Kind::kAgentHeartbeat &&
       req.body().size() <= 64 * 1024) ||
      path == "/healthz")
    return -1;
  return 1;
}

std::optional<HttpResponseMsg> check_access(const HttpRequest& req, const AccessTokens& tokens) {
  const std::string_view target(req.target().data(), req.target().size());
  const std::string path(target.substr(0, target.find('?')));
  const std::string role = required_role(std::string(req.method_string()), path, tokens.protect_metrics);
  const auto auth = req[http::field::authorization];
  if (const int verdict = authorize(tokens, role, std::string_view(auth.data(), auth.size())); verdict != 200) {
    // Which role was wanted, never which token came.
    log::warn(std::string(req.method_string()) + " " + path + ": refused (" +
              (verdict == 401 ? "no valid token" : "token of another role") + ", needs " + role + ")");
    HttpResponseMsg res =
        bad(verdict, verdict == 401 ? std::string(role == "agent" ? "this route needs an " : "this route needs a ") +
                                          role + " token (Authorization: Bearer ...)"
                                    : "this token may not " + std::string(role == "agent"  ? "act as an agent"
                                                                          : role == "user" ? "submit or cancel"
                                                                                           : "read"));
    if (verdict == 401) res.set(http::field::www_authenticate, "Bearer");
    return res;
  }
  return std::nullopt;
}

HttpResponseMsg handle_api(Coordinator& c, const HttpRequest& req, const AccessTokens& tokens) {
  const std::string target(req.target());
  const auto qpos = target.find('?');
  const std::string path = target.substr(0, qpos);
  const std::string query = qpos == std::string::npos ? "" : target.substr(qpos + 1);
  const bool get = req.method() == http::verb::get, post = req.method() == http::verb::post;
  using Kind = Route::Kind;
  const Route route = match_route(path);
  if (auto refused = check_access(req, tokens)) return std::move(*refused);

  std::string body_problem;
  auto json_body = [&](Json& out) -> bool {
    if (!json_depth_within(req.body(), kMaxJsonDepth)) {
      body_problem = "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
      return false;
    }
    out = req.body().empty() ? Json::object() : Json::parse(req.body(), nullptr, /*allow_exceptions=*/false);
    if (out.is_discarded())
      body_problem = "body is not valid JSON";
    else if (!out.is_object())
      body_problem = "body is not a JSON object";
    return body_problem.empty();
  };

  try {
    if (get && path == "/healthz") {
      // A store that fails (corrupt, full, unreadable) makes the coordinator unhealthy: agents
      // retry for ever against it, so an operator's probe must see it.
      const std::string problem = c.store_problem();
      if (!problem.empty())
        return respond(503, dump(Json{{"ok", false}, {"version", kVersion}, {"error", "store: " + problem}}));
      return respond(200, Json{{"ok", true}, {"version", kVersion}}.dump());
    }
    if (get && path == "/metrics") return respond(200, c.metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
    if (path == "/api/v1/experiments") {
      if (get) return respond(c.list_experiments());
      if (post) {
        std::string source = std::string(req["X-Scalebench-Source"]);
        if (source.empty()) source = "<submitted>";
        try {  // stored and sent back as JSON strings: UTF-8 only
          (void)Json::array({req.body(), source}).dump();
        } catch (const Json::type_error&) {
          return bad(400, "the experiment file and X-Scalebench-Source must be UTF-8 text");
        }
        return respond(c.submit(req.body(), source));
      }
    }
    if (get && route.kind == Kind::kExperiment) {
      // ?after=RUN_ID&limit=N pages the run list (an experiment may have 100,000 runs); a page
      // is kDefaultRunPage runs unless asked otherwise. limit=all is streamed (stream_api): it
      // comes here only when the experiment is missing, and then gets its 404.
      const std::string limit_text = query_param(query, "limit");
      const auto after = to_int(query_param(query, "after"));
      const auto limit = limit_text == "all" ? std::optional<long long>(kMaxRunPage) : to_int(limit_text);
      if ((!query_param(query, "after").empty() && (!after || *after < 0)) ||
          (!limit_text.empty() && (!limit || *limit < 1 || *limit > kMaxRunPage)))
        return bad(400, "after must be a run id (0 or more) and limit 1.." + std::to_string(kMaxRunPage) + " or all");
      return respond(c.experiment(std::string(route.id), after.value_or(0), limit.value_or(kDefaultRunPage)));
    }
    if (post && route.kind == Kind::kExperimentCancel) return respond(c.cancel(std::string(route.id)));
    if (get && path == "/api/v1/results") {
      long long after = to_int(query_param(query, "after")).value_or(0);
      long long limit = to_int(query_param(query, "limit")).value_or(1000);
      if (limit < 1 || limit > 10000) return bad(400, "limit must be 1..10000");
      return respond(c.results(query_param(query, "experiment"), after, static_cast<int>(limit)));
    }
    if (path == "/api/v1/agents" && get) return respond(c.list_agents());
    Json body;
    if (post && path == "/api/v1/agents/register") {
      if (!json_body(body)) return bad(400, body_problem);
      if (auto problem = check_register_body(body); !problem.empty()) return bad(400, problem);
      return respond(c.register_agent(body));
    }
    if (path == "/api/v1/node-health" && (get || post)) {
      if (get) return respond(200, dump(c.node_health().list()));
      if (!json_body(body)) return bad(400, body_problem);
      if (auto problem = NodeHealth::check_body(body); !problem.empty()) return bad(400, problem);
      const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      return respond(200, dump(Json{{"stored", c.node_health().post(body, now)}}));
    }
    if (path == "/api/v1/predictions" && (get || post)) {
      if (get) return respond(c.predictions());
      if (!json_body(body)) return bad(400, body_problem);
      if (auto problem = check_prediction_body(body); !problem.empty()) return bad(400, problem);
      return respond(c.add_prediction(body));
    }
    if (get && route.kind == Kind::kPrediction) return respond(c.predictions(to_int(std::string(route.id))));
    if (post && route.kind == Kind::kAgentHeartbeat) {
      if (!json_body(body)) return bad(400, body_problem);
      if (auto problem = check_heartbeat_body(body); !problem.empty()) return bad(400, problem);
      return respond(c.heartbeat(std::string(route.id), body));
    }
    if (post && (route.kind == Kind::kRunRecords || route.kind == Kind::kRunFinish)) {
      long long id = 0;
      std::from_chars(route.id.data(), route.id.data() + route.id.size(), id);  // 1-18 digits: fits
      if (route.kind == Kind::kRunRecords) {
        // Read in one pass without a JSON tree per record: the hot path of a busy cluster.
        RecordBatch batch;
        if (auto problem = read_record_batch(req.body(), batch, kMaxJsonDepth); !problem.empty())
          return bad(400, problem);
        return respond(c.add_records(id, batch));
      }
      if (!json_body(body)) return bad(400, body_problem);
      if (auto problem = check_finish_body(body); !problem.empty()) return bad(400, problem);
      return respond(c.finish_run(id, body));
    }
    return bad(404, "no route " + std::string(req.method_string()) + " " + path);
  } catch (const std::exception& e) {
    // A store error (disk full, locked) must not take the server down: the caller retries.
    log::error(std::string(req.method_string()) + " " + path + ": " + e.what());
    c.note_store_error(e.what());
    return bad(503, e.what());
  }
}

}  // namespace scalebench
