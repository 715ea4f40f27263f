// SQLite's check of a store (issue 4): a whole store passes; a store cut short by 3 pages is named
// as such; a large store gets the quick check.
#include "store/store_integrity.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/error.hpp"
#include "store/store.hpp"

namespace scalebench {
namespace {

class StoreIntegrityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("scalebench-integrity-" + std::to_string(getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "s.db").string();
    Store s(path_);  // closed at the end of the scope: the WAL is checkpointed into the file
    s.add_experiment("e", "e.yaml", "name: e", std::vector<RunSpec>(1), 1);
    const std::string text(2000, 'x');
    for (int i = 0; i < 200; ++i) s.add_record(1, 1, i, Json{{"pad", text}});
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(StoreIntegrityTest, AWholeStorePasses) {
  StoreIntegrity check = check_store_integrity(path_);
  EXPECT_TRUE(check.problems.empty()) << check.problems.front();
  EXPECT_EQ(check.check, "integrity_check");
  EXPECT_EQ(check_store_integrity(path_, true, /*full_check_below=*/1).check, "quick_check");
}

TEST_F(StoreIntegrityTest, AStoreCutShortIsNamed) {
  const auto size = std::filesystem::file_size(path_);
  std::filesystem::resize_file(path_, size - 3 * 16384);
  StoreIntegrity check = check_store_integrity(path_);
  ASSERT_FALSE(check.problems.empty());
  EXPECT_NE(check.problems.front().find("the last 3 are missing (the file was cut short)"), std::string::npos)
      << check.problems.front();
  EXPECT_TRUE(store_damaged(check.problems.back())) << check.problems.back();
}

TEST_F(StoreIntegrityTest, AFileThatIsNoStoreIsDamage) {
  std::filesystem::resize_file(path_, 0);
  std::filesystem::resize_file(path_, 70000);  // zeros: no SQLite header
  StoreIntegrity check = check_store_integrity(path_);
  ASSERT_FALSE(check.problems.empty());
  EXPECT_TRUE(store_damaged(check.problems.front())) << check.problems.front();
  EXPECT_THROW(check_store_integrity((dir_ / "missing.db").string()), Error);
}

}  // namespace
}  // namespace scalebench
