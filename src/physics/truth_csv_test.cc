#include "kestrel/physics/truth_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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
  EXPECT_EQ(lines[0],
            "sim_time,model,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,rotor_0,rotor_1,rotor_2,rotor_3,"
            "rotor_4,rotor_5,rotor_6,rotor_7");
  EXPECT_THAT(lines[10], ::testing::EndsWith(",,,,,,,,"));  // no rotors: 8 empty cells
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

}  // namespace
}  // namespace kestrel::physics
