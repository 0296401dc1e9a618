#include "kestrel/physics/truth_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kestrel/components/multicopter.h"
#include "kestrel/physics/physics.h"
#include "physics/test_worlds.h"

namespace kestrel::physics {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(TruthCsv, OneRowPerMovingModelPerSample) {
  const auto path = (std::filesystem::temp_directory_path() / "kestrel_truth_test.csv").string();
  {
    testing::TestWorld w;
    w.ground();
    w.box("box", {1, 2, 10}, {0.1, 0.1, 0.1}, 1.0);
    w.runner->add_system(make_truth_csv_system({path, 100.0}), w.world(), Element::empty("plugin"),
                         "truth", "test");
    w.start();
    w.step(100);  // 0.1 s at 100 Hz: samples at 0.01 .. 0.1
  }
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 11u);
  // No model has rotors: no rotor columns.
  EXPECT_EQ(lines[0], "sim_time,model,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz");
  EXPECT_EQ(std::count(lines[10].begin(), lines[10].end(), ','), 14);
  EXPECT_THAT(lines[1], ::testing::StartsWith("0.01,box,1,2,"));
  // Times are exact decimals of the integer clock (0.03, not 0.030000000000000002).
  for (int k = 1; k <= 9; ++k) {
    EXPECT_THAT(lines[k], ::testing::StartsWith("0.0" + std::to_string(k) + ",box,")) << k;
  }
  EXPECT_THAT(lines[10], ::testing::StartsWith("0.1,box,"));
  std::stringstream ss(lines[10]);
  std::vector<double> v;
  for (std::string cell; std::getline(ss, cell, ',') && v.size() < 15;) {
    if (v.size() == 1 && cell == "box") {
      v.push_back(0);
      continue;
    }
    v.push_back(std::stod(cell));
  }
  ASSERT_EQ(v.size(), 15u);
  EXPECT_DOUBLE_EQ(v[0], 0.1);
  EXPECT_NEAR(v[4], 10 - 0.5 * 9.8 * 0.01, 1e-3);  // z
  EXPECT_NEAR(v[5], 1, 1e-12);                     // qw
  EXPECT_NEAR(v[11], -0.98, 1e-9);                 // vz
  std::filesystem::remove(path);
}

TEST(TruthCsv, BadRateAndUnwritableFileAreErrors) {
  EXPECT_THROW(make_truth_csv_system({"/tmp/x.csv", -1}), Error);
  EXPECT_THAT(
      [] {
        make_truth_csv_system({"/nonexistent/dir/x.csv", 0});
      },
      ::testing::ThrowsMessage<Error>(::testing::HasSubstr("/nonexistent/dir/x.csv")));
}

// RFC 4180 records of a file (quoted fields may hold commas, quotes and line breaks).
std::vector<std::vector<std::string>> csv_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::vector<std::string>> out(1);
  std::string field;
  bool quoted = false, at_start = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch == '"' && at_start) {
      quoted = true;
    } else if (ch == ',' || ch == '\n') {
      out.back().push_back(field);
      field.clear();
      if (ch == '\n') out.emplace_back();
      at_start = true;
      continue;
    } else {
      field += ch;
    }
    at_start = false;
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

TEST(TruthCsv, NamesAreQuotedAsRfc4180AndRotorColumnsAreTheModelsOwn) {
  const auto path = (std::filesystem::temp_directory_path() / "kestrel_truth_quote.csv").string();
  const std::vector<std::string> names = {"evil,1,2,3", "say \"hi\"", "two\nlines", "plain"};
  {
    testing::TestWorld w;
    for (std::size_t i = 0; i < names.size(); ++i) {
      w.box(names[i], {double(i), 0, 10}, {0.1, 0.1, 0.1}, 1.0);
    }
    // A quadcopter's four rotor speeds on the last model.
    w.r().set<components::RotorVelocities>(w.r().child_by_name(w.world(), "plain"),
                                           {{100, 200, 300, 400}});
    w.runner->add_system(make_truth_csv_system({path, 0}), w.world(), Element::empty("plugin"),
                         "truth", "test");
    w.start();
    w.step(2);
  }
  const auto records = csv_records(path);
  ASSERT_EQ(records.size(), 1u + 2 * names.size());
  EXPECT_EQ(records[0].size(), 19u) << "15 columns and rotor_0 … rotor_3, not rotor_4 … rotor_7";
  EXPECT_EQ(records[0].back(), "rotor_3");
  for (std::size_t k = 1; k < records.size(); ++k) {
    ASSERT_EQ(records[k].size(), 19u) << "row " << k;
    EXPECT_EQ(records[k][1], names[(k - 1) % names.size()]);
  }
  EXPECT_EQ(records[4][18], "400");
  EXPECT_EQ(records[1][18], "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("q\""), "\"q\"\"\"");
  EXPECT_EQ(csv_field("ok"), "ok");
  std::filesystem::remove(path);
}

// A write the system refuses stops the run with an Error saying how many rows the file holds;
// the file ends on its last complete row. /dev/full: nothing fits.
TEST(TruthCsv, AFullDeviceStopsTheRunAndSaysSo) {
  testing::TestWorld w;
  w.box("box", {0, 0, 10}, {0.1, 0.1, 0.1}, 1.0);
  w.runner->add_system(make_truth_csv_system({"/dev/full", 0}), w.world(), Element::empty("plugin"),
                       "truth", "test");
  w.start();
  EXPECT_THAT([&] { w.runner->run(100); },
              ::testing::ThrowsMessage<Error>(::testing::AllOf(
                  ::testing::HasSubstr("/dev/full"), ::testing::HasSubstr("after 0 rows"),
                  ::testing::HasSubstr("No space left on device"))));
}

// A file-size limit (what a nearly full disk does to the file): the rows that fit are kept
// whole, the run stops, and the message counts them.
TEST(TruthCsv, ALimitedFileKeepsWholeRowsAndCountsThem) {
  const auto path = (std::filesystem::temp_directory_path() / "kestrel_truth_limit.csv").string();
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  auto* old_handler = signal(SIGXFSZ, SIG_IGN);
  std::string message;
  {
    testing::TestWorld w;
    w.box("box", {0, 0, 10}, {0.1, 0.1, 0.1}, 1.0);
    w.runner->add_system(make_truth_csv_system({path, 0}), w.world(), Element::empty("plugin"),
                         "truth", "test");
    w.start();
    rlimit small = before;
    small.rlim_cur = 100'000;  // bytes: ~600 rows
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    try {
      w.runner->run(5000);
    } catch (const Error& e) {
      message = e.what();
    }
    setrlimit(RLIMIT_FSIZE, &before);
  }
  signal(SIGXFSZ, old_handler);
  ASSERT_THAT(message, ::testing::HasSubstr("File too large"));
  const auto lines = lines_of(path);
  ASSERT_GT(lines.size(), 100u);
  EXPECT_THAT(message, ::testing::HasSubstr("after " + std::to_string(lines.size() - 1) + " rows"));
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text.back(), '\n') << "the last row is whole";
  EXPECT_EQ(std::count(lines.back().begin(), lines.back().end(), ','), 14);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kestrel::physics
