#include "kestrel/world/check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kestrel::world {
namespace {

using namespace ::kestrel::sdf;  // the loader under test with its findings

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kestrel_check_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  int run(const fs::path& world, bool strict = false, bool json = false) {
    CheckOptions o;
    o.world = world;
    o.strict = strict;
    o.json = json;
    out_.str("");
    err_.str("");
    return run_check_command(o, out_, err_);
  }
  fs::path dir_;
  std::ostringstream out_, err_;
};

const char* kGood = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <model name="box">
      <pose>0 0 0.5 0 0 0</pose>
      <link name="l">
        <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
        <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision>
      </link>
    </model>
  </world>
</sdf>
)";

TEST_F(CheckTest, CleanWorldExitsZeroWithSummary) {
  EXPECT_EQ(run(write("good.sdf", kGood)), 0) << out_.str() << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("world 'w': 1 model, 1 link, 0 joints, 0 sensors"));
  EXPECT_THAT(out_.str(), HasSubstr("0 errors, 0 warnings"));
  EXPECT_THAT(out_.str(), HasSubstr("kestrel::systems::Physics (default, from default)"));
}

TEST_F(CheckTest, ErrorsExitOneAndStrictPromotesWarnings) {
  std::string bad = kGood;
  bad.replace(bad.find("<mass>1</mass>"), 14, "<mass>-2</mass>");
  const auto f = write("bad.sdf", bad);
  EXPECT_EQ(run(f), 1);
  EXPECT_THAT(out_.str(),
              HasSubstr("error: " + f.string() + ":8: [w::box::l] link 'l' has mass -2"));

  std::string warn = kGood;
  warn.replace(warn.find("</link>"), 7,
               "<sensor name='s' type='imu'><topic>__default__</topic>"
               "</sensor></link>");
  const auto g = write("warn.sdf", warn);
  EXPECT_EQ(run(g), 0) << out_.str();
  EXPECT_THAT(out_.str(), HasSubstr("warning: " + g.string() + ":10: placeholder value"));
  EXPECT_EQ(run(g, /*strict=*/true), 1);
}

TEST_F(CheckTest, SystemsAreConfiguredAsARunWouldConfigureThem) {
  // A plugin parameter only its system can judge (a wind system on a model, a typo): what
  // `kestrel run` would refuse, check reports with the file:line, exit 1.
  const auto f = write("bad_plugin.sdf", R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <plugin filename="gz-sim-wind-effects-system" name="gz::sim::systems::WindEffects">
      <force_aproximation_scaling_factor>1</force_aproximation_scaling_factor>
    </plugin>
  </world>
</sdf>)");
  EXPECT_EQ(run(f), 1) << out_.str() << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("error: " + f.string() + ":6: "));
  EXPECT_THAT(out_.str(), HasSubstr("force_aproximation_scaling_factor"));
}

TEST_F(CheckTest, JsonIsOneArrayOnStdout) {
  std::string bad = kGood;
  bad.replace(bad.find("<mass>1</mass>"), 14, "<mass>0</mass>");
  EXPECT_EQ(run(write("bad.sdf", bad), false, /*json=*/true), 1);
  const auto j = nlohmann::json::parse(out_.str());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u) << j.dump();
  EXPECT_EQ(j[0]["severity"], "error");
  EXPECT_EQ(j[0]["line"], 8);
  EXPECT_EQ(j[0]["entity"], "w::box::l");
  EXPECT_THAT(j[0]["file"].get<std::string>(), HasSubstr("bad.sdf"));
  EXPECT_THAT(j[0]["message"].get<std::string>(), HasSubstr("has mass 0"));
  EXPECT_THAT(err_.str(), HasSubstr("summary:"));
}

// A world that cannot be read at all is still one JSON error for a --json reader (exit 2).
TEST_F(CheckTest, JsonReportsAnUnreadableWorld) {
  std::string bad = kGood;
  bad.replace(bad.find("<mass>1</mass>"), 14, "<mass>abc</mass>");
  const auto file = write("abc.sdf", bad);
  EXPECT_EQ(run(file, false, /*json=*/true), 2);
  const auto j = nlohmann::json::parse(out_.str());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u) << j.dump();
  EXPECT_EQ(j[0]["severity"], "error");
  EXPECT_EQ(j[0]["file"], file.string());
  EXPECT_EQ(j[0]["line"], 8);
  EXPECT_THAT(j[0]["message"].get<std::string>(), HasSubstr("[abc ] for key[mass]"));
  EXPECT_THAT(err_.str(), HasSubstr("error: " + file.string() + ":8: cannot parse SDF"));
  EXPECT_EQ(run(dir_ / "missing.sdf", false, /*json=*/true), 2);
  EXPECT_EQ(nlohmann::json::parse(out_.str())[0]["line"], 0);
}

