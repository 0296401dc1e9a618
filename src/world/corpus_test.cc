// The compatibility corpus: every real Gazebo world in ../shared/worlds/gz goes through
// `kestrel check` without a crash, and its findings are pinned in testdata/corpus_findings.txt
// so that a change shows. After an intended change, regenerate the pins with
//   KESTREL_UPDATE_PINS=1 build/src/world/world_test --gtest_filter='Corpus.*'
// and review the diff.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kestrel/components/model.h"
#include "kestrel/world/check.h"

namespace kestrel::world {
namespace {

using namespace ::kestrel::sdf;  // the loader under test with its findings

namespace fs = std::filesystem;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t p = 0; !from.empty() && (p = s.find(from, p)) != std::string::npos;
       p += to.size()) {
    s.replace(p, from.size(), to);
  }
  return s;
}

TEST(Corpus, EveryGazeboWorldChecksAsPinned) {
  const fs::path corpus = fs::path(KESTREL_SHARED_DIR) / "worlds" / "gz";
  if (!fs::is_directory(corpus)) {
    GTEST_SKIP() << "compatibility corpus not found at " << corpus
                 << " (the shared folder beside the repository)";
  }
  // Findings must not depend on the environment of the machine running the test.
  for (const char* v : {"KESTREL_RESOURCE_PATH", "GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH",
                        "SDF_PATH", "KESTREL_SYSTEM_PLUGIN_PATH", "GZ_SIM_SYSTEM_PLUGIN_PATH",
                        "IGN_GAZEBO_SYSTEM_PLUGIN_PATH"}) {
    ::unsetenv(v);
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(corpus)) {
    if (e.path().extension() == ".sdf") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 30u);

  const std::string canonical = fs::weakly_canonical(corpus).string();
  std::ostringstream actual;
  for (const auto& f : files) {
    CheckOptions o;
    o.world = f;
    std::ostringstream out, err;
    const int code = run_check_command(o, out, err);
    EXPECT_NE(code, 2) << f << ": " << err.str();
    actual << "== " << f.filename().string() << " exit " << code << "\n";
    std::istringstream lines(out.str() + err.str());
    std::string line;
    while (std::getline(lines, line)) {
      if (line.starts_with("error: ") || line.starts_with("warning: ") ||
          line.starts_with("summary: ") || line.starts_with("  kestrel::")) {
        line = replace_all(line, canonical + "/", "");
        line = replace_all(line, corpus.string() + "/", "");
        actual << line << "\n";
      }
    }
  }
  const fs::path pins = fs::path(KESTREL_SOURCE_DIR) / "src/world/testdata/corpus_findings.txt";
  if (std::getenv("KESTREL_UPDATE_PINS")) {
    std::ofstream(pins) << actual.str();
    GTEST_SKIP() << "pins rewritten: " << pins;
  }
  std::ifstream in(pins);
  ASSERT_TRUE(in) << "missing " << pins << " (run with KESTREL_UPDATE_PINS=1 to create it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual.str(), expected.str())
      << "corpus findings changed; if intended, rerun with KESTREL_UPDATE_PINS=1 and review the "
         "diff of src/world/testdata/corpus_findings.txt";
}

}  // namespace
}  // namespace kestrel::world

namespace kestrel::world {
namespace {

using namespace ::kestrel::sdf;  // the loader under test with its findings

// libsdformat 12 predates the air_speed sensor: Kestrel still loads the world and the sensor.
TEST(Corpus, SensorTypesNewerThanSdformat12AreLoaded) {
  const std::filesystem::path corpus = std::filesystem::path(KESTREL_SHARED_DIR) / "worlds" / "gz";
  if (!std::filesystem::is_directory(corpus)) GTEST_SKIP() << "corpus not found at " << corpus;
  for (const char* name : {"sensors.sdf", "test_air_speed.sdf"}) {
    ecs::Registry reg;
    const auto world = reg.create();
    const auto d = load_world_file(corpus / name, reg, world);
    EXPECT_EQ(d.findings.count(Severity::kError), 0u) << name;
    int air_speed = 0;
    reg.each<components::Sensor>([&](ecs::Entity, const components::Sensor& s) {
      if (s.type == "air_speed") {
        ++air_speed;
        EXPECT_EQ(s.update_rate, 30) << name;
        ASSERT_NE(s.element, nullptr);
        EXPECT_TRUE(s.element->has("air_speed")) << name;
      }
    });
    EXPECT_EQ(air_speed, 1) << name;
  }
}

}  // namespace
}  // namespace kestrel::world
