#include "agent/outbox.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "http/http_server.hpp"

namespace scalebench {
namespace {

namespace http = boost::beast::http;

// A real HTTP server on loopback that stores the records it is posted, refusing with 400 any
// request that carries a record marked bad (as the coordinator refuses a whole batch), and
// answering slowly at first so that the outbox's queue fills up behind the first request.
class RecordSink {
 public:
  RecordSink() {
    server_ = std::make_shared<HttpServer>(
        ioc_, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0),
        [this](const HttpRequest& req) { return answer(req); });
    server_->start();
    thread_ = std::thread([this] { ioc_.run(); });
  }
  ~RecordSink() {
    ioc_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  std::vector<long long> seqs() {
    std::lock_guard lock(mutex_);
    return seqs_;
  }
  int requests() const { return requests_.load(); }

 private:
  HttpResponseMsg answer(const HttpRequest& req) {
    if (requests_++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Json body = Json::parse(req.body());
    HttpResponseMsg res{http::status::ok, 11};
    for (const auto& e : body["records"])
      if (e["record"].value("bad", false)) {
        res.result(http::status::bad_request);
        res.body() = R"({"error":"record is bad"})";
        return res;
      }
    std::lock_guard lock(mutex_);
    for (const auto& e : body["records"]) seqs_.push_back(e["seq"].get<long long>());
    res.body() = "{}";
    return res;
  }
  boost::asio::io_context ioc_;
  std::shared_ptr<HttpServer> server_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<long long> seqs_;
  std::atomic<int> requests_{0};
};

// Posts records 0..n-1 of run 1, record `bad` marked bad (-1: none), each carrying `padding` bytes
// of details; waits until all are settled.
void post_all(RecordSink& sink, int n, int bad, std::atomic<int>& delivered, std::size_t padding = 0) {
  HttpClient client(sink.url(), std::chrono::seconds(5));
  Outbox outbox(client, [&](const std::string&, const Json&) { ++delivered; });
  const std::string details(padding, 'x');
  for (int i = 0; i < n; ++i)
    outbox.post("/api/v1/runs/1/records",
                Json{{"attempt", 1},
                     {"records", {{{"seq", i}, {"record", {{"i", i}, {"bad", i == bad}, {"details", details}}}}}}});
  ASSERT_TRUE(outbox.drain(std::chrono::seconds(60)));
}

TEST(Outbox, SendsQueuedRecordsOfARunTogether) {
  RecordSink sink;
  std::atomic<int> delivered{0};
  post_all(sink, 1000, -1, delivered);
  std::vector<long long> want;
  for (int i = 0; i < 1000; ++i) want.push_back(i);
  EXPECT_EQ(sink.seqs(), want);
  EXPECT_EQ(delivered.load(), 1000);
  // What queued behind the first (slow) answer went out in batches of at most 500.
  EXPECT_LE(sink.requests(), 5);
}

TEST(Outbox, ABatchRefusedForOneRecordLosesOnlyThatRecord) {
  RecordSink sink;
  std::atomic<int> delivered{0};
  post_all(sink, 600, 300, delivered);
  std::vector<long long> want;
  for (int i = 0; i < 600; ++i)
    if (i != 300) want.push_back(i);
  EXPECT_EQ(sink.seqs(), want);  // in order, all but the bad one
  EXPECT_EQ(delivered.load(), 600);
}

// Training records carry each convolution's algorithm search (about 20 KB each): 500 of them
// would pass the coordinator's 8 MiB request limit, so a batch also stops at a size.
TEST(Outbox, BatchesStayUnderTheCoordinatorsRequestLimit) {
  RecordSink sink;
  std::atomic<int> delivered{0};
  post_all(sink, 600, -1, delivered, 40000);
  std::vector<long long> want;
  for (int i = 0; i < 600; ++i) want.push_back(i);
  EXPECT_EQ(sink.seqs(), want);
  EXPECT_EQ(delivered.load(), 600);
  EXPECT_LE(sink.requests(), 12);  // batched still: 24 MB in requests of at most 4 MiB, not 600
}

// A fresh folder for one test's journal, removed at the end.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/scalebench-outbox-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return path + "/" + name; }
  std::string path;
};

Json record_body(int i) { return Json{{"attempt", 1}, {"records", {{{"seq", i}, {"record", {{"i", i}}}}}}}; }

TEST(OutboxJournal, KeepsWhatWasNotDeliveredAcrossProcesses) {
  TempDir dir;
  const std::string path = dir.file("outbox.jsonl");
  {
    OutboxJournal j(path);
    EXPECT_TRUE(j.undelivered().empty());
    for (int i = 0; i < 4; ++i) j.append("/api/v1/runs/1/records", record_body(i));
    j.delivered(1);
    j.delivered(1);
  }
  {
    OutboxJournal j(path);
    ASSERT_EQ(j.undelivered().size(), 2u);
    EXPECT_EQ(j.undelivered()[0].second["records"][0]["seq"], 2);
    EXPECT_EQ(j.undelivered()[1].second["records"][0]["seq"], 3);
    EXPECT_EQ(j.undelivered()[1].first, "/api/v1/runs/1/records");
    j.clear();
  }
  OutboxJournal j(path);
  EXPECT_TRUE(j.undelivered().empty()) << "a cleared journal brings nothing back";
}

TEST(OutboxJournal, ALineACrashCutShortIsDroppedAndGarbageSkipped) {
  TempDir dir;
  const std::string path = dir.file("outbox.jsonl");
  {
    OutboxJournal j(path);
    j.append("/a", Json{{"n", 1}});
  }
  {
    std::ofstream out(path, std::ios::app);
    out << "not json\n";
    out << R"({"path":"/b","body":{"n":2}})"
        << "\n";
    out << R"({"path":"/c","body":{"n")";  // the write a crash interrupted
  }
  OutboxJournal j(path);
  ASSERT_EQ(j.undelivered().size(), 2u);
  EXPECT_EQ(j.undelivered()[0].first, "/a");
  EXPECT_EQ(j.undelivered()[1].first, "/b");
}

TEST(OutboxJournal, TwoAgentsCannotShareOne) {
  TempDir dir;
  OutboxJournal first(dir.file("outbox.jsonl"));
  EXPECT_THROW(OutboxJournal second(dir.file("outbox.jsonl")), Error);
}

TEST(Outbox, WhatCouldNotBeDeliveredGoesOutWhenTheNextProcessStarts) {
  TempDir dir;
  const std::string path = dir.file("outbox.jsonl");
  {
    // No coordinator: nothing is accepted before the outbox stops.
    HttpClient nowhere("http://127.0.0.1:1", std::chrono::seconds(1));
    Outbox outbox(
        nowhere, [](const std::string&, const Json&) {}, std::make_unique<OutboxJournal>(path));
    for (int i = 0; i < 50; ++i) outbox.post("/api/v1/runs/1/records", record_body(i));
    EXPECT_FALSE(outbox.drain(std::chrono::milliseconds(200)));
  }
  RecordSink sink;
  HttpClient client(sink.url(), std::chrono::seconds(5));
  std::atomic<int> delivered{0};
  {
    Outbox outbox(
        client, [&](const std::string&, const Json&) { ++delivered; }, std::make_unique<OutboxJournal>(path));
    EXPECT_EQ(outbox.queued().size(), 50u);
    ASSERT_TRUE(outbox.drain(std::chrono::seconds(30)));
  }
  std::vector<long long> want;
  for (int i = 0; i < 50; ++i) want.push_back(i);
  EXPECT_EQ(sink.seqs(), want);
  EXPECT_EQ(delivered.load(), 50);
  EXPECT_TRUE(OutboxJournal(path).undelivered().empty()) << "delivered messages are not sent twice";
}

}  // namespace
}  // namespace scalebench