// Unusable input: a clear one-line error and exit 2, never a crash.
TEST_F(CheckTest, UnusableInputExitsTwo) {
  struct Case {
    std::string name, text, expect;
  } cases[] = {
      {"empty.sdf", "", "file is empty"},
      {"blank.sdf", "  \n\t\n", "file is empty"},
      {"malformed.sdf", "<sdf version='1.9'><world name='w'>", "malformed XML"},
      {"not_xml.sdf", "hello world", "malformed XML"},
      {"light.sdf", "<sdf version='1.9'><light name='l' type='point'/></sdf>",
       "expected an SDF <world>: no <world> element found"},
      {"type.sdf", "<sdf version='1.9'><world name='w'><gravity>down</gravity></world></sdf>",
       "type.sdf:1: cannot parse SDF: Unable to set value [down ] for key[gravity]"},
      {"no_sdf.sdf", "<world name='w'/>", "expected <sdf> as the root element, found <world>"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(run(write(c.name, c.text)), 2) << c.name << ": " << out_.str() << err_.str();
    EXPECT_THAT(err_.str(), HasSubstr(c.expect)) << c.name;
    EXPECT_THAT(err_.str(), ::testing::StartsWith("error: ")) << c.name;
  }
  EXPECT_EQ(run(dir_ / "missing.sdf"), 2);
  EXPECT_THAT(err_.str(), HasSubstr("missing.sdf: file does not exist"));
  EXPECT_EQ(run(dir_), 2);
  EXPECT_THAT(err_.str(), HasSubstr("found a directory"));
}

// URDF is checked (and run) directly as a model in an empty world; what libsdformat 12's
// conversion drops without a word is an error (or, for effort="0", a warning) at its line of
// the URDF (test/worlds/urdf_traps.urdf and urdf_massless_root.urdf, one trap each).
TEST_F(CheckTest, UrdfTrapsAreReportedAtTheirLines) {
  const fs::path worlds = fs::path(KESTREL_SOURCE_DIR) / "test/worlds";
  EXPECT_EQ(run(worlds / "urdf_gripper.urdf"), 0) << out_.str() << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("model 'gripper' (checked in an empty world)"));

  const std::string traps = (worlds / "urdf_traps.urdf").string();
  EXPECT_EQ(run(traps), 1) << out_.str() << err_.str();
  const std::string out = out_.str();
  EXPECT_THAT(
      out, HasSubstr(traps + ":11: [traps::arm] link 'arm' has no <inertial>: libsdformat's URDF "
                             "conversion leaves it out with its joint 'shoulder' and the "
                             "1 link below it (tip); give it an <inertial>"));
  EXPECT_THAT(out,
              HasSubstr(traps + ":22: [traps::sensor_mount] link 'sensor_mount' has mass 0 (nor "
                                "the links fixed to it: sensor)"));
  EXPECT_THAT(out, HasSubstr(traps + ":33: [traps::flap_hinge] joint 'flap_hinge' has <limit "
                                     "effort=\"0\">"));
  EXPECT_THAT(out,
              HasSubstr(traps + ":40: [traps::flap2_hinge] <mimic joint='no_such_joint'> of joint "
                                "'flap2_hinge': the robot has no joint 'no_such_joint'"));

  const std::string root = (worlds / "urdf_massless_root.urdf").string();
  EXPECT_EQ(run(root), 1) << out_.str() << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr(root + ":5: [rootless::base_link] root link 'base_link' has no "
                                           "<inertial>: libsdformat's URDF conversion leaves it "
                                           "out and the 1 link below it (wheel)"));
}

TEST_F(CheckTest, RecursiveIncludeExitsTwo) {
  write("a.sdf",
        "<sdf version='1.9'><model name='a'><include><uri>b.sdf</uri></include></model></sdf>");
  write("b.sdf",
        "<sdf version='1.9'><model name='b'><include><uri>a.sdf</uri></include></model></sdf>");
  EXPECT_EQ(run(write("w.sdf",
                      "<sdf version='1.9'><world name='w'><include><uri>a.sdf</uri>"
                      "</include></world></sdf>")),
            2);
  EXPECT_THAT(err_.str(), HasSubstr("recursive <include>"));
  EXPECT_THAT(err_.str(), HasSubstr("a.sdf"));
}

TEST_F(CheckTest, HugeFileExitsTwo) {
  CheckOptions o;
  o.world = write("huge.sdf", std::string(kGood) + std::string(2000, ' '));
  o.load.max_file_bytes = 1000;
  std::ostringstream out, err;
  EXPECT_EQ(run_check_command(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("more than the limit of 1000 bytes"));
}

TEST_F(CheckTest, WrongValueTypeIsReported) {
  std::string bad = kGood;
  bad.replace(bad.find("<mass>1</mass>"), 14, "<mass>heavy</mass>");
  const int code = run(write("t.sdf", bad));
  EXPECT_NE(code, 0);
  EXPECT_THAT(out_.str() + err_.str(), HasSubstr("mass"));
}

}  // namespace
}  // namespace kestrel::world
